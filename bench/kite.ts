// What the benchmarks that run `kite server` and `kite sim` as processes share: spawning them from
// dist (ready when a line of their stdout matches), a fresh server + sim cluster per run, following
// a watch across reconnects, and waiting for a condition with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { RestClient } from '../src/client/rest.js';

const kiteBin = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));

export interface Proc {
  proc: ChildProcess;
  stop(): Promise<void>;
  /** The last of what it wrote to stderr (its log at KITE_LOG_LEVEL, warn unless set). */
  stderr(): string;
}

export function spawnKite(argv: string[], ready: RegExp, nodeArgs: string[] = []): Promise<Proc & { match: RegExpExecArray }> {
  const proc = spawn(process.execPath, [...nodeArgs, kiteBin, ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KITE_LOG_LEVEL: process.env.KITE_LOG_LEVEL ?? 'warn' } });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 100_000) stderr = stderr.slice(-50_000);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const line of lines) {
        const m = ready.exec(line);
        if (m) resolve({ proc, match: m, stderr: () => stderr, stop: async () => (proc.exitCode === null && proc.signalCode === null && proc.kill('SIGTERM'), await exited) });
      }
    });
    proc.once('exit', (code) => reject(new Error(`kite ${argv[0]} exited with ${code}:\n${stderr.slice(-4000)}`)));
  });
}

export interface ClusterOptions {
  /** `kite sim --nodes`. */
  nodes: number;
  /** Created before the run. */
  namespace: string;
  /** Appended to `kite server`'s flags. */
  serverArgs?: string[];
}

/** A fresh `kite server` + `kite sim` with the namespace made; run, then torn down. */
export async function withCluster<T>(opts: ClusterOptions, run: (rest: RestClient, server: Proc, signal: AbortSignal) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'kite-bench-'));
  const abort = new AbortController();
  let server: Proc | undefined;
  let sim: Proc | undefined;
  try {
    server = await spawnKite(['server', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0', ...(opts.serverArgs ?? [])], /listening on (https:\/\/\S+)/);
    const kubeconfig = join(dir, 'data', 'admin.kubeconfig');
    const rest = new RestClient(await loadKubeconfig(kubeconfig));
    sim = await spawnKite(['sim', '--kubeconfig', kubeconfig, '--nodes', String(opts.nodes)], /nodes registered in/);
    await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace } } });
    try {
      return await run(rest, server, abort.signal);
    } finally {
      abort.abort();
      rest.close();
    }
  } finally {
    await sim?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Follows a watch from a list's resourceVersion, resuming after the stream ends, until aborted. */
export function follow<T extends { metadata: { resourceVersion?: string } }>(rest: RestClient, path: string, rv: string, onEvent: (type: string, obj: T) => void, signal: AbortSignal): Promise<void> {
  return (async () => {
    while (!signal.aborted) {
      try {
        for await (const e of rest.watch<T>({ path, query: { watch: true, resourceVersion: rv, allowWatchBookmarks: true }, signal })) {
          if (e.type === 'ERROR') throw new Error(JSON.stringify(e.object));
          if (e.object.metadata.resourceVersion) rv = e.object.metadata.resourceVersion;
          if (e.type !== 'BOOKMARK') onEvent(e.type, e.object);
        }
      } catch (err) {
        if (signal.aborted) return;
        console.error(`watch ${path} ended: ${String(err)}; resuming from ${rv}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
}

/** Runs fn(0), fn(1), … fn(count - 1), `width` at a time. */
export async function pool(count: number, width: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(cond: () => boolean, timeoutMs: number, what: string): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) {
      console.error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
      return false;
    }
    await sleep(20);
  }
  return true;
}

