// An in-memory API for the simulator's tests: nodes, pods, leases and events with resourceVersions,
// list and watch (with the spec.nodeName field selector the pod informer uses), status patches
// applied with the API server's own strategic merge patch, and pods/nodes deleted at once.
import type { CoreEvent, Lease, Node, Pod } from '../api/types.js';
import { schemaForKind } from '../api/schema.js';
import { StatusError } from '../api/errors.js';
import { applyStrategicMergePatch } from '../api/patch/strategic.js';
import type { JsonObject } from '../api/patch/json.js';
import type { ListOptions, ObjectList, WatchOptions } from '../client/client.js';
import type { MetaObject } from '../client/indexer.js';
import type { ListerWatcher } from '../client/informer.js';
import type { WatchEvent } from '../client/rest.js';
import type { SimApi } from './sim.js';

const notFound = (kind: string, name: string) => new StatusError(404, 'NotFound', `${kind} "${name}" not found`);
const conflict = (msg: string) => new StatusError(409, 'Conflict', msg);

type Listener<T> = (ev: WatchEvent<T>) => void;

/** One resource's objects by key, with a watch fan-out. */
class Table<T extends MetaObject> implements ListerWatcher<T> {
  readonly items = new Map<string, T>();
  private listeners = new Set<Listener<T>>();
  // Every event, so a watch resumes from the resourceVersion its list returned, as the server's does.
  private history: WatchEvent<T>[] = [];

  constructor(
    private readonly cluster: FakeSimApi,
    private readonly kind: string,
    private readonly filter: (obj: T, fieldSelector?: string) => boolean = () => true,
  ) {}

  key(ns: string | undefined, name: string): string {
    return ns ? `${ns}/${name}` : name;
  }

  get(ns: string | undefined, name: string): T {
    const obj = this.items.get(this.key(ns, name));
    if (!obj) throw notFound(this.kind, name);
    return structuredClone(obj);
  }

  put(obj: T, type: 'ADDED' | 'MODIFIED'): T {
    const stored = structuredClone(obj);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.cluster.revision) };
    if (!stored.metadata.uid) stored.metadata.uid = `uid-${this.cluster.revision}`;
    this.items.set(this.key(stored.metadata.namespace, stored.metadata.name ?? ''), stored);
    this.emit({ type, object: stored });
    return structuredClone(stored);
  }

  create(obj: T): T {
    if (this.items.has(this.key(obj.metadata?.namespace, obj.metadata?.name ?? ''))) throw conflict(`${this.kind} "${obj.metadata?.name}" already exists`);
    return this.put(obj, 'ADDED');
  }

  remove(ns: string | undefined, name: string): void {
    const obj = this.get(ns, name);
    this.items.delete(this.key(ns, name));
    this.emit({ type: 'DELETED', object: { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.cluster.revision) } } });
  }

  async list(opts: ListOptions): Promise<ObjectList<T>> {
    const items = [...this.items.values()].filter((o) => this.filter(o, opts.fieldSelector)).map((o) => structuredClone(o));
    return { items, metadata: { resourceVersion: String(this.cluster.revision) } };
  }

  async *watch(opts: WatchOptions, signal?: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const queue: WatchEvent<T>[] = [];
    let wake: (() => void) | undefined;
    const listener: Listener<T> = (ev) => {
      if (!this.filter(ev.object, opts.fieldSelector)) return;
      queue.push({ type: ev.type, object: structuredClone(ev.object) });
      wake?.();
    };
    const onAbort = () => wake?.();
    const from = Number(opts.resourceVersion ?? 0);
    for (const ev of this.history) if (Number(ev.object.metadata?.resourceVersion) > from) listener(ev);
    this.listeners.add(listener);
    signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        if (signal?.aborted) return;
        const next = queue.shift();
        if (next) yield next;
        else await new Promise<void>((r) => (wake = r));
      }
    } finally {
      this.listeners.delete(listener);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private emit(ev: WatchEvent<T>): void {
    this.history.push(ev);
    for (const l of this.listeners) l(ev);
  }
}

const boundOnly = (pod: Pod, fieldSelector?: string) => fieldSelector !== 'spec.nodeName!=' || Boolean(pod.spec?.nodeName);

export class FakeSimApi implements SimApi {
  revision = 0;
  readonly nodeTable = new Table<Node>(this, 'nodes');
  readonly podTable = new Table<Pod>(this, 'pods', boundOnly);
  readonly leaseTable = new Table<Lease>(this, 'leases');
  readonly events: CoreEvent[] = [];
  /** Every call by name, in order: what the simulator asked of the API. */
  readonly calls: string[] = [];
  /** Makes the next calls of a kind fail with this error (consumed one per call). */
  readonly failures = new Map<string, StatusError[]>();

  get nodes(): ListerWatcher<Node> {
    return this.nodeTable;
  }
  get pods(): ListerWatcher<Pod> {
    return this.podTable;
  }

  private call(name: string): void {
    this.calls.push(name);
    const err = this.failures.get(name)?.shift();
    if (err) throw err;
  }

  async createNode(node: Node): Promise<Node> {
    this.call('createNode');
    return this.nodeTable.create(node);
  }
  async getNode(name: string): Promise<Node> {
    this.call('getNode');
    return this.nodeTable.get(undefined, name);
  }
  async patchNodeStatus(name: string, patch: object): Promise<Node> {
    this.call('patchNodeStatus');
    const node = this.nodeTable.get(undefined, name);
    const patched = applyStrategicMergePatch(node as JsonObject, patch, schemaForKind('', 'v1', 'Node')) as Node;
    return this.nodeTable.put({ ...node, status: patched.status }, 'MODIFIED');
  }
  async deleteNode(name: string): Promise<void> {
    this.call('deleteNode');
    this.nodeTable.remove(undefined, name);
  }
  async createLease(lease: Lease): Promise<Lease> {
    this.call('createLease');
    return this.leaseTable.create(lease);
  }
  async getLease(name: string): Promise<Lease> {
    this.call('getLease');
    return this.leaseTable.get('kube-node-lease', name);
  }
  async updateLease(lease: Lease): Promise<Lease> {
    this.call('updateLease');
    const current = this.leaseTable.get('kube-node-lease', lease.metadata?.name ?? '');
    if (current.metadata?.resourceVersion !== lease.metadata?.resourceVersion) throw conflict('the object has been modified; please apply your changes to the latest version and try again');
    return this.leaseTable.put(lease, 'MODIFIED');
  }
  async patchPodStatus(namespace: string, name: string, patch: object): Promise<Pod> {
    this.call('patchPodStatus');
    const pod = this.podTable.get(namespace, name);
    const uid = (patch as { metadata?: { uid?: string } }).metadata?.uid;
    if (uid && uid !== pod.metadata?.uid) throw conflict(`Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata?.uid}`);
    const patched = applyStrategicMergePatch(pod as JsonObject, patch, schemaForKind('', 'v1', 'Pod')) as Pod;
    return this.podTable.put({ ...pod, status: patched.status }, 'MODIFIED');
  }
  async deletePod(namespace: string, name: string, uid: string | undefined): Promise<void> {
    this.call('deletePod');
    const pod = this.podTable.get(namespace, name);
    if (uid && uid !== pod.metadata?.uid) throw conflict('Precondition failed');
    this.podTable.remove(namespace, name);
  }
  async createEvent(event: CoreEvent): Promise<CoreEvent> {
    this.call('createEvent');
    this.events.push(event);
    return event;
  }
  async patchEvent(event: CoreEvent, patch: object): Promise<CoreEvent> {
    this.call('patchEvent');
    const i = this.events.findIndex((e) => e.metadata?.name === event.metadata?.name);
    if (i < 0) throw notFound('events', event.metadata?.name ?? '');
    this.events[i] = { ...this.events[i]!, ...patch };
    return this.events[i]!;
  }

  /** Creates a pod as a user (and the scheduler, when nodeName is set) would. */
  addPod(pod: Pod): Pod {
    return this.podTable.create({ ...pod, metadata: { namespace: 'default', ...pod.metadata }, status: { phase: 'Pending', ...pod.status } });
  }

  /** A graceful DELETE of a bound pod: deletionTimestamp and grace period set, object kept. */
  markDeleted(namespace: string, name: string, at: string, graceSeconds = 30): void {
    const pod = this.podTable.get(namespace, name);
    this.podTable.put({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: at, deletionGracePeriodSeconds: graceSeconds } }, 'MODIFIED');
  }

  pod(namespace: string, name: string): Pod | undefined {
    return this.podTable.items.get(`${namespace}/${name}`);
  }

  count(name: string): number {
    return this.calls.filter((c) => c === name).length;
  }
}
