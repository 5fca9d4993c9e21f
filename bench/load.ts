// Open-loop load: operations start on a fixed schedule whatever the latency, and each latency is
// measured from its scheduled start, so a server that falls behind shows it (no coordinated omission).
import { readFileSync } from 'node:fs';

export interface LoadResult {
  offered: number;
  achieved: number;
  p50: number;
  p99: number;
  errors: number;
  /** Operations that completed. */
  done: number;
  /** CPU the serving side spent per completed operation, in microseconds, when measured. */
  cpuUsPerOp?: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs op(i) for i = 0..rate*seconds-1 at `rate` per second; resolves when all have finished. */
export async function openLoop(rate: number, seconds: number, op: (i: number) => Promise<unknown>): Promise<LoadResult> {
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const running: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    // Latency counts from the schedule when the start is late (the lag is the server's doing), and
    // from the start itself when it is early (operations within 1 ms of their time start at once).
    const from = Math.min(due, performance.now());
    running.push(
      op(i).then(
        () => {
          latencies.push(performance.now() - from);
        },
        () => {
          errors++;
        },
      ),
    );
  }
  await Promise.all(running);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { offered: rate, achieved: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors, done: latencies.length };
}

export function row(name: string, r: LoadResult): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
  return `| ${name} | ${r.offered} | ${r.achieved.toFixed(0)} | ${f(r.p50)} | ${f(r.p99)} | ${r.errors} | ${r.cpuUsPerOp === undefined ? '-' : r.cpuUsPerOp.toFixed(0)} |`;
}

export const header = '| operation | offered/s | achieved/s | p50 ms | p99 ms | errors | server CPU µs/op |\n|---|---|---|---|---|---|---|';

/** A meter of the CPU milliseconds (user + system, all threads) a process has used so far. */
export function processCpu(pid: number): () => number {
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  return () => {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * tick;
  };
}

/** Runs a load and adds the CPU the serving side spent per completed operation. */
export async function withCpu(cpuMs: () => number, run: () => Promise<LoadResult>): Promise<LoadResult> {
  const before = cpuMs();
  const r = await run();
  return { ...r, cpuUsPerOp: ((cpuMs() - before) * 1000) / Math.max(1, r.done) };
}
