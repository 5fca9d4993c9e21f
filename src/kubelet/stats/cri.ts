// Stats from the container runtime (upstream's cri_stats_provider): the running containers of ready
// sandboxes with ListContainerStats' cumulative CPU and working set, grouped into pods by their
// sandbox's metadata. A pod's own figures are the sum of its containers' (upstream reads the pod
// cgroup, which also holds the pause process: a few hundred KiB more).
import type { RuntimeService, ContainerStats as CriContainerStats } from '../runtime/types.js';
import type { ContainerStats, CPUStats, MemoryStats, NodeStatsSource, PodStats, ResourceStats, StatsProvider } from './types.js';

export interface CRIStatsProviderOptions {
  runtime: Pick<RuntimeService, 'listPodSandbox' | 'listContainers' | 'listContainerStats'>;
  node: NodeStatsSource;
  nodeName: string;
}

/** CRI timestamps are nanoseconds since the epoch as decimal strings. */
function nanosToMs(ns: string | number | undefined): number {
  if (ns === undefined || ns === '' || ns === '0' || ns === 0) return 0;
  return Number(BigInt(ns) / 1_000_000n);
}

function cpuOf(s: CriContainerStats): CPUStats | undefined {
  const usage = s.cpu?.usage_core_nano_seconds?.value;
  if (!s.cpu || usage === undefined) return undefined;
  return { time: nanosToMs(s.cpu.timestamp), usageCoreNanoSeconds: Number(usage) };
}

function memoryOf(s: CriContainerStats): MemoryStats | undefined {
  const ws = s.memory?.working_set_bytes?.value;
  if (!s.memory || ws === undefined) return undefined;
  return { time: nanosToMs(s.memory.timestamp), workingSetBytes: Number(ws) };
}

export class CRIStatsProvider implements StatsProvider {
  constructor(private readonly opts: CRIStatsProviderOptions) {}

  async getCPUAndMemoryStats(): Promise<ResourceStats> {
    const { runtime, node, nodeName } = this.opts;
    const [sandboxes, containers, stats, machine] = await Promise.all([
      runtime.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
      runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } }),
      runtime.listContainerStats(),
      node.read(),
    ]);
    const statsById = new Map(stats.map((s) => [s.attributes.id, s]));
    const pods = new Map<string, PodStats>();
    for (const sb of sandboxes) {
      if (sb.state !== 'SANDBOX_READY') continue;
      pods.set(sb.id, { podRef: { name: sb.metadata.name, namespace: sb.metadata.namespace, uid: sb.metadata.uid }, containers: [] });
    }
    for (const c of containers) {
      const pod = pods.get(c.pod_sandbox_id);
      if (!pod || c.state !== 'CONTAINER_RUNNING') continue;
      const s = statsById.get(c.id);
      const container: ContainerStats = { name: c.metadata.name, startTime: Number(c.created_at) / 1e9 };
      const cpu = s && cpuOf(s);
      const memory = s && memoryOf(s);
      if (cpu) container.cpu = cpu;
      if (memory) container.memory = memory;
      pod.containers.push(container);
    }
    const out: PodStats[] = [];
    for (const pod of pods.values()) {
      const cpu = sumCPU(pod.containers);
      const memory = sumMemory(pod.containers);
      if (cpu) pod.cpu = cpu;
      if (memory) pod.memory = memory;
      out.push(pod);
    }
    return { node: { nodeName, ...machine }, pods: out };
  }
}

/** Only when every container has CPU stats (a partial sum would read as a drop in a counter). */
function sumCPU(containers: ContainerStats[]): CPUStats | undefined {
  if (containers.length === 0 || containers.some((c) => !c.cpu)) return undefined;
  return { time: Math.max(...containers.map((c) => c.cpu!.time)), usageCoreNanoSeconds: containers.reduce((n, c) => n + c.cpu!.usageCoreNanoSeconds, 0) };
}

function sumMemory(containers: ContainerStats[]): MemoryStats | undefined {
  if (containers.length === 0 || containers.some((c) => !c.memory)) return undefined;
  return { time: Math.max(...containers.map((c) => c.memory!.time)), workingSetBytes: containers.reduce((n, c) => n + c.memory!.workingSetBytes, 0) };
}
