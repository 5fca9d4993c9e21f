// An in-memory API for scheduler tests: pods and nodes served to informers through fake
// list/watch, and every write the scheduler makes (binds, status patches, events) recorded. bind
// and status patches change the stored pod and emit MODIFIED, as the API server would.
import type { ObjectList, ListOptions, WatchOptions } from '../../client/client.js';
import type { ListerWatcher } from '../../client/informer.js';
import type { MetaObject } from '../../client/indexer.js';
import { metaNamespaceKeyFunc } from '../../client/indexer.js';
import type { WatchEvent } from '../../client/rest.js';
import { StatusError } from '../../api/errors.js';
import type { EventsV1Event, Namespace, Node, Pod, PodDisruptionBudget, ReplicaSet, Service } from '../../api/types.js';
import type { PodStatusPatch, SchedulerClient } from '../client.js';

export class FakeListerWatcher<T extends MetaObject> implements ListerWatcher<T> {
  readonly objects = new Map<string, T>();
  private rv = 1;
  private readonly watchers = new Set<(ev: WatchEvent<T>) => void>();

  async list(_opts: ListOptions): Promise<ObjectList<T>> {
    return { items: [...this.objects.values()], metadata: { resourceVersion: String(this.rv) } };
  }

  async *watch(_opts: WatchOptions, signal?: AbortSignal): AsyncIterable<WatchEvent<T>> {
    const buffer: WatchEvent<T>[] = [];
    let wake: (() => void) | undefined;
    const push = (ev: WatchEvent<T>) => {
      buffer.push(ev);
      wake?.();
    };
    this.watchers.add(push);
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      while (!signal?.aborted) {
        const ev = buffer.shift();
        if (ev) yield ev;
        else await new Promise<void>((r) => (wake = r));
      }
    } finally {
      this.watchers.delete(push);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  /** Creates or replaces the object and notifies watchers. */
  upsert(obj: T): T {
    const key = metaNamespaceKeyFunc(obj);
    const type = this.objects.has(key) ? 'MODIFIED' : 'ADDED';
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } } as T;
    this.objects.set(key, stored);
    for (const w of this.watchers) w({ type, object: stored });
    return stored;
  }

  remove(obj: T): void {
    const key = metaNamespaceKeyFunc(obj);
    const stored = this.objects.get(key);
    if (!stored) return;
    this.objects.delete(key);
    const object = { ...stored, metadata: { ...stored.metadata, resourceVersion: String(++this.rv) } } as T;
    for (const w of this.watchers) w({ type: 'DELETED', object });
  }
}

export class FakeSchedulerClient implements SchedulerClient {
  readonly pods = new FakeListerWatcher<Pod>();
  readonly nodes = new FakeListerWatcher<Node>();
  readonly namespaces = new FakeListerWatcher<Namespace>();
  readonly services = new FakeListerWatcher<Service>();
  readonly replicaSets = new FakeListerWatcher<ReplicaSet>();
  readonly podDisruptionBudgets = new FakeListerWatcher<PodDisruptionBudget>();
  readonly binds: { pod: string; node: string }[] = [];
  readonly statusPatches: { pod: string; patch: PodStatusPatch }[] = [];
  readonly events: EventsV1Event[] = [];
  readonly eventPatches: { name: string; patch: Partial<EventsV1Event> }[] = [];
  readonly deletes: string[] = [];
  /** Makes bind fail for the pods it returns an error for. */
  bindError?: (pod: Pod, node: string) => Error | undefined;

  async bind(pod: Pod, nodeName: string): Promise<void> {
    const key = metaNamespaceKeyFunc(pod);
    const err = this.bindError?.(pod, nodeName);
    if (err) throw err;
    const stored = this.pods.get(key);
    if (!stored) throw new StatusError(404, 'NotFound', `pods "${pod.metadata?.name}" not found`);
    if (stored.spec?.nodeName) throw new StatusError(409, 'Conflict', `pod ${pod.metadata?.name} is already assigned to node "${stored.spec.nodeName}"`);
    this.binds.push({ pod: key, node: nodeName });
    const conditions = [...(stored.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled'), { type: 'PodScheduled', status: 'True' }];
    this.pods.upsert({ ...stored, spec: { ...stored.spec!, nodeName }, status: { ...stored.status, conditions } });
  }

  async patchPodStatus(namespace: string, name: string, patch: PodStatusPatch): Promise<void> {
    const key = `${namespace}/${name}`;
    this.statusPatches.push({ pod: key, patch });
    const stored = this.pods.get(key);
    if (!stored) throw new StatusError(404, 'NotFound', `pods "${name}" not found`);
    const conditions = [...(stored.status?.conditions ?? [])];
    for (const c of patch.conditions ?? []) {
      const i = conditions.findIndex((x) => x.type === c.type);
      if (i >= 0) conditions[i] = c;
      else conditions.push(c);
    }
    const status = { ...stored.status, conditions };
    if (patch.nominatedNodeName !== undefined) status.nominatedNodeName = patch.nominatedNodeName ?? undefined;
    this.pods.upsert({ ...stored, status });
  }

  async deletePod(namespace: string, name: string): Promise<void> {
    this.deletes.push(`${namespace}/${name}`);
    const stored = this.pods.get(`${namespace}/${name}`);
    if (stored) this.pods.remove(stored);
  }

  async createEvent(ev: EventsV1Event): Promise<void> {
    this.events.push(structuredClone(ev));
  }

  async patchEvent(_namespace: string, name: string, patch: Partial<EventsV1Event>): Promise<void> {
    this.eventPatches.push({ name, patch: structuredClone(patch) });
  }
}
