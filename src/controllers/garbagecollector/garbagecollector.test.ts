import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { DeleteOptions, OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { ObjectMeta } from '../../api/meta.js';
import { findResource, type ResourceInfo } from '../../api/resources.js';
import { StatusError } from '../../api/errors.js';
import { applyMergePatch } from '../../api/patch/mergepatch.js';
import type { JsonObject } from '../../api/patch/json.js';
import type { ListOptions, ObjectList, PartialObjectMetadata, WatchOptions } from '../../client/client.js';
import { SharedInformerFactory } from '../../client/factory.js';
import type { MetaObject } from '../../client/indexer.js';
import type { WatchEvent, WatchEventType } from '../../client/rest.js';
import { FakeClock } from '../../util/clock.js';
import { GarbageCollector } from './garbagecollector.js';
import type { GarbageCollectorClient, ResourceAccess } from './operations.js';

const configmaps = findResource('', 'v1', 'configmaps')!;
const secrets = findResource('', 'v1', 'secrets')!;
const nodes = findResource('', 'v1', 'nodes')!;

interface Change {
  rv: number;
  info: ResourceInfo;
  type: WatchEventType;
  object: MetaObject;
}

/**
 * An in-memory API server for the calls the garbage collector makes, with upstream's deletion rules:
 * Orphan and Foreground add their finalizers, an object whose last finalizer goes is deleted, and
 * preconditions on UID and resourceVersion answer 409.
 */
class FakeCluster implements GarbageCollectorClient {
  private rv = 0;
  private uids = 0;
  readonly objects = new Map<string, MetaObject>();
  readonly changes: Change[] = [];
  /** Writes the API received: "delete configmaps ns/name Background", "patch ...". */
  readonly writes: string[] = [];
  private readonly failures: { method: string; name: string; err: StatusError }[] = [];
  private wake: (() => void)[] = [];

  resource(info: ResourceInfo): FakeResource {
    return new FakeResource(this, info, undefined);
  }

  /** The next call of method on an object of this name fails with err. */
  failNext(method: 'get' | 'patch' | 'delete', name: string, err: StatusError): void {
    this.failures.push({ method, name, err });
  }

  takeFailure(method: string, name: string): void {
    const i = this.failures.findIndex((f) => f.method === method && f.name === name);
    if (i >= 0) throw this.failures.splice(i, 1)[0]!.err;
  }

  key(info: ResourceInfo, ns: string | undefined, name: string): string {
    return `${info.resource}/${info.namespaced ? ns : ''}/${name}`;
  }

  create(info: ResourceInfo, meta: ObjectMeta): MetaObject {
    const obj: MetaObject = { apiVersion: 'v1', kind: info.kind, metadata: { namespace: info.namespaced ? 'ns' : undefined, ...meta, uid: `uid-${++this.uids}` } };
    this.write(info, 'ADDED', obj);
    return obj;
  }

  lookup(info: ResourceInfo, ns: string | undefined, name: string): MetaObject | undefined {
    return this.objects.get(this.key(info, ns, name));
  }

  /** Stores obj (an update, or a deletion once it has deletionTimestamp and no finalizers). */
  write(info: ResourceInfo, type: WatchEventType, obj: MetaObject): void {
    const meta = obj.metadata!;
    const key = this.key(info, meta.namespace, meta.name!);
    meta.resourceVersion = String(++this.rv);
    if (meta.deletionTimestamp && !meta.finalizers?.length) type = 'DELETED';
    if (type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, obj);
    this.changes.push({ rv: this.rv, info, type, object: structuredClone(obj) });
    for (const w of this.wake.splice(0)) w();
  }

  changed(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.wake.push(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** The order objects were deleted in, by name. */
  deletedNames(): string[] {
    return this.changes.filter((c) => c.type === 'DELETED').map((c) => c.object.metadata!.name!);
  }

  currentRV(): number {
    return this.rv;
  }
}

const notFound = (name: string) => new StatusError(404, 'NotFound', `"${name}" not found`);
const conflict = (message: string) => new StatusError(409, 'Conflict', message);

class FakeResource implements ResourceAccess {
  constructor(
    private readonly cluster: FakeCluster,
    private readonly info: ResourceInfo,
    private readonly ns: string | undefined,
  ) {}

  namespace(ns: string | undefined): ResourceAccess {
    return new FakeResource(this.cluster, this.info, ns);
  }

  private inScope(obj: MetaObject): boolean {
    return !this.info.namespaced || this.ns === undefined || obj.metadata?.namespace === this.ns;
  }

  async list(_opts: ListOptions): Promise<ObjectList<MetaObject>> {
    const prefix = `${this.info.resource}/`;
    const items = [...this.cluster.objects].filter(([k, o]) => k.startsWith(prefix) && this.inScope(o)).map(([, o]) => structuredClone(o));
    return { items, metadata: { resourceVersion: String(this.cluster.currentRV()) } };
  }

  listMetadata(opts: ListOptions): Promise<ObjectList<PartialObjectMetadata>> {
    return this.list(opts) as Promise<ObjectList<PartialObjectMetadata>>;
  }

  watchMetadata(opts: WatchOptions, signal?: AbortSignal): AsyncGenerator<WatchEvent<PartialObjectMetadata>> {
    return this.watch(opts, signal) as AsyncGenerator<WatchEvent<PartialObjectMetadata>>;
  }

  async *watch(opts: WatchOptions, signal?: AbortSignal): AsyncGenerator<WatchEvent<MetaObject>> {
    let from = Number(opts.resourceVersion ?? 0);
    while (!signal?.aborted) {
      const next = this.cluster.changes.find((c) => c.rv > from && c.info === this.info && this.inScope(c.object));
      if (!next) {
        await this.cluster.changed(signal);
        continue;
      }
      from = next.rv;
      yield { type: next.type, object: structuredClone(next.object) };
    }
  }

  private current(name: string): MetaObject {
    const obj = this.cluster.lookup(this.info, this.ns, name);
    if (!obj) throw notFound(name);
    return structuredClone(obj);
  }

  async get(name: string): Promise<MetaObject> {
    this.cluster.takeFailure('get', name);
    return this.current(name);
  }

  async patch(name: string, type: 'merge', body: unknown): Promise<MetaObject> {
    this.cluster.takeFailure('patch', name);
    this.cluster.writes.push(`patch ${this.info.resource} ${name} ${JSON.stringify(body)}`);
    const obj = this.current(name);
    const pinned = (body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (pinned && pinned !== obj.metadata?.resourceVersion) throw conflict('the object has been modified');
    assert.equal(type, 'merge');
    const patched = applyMergePatch(obj as JsonObject, body) as MetaObject;
    this.cluster.write(this.info, 'MODIFIED', patched);
    return patched;
  }

  async delete(name: string, opts: DeleteOptions = {}): Promise<unknown> {
    this.cluster.takeFailure('delete', name);
    const obj = this.current(name);
    const meta = obj.metadata!;
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== meta.uid) throw conflict('Precondition failed: UID');
    if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) throw conflict('Precondition failed: ResourceVersion');
    this.cluster.writes.push(`delete ${this.info.resource} ${name} ${opts.propagationPolicy}`);
    const finalizers = new Set(meta.finalizers ?? []);
    if (opts.propagationPolicy === 'Orphan') finalizers.add('orphan');
    if (opts.propagationPolicy === 'Foreground') finalizers.add('foregroundDeletion');
    if (opts.propagationPolicy === 'Background') {
      finalizers.delete('orphan');
      finalizers.delete('foregroundDeletion');
    }
    meta.finalizers = [...finalizers];
    meta.deletionTimestamp ??= '2026-01-01T00:00:00Z';
    this.cluster.write(this.info, 'MODIFIED', obj);
    return obj;
  }
}

const ownedBy = (owner: MetaObject, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: owner.apiVersion!,
  kind: owner.kind!,
  name: owner.metadata!.name!,
  uid: owner.metadata!.uid!,
  ...extra,
});

interface Env {
  cluster: FakeCluster;
  clock: FakeClock;
  /** What a user (kubectl) does, in namespace "ns" for namespaced resources. */
  user(info: ResourceInfo): ResourceAccess;
  /** The current object, as the fake API server stores it. */
  live(info: ResourceInfo, name: string, ns?: string): MetaObject | undefined;
}

interface Scenario {
  name: string;
  /** Objects present before the collector starts; `o` finds one created earlier by name. */
  setup(c: FakeCluster, o: (name: string) => MetaObject): void;
  /** After the collector synced: each step runs, then the clock moves on until everything settled. */
  steps: ((env: Env) => Promise<unknown> | void)[];
  /** Names of the deleted objects, in order. */
  deleted: string[];
}

const deleteWith = (info: ResourceInfo, name: string, policy: 'Background' | 'Foreground' | 'Orphan') => (env: Env) =>
  env.user(info).delete(name, { propagationPolicy: policy });

const scenarios: Scenario[] = [
  {
    name: 'background: dependents go after their owner, and not before',
    setup(c, o) {
      c.create(configmaps, { name: 'owner' });
      c.create(configmaps, { name: 'dep1', ownerReferences: [ownedBy(o('owner'))] });
      c.create(secrets, { name: 'dep2', ownerReferences: [ownedBy(o('owner'))] });
    },
    steps: [
      ({ cluster }) => assert.deepEqual(cluster.writes, [], 'dependents of a present owner are left alone'),
      deleteWith(configmaps, 'owner', 'Background'),
      ({ cluster }) => assert.deepEqual(cluster.writes.slice(1).sort(), ['delete configmaps dep1 Background', 'delete secrets dep2 Background']),
    ],
    deleted: ['owner', 'dep1', 'dep2'],
  },
  {
    name: 'at start, dependents whose owner is already gone are collected',
    setup(c) {
      c.create(configmaps, { name: 'orphaned', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: 'uid-gone' }] });
    },
    steps: [],
    deleted: ['orphaned'],
  },
  {
    name: 'UID, not name: a new owner with the old name does not keep the old dependents',
    setup(c, o) {
      c.create(configmaps, { name: 'owner' });
      c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(o('owner'))] });
    },
    steps: [
      async (env) => {
        await deleteWith(configmaps, 'owner', 'Background')(env);
        env.cluster.create(configmaps, { name: 'owner' });
      },
      ({ live }) => assert.ok(live(configmaps, 'owner'), 'the new owner stays'),
    ],
    deleted: ['owner', 'dep'],
  },
  {
    name: 'a cluster-scoped owner keeps namespaced dependents in any namespace until it goes',
    setup(c, o) {
      c.create(nodes, { name: 'node1' });
      c.create(configmaps, { name: 'a', namespace: 'ns', ownerReferences: [ownedBy(o('node1'))] });
      c.create(configmaps, { name: 'b', namespace: 'other', ownerReferences: [ownedBy(o('node1'))] });
    },
    steps: [({ cluster }) => assert.deepEqual(cluster.deletedNames(), []), deleteWith(nodes, 'node1', 'Background')],
    deleted: ['node1', 'a', 'b'],
  },
  {
    name: 'a dependent with two owners survives one, losing only the dangling reference',
    setup(c, o) {
      c.create(configmaps, { name: 'a' });
      c.create(secrets, { name: 'b' });
      c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(o('a')), ownedBy(o('b'))] });
    },
    steps: [
      deleteWith(configmaps, 'a', 'Background'),
      ({ cluster, live }) => {
        assert.deepEqual(cluster.deletedNames(), ['a']);
        assert.deepEqual(live(configmaps, 'dep')?.metadata?.ownerReferences?.map((r) => r.name), ['b']);
      },
      deleteWith(secrets, 'b', 'Background'),
    ],
    deleted: ['a', 'b', 'dep'],
  },
  {
    name: 'orphan: references to the owner are removed with a resourceVersion precondition, then the owner goes',
    setup(c, o) {
      c.create(configmaps, { name: 'owner' });
      c.create(configmaps, { name: 'other' });
      c.create(configmaps, { name: 'dep1', ownerReferences: [ownedBy(o('owner'), { blockOwnerDeletion: true })] });
      c.create(configmaps, { name: 'dep2', ownerReferences: [ownedBy(o('owner')), ownedBy(o('other'))] });
    },
    steps: [
      deleteWith(configmaps, 'owner', 'Orphan'),
      ({ cluster, live }) => {
        assert.equal(live(configmaps, 'dep1')?.metadata?.ownerReferences, undefined);
        assert.deepEqual(live(configmaps, 'dep2')?.metadata?.ownerReferences?.map((r) => r.name), ['other']);
        const patches = cluster.writes.filter((w) => w.startsWith('patch configmaps dep'));
        assert.equal(patches.length, 2);
        for (const p of patches) assert.match(p, /"resourceVersion":"\d+"/);
      },
    ],
    deleted: ['owner'],
  },
  {
    name: 'orphan: a conflicting write in between is read again and retried',
    setup(c, o) {
      c.create(configmaps, { name: 'owner' });
      c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(o('owner'))] });
    },
    steps: [
      ({ cluster }) => cluster.failNext('patch', 'dep', conflict('the object has been modified')),
      deleteWith(configmaps, 'owner', 'Orphan'),
      ({ live }) => assert.equal(live(configmaps, 'dep')?.metadata?.ownerReferences, undefined),
    ],
    deleted: ['owner'],
  },
  {
    name: 'foreground: blocking dependents go first, depth first, and the owner waits for them',
    setup(c, o) {
      c.create(configmaps, { name: 'owner' });
      c.create(configmaps, { name: 'child', ownerReferences: [ownedBy(o('owner'), { blockOwnerDeletion: true })] });
      c.create(configmaps, { name: 'grandchild', ownerReferences: [ownedBy(o('child'), { blockOwnerDeletion: true })], finalizers: ['example.com/hold'] });
      c.create(configmaps, { name: 'loose', ownerReferences: [ownedBy(o('owner'))] });
    },
    steps: [
      deleteWith(configmaps, 'owner', 'Foreground'),
      ({ cluster, live }) => {
        // The held grandchild blocks its parent, which blocks the owner; the non-blocking dependent goes.
        assert.deepEqual(cluster.deletedNames(), ['loose']);
        assert.deepEqual(live(configmaps, 'owner')?.metadata?.finalizers, ['foregroundDeletion']);
        assert.deepEqual(live(configmaps, 'child')?.metadata?.finalizers, ['foregroundDeletion']);
        assert.ok(cluster.writes.includes('delete configmaps child Foreground'), 'a dependent with dependents of its own goes in foreground');
        assert.ok(cluster.writes.includes('delete configmaps loose Background'));
      },
      ({ user }) => user(configmaps).patch('grandchild', 'merge', { metadata: { finalizers: null } }),
    ],
    deleted: ['loose', 'grandchild', 'child', 'owner'],
  },
  {
    name: 'a failed call is retried after the rate limiter delay',
    setup(c, o) {
      c.create(configmaps, { name: 'owner' });
      c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(o('owner'))] });
    },
    steps: [
      ({ cluster }) => cluster.failNext('delete', 'dep', new StatusError(500, 'InternalError', 'etcd is sad')),
      async (env) => {
        await deleteWith(configmaps, 'owner', 'Background')(env);
        await env.clock.advance(0);
        assert.deepEqual(env.cluster.deletedNames(), ['owner'], 'the first attempt failed');
      },
    ],
    deleted: ['owner', 'dep'],
  },
];

describe('GarbageCollector', () => {
  for (const s of scenarios) {
    it(s.name, async () => {
      const cluster = new FakeCluster();
      s.setup(cluster, (name) => [...cluster.objects.values()].find((x) => x.metadata?.name === name)!);
      const clock = new FakeClock();
      const informers = new SharedInformerFactory({ client: cluster, clock });
      const gc = new GarbageCollector({ client: cluster, informers, clock, logger: pino({ level: 'silent' }), workers: 2 });
      gc.start();
      informers.start();
      const env: Env = {
        cluster,
        clock,
        user: (info) => cluster.resource(info).namespace(info.namespaced ? 'ns' : undefined),
        live: (info, name, ns = 'ns') => cluster.lookup(info, ns, name),
      };
      await clock.advance(60_000);
      for (const step of s.steps) {
        await step(env);
        await clock.advance(60_000);
      }
      assert.deepEqual(cluster.deletedNames(), s.deleted);
      await gc.stop();
      await informers.shutdown();
    });
  }

  it('stop() ends the informers and workers', async () => {
    const clock = new FakeClock();
    const cluster = new FakeCluster();
    const informers = new SharedInformerFactory({ client: cluster, clock });
    const gc = new GarbageCollector({ client: cluster, informers, clock, logger: pino({ level: 'silent' }) });
    gc.start();
    informers.start();
    await clock.advance(1000);
    await gc.stop();
    await informers.shutdown();
    assert.equal(clock.pending(), 0);
  });
});
