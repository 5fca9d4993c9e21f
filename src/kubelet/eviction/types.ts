// What the eviction manager observes (the parts of upstream's stats Summary it reads) and the two
// node-level reclaimers it calls before evicting for disk, implemented by the kubelet's image and
// container garbage collectors.

import type { FsStats } from '../stats/types.js';

export type { FsStats };

export interface ContainerUsage {
  name: string;
  /** Working set bytes, when the runtime reports them. */
  memory?: number;
  /** Writable layer plus logs, in bytes. */
  disk?: number;
}

export interface PodUsage {
  uid: string;
  containers: ContainerUsage[];
  /** The pod's memory working set (its containers'). */
  memory?: number;
  /** Bytes and inodes on the node's filesystem: writable layers, logs and local volumes. */
  disk?: number;
  inodes?: number;
  /** Processes (threads) in the pod's cgroup. */
  processes?: number;
}

export interface EvictionSummary {
  /** When the figures were read (ms since the epoch). */
  time: number;
  /** The machine's memory: MemTotal and the root cgroup's working set. */
  memory?: { capacityBytes: number; workingSetBytes: number };
  /** The pods' cgroup: its allocatable budget and working set. */
  allocatableMemory?: { capacityBytes: number; workingSetBytes: number };
  /** The filesystem of the kubelet's root directory. */
  nodeFs?: FsStats;
  /** The runtime's image filesystem (CRI ImageFsInfo's mountpoint). */
  imageFs?: FsStats;
  /** pid_max / threads-max against the tasks the kernel runs. */
  pids?: { maxPID: number; running: number };
  pods: PodUsage[];
}

/** Upstream's summary provider, as the eviction manager uses it. */
export interface EvictionStatsProvider {
  get(): Promise<EvictionSummary>;
}

/** Deletes unused images; resolves with the bytes freed (the image garbage collector). */
export interface ImageGC {
  deleteUnusedImages(): Promise<number>;
}

/** Deletes every dead container that is not needed (the container garbage collector). */
export interface ContainerGC {
  deleteAllUnusedContainers(): Promise<void>;
}
