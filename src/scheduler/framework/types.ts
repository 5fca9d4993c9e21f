// The scheduler's view of pods and nodes, as upstream's framework.PodInfo and NodeInfo: everything
// a plugin needs per node is precomputed when a pod or node changes (requests, host ports, image
// states, pods carrying affinity terms), never per scheduling cycle.
import type { PodAffinityTerm, WeightedPodAffinityTerm } from 'kubernetes-types/core/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { Node, Pod } from '../../api/types.js';
import { isNothing, labelSelectorAsSelector, type Labels, type Selector } from '../../api/labels.js';
import { isRestartableInitContainer } from '../../api/pod/status.js';
import { podRequests, Resource } from './resource.js';

/** namespace/name, the key pods are known by in the cache and the queue. */
export function podKey(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

export const podUID = (pod: Pod): string => pod.metadata?.uid ?? podKey(pod);
export const podPriority = (pod: Pod): number => pod.spec?.priority ?? 0;

/**
 * The term's labelSelector with matchLabelKeys (key in (the pod's value)) and mismatchLabelKeys
 * (key notin (value)) merged in, for keys the pod has. Upstream's API server merges them when the
 * pod is created; merging again here is harmless (the requirements repeat).
 */
function withLabelKeys(pod: Pod, term: PodAffinityTerm): LabelSelector | undefined {
  const sel = term.labelSelector;
  if (!sel || (!term.matchLabelKeys?.length && !term.mismatchLabelKeys?.length)) return sel;
  const labels = pod.metadata?.labels ?? {};
  const extra = (keys: string[] | undefined, operator: 'In' | 'NotIn') =>
    (keys ?? []).filter((k) => labels[k] !== undefined).map((key) => ({ key, operator, values: [labels[key]!] }));
  return { ...sel, matchExpressions: [...(sel.matchExpressions ?? []), ...extra(term.matchLabelKeys, 'In'), ...extra(term.mismatchLabelKeys, 'NotIn')] };
}

/** A pod affinity term with its selectors parsed (upstream's framework.AffinityTerm). */
export class AffinityTerm {
  /** The term's only namespace when it has no namespaceSelector (the usual case): one string compare instead of a Set probe. */
  private readonly soleNamespace: string | undefined;

  constructor(
    readonly namespaces: ReadonlySet<string>,
    readonly selector: Selector,
    readonly topologyKey: string,
    readonly namespaceSelector: Selector,
  ) {
    this.soleNamespace = namespaces.size === 1 && isNothing(namespaceSelector) ? namespaces.values().next().value : undefined;
  }

  static parse(pod: Pod, term: PodAffinityTerm): AffinityTerm {
    const namespaces = new Set<string>(term.namespaces ?? []);
    // No namespaces and no namespace selector means the pod's own namespace.
    if (namespaces.size === 0 && !term.namespaceSelector) namespaces.add(pod.metadata?.namespace ?? '');
    return new AffinityTerm(namespaces, labelSelectorAsSelector(withLabelKeys(pod, term)), term.topologyKey, labelSelectorAsSelector(term.namespaceSelector));
  }

  /** Whether the term selects pod, given the labels of pod's namespace. */
  matches(pod: Pod, nsLabels: Labels | undefined): boolean {
    return this.matchesIn(pod.metadata?.namespace ?? '', pod.metadata?.labels, nsLabels);
  }

  /** matches() for a pod's namespace and labels read once by a caller testing many terms. */
  matchesIn(namespace: string, labels: Labels | undefined, nsLabels: Labels | undefined): boolean {
    const selected = this.soleNamespace !== undefined ? namespace === this.soleNamespace : this.namespaces.has(namespace) || this.namespaceSelector.matches(nsLabels);
    return selected && this.selector.matches(labels);
  }

  /** Whether matching needs the labels of the pod's namespace (only with a namespaceSelector). */
  usesNamespaceLabels(): boolean {
    return !isNothing(this.namespaceSelector);
  }
}

export interface WeightedAffinityTerm {
  term: AffinityTerm;
  weight: number;
}

// Upstream drops all of a list's terms when one fails to parse (the API server does not validate them all).
function parseTerms(pod: Pod, terms: PodAffinityTerm[] | undefined): AffinityTerm[] {
  try {
    return (terms ?? []).map((t) => AffinityTerm.parse(pod, t));
  } catch {
    return [];
  }
}

function parseWeighted(pod: Pod, terms: WeightedPodAffinityTerm[] | undefined): WeightedAffinityTerm[] {
  try {
    return (terms ?? []).map((t) => ({ term: AffinityTerm.parse(pod, t.podAffinityTerm), weight: t.weight }));
  } catch {
    return [];
  }
}

/** A pod with what the scheduler computes from it once. */
export class PodInfo {
  readonly requests: Resource;
  /** Requests with the non-zero defaults for cpu and memory (for spreading BestEffort pods). */
  readonly nonZeroRequests: Resource;
  readonly requiredAffinityTerms: AffinityTerm[];
  readonly requiredAntiAffinityTerms: AffinityTerm[];
  readonly preferredAffinityTerms: WeightedAffinityTerm[];
  readonly preferredAntiAffinityTerms: WeightedAffinityTerm[];

  private current!: Pod;
  /**
   * The pod's namespace and labels, kept on the PodInfo: the affinity and spreading loops read them
   * for every pod in the cluster, and each object less to touch per pod is a cache miss less.
   */
  namespace = '';
  labels: Labels | undefined;
  /** Whether the pod has a deletionTimestamp. */
  terminating = false;

  /** `sameSpec`: the info of another version of the pod with the same spec, whose derived fields are reused (see withPod). */
  constructor(pod: Pod, sameSpec?: PodInfo) {
    this.pod = pod;
    if (sameSpec) {
      this.requests = sameSpec.requests;
      this.nonZeroRequests = sameSpec.nonZeroRequests;
      this.requiredAffinityTerms = sameSpec.requiredAffinityTerms;
      this.requiredAntiAffinityTerms = sameSpec.requiredAntiAffinityTerms;
      this.preferredAffinityTerms = sameSpec.preferredAffinityTerms;
      this.preferredAntiAffinityTerms = sameSpec.preferredAntiAffinityTerms;
      return;
    }
    this.requests = podRequests(pod);
    this.nonZeroRequests = podRequests(pod, true);
    const a = pod.spec?.affinity;
    this.requiredAffinityTerms = parseTerms(pod, a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
    this.requiredAntiAffinityTerms = parseTerms(pod, a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
    this.preferredAffinityTerms = parseWeighted(pod, a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
    this.preferredAntiAffinityTerms = parseWeighted(pod, a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution);
  }

  get pod(): Pod {
    return this.current;
  }

  /** Replaced by the queue when only the pod's status or bookkeeping changed (the derived fields still hold). */
  set pod(pod: Pod) {
    this.current = pod;
    const meta = pod.metadata;
    this.namespace = meta?.namespace ?? '';
    this.labels = meta?.labels;
    this.terminating = Boolean(meta?.deletionTimestamp);
  }

  /** The same pod's info for another version of it whose spec is unchanged (e.g. with nodeName set): nothing is recomputed. */
  withPod(pod: Pod): PodInfo {
    // Constructed, not Object.assign'ed: a copy with another hidden class would make every loop over a node's pods polymorphic.
    return new PodInfo(pod, this);
  }

  hasAffinity(): boolean {
    const a = this.pod.spec?.affinity;
    return Boolean(a?.podAffinity || a?.podAntiAffinity);
  }

  hasRequiredAntiAffinity(): boolean {
    return this.requiredAntiAffinityTerms.length > 0;
  }
}

const WILDCARD_IP = '0.0.0.0';

/** Host ports in use on a node: ip → "protocol/port". */
export class HostPortInfo {
  private readonly byIP = new Map<string, Set<string>>();

  add(ip: string | undefined, protocol: string | undefined, port: number): void {
    const key = `${protocol || 'TCP'}/${port}`;
    const addr = ip || WILDCARD_IP;
    let set = this.byIP.get(addr);
    if (!set) this.byIP.set(addr, (set = new Set()));
    set.add(key);
  }

  remove(ip: string | undefined, protocol: string | undefined, port: number): void {
    const addr = ip || WILDCARD_IP;
    const set = this.byIP.get(addr);
    if (!set) return;
    set.delete(`${protocol || 'TCP'}/${port}`);
    if (set.size === 0) this.byIP.delete(addr);
  }

  /** A wildcard address conflicts with every address, and every address with the wildcard. */
  conflicts(ip: string | undefined, protocol: string | undefined, port: number): boolean {
    const key = `${protocol || 'TCP'}/${port}`;
    const addr = ip || WILDCARD_IP;
    if (addr === WILDCARD_IP) {
      for (const set of this.byIP.values()) if (set.has(key)) return true;
      return false;
    }
    return Boolean(this.byIP.get(addr)?.has(key) || this.byIP.get(WILDCARD_IP)?.has(key));
  }

  get size(): number {
    return this.byIP.size;
  }

  clone(): HostPortInfo {
    const c = new HostPortInfo();
    for (const [ip, set] of this.byIP) c.byIP.set(ip, new Set(set));
    return c;
  }
}

/** The host ports a pod asks for: its containers' and its sidecars'. */
export function podHostPorts(pod: Pod): { hostIP?: string; protocol?: string; hostPort: number }[] {
  const out: { hostIP?: string; protocol?: string; hostPort: number }[] = [];
  const add = (ports: { hostIP?: string; protocol?: string; hostPort?: number }[] | undefined) => {
    for (const p of ports ?? []) if (p.hostPort && p.hostPort > 0) out.push({ hostIP: p.hostIP, protocol: p.protocol, hostPort: p.hostPort });
  };
  for (const c of pod.spec?.initContainers ?? []) if (isRestartableInitContainer(c)) add(c.ports);
  for (const c of pod.spec?.containers ?? []) add(c.ports);
  return out;
}

/** An image present on nodes; one object per image name, shared by every NodeInfo that has it. */
export interface ImageState {
  /** Bytes. */
  size: number;
  /** Names of the nodes that have it. */
  readonly nodes: Set<string>;
}

let generationCounter = 0;
/** A process-wide increasing number marking NodeInfo changes, so snapshots copy only what changed. */
export const nextGeneration = (): number => ++generationCounter;

export class NodeInfo {
  node?: Node;
  pods: PodInfo[] = [];
  podsWithAffinity: PodInfo[] = [];
  podsWithRequiredAntiAffinity: PodInfo[] = [];
  usedPorts = new HostPortInfo();
  /** The sum of the pods' requests. */
  requested = new Resource();
  /** The same with non-zero defaults for cpu and memory. */
  nonZeroRequested = new Resource();
  allocatable = new Resource();
  /** Image name (as in node.status.images[].names) → its state. */
  imageStates = new Map<string, ImageState>();
  generation = nextGeneration();
  /** The node's name ('' without a node); a field because filters read it per node. */
  name = '';

  constructor(node?: Node) {
    if (node) this.setNode(node);
  }

  setNode(node: Node): void {
    this.node = node;
    this.name = node.metadata?.name ?? '';
    this.allocatable = Resource.fromList(node.status?.allocatable as Record<string, string> | undefined);
    this.generation = nextGeneration();
  }

  addPod(pi: PodInfo): void {
    this.pods.push(pi);
    if (pi.hasAffinity()) this.podsWithAffinity.push(pi);
    if (pi.hasRequiredAntiAffinity()) this.podsWithRequiredAntiAffinity.push(pi);
    this.requested.add(pi.requests);
    this.nonZeroRequested.milliCPU += pi.nonZeroRequests.milliCPU;
    this.nonZeroRequested.memory += pi.nonZeroRequests.memory;
    for (const p of podHostPorts(pi.pod)) this.usedPorts.add(p.hostIP, p.protocol, p.hostPort);
    this.generation = nextGeneration();
  }

  /** Removes the pod with pod's UID; false if it is not here. */
  removePod(pod: Pod): boolean {
    const uid = podUID(pod);
    const idx = this.pods.findIndex((p) => podUID(p.pod) === uid);
    if (idx < 0) return false;
    const pi = this.pods[idx]!;
    this.pods.splice(idx, 1);
    const drop = (list: PodInfo[]) => {
      const i = list.indexOf(pi);
      if (i >= 0) list.splice(i, 1);
    };
    drop(this.podsWithAffinity);
    drop(this.podsWithRequiredAntiAffinity);
    this.requested.sub(pi.requests);
    this.nonZeroRequested.milliCPU -= pi.nonZeroRequests.milliCPU;
    this.nonZeroRequested.memory -= pi.nonZeroRequests.memory;
    for (const p of podHostPorts(pi.pod)) this.usedPorts.remove(p.hostIP, p.protocol, p.hostPort);
    this.generation = nextGeneration();
    return true;
  }

  /** A copy whose pod lists and sums can change without touching this one (pods themselves are shared). */
  clone(): NodeInfo {
    const c = new NodeInfo();
    c.node = this.node;
    c.name = this.name;
    c.pods = [...this.pods];
    c.podsWithAffinity = [...this.podsWithAffinity];
    c.podsWithRequiredAntiAffinity = [...this.podsWithRequiredAntiAffinity];
    c.usedPorts = this.usedPorts.clone();
    c.requested = this.requested.clone();
    c.nonZeroRequested = this.nonZeroRequested.clone();
    c.allocatable = this.allocatable.clone();
    c.imageStates = this.imageStates;
    c.generation = this.generation;
    return c;
  }
}
