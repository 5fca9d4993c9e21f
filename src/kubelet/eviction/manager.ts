// The kubelet's eviction manager (upstream pkg/kubelet/eviction/eviction_manager.go): every 10 s it
// observes the node's signals, decides which thresholds are met (soft ones after their grace
// period, met ones until their minimum reclaim is back), reports the pressure conditions (kept for
// the transition period after the last sighting), reclaims node-level resources for disk, and
// otherwise evicts ONE pod, ranked for the starved resource, then waits for it to be cleaned up.
// The rounds are 10 s apart, counted from the end of the previous one (and its wait for cleanup).
// It also admits pods: none but critical ones under disk or PID pressure, no BestEffort ones under
// memory pressure unless they tolerate its taint.
import type { Pod, PodStatus } from '../../api/types.js';
import { podQOS } from '../../api/pod/qos.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import { terminatedByKubelet } from '../../api/pod/conditions.js';
import { rfc3339 } from '../../api/time.js';
import { podRef } from '../../api/pod/reference.js';
import { tolerationsTolerateTaint } from '../../api/scheduling/taints.js';
import type { EventRecorder, InvolvedObject } from '../../client/record/recorder.js';
import type { Clock } from '../../util/clock.js';
import { Periodic } from '../../util/periodic.js';
import { isCriticalPod } from '../kuberuntime/resources.js';
import type { AdmitResult } from '../admission/predicate.js';
import {
  EVICTED_REASON,
  byEvictionPriority,
  evictionMessage,
  makeSignalObservations,
  mergeThresholds,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  nodeConditionsOf,
  rankFor,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
} from './helpers.js';
import { SIGNAL_TO_CONDITION, SIGNAL_TO_RESOURCE, isHardEvictionThreshold, type NodePressure, type Signal, type Threshold } from './thresholds.js';
import type { ContainerGC, EvictionStatsProvider, ImageGC } from './types.js';

/** Upstream's evictionMonitoringPeriod. */
export const MONITORING_INTERVAL_MS = 10_000;
/** How long to wait for an evicted pod's cleanup, polled every second (podCleanupTimeout, podCleanupPollFreq). */
const POD_CLEANUP_TIMEOUT_MS = 30_000;
const POD_CLEANUP_POLL_MS = 1_000;
/** The grace period of a hard eviction (immediateEvictionGracePeriodSeconds). */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;
const MEMORY_PRESSURE_TAINT = 'node.kubernetes.io/memory-pressure';

/** Stops an evicted pod's containers with the grace period, its status passed through podStatusFn (the pod workers' kill). */
export interface PodKiller {
  evictPod(pod: Pod, gracePeriodSeconds: number, podStatusFn: (status: PodStatus) => PodStatus): void;
}

/** What an eviction makes of the pod's status: Failed, Evicted, the message, and DisruptionTarget (TerminationByKubelet). */
export function evictedPodStatus(status: PodStatus | undefined, message: string, now: number): PodStatus {
  return terminatedByKubelet(status, 'Failed', EVICTED_REASON, message, rfc3339(now));
}

export interface EvictionManagerOptions {
  thresholds: Threshold[];
  /** evictionPressureTransitionPeriod. */
  pressureTransitionPeriodMs: number;
  /** evictionMaxPodGracePeriod, for soft evictions. */
  maxPodGracePeriodSeconds: number;
  stats: EvictionStatsProvider;
  killer: PodKiller;
  /** The pods whose containers may be running (the pod workers' active pods). */
  activePods: () => Pod[];
  /** Whether an evicted pod's containers and volumes are gone. */
  podCleanedUp: (pod: Pod) => Promise<boolean>;
  imageGC: ImageGC;
  containerGC: ContainerGC;
  recorder: EventRecorder;
  nodeRef: InvolvedObject;
  clock: Clock;
  log?: (msg: string, err?: unknown) => void;
}

export class EvictionManager {
  private nodeConditions: NodePressure[] = [];
  private readonly conditionsLastObservedAt = new Map<NodePressure, number>();
  private thresholdsObservedAt = new Map<string, number>();
  private met: Threshold[] = [];
  private readonly periodic: Periodic;

  constructor(private readonly opts: EvictionManagerOptions) {
    this.periodic = new Periodic({ clock: opts.clock, periodMs: MONITORING_INTERVAL_MS, run: () => this.run(), onError: (err) => opts.log?.('eviction manager: failed to synchronize', err) });
  }

  /** The pressure conditions the node reports now. */
  pressure(): ReadonlySet<NodePressure> {
    return new Set(this.nodeConditions);
  }

  /** The eviction admit handler: called beside the predicate admission. */
  admit(pod: Pod): AdmitResult {
    if (this.nodeConditions.length === 0 || isCriticalPod(pod)) return { admit: true };
    if (this.nodeConditions.length === 1 && this.nodeConditions[0] === 'MemoryPressure') {
      if (podQOS(pod) !== 'BestEffort') return { admit: true };
      if (tolerationsTolerateTaint(pod.spec?.tolerations, { key: MEMORY_PRESSURE_TAINT, effect: 'NoSchedule' })) return { admit: true };
    }
    // Go's %v of a []NodeConditionType: "[MemoryPressure DiskPressure]".
    return { admit: false, reason: EVICTED_REASON, message: `The node had condition: [${this.nodeConditions.join(' ')}]. ` };
  }

  start(): void {
    if (this.opts.thresholds.length > 0) this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** A round, and after an eviction the wait for the pod's cleanup (upstream's Start loop). */
  private async run(): Promise<void> {
    const evicted = await this.synchronize();
    if (evicted) await this.waitForPodCleanup(evicted);
  }

  private async waitForPodCleanup(pod: Pod): Promise<void> {
    const deadline = this.opts.clock.now() + POD_CLEANUP_TIMEOUT_MS;
    while (this.opts.clock.now() < deadline) {
      await this.opts.clock.sleep(POD_CLEANUP_POLL_MS);
      if (this.periodic.isStopped || (await this.opts.podCleanedUp(pod))) return;
    }
    this.opts.log?.(`eviction manager: timed out waiting for pod ${pod.metadata?.namespace}/${pod.metadata?.name} to be cleaned up`);
  }

  /** One round; resolves with the pod evicted, if any. */
  async synchronize(): Promise<Pod | undefined> {
    const { clock, stats } = this.opts;
    // A pod already failed (one evicted before whose cleanup timed out) is not a candidate again.
    const activePods = this.opts.activePods().filter((p) => !isPodPhaseTerminal(p.status?.phase));
    const summary = await stats.get();
    const observations = makeSignalObservations(summary);
    let thresholds = thresholdsMet(this.opts.thresholds, observations, false);
    // Thresholds met before stay met until their minimum reclaim is available too.
    if (this.met.length > 0) thresholds = mergeThresholds(thresholds, thresholdsMet(this.met, observations, true));
    const now = clock.now();
    const firstObserved = thresholdsFirstObservedAt(thresholds, this.thresholdsObservedAt, now);
    const lastObserved = nodeConditionsLastObservedAt(nodeConditionsOf(thresholds), this.conditionsLastObservedAt, now);
    this.nodeConditions = nodeConditionsObservedSince(lastObserved, this.opts.pressureTransitionPeriodMs, now);
    this.conditionsLastObservedAt.clear();
    for (const [c, at] of lastObserved) this.conditionsLastObservedAt.set(c, at);
    this.thresholdsObservedAt = new Map([...firstObserved].map(([k, v]) => [k, v.at]));
    this.met = thresholdsMetGracePeriod(firstObserved, now);
    if (this.met.length === 0) return undefined;

    const toReclaim = byEvictionPriority(this.met)[0]!;
    const resource = SIGNAL_TO_RESOURCE[toReclaim.signal];
    this.opts.recorder.event(this.opts.nodeRef, 'Warning', 'EvictionThresholdMet', `Attempting to reclaim ${resource}`);
    if (await this.reclaimNodeLevelResources(toReclaim.signal)) return undefined;
    if (activePods.length === 0) {
      this.opts.log?.('eviction manager: eviction thresholds have been met, but no pods are active to evict');
      return undefined;
    }
    const byUID = new Map(summary.pods.map((p) => [p.uid, p]));
    const usage = (pod: Pod) => byUID.get(pod.metadata?.uid ?? '');
    for (const pod of rankFor(toReclaim.signal)(activePods, usage)) {
      // Critical pods are never evicted: the node needs them (upstream issue 40573).
      if (isCriticalPod(pod)) continue;
      const grace = isHardEvictionThreshold(toReclaim)
        ? IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS
        : Math.min(this.opts.maxPodGracePeriodSeconds, pod.spec?.terminationGracePeriodSeconds ?? 30);
      const message = evictionMessage(resource, pod, usage(pod), this.met, observations);
      this.evictPod(pod, grace, message);
      return pod;
    }
    this.opts.log?.('eviction manager: unable to evict any pods from the node');
    return undefined;
  }

  private evictPod(pod: Pod, gracePeriodSeconds: number, message: string): void {
    this.opts.recorder.event(podRef(pod), 'Warning', EVICTED_REASON, message);
    const now = this.opts.clock.now();
    this.opts.killer.evictPod(pod, gracePeriodSeconds, (status) => evictedPodStatus(status, message, now));
  }

  /**
   * For disk signals (one filesystem holds images, containers and pods in kite): dead containers,
   * then unused images; true when that alone brought every threshold back, min-reclaim included.
   */
  private async reclaimNodeLevelResources(signal: Signal): Promise<boolean> {
    if (SIGNAL_TO_CONDITION[signal] !== 'DiskPressure') return false;
    try {
      await this.opts.containerGC.deleteAllUnusedContainers();
    } catch (err) {
      this.opts.log?.('eviction manager: container garbage collection failed', err);
    }
    try {
      await this.opts.imageGC.deleteUnusedImages();
    } catch (err) {
      this.opts.log?.('eviction manager: image garbage collection failed', err);
    }
    const observations = makeSignalObservations(await this.opts.stats.get());
    return thresholdsMet(this.opts.thresholds, observations, true).length === 0;
  }
}
