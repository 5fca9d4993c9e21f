// PodTopologySpread: spreads matching pods over topology domains. Filter enforces the pod's
// DoNotSchedule constraints (matching pods in the node's domain, plus the pod itself if it matches,
// minus the global minimum, must not exceed maxSkew; the minimum is 0 while fewer than minDomains
// domains exist). Score prefers domains with fewer matching pods for ScheduleAnyway constraints.
// Pods without constraints get the default constraints (upstream's system defaults: hostname
// maxSkew 3, zone maxSkew 5, ScheduleAnyway) with the selector of the Services and ReplicaSet the
// pod belongs to.
import type { TopologySpreadConstraint } from 'kubernetes-types/core/v1.js';
import { labelSelectorAsSelector, selectorFromSet, selectorOf, type Labels, type Requirement, type Selector } from '../../../api/labels.js';
import type { Node, Pod, ReplicaSet } from '../../../api/types.js';
import type { CycleState, StateData } from '../../framework/cycle-state.js';
import { StateKey } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import {
  MAX_NODE_SCORE,
  type EnqueueExtensions,
  type FilterPlugin,
  type Handle,
  type Plugin,
  type PreFilterExtensions,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type ScoreExtensions,
  type ScorePlugin,
  type WorkloadLister,
} from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { NodeInfo, PodInfo } from '../../framework/types.js';
import { RequiredNodeAffinity } from '../../../api/scheduling/node-affinity.js';
import {
  constraintsOf,
  countMatching,
  hasAllTopologyKeys,
  LABEL_HOSTNAME,
  LABEL_TOPOLOGY_ZONE,
  nodeIncluded,
  type Constraint,
  type UnsatisfiableAction,
} from './common.js';

export const NAME = 'PodTopologySpread';
export const ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_NODE_LABEL_NOT_MATCH = `${ERR_REASON_CONSTRAINTS_NOT_MATCH} (missing required label)`;

export interface PodTopologySpreadArgs {
  /** Constraints for pods that have none (List defaulting only). */
  defaultConstraints?: TopologySpreadConstraint[];
  /** System (default): the built-in default constraints; List: defaultConstraints. */
  defaultingType?: 'System' | 'List';
}

export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = [
  { topologyKey: LABEL_HOSTNAME, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 3 },
  { topologyKey: LABEL_TOPOLOGY_ZONE, whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 5 },
];

/** Scores of nodes missing a topology key (only with explicit constraints); normalized to 0. */
const INVALID_SCORE = -1;

class PreFilterState implements StateData {
  constructor(
    readonly constraints: readonly Constraint[],
    /** Per constraint: topology value → matching pods on the eligible nodes of that domain. */
    readonly counts: Map<string, number>[],
    /** Per constraint: the smallest count over its domains. */
    readonly minCounts: number[],
  ) {}

  /** Counts (delta 1) or uncounts (-1) pod on node for the incoming pod. */
  update(pod: Pod, incoming: Pod, node: Node, delta: number): void {
    if ((pod.metadata?.namespace ?? '') !== (incoming.metadata?.namespace ?? '')) return;
    const labels = node.metadata?.labels;
    if (!hasAllTopologyKeys(labels, this.constraints)) return;
    const affinity = new RequiredNodeAffinity(incoming);
    this.constraints.forEach((c, i) => {
      if (!c.selector.matches(pod.metadata?.labels) || !nodeIncluded(c, incoming, node, affinity)) return;
      const counts = this.counts[i]!;
      const v = labels![c.topologyKey]!;
      counts.set(v, (counts.get(v) ?? 0) + delta);
      this.minCounts[i] = Math.min(...counts.values());
    });
  }

  /** The global minimum for the skew: 0 while the constraint has fewer than minDomains domains. */
  minMatch(i: number): number {
    return this.counts[i]!.size < this.constraints[i]!.minDomains ? 0 : this.minCounts[i]!;
  }

  clone(): PreFilterState {
    return new PreFilterState(
      this.constraints,
      this.counts.map((m) => new Map(m)),
      [...this.minCounts],
    );
  }
}

class PreScoreState implements StateData {
  /** Filtered nodes missing a topology key. */
  readonly ignoredNodes = new Set<string>();
  /** Per constraint (except hostname ones, counted per node in Score): topology value → matching pods. */
  readonly counts: Map<string, number>[];
  /** Per constraint: ln(domains + 2), so counts of smaller topologies weigh more. */
  weights: number[] = [];

  constructor(readonly constraints: readonly Constraint[]) {
    this.counts = constraints.map(() => new Map());
  }

  clone(): this {
    return this;
  }
}

const preFilterKey = new StateKey<PreFilterState>(`PreFilter${NAME}`);
const preScoreKey = new StateKey<PreScoreState>(`PreScore${NAME}`);

/** A controller's selector as requirements; an invalid or nil selector adds nothing, as upstream. */
function controllerRequirements(rs: ReplicaSet): readonly Requirement[] {
  try {
    return labelSelectorAsSelector(rs.spec?.selector).requirements() ?? [];
  } catch {
    return [];
  }
}

/**
 * The selector of the pod's default constraints (upstream's helper.DefaultSelector): the merged
 * selectors of the Services selecting the pod, plus the selector of its controlling ReplicaSet.
 * (kite serves no ReplicationControllers or StatefulSets; upstream adds theirs the same way.)
 */
export function defaultSelector(pod: Pod, workloads: WorkloadLister): Selector {
  const ns = pod.metadata?.namespace ?? '';
  const labels = pod.metadata?.labels ?? {};
  const set: Record<string, string> = {};
  for (const svc of workloads.services(ns)) {
    const sel = svc.spec?.selector;
    if (sel && Object.keys(sel).length > 0 && selectorFromSet(sel).matches(labels)) Object.assign(set, sel);
  }
  const owner = pod.metadata?.ownerReferences?.find((r) => r.controller);
  const rs = owner?.apiVersion === 'apps/v1' && owner.kind === 'ReplicaSet' ? workloads.replicaSet(ns, owner.name) : undefined;
  return selectorOf([...(selectorFromSet(set).requirements() ?? []), ...(rs ? controllerRequirements(rs) : [])]);
}

export class PodTopologySpread implements PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions {
  readonly name = NAME;
  private readonly defaultConstraints: readonly TopologySpreadConstraint[];
  private readonly systemDefaulted: boolean;

  constructor(
    args: PodTopologySpreadArgs,
    private readonly handle: Handle,
  ) {
    this.systemDefaulted = (args.defaultingType ?? 'System') === 'System';
    this.defaultConstraints = this.systemDefaulted ? SYSTEM_DEFAULT_CONSTRAINTS : (args.defaultConstraints ?? []);
  }

  /** The pod's constraints with this whenUnsatisfiable, or the default ones when it has none. */
  private constraintsFor(pod: Pod, action: UnsatisfiableAction): Constraint[] {
    const own = pod.spec?.topologySpreadConstraints ?? [];
    if (own.length > 0) return constraintsOf(own, pod.metadata?.labels, action);
    const constraints = constraintsOf(this.defaultConstraints, pod.metadata?.labels, action);
    if (constraints.length === 0) return constraints;
    const selector = defaultSelector(pod, this.handle.workloads);
    if (selector.empty()) return [];
    return constraints.map((c) => ({ ...c, selector }));
  }

  preFilter(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): { result?: PreFilterResult; status?: Result } | undefined {
    let constraints: Constraint[];
    try {
      constraints = this.constraintsFor(pod, 'DoNotSchedule');
    } catch (err) {
      return { status: Status.error(err) };
    }
    if (constraints.length === 0) return { status: Status.of(Code.Skip) };
    const ns = pod.metadata?.namespace ?? '';
    const affinity = new RequiredNodeAffinity(pod);
    const counts = constraints.map(() => new Map<string, number>());
    for (const ni of nodes) {
      const node = ni.node;
      const labels = node?.metadata?.labels;
      if (!node || !hasAllTopologyKeys(labels, constraints)) continue;
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        if (!nodeIncluded(c, pod, node, affinity)) continue;
        const v = labels![c.topologyKey]!;
        const byValue = counts[i]!;
        byValue.set(v, (byValue.get(v) ?? 0) + countMatching(ni.pods, c.selector, ns));
      }
    }
    const minCounts = counts.map((m) => (m.size === 0 ? 0 : Math.min(...m.values())));
    state.write(preFilterKey, new PreFilterState(constraints, counts, minCounts));
    return undefined;
  }

  preFilterExtensions(): PreFilterExtensions {
    return this;
  }

  addPod(state: CycleState, podToSchedule: Pod, podInfoToAdd: PodInfo, nodeInfo: NodeInfo): Result {
    return this.updateState(state, podToSchedule, podInfoToAdd, nodeInfo, 1);
  }

  removePod(state: CycleState, podToSchedule: Pod, podInfoToRemove: PodInfo, nodeInfo: NodeInfo): Result {
    return this.updateState(state, podToSchedule, podInfoToRemove, nodeInfo, -1);
  }

  private updateState(state: CycleState, podToSchedule: Pod, pi: PodInfo, nodeInfo: NodeInfo, delta: number): Result {
    const s = state.read(preFilterKey);
    if (!s) return Status.error(new Error(`reading "${preFilterKey.name}" from cycleState: not found`));
    if (nodeInfo.node) s.update(pi.pod, podToSchedule, nodeInfo.node, delta);
    return undefined;
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    const s = state.read(preFilterKey);
    if (!s) return Status.error(new Error(`reading "${preFilterKey.name}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata?.labels ?? {};
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const v = labels[c.topologyKey];
      if (v === undefined) return Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH);
      const self = c.selector.matches(pod.metadata?.labels) ? 1 : 0;
      const skew = (s.counts[i]!.get(v) ?? 0) + self - s.minMatch(i);
      if (skew > c.maxSkew) return Status.of(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH);
    }
    return undefined;
  }

  preScore(state: CycleState, pod: Pod, filteredNodes: readonly NodeInfo[]): Result {
    const all = this.handle.snapshot().list();
    if (all.length === 0) return Status.of(Code.Skip);
    let constraints: Constraint[];
    try {
      constraints = this.constraintsFor(pod, 'ScheduleAnyway');
    } catch (err) {
      return Status.error(err);
    }
    if (constraints.length === 0) return Status.of(Code.Skip);
    // Nodes without a zone label still get hostname spreading under the system defaults.
    const requireAllTopologies = (pod.spec?.topologySpreadConstraints ?? []).length > 0 || !this.systemDefaulted;
    const s = new PreScoreState(constraints);
    const domains = constraints.map(() => 0);
    for (const ni of filteredNodes) {
      const labels = ni.node?.metadata?.labels;
      if (requireAllTopologies && !hasAllTopologyKeys(labels, constraints)) {
        s.ignoredNodes.add(ni.name);
        continue;
      }
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        if (c.topologyKey === LABEL_HOSTNAME) continue;
        const v = labels?.[c.topologyKey] ?? '';
        if (!s.counts[i]!.has(v)) {
          s.counts[i]!.set(v, 0);
          domains[i]!++;
        }
      }
    }
    s.weights = constraints.map((c, i) => Math.log((c.topologyKey === LABEL_HOSTNAME ? filteredNodes.length - s.ignoredNodes.size : domains[i]!) + 2));

    const ns = pod.metadata?.namespace ?? '';
    const affinity = new RequiredNodeAffinity(pod);
    for (const ni of all) {
      const node = ni.node;
      const labels = node?.metadata?.labels;
      if (!node || (requireAllTopologies && !hasAllTopologyKeys(labels, constraints))) continue;
      for (let i = 0; i < constraints.length; i++) {
        const c = constraints[i]!;
        const v = labels?.[c.topologyKey] ?? '';
        // Only domains of filtered nodes are scored (hostname domains are counted in Score).
        const n = s.counts[i]!.get(v);
        if (n !== undefined && nodeIncluded(c, pod, node, affinity)) s.counts[i]!.set(v, n + countMatching(ni.pods, c.selector, ns));
      }
    }
    state.write(preScoreKey, s);
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number | Status {
    const s = state.read(preScoreKey);
    if (!s) return Status.error(new Error(`reading "${preScoreKey.name}" from cycleState: not found`));
    if (s.ignoredNodes.has(nodeInfo.name)) return INVALID_SCORE;
    const labels = nodeInfo.node?.metadata?.labels ?? {};
    const ns = pod.metadata?.namespace ?? '';
    let score = 0;
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i]!;
      const v = labels[c.topologyKey];
      if (v === undefined) continue;
      const count = c.topologyKey === LABEL_HOSTNAME ? countMatching(nodeInfo.pods, c.selector, ns) : (s.counts[i]!.get(v) ?? 0);
      // maxSkew - 1 waters down differences between domains: a larger maxSkew tolerates more.
      score += count * s.weights[i]! + (c.maxSkew - 1);
    }
    return Math.round(score);
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  /** Fewer matching pods rank higher: max + min - score, scaled so the best gets 100; ignored nodes get 0. */
  normalizeScore(_state: CycleState, _pod: Pod, scores: number[]): Result {
    let min = Number.MAX_SAFE_INTEGER;
    let max = 0;
    for (const v of scores) {
      if (v === INVALID_SCORE) continue;
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    for (let i = 0; i < scores.length; i++) {
      const v = scores[i]!;
      if (v === INVALID_SCORE) scores[i] = 0;
      else scores[i] = max === 0 ? MAX_NODE_SCORE : Math.trunc((MAX_NODE_SCORE * (max + min - v)) / max);
    }
    return undefined;
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      // Matching pods coming, going or changing labels change the counts.
      { event: { resource: 'Pod', actionType: ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete }, queueingHintFn: (pod, o, n) => this.afterPodChange(pod, o as Pod | undefined, n as Pod | undefined) },
      // Nodes coming, going or changing topology labels or taints change the domains.
      {
        event: { resource: 'Node', actionType: ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint },
        queueingHintFn: (pod, o, n) => this.afterNodeChange(pod, o as Node | undefined, n as Node | undefined),
      },
    ];
  }

  /** Hints see the pod's hard constraints; a failure to parse them queues the pod (its next cycle reports the error). */
  private hardConstraints(pod: Pod): Constraint[] | undefined {
    try {
      return this.constraintsFor(pod, 'DoNotSchedule');
    } catch {
      return undefined;
    }
  }

  private afterPodChange(pod: Pod, oldPod: Pod | undefined, newPod: Pod | undefined): QueueingHint {
    const ns = pod.metadata?.namespace ?? '';
    const involved = (p: Pod) => p.metadata?.uid === pod.metadata?.uid || (Boolean(p.spec?.nodeName) && (p.metadata?.namespace ?? '') === ns);
    if ((newPod && !involved(newPod)) || (oldPod && !involved(oldPod))) return QueueingHint.QueueSkip;
    const constraints = this.hardConstraints(pod);
    if (!constraints) return QueueingHint.Queue;
    const matches = (labels: Labels | undefined) => constraints.some((c) => c.selector.matches(labels));
    if (oldPod && newPod) {
      if (oldPod.metadata?.uid === pod.metadata?.uid) return QueueingHint.Queue;
      const before = oldPod.metadata?.labels;
      const after = newPod.metadata?.labels;
      return constraints.some((c) => c.selector.matches(before) !== c.selector.matches(after)) ? QueueingHint.Queue : QueueingHint.QueueSkip;
    }
    const changed = newPod ?? oldPod;
    return changed && matches(changed.metadata?.labels) ? QueueingHint.Queue : QueueingHint.QueueSkip;
  }

  private afterNodeChange(pod: Pod, oldNode: Node | undefined, newNode: Node | undefined): QueueingHint {
    const constraints = this.hardConstraints(pod);
    if (!constraints) return QueueingHint.Queue;
    const oldMatching = oldNode !== undefined && hasAllTopologyKeys(oldNode.metadata?.labels, constraints);
    const newMatching = newNode !== undefined && hasAllTopologyKeys(newNode.metadata?.labels, constraints);
    if (oldNode && newNode) {
      if (oldMatching !== newMatching) return QueueingHint.Queue;
      if (!newMatching) return QueueingHint.QueueSkip;
      const keyChanged = constraints.some((c) => oldNode.metadata?.labels?.[c.topologyKey] !== newNode.metadata?.labels?.[c.topologyKey]);
      const taintsChanged = JSON.stringify(oldNode.spec?.taints ?? []) !== JSON.stringify(newNode.spec?.taints ?? []);
      return keyChanged || taintsChanged ? QueueingHint.Queue : QueueingHint.QueueSkip;
    }
    return (newNode ? newMatching : oldMatching) ? QueueingHint.Queue : QueueingHint.QueueSkip;
  }
}

export const factory = (args: unknown, handle: Handle): Plugin => new PodTopologySpread((args ?? {}) as PodTopologySpreadArgs, handle);
