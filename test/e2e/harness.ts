// End-to-end harness: runs the built `kite` binary as a child process and the real kubectl
// against it, each test with its own data directory and kubectl cache.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const kiteBin = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
/** The project's own examples (the seeds' pod and service), as the README uses them. */
export const examplesDir = join(repoRoot, 'examples');

export interface KiteServer {
  url: string;
  port: number;
  dataDir: string;
  kubeconfig: string;
  proc: ChildProcess;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface ServerOptions {
  dataDir?: string;
  store?: string;
  /** Reuse a port (restarts); 0 picks a free one. */
  port?: number;
  extraArgs?: string[];
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `kite-${prefix}-`));
}

export async function startServer(opts: ServerOptions = {}): Promise<KiteServer> {
  const dataDir = opts.dataDir ?? tempDir('data');
  const args = ['server', '--data-dir', dataDir, '--listen', `127.0.0.1:${opts.port ?? 0}`, ...(opts.store ? ['--store', opts.store] : []), ...(opts.extraArgs ?? [])];
  const kite = await spawnKite(args, { what: 'kite server', ready: (out) => /listening on (https:\/\/\S+)/.exec(out)?.[1] });
  return {
    url: kite.ready,
    port: Number(new URL(kite.ready).port),
    dataDir,
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
    proc: kite.proc,
    stop: () => kite.signal('SIGTERM'),
    kill: () => kite.signal('SIGKILL'),
  };
}

export interface SpawnedKite<T> {
  proc: ChildProcess;
  /** What `ready` found on stdout. */
  ready: T;
  /** Its stderr so far, for failure messages. */
  stderr(): string;
  /** Sends sig unless it has exited already, and waits for the exit. */
  signal(sig: NodeJS.Signals): Promise<void>;
}

export interface SpawnKiteOptions<T> {
  /** Names the process in failure messages ("kite up"). */
  what: string;
  /** Looks at all stdout so far; a value other than undefined means ready. */
  ready: (stdout: string) => T | undefined;
  /** Unset waits for as long as the process lives. */
  timeoutMs?: number;
}

/** Runs the built `kite <args>` and resolves once its stdout says it is ready. */
export async function spawnKite<T>(args: string[], opts: SpawnKiteOptions<T>): Promise<SpawnedKite<T>> {
  const proc = spawn(process.execPath, [kiteBin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KITE_LOG_LEVEL: process.env.KITE_LOG_LEVEL ?? 'warn' } });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (process.env.KITE_TEST_VERBOSE) process.stderr.write(d);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const ready = await new Promise<T>((resolve, reject) => {
    let out = '';
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => reject(new Error(`${opts.what} was not ready in time:\n${out}\n${stderr}`)), opts.timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const value = opts.ready(out);
      if (value !== undefined) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        resolve(value);
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${opts.what} exited with ${code} before it was ready:\n${out}\n${stderr}`));
    });
  });
  proc.stdout!.resume();
  return {
    proc,
    ready,
    stderr: () => stderr,
    signal: async (sig) => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(sig);
      await exited;
    },
  };
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The real kubectl, with its own discovery cache so each server is seen fresh. */
export function kubectl(server: { kubeconfig: string }, args: string[], input?: string, cacheDir?: string): CommandResult {
  const r = spawnSync('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', cacheDir ?? join(server.kubeconfig, '..', 'kubectl-cache'), ...args], {
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** kubectl that must succeed; returns stdout. */
export function kubectlOk(server: { kubeconfig: string }, args: string[], input?: string): string {
  const r = kubectl(server, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Polls `read` until its text matches `re`; a timeout names the last text seen. */
export async function eventuallyMatches(read: () => string, re: RegExp, what: string, timeoutMs?: number): Promise<string> {
  let last = '';
  try {
    return await eventually(() => ((last = read()), re.test(last) ? last : undefined), `${what} to match ${re}`, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last: ${last}`, { cause: err });
  }
}

/** Polls until fn returns a value (not undefined), for state that converges. */
export async function eventually<T>(fn: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface KiteSim {
  proc: ChildProcess;
  /** Milliseconds from spawn until the sim reported every node registered. */
  registeredMs: number;
  stop(): Promise<void>;
}

/**
 * Runs `kite sim --kubeconfig K --nodes N [--node-template F]` from dist and resolves once it reports
 * every node registered (nodes are named sim-0..sim-N-1; one sim per cluster).
 */
export async function startSim(server: { kubeconfig: string }, nodes: number, opts: { nodeTemplate?: string; extraArgs?: string[]; timeoutMs?: number } = {}): Promise<KiteSim> {
  const args = ['sim', '--kubeconfig', server.kubeconfig, '--nodes', String(nodes), ...(opts.nodeTemplate ? ['--node-template', opts.nodeTemplate] : []), ...(opts.extraArgs ?? [])];
  const started = Date.now();
  const kite = await spawnKite(args, { what: `kite sim (${nodes} nodes)`, ready: (out) => (/nodes registered in/.test(out) ? Date.now() - started : undefined), timeoutMs: opts.timeoutMs ?? 120_000 });
  return { proc: kite.proc, registeredMs: kite.ready, stop: () => kite.signal('SIGTERM') };
}

/**
 * A ReplicaSet "web" in default: `replicas` busybox pods (app=web) that sleep for an hour and stop
 * within `terminationGracePeriodSeconds` (default 1); `containerPort` names a port `http`.
 */
export const webReplicaSet = (replicas: number, opts: { terminationGracePeriodSeconds?: number; containerPort?: number } = {}) => `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
  namespace: default
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      terminationGracePeriodSeconds: ${opts.terminationGracePeriodSeconds ?? 1}
      containers:
      - name: main
        image: busybox:1.35
        command: ['sleep', '3600']
${opts.containerPort ? `        ports:\n        - name: http\n          containerPort: ${opts.containerPort}\n` : ''}`;

export interface SimCluster {
  readonly server: KiteServer;
  readonly sim: KiteSim;
}

/**
 * A kite server with a kite sim of `nodes` nodes for the tests of the enclosing describe: started
 * before them; stopped, and its data directory removed, after them.
 */
export function simCluster(nodes: number, opts: ServerOptions = {}): SimCluster {
  let server: KiteServer | undefined;
  let sim: KiteSim | undefined;
  before(async () => {
    server = await startServer(opts);
    sim = await startSim(server, nodes);
  });
  after(async () => {
    await sim?.stop();
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });
  return {
    get server() {
      return server!;
    },
    get sim() {
      return sim!;
    },
  };
}

/** A plain HTTP GET (to a pod IP, or a port-forward): the status and the body. */
export async function httpGetText(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}
