// Fluent builders for scheduler tests: makePod().name('p').req({ cpu: '1' }).obj().
import type { NodeSelectorRequirement, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import type { Container, Node, Pod } from '../../api/types.js';

type Resources = Record<string, string>;

let uidSeq = 0;

export class PodBuilder {
  private readonly pod: Pod;

  constructor() {
    const n = ++uidSeq;
    this.pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `pod-${n}`, namespace: 'default', uid: `uid-${n}` }, spec: { containers: [] }, status: {} };
  }

  private get spec() {
    return this.pod.spec!;
  }

  name(name: string): this {
    this.pod.metadata!.name = name;
    return this;
  }

  namespace(ns: string): this {
    this.pod.metadata!.namespace = ns;
    return this;
  }

  uid(uid: string): this {
    this.pod.metadata = { ...this.pod.metadata, uid };
    return this;
  }

  labels(labels: Record<string, string>): this {
    this.pod.metadata!.labels = { ...this.pod.metadata!.labels, ...labels };
    return this;
  }

  /** Adds a container with these requests. */
  req(requests: Resources, image = 'busybox'): this {
    this.spec.containers.push(this.container(requests, image));
    return this;
  }

  /** Adds an ordinary init container with these requests. */
  initReq(requests: Resources): this {
    (this.spec.initContainers ??= []).push(this.container(requests, 'busybox'));
    return this;
  }

  /** Adds a sidecar (restartable init container) with these requests. */
  sidecarReq(requests: Resources): this {
    (this.spec.initContainers ??= []).push({ ...this.container(requests, 'busybox'), restartPolicy: 'Always' });
    return this;
  }

  overhead(overhead: Resources): this {
    this.spec.overhead = overhead;
    return this;
  }

  /** Adds a container using these images (no requests). */
  images(...images: string[]): this {
    for (const image of images) this.spec.containers.push(this.container({}, image));
    return this;
  }

  hostPort(hostPort: number, protocol = 'TCP', hostIP?: string): this {
    this.spec.containers.push({ ...this.container({}, 'busybox'), ports: [{ containerPort: hostPort, hostPort, protocol, hostIP }] });
    return this;
  }

  priority(p: number): this {
    this.spec.priority = p;
    return this;
  }

  nodeName(n: string): this {
    this.spec.nodeName = n;
    return this;
  }

  schedulerName(n: string): this {
    this.spec.schedulerName = n;
    return this;
  }

  nodeSelector(sel: Record<string, string>): this {
    this.spec.nodeSelector = sel;
    return this;
  }

  toleration(t: Toleration): this {
    (this.spec.tolerations ??= []).push(t);
    return this;
  }

  schedulingGates(...names: string[]): this {
    this.spec.schedulingGates = names.map((name) => ({ name }));
    return this;
  }

  /** Adds a required node affinity term (terms are ORed). */
  nodeAffinity(matchExpressions: NodeSelectorRequirement[], matchFields?: NodeSelectorRequirement[]): this {
    const na = ((this.spec.affinity ??= {}).nodeAffinity ??= {});
    (na.requiredDuringSchedulingIgnoredDuringExecution ??= { nodeSelectorTerms: [] }).nodeSelectorTerms.push({ matchExpressions, matchFields });
    return this;
  }

  preferredNodeAffinity(weight: number, matchExpressions: NodeSelectorRequirement[]): this {
    const na = ((this.spec.affinity ??= {}).nodeAffinity ??= {});
    (na.preferredDuringSchedulingIgnoredDuringExecution ??= []).push({ weight, preference: { matchExpressions } });
    return this;
  }

  nominatedNodeName(n: string): this {
    this.pod.status!.nominatedNodeName = n;
    return this;
  }

  phase(phase: string): this {
    this.pod.status!.phase = phase;
    return this;
  }

  obj(): Pod {
    return structuredClone(this.pod);
  }

  private container(requests: Resources, image: string): Container {
    const i = (this.spec.containers.length + (this.spec.initContainers?.length ?? 0)) as number;
    return { name: `c${i}`, image, resources: Object.keys(requests).length ? { requests } : undefined };
  }
}

export const makePod = (): PodBuilder => new PodBuilder();

export class NodeBuilder {
  private readonly node: Node;

  constructor() {
    const n = ++uidSeq;
    this.node = { apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${n}`, uid: `node-uid-${n}`, labels: {} }, spec: {}, status: {} };
  }

  name(name: string): this {
    this.node.metadata!.name = name;
    this.node.metadata!.labels!['kubernetes.io/hostname'] = name;
    return this;
  }

  labels(labels: Record<string, string>): this {
    this.node.metadata!.labels = { ...this.node.metadata!.labels, ...labels };
    return this;
  }

  /** Sets capacity and allocatable; pods defaults to 110. */
  capacity(resources: Resources): this {
    const r = { pods: '110', ...resources };
    this.node.status!.capacity = r;
    this.node.status!.allocatable = { ...r };
    return this;
  }

  taint(key: string, value: string | undefined, effect: Taint['effect']): this {
    (this.node.spec!.taints ??= []).push({ key, value, effect });
    return this;
  }

  unschedulable(): this {
    this.node.spec!.unschedulable = true;
    return this;
  }

  image(sizeBytes: number, ...names: string[]): this {
    (this.node.status!.images ??= []).push({ names, sizeBytes });
    return this;
  }

  obj(): Node {
    return structuredClone(this.node);
  }
}

export const makeNode = (): NodeBuilder => new NodeBuilder();
