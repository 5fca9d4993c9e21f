// The node's eviction signals read from the host, as upstream's summary provider gathers them from
// cAdvisor and the runtime: the machine's memory (MemTotal and the root cgroup's working set, from
// stats/node.ts), the pods' cgroup against the allocatable memory, statfs of the kubelet's root
// directory (nodefs) and of the runtime's image filesystem (CRI ImageFsInfo), pid_max/threads-max
// against the kernel's tasks, and per pod: memory from the CRI stats (stats/cri.ts), disk as what
// its directory and logs hold on the node's filesystem (du -x; writable
// layers are not counted), processes from its pids cgroup.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../../util/clock.js';
import type { ImageService } from '../runtime/types.js';
import type { NodeStatsSource, StatsProvider } from '../stats/types.js';
import { filesystemStats, readOptional as read, statField, workingSetBytes } from '../stats/node.js';
import { imageFsStats } from '../images/gc.js';
import { podCgroupParent } from '../cm/cgroups.js';
import type { EvictionStatsProvider, EvictionSummary, PodUsage } from './types.js';

export interface HostEvictionStatsOptions {
  clock: Clock;
  /** The pods' CPU and memory (the kubelet's CRIStatsProvider). */
  pods: StatsProvider;
  node: NodeStatsSource;
  runtime: Pick<ImageService, 'imageFsInfo'>;
  /** MemTotal in bytes. */
  memoryCapacity: () => Promise<number>;
  /** The pods' budget: the node's allocatable memory in bytes. */
  allocatableMemory: () => Promise<number>;
  rootDir: string;
  podLogsDir: string;
  /** The kubelet's pod cgroup root (cfg.cgroupRoot). */
  cgroupRoot: string;
  /** Where the cgroup hierarchies and procfs are mounted (tests). */
  sysCgroup?: string;
  proc?: string;
}

export class HostEvictionStats implements EvictionStatsProvider {
  constructor(private readonly opts: HostEvictionStatsOptions) {}

  private get sysCgroup(): string {
    return this.opts.sysCgroup ?? '/sys/fs/cgroup';
  }

  private get proc(): string {
    return this.opts.proc ?? '/proc';
  }

  async get(): Promise<EvictionSummary> {
    const { opts } = this;
    const [resources, capacity, allocatable, podsWorkingSet, nodeFs, imageFs, pids] = await Promise.all([
      opts.pods.getCPUAndMemoryStats(),
      opts.memoryCapacity(),
      opts.allocatableMemory(),
      this.cgroupWorkingSet(opts.cgroupRoot),
      // A filesystem that cannot be read is left out of the summary (no signal, no eviction for it).
      filesystemStats(opts.rootDir).catch(() => undefined),
      imageFsStats(opts.runtime).catch(() => undefined),
      this.pids(),
    ]);
    const summary: EvictionSummary = { time: opts.clock.now(), pods: [], allocatableMemory: { capacityBytes: allocatable, workingSetBytes: podsWorkingSet ?? 0 } };
    const ws = resources.node.memory?.workingSetBytes;
    if (ws !== undefined) summary.memory = { capacityBytes: capacity, workingSetBytes: ws };
    if (nodeFs) summary.nodeFs = nodeFs;
    if (imageFs) summary.imageFs = imageFs;
    if (pids) summary.pids = pids;
    summary.pods = await Promise.all(
      resources.pods.map(async (p): Promise<PodUsage> => {
        const logs = join(opts.podLogsDir, `${p.podRef.namespace}_${p.podRef.name}_${p.podRef.uid}`);
        const [dir, logUsage, processes, containerLogs] = await Promise.all([
          diskUsage(join(opts.rootDir, 'pods', p.podRef.uid)),
          diskUsage(logs),
          this.podProcesses(p.podRef.uid),
          Promise.all(p.containers.map((c) => diskUsage(join(logs, c.name)))),
        ]);
        const usage: PodUsage = {
          uid: p.podRef.uid,
          // A container's own disk is its logs (the runtime's writable-layer figure is not read).
          containers: p.containers.map((c, i) => ({ name: c.name, disk: containerLogs[i]!.bytes, ...(c.memory ? { memory: c.memory.workingSetBytes } : {}) })),
          disk: dir.bytes + logUsage.bytes,
          inodes: dir.inodes + logUsage.inodes,
        };
        if (p.memory) usage.memory = p.memory.workingSetBytes;
        if (processes !== undefined) usage.processes = processes;
        return usage;
      }),
    );
    return summary;
  }

  /** A cgroup's working set: v1's memory controller, else the v2 unified file. */
  private async cgroupWorkingSet(path: string): Promise<number | undefined> {
    const v1 = join(this.sysCgroup, 'memory', path);
    const [usage, stat] = await Promise.all([read(join(v1, 'memory.usage_in_bytes')), read(join(v1, 'memory.stat'))]);
    if (usage !== undefined && stat !== undefined) return workingSetBytes(Number(usage.trim()), statField(stat, 'total_inactive_file') ?? 0);
    const v2 = join(this.sysCgroup, path);
    const [current, stat2] = await Promise.all([read(join(v2, 'memory.current')), read(join(v2, 'memory.stat'))]);
    if (current !== undefined && stat2 !== undefined) return workingSetBytes(Number(current.trim()), statField(stat2, 'inactive_file') ?? 0);
    return undefined;
  }

  /** pidlimit.Stats: the smaller of pid_max and threads-max, and the tasks the kernel runs (loadavg's total). */
  private async pids(): Promise<EvictionSummary['pids']> {
    const [pidMax, threadsMax, loadavg] = await Promise.all([read(join(this.proc, 'sys/kernel/pid_max')), read(join(this.proc, 'sys/kernel/threads-max')), read(join(this.proc, 'loadavg'))]);
    const running = Number(/\s\d+\/(\d+)\s/.exec(loadavg ?? '')?.[1]);
    const limits = [pidMax, threadsMax].map((s) => Number(s?.trim())).filter((n) => Number.isFinite(n) && n > 0);
    if (limits.length === 0 || !Number.isFinite(running)) return undefined;
    return { maxPID: Math.min(...limits), running };
  }

  /** pids.current of the pod's cgroup, under whichever QoS folder it is in. */
  private async podProcesses(uid: string): Promise<number | undefined> {
    for (const qos of ['Guaranteed', 'Burstable', 'BestEffort'] as const) {
      const path = podCgroupParent(qos, uid, this.opts.cgroupRoot);
      const current = (await read(join(this.sysCgroup, 'pids', path, 'pids.current'))) ?? (await read(join(this.sysCgroup, path, 'pids.current')));
      if (current !== undefined) return Number(current.trim());
    }
    return undefined;
  }
}

/** Bytes (allocated blocks) and inodes under dir, staying on its filesystem as du -x: memory-backed emptyDirs are not disk. */
export async function diskUsage(dir: string): Promise<{ bytes: number; inodes: number }> {
  const total = { bytes: 0, inodes: 0 };
  let root;
  try {
    root = await lstat(dir);
  } catch {
    return total;
  }
  const walk = async (path: string, st: Awaited<ReturnType<typeof lstat>>): Promise<void> => {
    if (st.dev !== root.dev) return;
    total.bytes += Number(st.blocks) * 512;
    total.inodes += 1;
    if (!st.isDirectory()) return;
    const entries = await readdir(path).catch(() => [] as string[]);
    for (const name of entries) {
      const child = join(path, name);
      const cst = await lstat(child).catch(() => undefined);
      if (cst) await walk(child, cst);
    }
  };
  await walk(dir, root);
  return total;
}
