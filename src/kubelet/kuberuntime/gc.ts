// Dead-container garbage collection (upstream's pkg/kubelet/kuberuntime/kuberuntime_gc.go), every
// minute: containers that are not running, grouped per (pod UID, container name) — the "evict
// unit" — keep only the newest maxPerPodContainer (the newest dead attempt carries the last state
// and restart count the status shows), and at most maxContainers overall, oldest removed first;
// everything of a pod whose content may go (deleted and terminated, or unknown once the API is
// synced) is removed. Sandboxes keep only the newest per pod, and none of a pod whose content may
// go; a ready sandbox or one that still has containers is never removed. The pod log directories
// of such pods go too. Running containers of pods that are gone are the housekeeping's (the
// kubelet's cleanupOrphans stops them; their remains are collected here).
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventRecorder, InvolvedObject } from '../../client/record/recorder.js';
import type { Clock } from '../../util/clock.js';
import { Periodic } from '../../util/periodic.js';
import type { KubeletConfig } from '../config.js';
import { CONTAINER_GC_FAILED } from '../events.js';
import { formatRuntimeError, isNotFound, type ContainerState, type Runtime } from '../runtime/types.js';
import { MINIMUM_GRACE_PERIOD_SECONDS } from './grace.js';
import { containerIdentity } from './labels.js';
import { nanosToMs } from './runtime-state.js';

/** Upstream's ContainerGCPeriod. */
export const CONTAINER_GC_PERIOD_MS = 60_000;

/** What the pod workers know (upstream's podStateProvider). */
export interface PodStateProvider {
  /** Nothing of the pod is needed any more: it is deleted and terminated, or unknown. */
  shouldPodContentBeRemoved(uid: string): boolean;
  /** The pod's containers will not run again: it is terminated, or unknown. */
  shouldPodRuntimeBeRemoved(uid: string): boolean;
}

export interface ContainerGCConfig {
  runtime: Pick<Runtime, 'listContainers' | 'listPodSandbox' | 'containerStatus' | 'stopContainer' | 'removeContainer' | 'stopPodSandbox' | 'removePodSandbox'>;
  pods: PodStateProvider;
  /** The pods the API has are all known (the informer synced): unknown pods may be collected. */
  allSourcesReady: () => boolean;
  cfg: Pick<KubeletConfig, 'minimumContainerTTLMs' | 'maxPerPodContainer' | 'maxContainers' | 'podLogsDir'>;
  clock: Clock;
  recorder: EventRecorder;
  nodeRef: InvolvedObject;
  log: (msg: string, err?: unknown) => void;
}

interface ContainerGCInfo {
  id: string;
  name: string;
  createdAt: number;
  /** Breaks ties between attempts created in the same instant. */
  restartCount: number;
  state: ContainerState;
}

interface SandboxGCInfo {
  id: string;
  createdAt: number;
  /** Ready, or still holding containers: never removed. */
  active: boolean;
}

/** Newest first (upstream's byCreated). */
function byCreated(a: ContainerGCInfo, b: ContainerGCInfo): number {
  return b.createdAt - a.createdAt || b.restartCount - a.restartCount;
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

export class ContainerGC {
  private readonly periodic: Periodic;

  constructor(private readonly config: ContainerGCConfig) {
    this.periodic = new Periodic({
      clock: config.clock,
      periodMs: CONTAINER_GC_PERIOD_MS,
      run: () =>
        this.garbageCollect().catch((err: unknown) => {
          config.recorder.event(config.nodeRef, 'Warning', CONTAINER_GC_FAILED, formatRuntimeError(err));
          throw err;
        }),
      onError: (err) => config.log('Container garbage collection failed', err),
    });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** DeleteAllUnusedContainers, for the eviction manager: also every dead container of terminated pods still in the API. */
  deleteAllUnusedContainers(): Promise<void> {
    return this.garbageCollect(true);
  }

  /** One collection; evictNonDeletedPods also takes what terminated (not deleted) pods keep. */
  async garbageCollect(evictNonDeletedPods = false): Promise<void> {
    const ready = this.config.allSourcesReady();
    const removable = (uid: string) => ready && (this.config.pods.shouldPodContentBeRemoved(uid) || (evictNonDeletedPods && this.config.pods.shouldPodRuntimeBeRemoved(uid)));
    await this.evictContainers(removable);
    await this.evictSandboxes(removable);
    if (ready) await this.evictPodLogsDirectories();
  }

  private async evictContainers(removable: (uid: string) => boolean): Promise<void> {
    const { maxPerPodContainer, maxContainers, minimumContainerTTLMs } = this.config.cfg;
    const newestGCTime = this.config.clock.now() - minimumContainerTTLMs;
    // Evict units: the containers not running and old enough, per (pod UID, container name).
    const units = new Map<string, { uid: string; containers: ContainerGCInfo[] }>();
    for (const c of await this.config.runtime.listContainers()) {
      const who = containerIdentity(c.labels, c.annotations);
      const createdAt = nanosToMs(c.created_at) ?? 0;
      if (!who || c.state === 'CONTAINER_RUNNING' || createdAt > newestGCTime) continue;
      const key = `${who.podUID}/${who.containerName}`;
      const unit = units.get(key) ?? { uid: who.podUID, containers: [] };
      unit.containers.push({ id: c.id, name: who.containerName, createdAt, restartCount: who.restartCount, state: c.state });
      units.set(key, unit);
    }
    for (const unit of units.values()) unit.containers.sort(byCreated);

    for (const [key, unit] of units) {
      if (!removable(unit.uid)) continue;
      await this.removeOldestN(unit.containers, unit.containers.length);
      units.delete(key);
    }
    if (maxPerPodContainer >= 0) await this.enforceMaxPerEvictUnit(units, maxPerPodContainer);

    const count = () => [...units.values()].reduce((n, u) => n + u.containers.length, 0);
    if (maxContainers < 0 || count() <= maxContainers) return;
    // An equal share per unit (at least one), then the oldest overall.
    await this.enforceMaxPerEvictUnit(units, Math.max(1, Math.floor(maxContainers / units.size)));
    if (count() <= maxContainers) return;
    const flattened = [...units.values()].flatMap((u) => u.containers).sort(byCreated);
    await this.removeOldestN(flattened, flattened.length - maxContainers);
  }

  private async enforceMaxPerEvictUnit(units: Map<string, { containers: ContainerGCInfo[] }>, max: number): Promise<void> {
    for (const unit of units.values()) {
      if (unit.containers.length > max) unit.containers = await this.removeOldestN(unit.containers, unit.containers.length - max);
    }
  }

  /** Removes the last n of a newest-first list; answers the ones kept. */
  private async removeOldestN(containers: ContainerGCInfo[], n: number): Promise<ContainerGCInfo[]> {
    const keep = containers.length - n;
    for (const c of containers.slice(keep)) {
      try {
        // A container in an unknown state may still run: stop it first, as upstream kills it.
        if (c.state === 'CONTAINER_UNKNOWN') await this.config.runtime.stopContainer(c.id, MINIMUM_GRACE_PERIOD_SECONDS);
        await this.removeContainer(c.id);
      } catch (err) {
        if (!isNotFound(err)) this.config.log(`removing dead container ${c.name} (${c.id})`, err);
      }
    }
    return containers.slice(0, keep);
  }

  /** The container and its log file (upstream's removeContainer with removeContainerLog). */
  private async removeContainer(id: string): Promise<void> {
    const status = await this.config.runtime.containerStatus(id);
    if (status.log_path) await rm(status.log_path, { force: true });
    await this.config.runtime.removeContainer(id);
  }

  private async evictSandboxes(removable: (uid: string) => boolean): Promise<void> {
    const [sandboxes, containers] = await Promise.all([this.config.runtime.listPodSandbox(), this.config.runtime.listContainers()]);
    const withContainers = new Set(containers.map((c) => c.pod_sandbox_id));
    const byPod = new Map<string, SandboxGCInfo[]>();
    for (const s of sandboxes) {
      const uid = s.metadata?.uid;
      if (!uid) continue;
      pushTo(byPod, uid, { id: s.id, createdAt: nanosToMs(s.created_at) ?? 0, active: s.state === 'SANDBOX_READY' || withContainers.has(s.id) });
    }
    for (const [uid, list] of byPod) {
      list.sort((a, b) => b.createdAt - a.createdAt);
      // A pod that stays keeps its newest sandbox; one whose content may go keeps none (but the active).
      const toRemove = removable(uid) ? list : list.slice(1);
      for (const s of toRemove) {
        if (s.active) continue;
        try {
          await this.config.runtime.stopPodSandbox(s.id);
          await this.config.runtime.removePodSandbox(s.id);
        } catch (err) {
          if (!isNotFound(err)) this.config.log(`removing sandbox ${s.id}`, err);
        }
      }
    }
  }

  /** <podLogsDir>/<namespace>_<name>_<uid> of pods whose content may go. */
  private async evictPodLogsDirectories(): Promise<void> {
    const dir = this.config.cfg.podLogsDir;
    let entries: string[];
    try {
      entries = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const name of entries) {
      const uid = name.slice(name.lastIndexOf('_') + 1);
      if (!uid || !this.config.pods.shouldPodContentBeRemoved(uid)) continue;
      await rm(join(dir, name), { recursive: true, force: true });
    }
  }
}
