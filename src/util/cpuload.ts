// How busy the machine's CPUs were between two looks: the share of all CPUs' time, over every CPU,
// that was not idle (from the kernel's per-CPU counters, /proc/stat on Linux, as os.cpus() reads
// them). For work that can wait until the machine has time for it.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Cumulative CPU times, summed over every CPU, in any one unit. */
export interface CpuTimes {
  idle: number;
  total: number;
}

export function machineCpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.idle + times.user + times.nice + times.sys + times.irq;
  }
  return { idle, total };
}

/**
 * A sampler: each call answers the busy share (0–1) since the previous call (the first: since the
 * sampler was made); 0 when no time passed.
 */
export function cpuBusySampler(read: () => CpuTimes = machineCpuTimes): () => number {
  let last = read();
  return () => {
    const now = read();
    const total = now.total - last.total;
    const idle = now.idle - last.idle;
    last = now;
    return total > 0 ? Math.min(1, Math.max(0, 1 - idle / total)) : 0;
  };
}

/** CPU time a process has used (user and system, every thread), in milliseconds; 0 when /proc does not say. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // utime and stime, in USER_HZ ticks (100 a second), are the 12th and 13th fields after the parenthesised name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The machine's CPU times with a process's own CPU counted as idle: how busy the rest of the machine is. */
export function machineCpuTimesBesides(pid: number): CpuTimes {
  const { idle, total } = machineCpuTimes();
  return { idle: idle + processCpuMs(pid), total };
}
