// The node's own CPU and memory, as cAdvisor reports the root cgroup: cumulative CPU from
// cpuacct.usage (cgroup v1) or cpu.stat usage_usec (v2), else /proc/stat; the working set is usage
// minus inactive file pages, from the v1 memory controller's root or else /proc/meminfo.
import { readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../util/clock.js';
import type { CPUStats, FsStats, MemoryStats, NodeStatsSource } from './types.js';

export interface CgroupNodeStatsOptions {
  clock: Clock;
  /** Where the cgroup hierarchies are mounted (default /sys/fs/cgroup). */
  cgroupRoot?: string;
  /** Where procfs is mounted (default /proc). */
  procRoot?: string;
}

/** USER_HZ: /proc/stat counts clock ticks of 1/100 s on Linux. */
const NANOS_PER_TICK = 10_000_000;

export class CgroupNodeStats implements NodeStatsSource {
  private readonly cgroupRoot: string;
  private readonly procRoot: string;

  constructor(private readonly opts: CgroupNodeStatsOptions) {
    this.cgroupRoot = opts.cgroupRoot ?? '/sys/fs/cgroup';
    this.procRoot = opts.procRoot ?? '/proc';
  }

  async read(): Promise<{ cpu?: CPUStats; memory?: MemoryStats }> {
    const time = this.opts.clock.now();
    const [usage, workingSet] = await Promise.all([this.cpuUsage(), this.workingSet()]);
    return {
      ...(usage !== undefined ? { cpu: { time, usageCoreNanoSeconds: usage } } : {}),
      ...(workingSet !== undefined ? { memory: { time, workingSetBytes: workingSet } } : {}),
    };
  }

  private async cpuUsage(): Promise<number | undefined> {
    for (const dir of ['cpuacct', 'cpu,cpuacct']) {
      const text = await readOptional(join(this.cgroupRoot, dir, 'cpuacct.usage'));
      if (text !== undefined && /^\d+\s*$/.test(text)) return Number(text.trim());
    }
    const v2 = await readOptional(join(this.cgroupRoot, 'cpu.stat'));
    const usec = v2 !== undefined ? statField(v2, 'usage_usec') : undefined;
    if (usec !== undefined) return usec * 1000;
    const proc = await readOptional(join(this.procRoot, 'stat'));
    return proc !== undefined ? procStatUsageNanos(proc) : undefined;
  }

  private async workingSet(): Promise<number | undefined> {
    const memory = join(this.cgroupRoot, 'memory');
    const [usage, stat] = await Promise.all([readOptional(join(memory, 'memory.usage_in_bytes')), readOptional(join(memory, 'memory.stat'))]);
    if (usage !== undefined && stat !== undefined) {
      return workingSetBytes(Number(usage.trim()), statField(stat, 'total_inactive_file') ?? 0);
    }
    const meminfo = await readOptional(join(this.procRoot, 'meminfo'));
    return meminfo !== undefined ? meminfoWorkingSet(meminfo) : undefined;
  }
}

/** cAdvisor's working set: usage less inactive file pages, never below zero. */
export function workingSetBytes(usage: number, inactiveFile: number): number {
  return Math.max(0, usage - inactiveFile);
}

/** A "key value" line of a cgroup stat file (memory.stat, cpu.stat). */
export function statField(text: string, key: string): number | undefined {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Busy CPU time of the aggregate "cpu" line (user, nice, system, irq, softirq, steal), in nanoseconds. */
export function procStatUsageNanos(text: string): number | undefined {
  const line = /^cpu\s+(.*)$/m.exec(text)?.[1];
  if (!line) return undefined;
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) * NANOS_PER_TICK;
}

/** MemTotal - MemFree - Inactive(file), in bytes (meminfo counts kB). */
export function meminfoWorkingSet(text: string): number | undefined {
  const kb = (key: string) => {
    const m = new RegExp(`^${key.replace(/[()]/g, '\\$&')}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kb('MemTotal');
  const free = kb('MemFree');
  if (total === undefined || free === undefined) return undefined;
  return workingSetBytes(total - free, kb('Inactive(file)') ?? 0);
}

export async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The filesystem holding path, from statfs (bytes available to unprivileged users, as cadvisor counts them). */
export async function filesystemStats(path: string): Promise<FsStats> {
  const s = await statfs(path);
  return { availableBytes: Number(s.bavail) * Number(s.bsize), capacityBytes: Number(s.blocks) * Number(s.bsize), inodesFree: Number(s.ffree), inodes: Number(s.files) };
}
