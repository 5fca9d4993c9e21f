// Graceful node shutdown (upstream's pkg/kubelet/nodeshutdown): with shutdownGracePeriod set, a
// node going down first reports itself not ready ("node is shutting down") and admits no new pod,
// then terminates its pods by priority — regular pods with shutdownGracePeriod −
// shutdownGracePeriodCriticalPods, critical ones (priority ≥ system-cluster-critical) last with the
// critical period; a pod's own shorter terminationGracePeriodSeconds wins — preStop hooks included,
// and leaves them Failed with reason Terminated and the DisruptionTarget condition. Upstream learns
// of the shutdown from systemd's inhibitor lock; kite has none: the agent's stop is the event.
import type { Pod, PodStatus } from '../../api/types.js';
import { terminatedByKubelet } from '../../api/pod/conditions.js';
import { rfc3339 } from '../../api/time.js';
import { SYSTEM_CRITICAL_PRIORITY } from '../../api/validation/index.js';
import type { EventRecorder, InvolvedObject } from '../../client/record/recorder.js';
import { within, type Clock } from '../../util/clock.js';
import type { AdmitResult } from '../admission/predicate.js';
import type { KubeletConfig } from '../config.js';
import { NODE_SHUTDOWN } from '../events.js';

export const NODE_SHUTDOWN_NOT_ADMITTED_REASON = 'NodeShutdown';
const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE = 'Pod was rejected as the node is shutting down.';
export const NODE_SHUTDOWN_REASON = 'Terminated';
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
/** ShutdownStatus: the Ready condition's message while the node shuts down. */
export const NODE_SHUTTING_DOWN = 'node is shutting down';

/** One priority band: pods at or above `priority` (up to the next band) get this grace period. */
export interface ShutdownGroup {
  priority: number;
  gracePeriodSeconds: number;
}

/**
 * The bands of shutdownGracePeriod and shutdownGracePeriodCriticalPods (upstream's migrateConfig):
 * regular pods (priority 0 and up) and critical ones; none when the feature is off.
 */
export function shutdownGroups(cfg: Pick<KubeletConfig, 'shutdownGracePeriodMs' | 'shutdownGracePeriodCriticalPodsMs'>): ShutdownGroup[] {
  const total = Math.floor(cfg.shutdownGracePeriodMs / 1000);
  const critical = Math.floor(cfg.shutdownGracePeriodCriticalPodsMs / 1000);
  if (total === 0 || critical > total) return [];
  return [
    { priority: 0, gracePeriodSeconds: total - critical },
    { priority: SYSTEM_CRITICAL_PRIORITY, gracePeriodSeconds: critical },
  ];
}

/** The pods of each band, lowest priority first; a pod below every band joins the lowest. */
export function groupByPriority(groups: readonly ShutdownGroup[], pods: readonly Pod[]): { group: ShutdownGroup; pods: Pod[] }[] {
  const sorted = [...groups].sort((a, b) => a.priority - b.priority);
  const out = sorted.map((group) => ({ group, pods: [] as Pod[] }));
  for (const pod of pods) {
    const priority = pod.spec?.priority ?? 0;
    let i = 0;
    while (i + 1 < out.length && out[i + 1]!.group.priority <= priority) i++;
    out[i]?.pods.push(pod);
  }
  return out;
}

/** What the node's shutdown does to each pod's status: Failed (unless it succeeded), Terminated, DisruptionTarget. */
export function nodeShutdownStatus(status: PodStatus, now: string): PodStatus {
  return terminatedByKubelet(status, status.phase === 'Succeeded' ? 'Succeeded' : 'Failed', NODE_SHUTDOWN_REASON, NODE_SHUTDOWN_MESSAGE, now);
}

export interface NodeShutdownManagerConfig {
  cfg: Pick<KubeletConfig, 'shutdownGracePeriodMs' | 'shutdownGracePeriodCriticalPodsMs'>;
  /** The pods that may still run (the pod workers' syncing and terminating ones). */
  activePods: () => Pod[];
  /** Terminates the pod with this grace period and status; resolves once its containers are stopped. */
  killPod: (pod: Pod, gracePeriodSeconds: number, statusFn: (status: PodStatus) => PodStatus) => Promise<void>;
  /** Posts the node status at once (the Ready condition turns False). */
  syncNodeStatus: () => Promise<void>;
  clock: Clock;
  recorder: EventRecorder;
  nodeRef: InvolvedObject;
  log: (msg: string, err?: unknown) => void;
}

export class NodeShutdownManager {
  private readonly groups: ShutdownGroup[];
  private shuttingDown = false;

  constructor(private readonly config: NodeShutdownManagerConfig) {
    this.groups = shutdownGroups(config.cfg);
  }

  /** shutdownGracePeriod is set: the agent's stop terminates the pods. */
  get enabled(): boolean {
    return this.groups.length > 0;
  }

  /** ShutdownStatus: why the node is not ready, while it shuts down. */
  shutdownStatus(): string | undefined {
    return this.shuttingDown ? NODE_SHUTTING_DOWN : undefined;
  }

  /** Admit: no new pod starts on a node shutting down. */
  admit(): AdmitResult {
    return this.shuttingDown ? { admit: false, reason: NODE_SHUTDOWN_NOT_ADMITTED_REASON, message: NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE } : { admit: true };
  }

  /** The node shuts down: report it, then terminate the pods band by band, each band bounded by its grace period. */
  async shutdown(): Promise<void> {
    if (!this.enabled || this.shuttingDown) return;
    const { clock, recorder, nodeRef, log } = this.config;
    recorder.event(nodeRef, 'Normal', NODE_SHUTDOWN, 'Shutdown manager detected shutdown event');
    this.shuttingDown = true;
    await this.config.syncNodeStatus().catch((err: unknown) => log('node status at shutdown', err));
    for (const { group, pods } of groupByPriority(this.groups, this.config.activePods())) {
      if (pods.length === 0) continue;
      const statusFn = (status: PodStatus) => nodeShutdownStatus(status, rfc3339(clock.now()));
      const killed = Promise.all(
        pods.map((pod) => {
          const own = pod.spec?.terminationGracePeriodSeconds;
          const grace = own !== undefined && own <= group.gracePeriodSeconds ? own : group.gracePeriodSeconds;
          log(`shutdown: terminating pod ${pod.metadata?.namespace}/${pod.metadata?.name} with grace period ${grace}s`);
          return this.config.killPod(pod, grace, statusFn).catch((err: unknown) => log(`shutdown: terminating pod ${pod.metadata?.name}`, err));
        }),
      );
      if (!(await within(clock, group.gracePeriodSeconds * 1000, killed))) log(`shutdown: pods of priority ${group.priority} still terminating after ${group.gracePeriodSeconds}s`);
    }
  }
}
