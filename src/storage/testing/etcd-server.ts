// A throwaway etcd for tests, one member or a cluster of several (HA tests kill members): Debian's
// `etcd` binary (package etcd-server) on free loopback ports, each member with a temporary data dir. A missing binary is an error, never a skip, so CI
// cannot pass the etcd suite without running it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../../util/clock.js';

export interface EtcdServer {
  /** host:port of the client endpoint, as openStore's `etcd://` spec takes it. */
  readonly endpoint: string;
  /** SIGTERM, wait for exit, remove the data dir. */
  stop(): Promise<void>;
}

const STARTUP_MS = 20_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

interface Member {
  name: string;
  client: string;
  peer: string;
}

/** Spawns one member; `cluster` is the whole --initial-cluster list. */
function spawnMember(m: Member, dataDir: string, cluster: string): { child: ChildProcess; stderr: () => string; spawnError: () => Error | undefined } {
  const child = spawn(
    'etcd',
    [
      `--name=${m.name}`,
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${m.client}`,
      `--advertise-client-urls=${m.client}`,
      `--listen-peer-urls=${m.peer}`,
      `--initial-advertise-peer-urls=${m.peer}`,
      `--initial-cluster=${cluster}`,
      '--initial-cluster-state=new',
      '--logger=zap',
      '--log-level=error',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)));
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  return { child, stderr: () => stderr, spawnError: () => spawnError };
}

/** Waits for /health on every member; throws (after cleanup) when one exits or the time runs out. */
async function waitHealthy(members: { client: string; proc: ReturnType<typeof spawnMember> }[], cleanup: () => Promise<void>): Promise<void> {
  const deadline = realClock.now() + STARTUP_MS;
  for (;;) {
    for (const { proc } of members) {
      const err = proc.spawnError();
      if (err) {
        await cleanup();
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
        throw new Error(missing ? 'etcd binary not found on PATH: install it with `apt-get install -y etcd-server`' : `cannot start etcd: ${err.message}`);
      }
      if (proc.child.exitCode !== null) {
        await cleanup();
        throw new Error(`etcd exited with code ${proc.child.exitCode}: ${proc.stderr()}`);
      }
    }
    const health = await Promise.all(
      members.map(({ client }) =>
        fetch(`${client}/health`)
          .then(async (res) => ((await res.json()) as { health?: string }).health === 'true')
          .catch(() => false),
      ),
    );
    if (health.every(Boolean)) return;
    if (realClock.now() > deadline) {
      await cleanup();
      throw new Error(`etcd did not become healthy within ${STARTUP_MS} ms: ${members.map((m) => m.proc.stderr()).join('\n')}`);
    }
    await realClock.sleep(50);
  }
}

export async function startEtcd(): Promise<EtcdServer> {
  const cluster = await startEtcdCluster(1);
  return { endpoint: cluster.endpoints[0]!, stop: () => cluster.stop() };
}

export interface EtcdClusterMember {
  /** host:port of its client endpoint. */
  readonly endpoint: string;
  /** SIGKILL, and wait for the exit (its data dir stays until stop). */
  kill(): Promise<void>;
}

export interface EtcdCluster {
  readonly endpoints: string[];
  readonly members: EtcdClusterMember[];
  /** SIGTERM every member still running, wait, remove the data dirs. */
  stop(): Promise<void>;
}

/** A throwaway etcd cluster of `size` members on loopback, each with its own temporary data dir. */
export async function startEtcdCluster(size: number): Promise<EtcdCluster> {
  const members: Member[] = [];
  for (let i = 0; i < size; i++) members.push({ name: `kite-test-${i}`, client: `http://127.0.0.1:${await freePort()}`, peer: `http://127.0.0.1:${await freePort()}` });
  const initialCluster = members.map((m) => `${m.name}=${m.peer}`).join(',');
  const dataDirs = members.map(() => mkdtempSync(join(tmpdir(), 'kite-etcd-')));
  const procs = members.map((m, i) => spawnMember(m, dataDirs[i]!, initialCluster));
  const signal = async (i: number, sig: NodeJS.Signals) => {
    const { child } = procs[i]!;
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    await exited(child);
  };
  const stop = async () => {
    await Promise.all(procs.map((_, i) => signal(i, 'SIGTERM')));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  };
  await waitHealthy(
    members.map((m, i) => ({ client: m.client, proc: procs[i]! })),
    stop,
  );
  const endpoint = (m: Member) => m.client.slice('http://'.length);
  return {
    endpoints: members.map(endpoint),
    members: members.map((m, i) => ({ endpoint: endpoint(m), kill: () => signal(i, 'SIGKILL') })),
    stop,
  };
}
