// The subset of the kubelet's stats summary (k8s.io/kubelet/pkg/apis/stats/v1alpha1) that
// /metrics/resource is made of: cumulative CPU and the memory working set of the node, each pod and
// each of its running containers. Times are milliseconds since the epoch.

export interface CPUStats {
  time: number;
  /** Cumulative CPU time since the container (or machine) started, in core-nanoseconds. */
  usageCoreNanoSeconds: number;
}

export interface MemoryStats {
  time: number;
  /** Usage minus inactive file pages: what the kernel cannot reclaim easily. */
  workingSetBytes: number;
}

export interface ContainerStats {
  name: string;
  /** When the container was created, in seconds since the epoch (the runtime's created_at). */
  startTime: number;
  cpu?: CPUStats;
  memory?: MemoryStats;
}

export interface PodReference {
  name: string;
  namespace: string;
  uid: string;
}

export interface PodStats {
  podRef: PodReference;
  containers: ContainerStats[];
  cpu?: CPUStats;
  memory?: MemoryStats;
}

export interface NodeStats {
  nodeName: string;
  cpu?: CPUStats;
  memory?: MemoryStats;
}

export interface ResourceStats {
  node: NodeStats;
  pods: PodStats[];
}

/** Upstream's SummaryProvider.GetCPUAndMemoryStats. */
export interface StatsProvider {
  getCPUAndMemoryStats(): Promise<ResourceStats>;
}

/** The machine as a whole (the root cgroup, as cAdvisor reports it for the node). */
export interface NodeStatsSource {
  read(): Promise<Pick<NodeStats, 'cpu' | 'memory'>>;
}

/** A filesystem: bytes and inodes, as statfs reports them. */
export interface FsStats {
  availableBytes: number;
  capacityBytes: number;
  inodesFree?: number;
  inodes?: number;
}
