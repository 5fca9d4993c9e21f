import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import type { ObjectMeta } from '../../api/meta.js';
import { findResource, type ResourceInfo } from '../../api/resources.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import type { Client } from '../../client/client.js';
import { SharedInformerFactory } from '../../client/factory.js';
import type { MetaObject } from '../../client/indexer.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { FakeClock } from '../../util/clock.js';
import { GarbageCollector } from './garbagecollector.js';

const configmaps = findResource('', 'v1', 'configmaps')!;
const secrets = findResource('', 'v1', 'secrets')!;
const nodes = findResource('', 'v1', 'nodes')!;
const conflict = (message: string) => new StatusError(409, 'Conflict', message);

const ownedBy = (owner: MetaObject, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: owner.apiVersion!,
  kind: owner.kind!,
  name: owner.metadata!.name!,
  uid: owner.metadata!.uid!,
  ...extra,
});

const gcUser = { name: 'system:kube-controller-manager', groups: ['system:authenticated'] };

/** The real API in process, with what the scenarios look at: the collector's writes and the order objects left storage in. */
class Cluster {
  readonly admin: Client;
  /** Names of objects that left storage, in revision order. */
  readonly deletedNames: string[] = [];
  private readonly created = new Map<string, MetaObject>();
  private readonly watching = new AbortController();

  private constructor(readonly api: FakeApi) {
    this.admin = api.client();
  }

  static async start(clock: FakeClock): Promise<Cluster> {
    const c = new Cluster(await FakeApi.start({ clock }));
    for (const name of ['ns', 'other']) await c.admin.resource('', 'v1', 'namespaces').create({ metadata: { name } });
    const afterRevision = await c.api.store.currentRevision();
    c.api.store.watch(
      { prefix: '/registry/', afterRevision, signal: c.watching.signal },
      { event: (e) => e.type === 'delete' && c.deletedNames.push(e.kv.key.split('/').at(-1)!), end: () => undefined },
    );
    return c;
  }

  /** Creates obj in namespace "ns" (unless it names another) as a user would. */
  async create(info: ResourceInfo, meta: ObjectMeta): Promise<MetaObject> {
    const obj = await this.user(info).namespace(info.namespaced ? (meta.namespace ?? 'ns') : undefined).create({ metadata: meta });
    this.created.set(meta.name!, obj);
    return obj;
  }

  /** The object created under this name. */
  o(name: string): MetaObject {
    return this.created.get(name)!;
  }

  /** What a user (kubectl) does, in namespace "ns" for namespaced resources. */
  user(info: ResourceInfo) {
    return this.admin.resource(info).namespace(info.namespaced ? 'ns' : undefined);
  }

  /** The current object, as the API server stores it. */
  async live(info: ResourceInfo, name: string, ns = 'ns'): Promise<MetaObject | undefined> {
    try {
      return await this.admin.resource(info).namespace(info.namespaced ? ns : undefined).get(name);
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined;
      throw err;
    }
  }

  /** The collector's writes: "delete configmaps ns/name Background", "patch configmaps dep {...}". */
  writes(): string[] {
    return this.api.actions
      .filter((a) => a.user === gcUser.name && (a.verb === 'delete' || a.verb === 'patch'))
      .map((a) => (a.verb === 'delete' ? `delete ${a.resource} ${a.name} ${(a.body as { propagationPolicy?: string }).propagationPolicy}` : `patch ${a.resource} ${a.name} ${JSON.stringify(a.body)}`));
  }

  async stop(): Promise<void> {
    this.watching.abort();
    await this.api.stop();
  }
}

interface Env {
  cluster: Cluster;
  clock: FakeClock;
}

interface Scenario {
  name: string;
  /** Objects present before the collector starts. */
  setup(c: Cluster): Promise<void>;
  /** After the collector synced: each step runs, then the clock moves on until everything settled. */
  steps: ((env: Env) => Promise<unknown> | void)[];
  /** Names of the deleted objects, in order. */
  deleted: string[];
}

const deleteWith = (info: ResourceInfo, name: string, policy: 'Background' | 'Foreground' | 'Orphan') => (env: Env) =>
  env.cluster.user(info).delete(name, { propagationPolicy: policy });

const scenarios: Scenario[] = [
  {
    name: 'background: dependents go after their owner, and not before',
    async setup(c) {
      await c.create(configmaps, { name: 'owner' });
      await c.create(configmaps, { name: 'dep1', ownerReferences: [ownedBy(c.o('owner'))] });
      await c.create(secrets, { name: 'dep2', ownerReferences: [ownedBy(c.o('owner'))] });
    },
    steps: [
      ({ cluster }) => assert.deepEqual(cluster.writes(), [], 'dependents of a present owner are left alone'),
      deleteWith(configmaps, 'owner', 'Background'),
      ({ cluster }) => assert.deepEqual(cluster.writes().sort(), ['delete configmaps dep1 Background', 'delete secrets dep2 Background']),
    ],
    deleted: ['owner', 'dep1', 'dep2'],
  },
  {
    name: 'at start, dependents whose owner is already gone are collected',
    async setup(c) {
      await c.create(configmaps, { name: 'orphaned', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: 'uid-gone' }] });
    },
    steps: [],
    deleted: ['orphaned'],
  },
  {
    name: 'UID, not name: a new owner with the old name does not keep the old dependents',
    async setup(c) {
      await c.create(configmaps, { name: 'owner' });
      await c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(c.o('owner'))] });
    },
    steps: [
      async (env) => {
        await deleteWith(configmaps, 'owner', 'Background')(env);
        await env.cluster.create(configmaps, { name: 'owner' });
      },
      async ({ cluster }) => assert.ok(await cluster.live(configmaps, 'owner'), 'the new owner stays'),
    ],
    deleted: ['owner', 'dep'],
  },
  {
    name: 'a cluster-scoped owner keeps namespaced dependents in any namespace until it goes',
    async setup(c) {
      await c.create(nodes, { name: 'node1' });
      await c.create(configmaps, { name: 'a', namespace: 'ns', ownerReferences: [ownedBy(c.o('node1'))] });
      await c.create(configmaps, { name: 'b', namespace: 'other', ownerReferences: [ownedBy(c.o('node1'))] });
    },
    steps: [({ cluster }) => assert.deepEqual(cluster.deletedNames, []), deleteWith(nodes, 'node1', 'Background')],
    deleted: ['node1', 'a', 'b'],
  },
  {
    name: 'a dependent with two owners survives one, losing only the dangling reference',
    async setup(c) {
      await c.create(configmaps, { name: 'a' });
      await c.create(secrets, { name: 'b' });
      await c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(c.o('a')), ownedBy(c.o('b'))] });
    },
    steps: [
      deleteWith(configmaps, 'a', 'Background'),
      async ({ cluster }) => {
        assert.deepEqual(cluster.deletedNames, ['a']);
        assert.deepEqual((await cluster.live(configmaps, 'dep'))?.metadata?.ownerReferences?.map((r) => r.name), ['b']);
      },
      deleteWith(secrets, 'b', 'Background'),
    ],
    deleted: ['a', 'b', 'dep'],
  },
  {
    name: 'orphan: references to the owner are removed with a resourceVersion precondition, then the owner goes',
    async setup(c) {
      await c.create(configmaps, { name: 'owner' });
      await c.create(configmaps, { name: 'other' });
      await c.create(configmaps, { name: 'dep1', ownerReferences: [ownedBy(c.o('owner'), { blockOwnerDeletion: true })] });
      await c.create(configmaps, { name: 'dep2', ownerReferences: [ownedBy(c.o('owner')), ownedBy(c.o('other'))] });
    },
    steps: [
      deleteWith(configmaps, 'owner', 'Orphan'),
      async ({ cluster }) => {
        assert.equal((await cluster.live(configmaps, 'dep1'))?.metadata?.ownerReferences, undefined);
        assert.deepEqual((await cluster.live(configmaps, 'dep2'))?.metadata?.ownerReferences?.map((r) => r.name), ['other']);
        const patches = cluster.writes().filter((w) => w.startsWith('patch configmaps dep'));
        assert.equal(patches.length, 2);
        for (const p of patches) assert.match(p, /"resourceVersion":"\d+"/);
      },
    ],
    deleted: ['owner'],
  },
  {
    name: 'orphan: a conflicting write in between is read again and retried',
    async setup(c) {
      await c.create(configmaps, { name: 'owner' });
      await c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(c.o('owner'))] });
    },
    steps: [
      ({ cluster }) => cluster.api.failNext('patch', 'dep', conflict('the object has been modified')),
      deleteWith(configmaps, 'owner', 'Orphan'),
      async ({ cluster }) => assert.equal((await cluster.live(configmaps, 'dep'))?.metadata?.ownerReferences, undefined),
    ],
    deleted: ['owner'],
  },
  {
    name: 'foreground: blocking dependents go first, depth first, and the owner waits for them',
    async setup(c) {
      await c.create(configmaps, { name: 'owner' });
      await c.create(configmaps, { name: 'child', ownerReferences: [ownedBy(c.o('owner'), { blockOwnerDeletion: true })] });
      await c.create(configmaps, { name: 'grandchild', ownerReferences: [ownedBy(c.o('child'), { blockOwnerDeletion: true })], finalizers: ['example.com/hold'] });
      await c.create(configmaps, { name: 'loose', ownerReferences: [ownedBy(c.o('owner'))] });
    },
    steps: [
      deleteWith(configmaps, 'owner', 'Foreground'),
      async ({ cluster }) => {
        // The held grandchild blocks its parent, which blocks the owner; the non-blocking dependent goes.
        assert.deepEqual(cluster.deletedNames, ['loose']);
        assert.deepEqual((await cluster.live(configmaps, 'owner'))?.metadata?.finalizers, ['foregroundDeletion']);
        assert.deepEqual((await cluster.live(configmaps, 'child'))?.metadata?.finalizers, ['foregroundDeletion']);
        assert.ok(cluster.writes().includes('delete configmaps child Foreground'), 'a dependent with dependents of its own goes in foreground');
        assert.ok(cluster.writes().includes('delete configmaps loose Background'));
      },
      ({ cluster }) => cluster.user(configmaps).patch('grandchild', 'merge', { metadata: { finalizers: null } }),
    ],
    deleted: ['loose', 'grandchild', 'child', 'owner'],
  },
  {
    name: 'a failed call is retried after the rate limiter delay',
    async setup(c) {
      await c.create(configmaps, { name: 'owner' });
      await c.create(configmaps, { name: 'dep', ownerReferences: [ownedBy(c.o('owner'))] });
    },
    steps: [
      ({ cluster }) => cluster.api.failNext('delete', 'dep', new StatusError(500, 'InternalError', 'etcd is sad')),
      async (env) => {
        await deleteWith(configmaps, 'owner', 'Background')(env);
        await env.clock.advance(0);
        assert.deepEqual(env.cluster.deletedNames, ['owner'], 'the first attempt failed');
      },
    ],
    deleted: ['owner', 'dep'],
  },
];

describe('GarbageCollector', () => {
  for (const s of scenarios) {
    it(s.name, async () => {
      const clock = new FakeClock();
      const cluster = await Cluster.start(clock);
      await s.setup(cluster);
      const client = cluster.api.client(gcUser);
      const informers = new SharedInformerFactory({ client, clock });
      const gc = new GarbageCollector({ client, informers, clock, logger: pino({ level: 'silent' }), workers: 2 });
      gc.start();
      informers.start();
      const env: Env = { cluster, clock };
      await clock.advance(60_000);
      for (const step of s.steps) {
        await step(env);
        await clock.advance(60_000);
      }
      assert.deepEqual(cluster.deletedNames, s.deleted);
      await gc.stop();
      await informers.shutdown();
      await cluster.stop();
    });
  }

  it('stop() ends the informers and workers', async () => {
    const clock = new FakeClock();
    const cluster = await Cluster.start(clock);
    const client = cluster.api.client(gcUser);
    const informers = new SharedInformerFactory({ client, clock });
    const gc = new GarbageCollector({ client, informers, clock, logger: pino({ level: 'silent' }) });
    gc.start();
    informers.start();
    await clock.advance(1000);
    await gc.stop();
    await informers.shutdown();
    await cluster.stop();
    assert.equal(clock.pending(), 0);
  });
});
