// The kubelet's three sync functions that pod workers run (kubelet.go SyncPod, SyncTerminatingPod,
// SyncTerminatedPod): read what the runtime has for the pod, report the status, act through the
// runtime manager, and report again at once after acting — start-up never waits for a relist.
import type { Pod } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import type { KubeletConfig } from '../config.js';
import type { KubeRuntimeManager } from '../kuberuntime/manager.js';
import type { ProbeResults } from '../kuberuntime/planner.js';
import { getPodRuntimeState, type PodRuntimeState, type RuntimeStateOptions } from '../kuberuntime/runtime-state.js';
import type { Runtime } from '../runtime/types.js';
import { generateAPIPodStatus, type ContainerProbeStatus } from '../status/generate.js';
import type { VolumeManager } from '../volumes/manager.js';
import type { PodSyncer, SyncPodResult } from './workers.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import type { PodStatus } from '../../api/types.js';

/** The part of the status manager the syncer feeds. */
export interface PodStatusSink {
  setPodStatus(pod: Pod, status: PodStatus): void;
  podTerminated(pod: Pod): void;
}

export interface KubeletPodSyncerConfig {
  runtime: Runtime;
  manager: KubeRuntimeManager;
  status: PodStatusSink;
  volumes: VolumeManager;
  cfg: Pick<KubeletConfig, 'nodeIP'>;
  clock: Clock;
  /** Pod-level cleanup after the containers are gone (cgroups, logs policy ...). */
  cleanupPod?: (pod: Pod) => Promise<void>;
  /** The prober's results, once it exists. */
  probes?: ProbeResults & ContainerProbeStatus;
  stateOptions?: RuntimeStateOptions;
}

export class KubeletPodSyncer implements PodSyncer {
  constructor(private readonly config: KubeletPodSyncerConfig) {}

  private state(pod: Pod): Promise<PodRuntimeState> {
    return getPodRuntimeState(this.config.runtime, pod.metadata?.uid ?? '', this.config.stateOptions);
  }

  private report(pod: Pod, state: PodRuntimeState, podIsTerminal: boolean): PodStatus {
    const { manager, cfg, clock, probes } = this.config;
    const status = generateAPIPodStatus({ pod, state, startFailures: manager.startFailures(pod.metadata?.uid ?? ''), probes, nodeIP: cfg.nodeIP, now: clock.now(), podIsTerminal });
    this.config.status.setPodStatus(pod, status);
    return status;
  }

  async syncPod(pod: Pod): Promise<SyncPodResult> {
    let state = await this.state(pod);
    const before = this.report(pod, state, false);
    if (isPodPhaseTerminal(before.phase)) return { isTerminal: true };

    const volumes = await this.config.volumes.mountPod(pod);
    const result = await this.config.manager.syncPod(pod, state, volumes, this.config.probes);
    if (result.acted) {
      state = await this.state(pod);
      const after = this.report(pod, state, false);
      if (isPodPhaseTerminal(after.phase)) return { isTerminal: true };
    }
    return { isTerminal: false, resyncAt: result.nextBackOffExpiry, failed: result.failed };
  }

  async syncTerminatingPod(pod: Pod, gracePeriodSeconds: number): Promise<void> {
    await this.config.manager.killPod(pod, await this.state(pod), gracePeriodSeconds);
    this.report(pod, await this.state(pod), true);
  }

  async syncTerminatedPod(pod: Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    await this.config.volumes.unmountPod(uid);
    // A finished pod that stays in the API keeps its dead containers (logs, last state) until deleted.
    if (pod.metadata?.deletionTimestamp) {
      await this.config.manager.removePod(await this.state(pod));
      this.config.manager.forgetPod(uid);
    }
    await this.config.cleanupPod?.(pod);
    this.config.status.podTerminated(pod);
  }
}
