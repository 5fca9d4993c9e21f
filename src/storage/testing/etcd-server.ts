// A throwaway single-member etcd for tests: Debian's `etcd` binary (package etcd-server) on free
// loopback ports with a temporary data dir. A missing binary is an error, never a skip, so CI
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

export async function startEtcd(): Promise<EtcdServer> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'kite-etcd-'));
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    'etcd',
    [
      '--name=kite-test',
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=kite-test=${peer}`,
      '--logger=zap',
      '--log-level=error',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4000)));
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const cleanup = async () => {
    child.kill('SIGTERM');
    await exited(child);
    rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = realClock.now() + STARTUP_MS;
  for (;;) {
    if (spawnError) {
      rmSync(dataDir, { recursive: true, force: true });
      const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(missing ? 'etcd binary not found on PATH: install it with `apt-get install -y etcd-server`' : `cannot start etcd: ${spawnError.message}`);
    }
    if (child.exitCode !== null) {
      await cleanup();
      throw new Error(`etcd exited with code ${child.exitCode}: ${stderr}`);
    }
    const healthy = await fetch(`${client}/health`)
      .then(async (res) => ((await res.json()) as { health?: string }).health === 'true')
      .catch(() => false);
    if (healthy) return { endpoint: `127.0.0.1:${clientPort}`, stop: cleanup };
    if (realClock.now() > deadline) {
      await cleanup();
      throw new Error(`etcd did not become healthy within ${STARTUP_MS} ms: ${stderr}`);
    }
    await realClock.sleep(50);
  }
}
