// InterPodAffinity: required pod affinity and anti-affinity (the incoming pod's terms, and existing
// pods' anti-affinity terms that select the incoming pod) as Filter, preferred terms (both ways, plus
// existing pods' required affinity at hardPodAffinityWeight) as Score. PreFilter counts matching pods
// per topology pair (topologyKey, node label value) once, so Filter only looks up the node's labels.
import type { Labels } from '../../../api/labels.js';
import type { Node, Pod } from '../../../api/types.js';
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
} from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import { PodInfo, type AffinityTerm, type NodeInfo, type WeightedAffinityTerm } from '../../framework/types.js';

export const NAME = 'InterPodAffinity';
export const ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules";
export const ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules";

export interface InterPodAffinityArgs {
  /** Score weight of an existing pod's required affinity term that selects the incoming pod (0..100). */
  hardPodAffinityWeight?: number;
  /** Score only the incoming pod's preferred terms, not existing pods' terms. */
  ignorePreferredTermsOfExistingPods?: boolean;
}

export const DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1;

/**
 * Pod counts per topology pair, as topologyKey → value → count; pairs dropping to zero are deleted.
 * Nested maps, not "key\0value" strings: Filter looks pairs up for every node, without building a string each time.
 */
class TopologyCounts {
  constructor(readonly counts = new Map<string, Map<string, number>>()) {}

  add(node: Node, topologyKey: string, delta: number): void {
    const value = node.metadata?.labels?.[topologyKey];
    if (value === undefined) return;
    let byValue = this.counts.get(topologyKey);
    if (!byValue) this.counts.set(topologyKey, (byValue = new Map()));
    const n = (byValue.get(value) ?? 0) + delta;
    if (n !== 0) byValue.set(value, n);
    else if (byValue.delete(value) && byValue.size === 0) this.counts.delete(topologyKey);
  }

  get(topologyKey: string, value: string): number {
    return this.counts.get(topologyKey)?.get(value) ?? 0;
  }

  /** The number of pairs. */
  get size(): number {
    let n = 0;
    for (const byValue of this.counts.values()) n += byValue.size;
    return n;
  }

  clone(): TopologyCounts {
    const c = new TopologyCounts();
    for (const [key, byValue] of this.counts) c.counts.set(key, new Map(byValue));
    return c;
  }
}

/** Whether a pod matches every term (and there is at least one): upstream looks for one pod satisfying all affinity terms. */
function matchesAll(terms: readonly AffinityTerm[], namespace: string, labels: Labels | undefined, nsLabels: Labels | undefined): boolean {
  if (terms.length === 0) return false;
  for (const t of terms) if (!t.matchesIn(namespace, labels, nsLabels)) return false;
  return true;
}

const usesNamespaceLabels = (terms: readonly AffinityTerm[]): boolean => terms.some((t) => t.usesNamespaceLabels());

class PreFilterState implements StateData {
  /** Existing pods' namespace labels are looked up only when one of the incoming pod's terms has a namespaceSelector. */
  private readonly needsNamespaceLabels: boolean;

  constructor(
    readonly podInfo: PodInfo,
    /** The labels of the incoming pod's namespace. */
    readonly nsLabels: Labels | undefined,
    /** Existing pods' required anti-affinity terms that select the incoming pod. */
    readonly existingAntiAffinity: TopologyCounts,
    /** Existing pods matching all of the incoming pod's required affinity terms. */
    readonly affinity: TopologyCounts,
    /** Existing pods matching one of the incoming pod's required anti-affinity terms. */
    readonly antiAffinity: TopologyCounts,
    private readonly namespaceLabels: (ns: string) => Labels | undefined,
  ) {
    this.needsNamespaceLabels = usesNamespaceLabels(podInfo.requiredAffinityTerms) || usesNamespaceLabels(podInfo.requiredAntiAffinityTerms);
  }

  /** Counts (delta 1) or uncounts (-1) an existing pod on node. */
  update(existing: PodInfo, node: Node, delta: number): void {
    this.countExistingAntiAffinity(existing, node, delta);
    this.countIncomingTerms(existing, node, delta);
  }

  /** The existing pod's required anti-affinity terms that select the incoming pod. */
  countExistingAntiAffinity(existing: PodInfo, node: Node, delta: number): void {
    const terms = existing.requiredAntiAffinityTerms;
    if (terms.length === 0) return;
    const incoming = this.podInfo;
    for (const t of terms) if (t.matchesIn(incoming.namespace, incoming.labels, this.nsLabels)) this.existingAntiAffinity.add(node, t.topologyKey, delta);
  }

  /** Whether the existing pod matches the incoming pod's required affinity terms, and which of its anti-affinity terms. */
  countIncomingTerms(existing: PodInfo, node: Node, delta: number): void {
    const { namespace, labels } = existing;
    const nsLabels = this.needsNamespaceLabels ? this.namespaceLabels(namespace) : undefined;
    const affinityTerms = this.podInfo.requiredAffinityTerms;
    if (matchesAll(affinityTerms, namespace, labels, nsLabels)) for (const t of affinityTerms) this.affinity.add(node, t.topologyKey, delta);
    for (const t of this.podInfo.requiredAntiAffinityTerms) if (t.matchesIn(namespace, labels, nsLabels)) this.antiAffinity.add(node, t.topologyKey, delta);
  }

  clone(): PreFilterState {
    return new PreFilterState(
      this.podInfo,
      this.nsLabels,
      this.existingAntiAffinity.clone(),
      this.affinity.clone(),
      this.antiAffinity.clone(),
      this.namespaceLabels,
    );
  }
}

/** Score contributions per topology key and value. */
class PreScoreState implements StateData {
  readonly scores = new Map<string, Map<string, number>>();

  /** Adds weight to the node's domain when the term selects the pod. */
  add(term: AffinityTerm, weight: number, pod: PodInfo, nsLabels: Labels | undefined, node: Node): void {
    if (!term.matchesIn(pod.namespace, pod.labels, nsLabels)) return;
    const value = node.metadata?.labels?.[term.topologyKey];
    if (value === undefined) return;
    let byValue = this.scores.get(term.topologyKey);
    if (!byValue) this.scores.set(term.topologyKey, (byValue = new Map()));
    byValue.set(value, (byValue.get(value) ?? 0) + weight);
  }

  addWeighted(terms: readonly WeightedAffinityTerm[], sign: number, pod: PodInfo, nsLabels: Labels | undefined, node: Node): void {
    for (const { term, weight } of terms) this.add(term, sign * weight, pod, nsLabels, node);
  }

  clone(): this {
    return this;
  }
}

const preFilterKey = new StateKey<PreFilterState>(`PreFilter${NAME}`);
const preScoreKey = new StateKey<PreScoreState>(`PreScore${NAME}`);

const hasPreferredTerms = (pod: Pod) => {
  const a = pod.spec?.affinity;
  return Boolean(a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length || a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length);
};

export class InterPodAffinity implements PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions {
  readonly name = NAME;
  private readonly hardPodAffinityWeight: number;
  private readonly ignorePreferredTermsOfExistingPods: boolean;

  constructor(
    args: InterPodAffinityArgs,
    private readonly handle: Handle,
  ) {
    this.hardPodAffinityWeight = args.hardPodAffinityWeight ?? DEFAULT_HARD_POD_AFFINITY_WEIGHT;
    this.ignorePreferredTermsOfExistingPods = args.ignorePreferredTermsOfExistingPods ?? false;
  }

  private readonly nsLabelsOf = (ns: string): Labels | undefined => this.handle.namespaceLabels(ns);

  preFilter(state: CycleState, pod: Pod): { result?: PreFilterResult; status?: Result } | undefined {
    const lister = this.handle.snapshot();
    const podInfo = new PodInfo(pod);
    const nsLabels = this.nsLabelsOf(pod.metadata?.namespace ?? '');
    const s = new PreFilterState(podInfo, nsLabels, new TopologyCounts(), new TopologyCounts(), new TopologyCounts(), this.nsLabelsOf);
    for (const ni of lister.havePodsWithRequiredAntiAffinityList()) {
      const node = ni.node;
      if (!node) continue;
      for (const existing of ni.podsWithRequiredAntiAffinity) s.countExistingAntiAffinity(existing, node, 1);
    }
    if (podInfo.requiredAffinityTerms.length > 0 || podInfo.requiredAntiAffinityTerms.length > 0) {
      for (const ni of lister.list()) {
        const node = ni.node;
        if (!node) continue;
        for (const existing of ni.pods) s.countIncomingTerms(existing, node, 1);
      }
    } else if (s.existingAntiAffinity.size === 0) {
      return { status: Status.of(Code.Skip) };
    }
    state.write(preFilterKey, s);
    return undefined;
  }

  preFilterExtensions(): PreFilterExtensions {
    return this;
  }

  addPod(state: CycleState, _podToSchedule: Pod, podInfoToAdd: PodInfo, nodeInfo: NodeInfo): Result {
    return this.updateState(state, podInfoToAdd, nodeInfo, 1);
  }

  removePod(state: CycleState, _podToSchedule: Pod, podInfoToRemove: PodInfo, nodeInfo: NodeInfo): Result {
    return this.updateState(state, podInfoToRemove, nodeInfo, -1);
  }

  private updateState(state: CycleState, pi: PodInfo, nodeInfo: NodeInfo, delta: number): Result {
    const s = state.read(preFilterKey);
    if (!s) return Status.error(new Error(`reading "${preFilterKey.name}" from cycleState: not found`));
    if (nodeInfo.node) s.update(pi, nodeInfo.node, delta);
    return undefined;
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Result {
    const s = state.read(preFilterKey);
    if (!s) return Status.error(new Error(`reading "${preFilterKey.name}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata?.labels ?? {};
    if (!this.satisfiesAffinity(s, labels)) return Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH);
    if (s.antiAffinity.size > 0) {
      for (const t of s.podInfo.requiredAntiAffinityTerms) {
        const v = labels[t.topologyKey];
        if (v !== undefined && s.antiAffinity.get(t.topologyKey, v) > 0) return Status.of(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH);
      }
    }
    // Any of the node's own labels forming a counted pair: walk the (few) counted keys rather than every label.
    for (const [key, byValue] of s.existingAntiAffinity.counts) {
      if (Object.hasOwn(labels, key) && (byValue.get(labels[key]!) ?? 0) > 0) return Status.of(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH);
    }
    return undefined;
  }

  /**
   * The node must have every term's topology key, and each of its domains a pod matching all terms.
   * Exception: the first pod of a group that selects itself may go anywhere with the keys, as long as
   * no pod in the cluster matches the terms yet.
   */
  private satisfiesAffinity(s: PreFilterState, labels: Labels): boolean {
    let podsExist = true;
    for (const t of s.podInfo.requiredAffinityTerms) {
      const v = labels[t.topologyKey];
      if (v === undefined) return false;
      if (s.affinity.get(t.topologyKey, v) <= 0) podsExist = false;
    }
    const self = s.podInfo;
    return podsExist || (s.affinity.size === 0 && matchesAll(self.requiredAffinityTerms, self.namespace, self.labels, s.nsLabels));
  }

  preScore(state: CycleState, pod: Pod): Result {
    const hasConstraints = hasPreferredTerms(pod);
    if (this.ignorePreferredTermsOfExistingPods && !hasConstraints) return Status.of(Code.Skip);
    const lister = this.handle.snapshot();
    // Without preferred terms of its own, only existing pods with (anti-)affinity terms can score the pod.
    const nodes = hasConstraints ? lister.list() : lister.havePodsWithAffinityList();
    const podInfo = new PodInfo(pod);
    const nsLabels = this.nsLabelsOf(podInfo.namespace);
    const s = new PreScoreState();
    const preferred = [...podInfo.preferredAffinityTerms, ...podInfo.preferredAntiAffinityTerms];
    const needsNsLabels = preferred.some(({ term }) => term.usesNamespaceLabels());
    for (const ni of nodes) {
      const node = ni.node;
      // Upstream skips nodes without labels here; PreScoreState.add finds no topology value on them either.
      if (!node) continue;
      for (const existing of hasConstraints ? ni.pods : ni.podsWithAffinity) {
        if (hasConstraints) {
          const existingNsLabels = needsNsLabels ? this.nsLabelsOf(existing.namespace) : undefined;
          s.addWeighted(podInfo.preferredAffinityTerms, 1, existing, existingNsLabels, node);
          s.addWeighted(podInfo.preferredAntiAffinityTerms, -1, existing, existingNsLabels, node);
        }
        if (this.hardPodAffinityWeight > 0) {
          for (const t of existing.requiredAffinityTerms) s.add(t, this.hardPodAffinityWeight, podInfo, nsLabels, node);
        }
        s.addWeighted(existing.preferredAffinityTerms, 1, podInfo, nsLabels, node);
        s.addWeighted(existing.preferredAntiAffinityTerms, -1, podInfo, nsLabels, node);
      }
    }
    if (s.scores.size === 0) return Status.of(Code.Skip);
    state.write(preScoreKey, s);
    return undefined;
  }

  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): number | Status {
    const s = state.read(preScoreKey);
    if (!s) return Status.error(new Error(`reading "${preScoreKey.name}" from cycleState: not found`));
    const labels = nodeInfo.node?.metadata?.labels ?? {};
    let score = 0;
    for (const [key, byValue] of s.scores) {
      const v = labels[key];
      if (v !== undefined) score += byValue.get(v) ?? 0;
    }
    return score;
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  /** Min-max scaling to [0, MAX_NODE_SCORE] (scores may be negative). */
  normalizeScore(_state: CycleState, _pod: Pod, scores: number[]): Result {
    if (scores.length === 0) return undefined;
    const min = Math.min(...scores);
    const diff = Math.max(...scores) - min;
    for (let i = 0; i < scores.length; i++) scores[i] = diff > 0 ? Math.trunc((MAX_NODE_SCORE * (scores[i]! - min)) / diff) : 0;
    return undefined;
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      // A new or relabeled pod may satisfy affinity; a deleted or relabeled one may lift anti-affinity.
      { event: { resource: 'Pod', actionType: ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete }, queueingHintFn: (pod, o, n) => this.afterPodChange(pod, o as Pod | undefined, n as Pod | undefined) },
      // A node with a (new) topology domain may satisfy affinity or escape anti-affinity.
      { event: { resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeLabel }, queueingHintFn: (pod, o, n) => afterNodeChange(pod, o as Node | undefined, n as Node) },
    ];
  }

  private afterPodChange(pod: Pod, oldPod: Pod | undefined, newPod: Pod | undefined): QueueingHint {
    if ((newPod && !newPod.spec?.nodeName) || (oldPod && !oldPod.spec?.nodeName)) return QueueingHint.QueueSkip;
    const pi = new PodInfo(pod);
    const matchesAffinity = (p: Pod) => matchesAll(pi.requiredAffinityTerms, p.metadata?.namespace ?? '', p.metadata?.labels, this.nsLabelsOf(p.metadata?.namespace ?? ''));
    const matchesAnti = (p: Pod) => pi.requiredAntiAffinityTerms.some((t) => t.matches(p, this.nsLabelsOf(p.metadata?.namespace ?? '')));
    if (oldPod && newPod) {
      if (!matchesAffinity(oldPod) && matchesAffinity(newPod)) return QueueingHint.Queue;
      return matchesAnti(oldPod) && !matchesAnti(newPod) ? QueueingHint.Queue : QueueingHint.QueueSkip;
    }
    if (newPod) return matchesAffinity(newPod) ? QueueingHint.Queue : QueueingHint.QueueSkip;
    // A deleted pod may have been the one whose anti-affinity (or which the pod's anti-affinity) blocked it.
    return QueueingHint.Queue;
  }
}

/**
 * A new node having every affinity topology key, or a node whose topology labels changed, may make
 * room for the pod. A pod without terms of its own was blocked by existing pods' anti-affinity,
 * which any new or relabeled node may escape.
 */
function afterNodeChange(pod: Pod, oldNode: Node | undefined, newNode: Node): QueueingHint {
  const pi = new PodInfo(pod);
  const newLabels = newNode.metadata?.labels ?? {};
  if (!oldNode) return pi.requiredAffinityTerms.every((t) => newLabels[t.topologyKey] !== undefined) ? QueueingHint.Queue : QueueingHint.QueueSkip;
  if (pi.requiredAffinityTerms.length === 0 && pi.requiredAntiAffinityTerms.length === 0) return QueueingHint.Queue;
  const oldLabels = oldNode.metadata?.labels ?? {};
  for (const t of pi.requiredAffinityTerms) {
    const v = newLabels[t.topologyKey];
    if (v !== undefined && v !== oldLabels[t.topologyKey]) return QueueingHint.Queue;
  }
  for (const t of pi.requiredAntiAffinityTerms) {
    const v = oldLabels[t.topologyKey];
    if (v !== undefined && v !== newLabels[t.topologyKey]) return QueueingHint.Queue;
  }
  return QueueingHint.QueueSkip;
}

export const factory = (args: unknown, handle: Handle): Plugin => new InterPodAffinity((args ?? {}) as InterPodAffinityArgs, handle);
