// The plugin contract: one small interface per extension point, in the order a pod meets them.
//
//   queue:      PreEnqueue (may the pod enter activeQ?) · QueueSort (which pod next?)
//   scheduling: PreFilter → Filter (per node) → PostFilter (only when no node fits, e.g. preemption)
//               → PreScore → Score (per node) + NormalizeScore → Reserve → Permit
//   binding:    (wait on Permit) → PreBind → Bind → PostBind; Unreserve on any failure after Reserve
//
// The scheduling cycle is synchronous up to Permit: the node snapshot cannot change under a plugin
// while it runs, which is what lets one thread score thousands of nodes without locks. Binding is
// asynchronous and overlaps the next pods' cycles.
import type { Labels } from '../../api/labels.js';
import type { Pod, PodDisruptionBudget, ReplicaSet, Service } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import type { SchedulerClient } from '../client.js';
import type { EventRecorder } from '../../client/record/eventsv1.js';
import type { CycleState } from './cycle-state.js';
import type { NodeToStatus } from './diagnosis.js';
import type { ClusterEventWithHint } from './events.js';
import type { Result, Status } from './status.js';
import type { NodeInfo, PodInfo } from './types.js';

/** The highest score a Score plugin may give after normalization. */
export const MAX_NODE_SCORE = 100;
export const MIN_NODE_SCORE = 0;

/** A pod in the scheduling queue. */
export interface QueuedPodInfo {
  podInfo: PodInfo;
  /** When the pod was last added or moved into the queue (ms); QueueSort's tie-breaker. */
  timestamp: number;
  /** Scheduling attempts so far (drives backoff). */
  attempts: number;
  /** When the pod first entered activeQ (unset while PreEnqueue holds it). */
  initialAttemptTimestamp?: number;
  /** The last failed attempt as the timeline has it: repeats of its message extend the series. */
  failureSeries?: { message: string; start: number; count: number };
  /** Plugins that rejected the pod in its last attempt: only their events move it back. */
  unschedulablePlugins: Set<string>;
  /** Plugins that left the pod Pending in its last attempt. */
  pendingPlugins: Set<string>;
  /** The PreEnqueue plugin that keeps the pod out of activeQ, if any. */
  gatingPlugin?: string;
}

export interface Plugin {
  readonly name: string;
}

/** Before a pod enters activeQ; a rejection parks it until the pod itself changes (e.g. scheduling gates). */
export interface PreEnqueuePlugin extends Plugin {
  preEnqueue(pod: Pod): Result;
}

/** Orders activeQ; exactly one per profile. */
export interface QueueSortPlugin extends Plugin {
  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean;
}

/** Nodes a PreFilter plugin restricts the pod to; undefined means all nodes. Results of plugins intersect. */
export interface PreFilterResult {
  nodeNames?: ReadonlySet<string>;
}

/**
 * Incremental updates of a PreFilter plugin's cycle state when the framework evaluates "what if this
 * pod were (not) on the node" — for nominated pods and preemption's victim selection.
 */
export interface PreFilterExtensions {
  addPod(state: CycleState, podToSchedule: Pod, podInfoToAdd: PodInfo, nodeInfo: NodeInfo): Result;
  removePod(state: CycleState, podToSchedule: Pod, podInfoToRemove: PodInfo, nodeInfo: NodeInfo): Result;
}

/**
 * Runs once per cycle before filtering: precompute into CycleState, reject early, narrow the nodes
 * (result.nodeNames), or return Skip so this plugin's Filter is not run for this pod.
 */
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): { result?: PreFilterResult; status?: Result } | undefined;
  preFilterExtensions?(): PreFilterExtensions | undefined;
}

/** Whether the pod can run on one node. Must not modify nodeInfo. */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result;
}

export interface NominatingInfo {
  nominatedNodeName: string;
  /** Override sets status.nominatedNodeName; Noop leaves it. */
  mode: 'Override' | 'Noop';
}

export interface PostFilterResult {
  nominatingInfo?: NominatingInfo;
  /** The pods preemption deletes for the nomination (namespace/name), for the pod's timeline. */
  victims?: string[];
}

/**
 * Runs only when no node passed Filter (e.g. DefaultPreemption). Success means the pod may fit in a
 * later cycle (with a nominated node); the status message is appended to the FailedScheduling message.
 */
export interface PostFilterPlugin extends Plugin {
  postFilter(
    state: CycleState,
    pod: Pod,
    filteredNodeStatus: NodeToStatus,
  ): { result?: PostFilterResult; status?: Result } | Promise<{ result?: PostFilterResult; status?: Result }>;
}

/** Once per cycle before scoring, with the feasible nodes; Skip disables this plugin's Score for the pod. */
export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Result;
}

export interface ScoreExtensions {
  /** Rescales scores (aligned with the scored nodes) in place into [0, MAX_NODE_SCORE]. */
  normalizeScore(state: CycleState, pod: Pod, scores: number[]): Result;
}

/** Ranks a feasible node; the framework multiplies the (normalized) score by the plugin's weight. */
export interface ScorePlugin extends Plugin {
  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number | Status;
  scoreExtensions?(): ScoreExtensions | undefined;
}

/** Claims resources for the pod on the chosen node before binding; unreserve undoes it (idempotently). */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: Pod, nodeName: string): Result;
  unreserve(state: CycleState, pod: Pod, nodeName: string): void;
}

/** Approves, denies or delays (Wait, up to timeoutMs) the binding. */
export interface PermitPlugin extends Plugin {
  permit(state: CycleState, pod: Pod, nodeName: string): { status?: Result; timeoutMs?: number };
}

export interface PreBindPlugin extends Plugin {
  preBind(state: CycleState, pod: Pod, nodeName: string): Promise<Result>;
}

/** Binds the pod; Skip passes to the next Bind plugin. */
export interface BindPlugin extends Plugin {
  bind(state: CycleState, pod: Pod, nodeName: string): Promise<Result>;
}

export interface PostBindPlugin extends Plugin {
  postBind(state: CycleState, pod: Pod, nodeName: string): void;
}

/** The cluster events that could make pods this plugin rejected schedulable. */
export interface EnqueueExtensions extends Plugin {
  eventsToRegister(): ClusterEventWithHint[];
}

/** The per-cycle view of the nodes. */
export interface NodeInfoLister {
  /** All nodes, zones interleaved (upstream's node tree order). */
  list(): readonly NodeInfo[];
  /** Nodes running at least one pod with (anti-)affinity terms (InterPodAffinity). */
  havePodsWithAffinityList(): readonly NodeInfo[];
  /** Nodes running at least one pod with required anti-affinity terms. */
  havePodsWithRequiredAntiAffinityList(): readonly NodeInfo[];
  get(nodeName: string): NodeInfo | undefined;
}

/** Pods nominated to nodes by preemption, whose resources Filter must keep free for them. */
export interface PodNominator {
  nominatedPodsForNode(nodeName: string): readonly PodInfo[];
}

/** The Services and ReplicaSets a pod may belong to (PodTopologySpread's default spreading selector). */
export interface WorkloadLister {
  services(namespace: string): readonly Service[];
  replicaSet(namespace: string, name: string): ReplicaSet | undefined;
  /** Every PodDisruptionBudget (DefaultPreemption); absent when the scheduler does not watch them. */
  podDisruptionBudgets?(): readonly PodDisruptionBudget[];
}

/** A pod held at Permit. */
export interface WaitingPod {
  readonly pod: Pod;
  /** Plugins that still have to allow it. */
  pendingPlugins(): string[];
  allow(plugin: string): void;
  reject(plugin: string, message: string): void;
}

/** What plugins get from the framework. */
export interface Handle {
  readonly client: SchedulerClient;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The snapshot of the current scheduling cycle. */
  snapshot(): NodeInfoLister;
  readonly nominator: PodNominator;
  /** The labels of a namespace (for affinity terms' namespaceSelector); undefined if unknown. */
  namespaceLabels(namespace: string): Labels | undefined;
  readonly workloads: WorkloadLister;
  /** Events under the profile's scheduler name (e.g. Preempted on preemption victims). */
  readonly eventRecorder: EventRecorder;
  getWaitingPod(uid: string): WaitingPod | undefined;
  iterateOverWaitingPods(fn: (wp: WaitingPod) => void): void;
  /** Runs Filter as the scheduler does, counting pods nominated to the node with priority >= pod's. */
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result;
  /** Runs PreFilterExtensions.addPod / removePod of every PreFilter plugin (for preemption). */
  runPreFilterExtensionAddPod(state: CycleState, podToSchedule: Pod, podInfoToAdd: PodInfo, nodeInfo: NodeInfo): Result;
  runPreFilterExtensionRemovePod(state: CycleState, podToSchedule: Pod, podInfoToRemove: PodInfo, nodeInfo: NodeInfo): Result;
}

/** Builds a plugin from its args (already defaulted by the factory) and the framework handle. */
export type PluginFactory = (args: unknown, handle: Handle) => Plugin;
