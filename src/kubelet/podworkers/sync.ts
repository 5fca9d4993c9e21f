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
import type { PodStatusFn, PodSyncer, SyncPodResult } from './workers.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import type { PodStatus } from '../../api/types.js';
import type { EventRecorder } from '../../client/record/recorder.js';
import { podRef } from '../../api/pod/reference.js';
import type { KubeletTimeline } from '../timeline/timeline.js';
import { DEADLINE_EXCEEDED_MESSAGE, DEADLINE_EXCEEDED_REASON, activeDeadline, enforceActiveDeadline } from '../status/deadline.js';

/** The pod conditions the kubelet owns (upstream's PodConditionsByKubelet). */
const KUBELET_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized', 'ContainersReady', 'PodReadyToStartContainers']);

/** The part of the status manager the syncer feeds. */
export interface PodStatusSink {
  setPodStatus(pod: Pod, status: PodStatus): void;
  podTerminated(pod: Pod): void;
  /** The status last set for the pod, which the API may not have echoed back yet. */
  getPodStatus(uid: string): PodStatus | undefined;
}

/** The prober as the sync functions drive it (upstream's prober.Manager), and its results. */
export interface PodProber extends ProbeResults, ContainerProbeStatus {
  addPod(pod: Pod): void;
  stopLivenessAndStartup(pod: Pod): void;
  removePod(pod: Pod): void;
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
  /** For the pod-level events the sync functions record (DeadlineExceeded). */
  recorder?: EventRecorder;
  /** Unset: nothing is probed (containers are started and ready once running). */
  probes?: PodProber;
  stateOptions?: RuntimeStateOptions;
  /** Where the volume, exit and clean-up steps go. */
  timeline?: KubeletTimeline;
}

export class KubeletPodSyncer implements PodSyncer {
  constructor(private readonly config: KubeletPodSyncerConfig) {}

  /** What the runtime has for the pod; the exits it shows for the first time go on the timeline. */
  private async state(pod: Pod): Promise<PodRuntimeState> {
    const state = await getPodRuntimeState(this.config.runtime, pod.metadata?.uid ?? '', this.config.stateOptions);
    this.config.timeline?.containersObserved(pod, state);
    return state;
  }

  /** Runs one clean-up step and records it as a timeline span, the first time only (a removed pod is cleaned up again). */
  private async timed(pod: Pod, step: 'VolumesRemoved' | 'SandboxRemoved' | 'CgroupsRemoved', fn: () => Promise<void>): Promise<void> {
    const start = this.config.clock.now();
    await fn();
    this.config.timeline?.once(pod, step, step, {}, start, this.config.clock.now());
  }

  private report(pod: Pod, state: PodRuntimeState, podIsTerminal: boolean, podStatusFn?: PodStatusFn): PodStatus {
    const { manager, cfg, clock, probes } = this.config;
    // As upstream, the previous status is the status manager's, not the informer's possibly older copy.
    const cached = this.config.status.getPodStatus(pod.metadata?.uid ?? '');
    // Conditions other writers own (readiness gates, DisruptionTarget, ...) come from the API's copy.
    const previous = cached && { ...cached, conditions: [...(cached.conditions ?? []).filter((c) => KUBELET_CONDITIONS.has(c.type)), ...(pod.status?.conditions ?? []).filter((c) => !KUBELET_CONDITIONS.has(c.type))] };
    const generated = generateAPIPodStatus({ pod: previous ? { ...pod, status: previous } : pod, state, startFailures: manager.startFailures(pod.metadata?.uid ?? ''), probes, nodeIP: cfg.nodeIP, now: clock.now(), podIsTerminal });
    const { status: enforced, exceeded } = enforceActiveDeadline(pod, generated, clock.now());
    const status = podStatusFn ? podStatusFn(enforced) : enforced;
    if (exceeded && previous?.reason !== DEADLINE_EXCEEDED_REASON) {
      this.config.recorder?.event(podRef(pod), 'Normal', DEADLINE_EXCEEDED_REASON, DEADLINE_EXCEEDED_MESSAGE);
    }
    this.config.status.setPodStatus(pod, status);
    return status;
  }

  async syncPod(pod: Pod, signal?: AbortSignal): Promise<SyncPodResult> {
    let state = await this.state(pod);
    const before = this.report(pod, state, false);
    if (isPodPhaseTerminal(before.phase)) return { isTerminal: true };

    const volumes = await this.config.volumes.mountPod(pod);
    this.config.timeline?.once(pod, 'VolumesReady', 'VolumesReady', { attributes: { volumes: (pod.spec?.volumes ?? []).length } });
    this.config.probes?.addPod(pod);
    const result = await this.config.manager.syncPod(pod, state, volumes, this.config.probes, signal);
    if (result.acted) {
      state = await this.state(pod);
      const after = this.report(pod, state, false);
      if (isPodPhaseTerminal(after.phase)) return { isTerminal: true };
    }
    // Sync again when the active deadline ends, so it is enforced on time.
    const deadline = activeDeadline(pod, before);
    const resyncAt = Math.min(result.nextBackOffExpiry ?? Infinity, deadline ?? Infinity);
    return { isTerminal: false, resyncAt: Number.isFinite(resyncAt) ? resyncAt : undefined, failed: result.failed };
  }

  async syncTerminatingPod(pod: Pod, gracePeriodSeconds: number, signal?: AbortSignal, podStatusFn?: PodStatusFn): Promise<void> {
    // A pod on its way out is not restarted for its health.
    this.config.probes?.stopLivenessAndStartup(pod);
    const state = await this.state(pod);
    // As upstream, a status function (node shutdown, eviction) is reported before the kill and after it.
    if (podStatusFn) this.report(pod, state, false, podStatusFn);
    await this.config.manager.killPod(pod, state, gracePeriodSeconds, signal);
    if (signal?.aborted) return;
    this.report(pod, await this.state(pod), true, podStatusFn);
  }

  async syncTerminatedPod(pod: Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    this.config.probes?.removePod(pod);
    await this.timed(pod, 'VolumesRemoved', () => this.config.volumes.unmountPod(uid));
    // A finished pod that stays in the API keeps its dead containers (logs, last state) until deleted.
    if (pod.metadata?.deletionTimestamp) {
      const state = await this.state(pod);
      await this.timed(pod, 'SandboxRemoved', () => this.config.manager.removePod(state));
      this.config.manager.forgetPod(uid);
    }
    const cleanupPod = this.config.cleanupPod;
    if (cleanupPod) await this.timed(pod, 'CgroupsRemoved', () => cleanupPod(pod));
    this.config.status.podTerminated(pod);
  }
}
