// What the benchmarks that run `kite server` and `kite sim` as processes share: spawning them from
// dist (ready when a line of their stdout matches), following a watch across reconnects, and waiting
// for a condition with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RestClient } from '../src/client/rest.js';

const kiteBin = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));

export interface Proc {
  proc: ChildProcess;
  stop(): Promise<void>;
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
        if (m) resolve({ proc, match: m, stop: async () => (proc.exitCode === null && proc.signalCode === null && proc.kill('SIGTERM'), await exited) });
      }
    });
    proc.once('exit', (code) => reject(new Error(`kite ${argv[0]} exited with ${code}:\n${stderr.slice(-4000)}`)));
  });
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

