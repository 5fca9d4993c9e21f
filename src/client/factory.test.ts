import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findResource, type ResourceInfo } from '../api/resources.js';
import { parseLabelSelector } from '../api/labels.js';
import { FakeClock } from '../util/clock.js';
import type { ListOptions, ObjectList, PartialObjectMetadata, WatchOptions } from './client.js';
import { SharedInformerFactory, type InformerClient, type InformerSource } from './factory.js';
import type { MetaObject } from './indexer.js';
import type { WatchEvent } from './rest.js';

const pods = findResource('', 'v1', 'pods')!;
const configmaps = findResource('', 'v1', 'configmaps')!;

/** Lists a fixed set per resource; watches stay open until aborted. Records every call. */
class FakeClient implements InformerClient {
  readonly calls: string[] = [];
  constructor(private readonly objects: Record<string, MetaObject[]>) {}
  resource(info: ResourceInfo): InformerSource<MetaObject> {
    const items = this.objects[info.resource] ?? [];
    const calls = this.calls;
    const wait = async function* (signal?: AbortSignal): AsyncGenerator<never> {
      await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
      yield* [];
    };
    return {
      list: async (_o: ListOptions): Promise<ObjectList<MetaObject>> => (calls.push(`list ${info.resource}`), { items, metadata: { resourceVersion: '1' } }),
      watch: (_o: WatchOptions, signal?: AbortSignal): AsyncIterable<WatchEvent<MetaObject>> => (calls.push(`watch ${info.resource}`), wait(signal)),
      listMetadata: async (): Promise<ObjectList<PartialObjectMetadata>> => (
        calls.push(`list-metadata ${info.resource}`), { items: items.map((o) => ({ kind: 'PartialObjectMetadata', metadata: o.metadata! })), metadata: { resourceVersion: '1' } }
      ),
      watchMetadata: (_o: WatchOptions, signal?: AbortSignal) => (calls.push(`watch-metadata ${info.resource}`), wait(signal)),
    };
  }
}

const pod = (name: string, labels: Record<string, string>, namespace = 'ns'): MetaObject => ({ kind: 'Pod', metadata: { name, namespace, labels } });

describe('SharedInformerFactory', () => {
  it('one informer (one list and watch) per resource and selectors, however many ask', async () => {
    const client = new FakeClient({ pods: [pod('a', { app: 'web' })] });
    const f = new SharedInformerFactory({ client, clock: new FakeClock() });
    assert.equal(f.informerFor(pods), f.informerFor(pods));
    assert.notEqual(f.informerFor(pods, { fieldSelector: 'spec.nodeName=n1' }), f.informerFor(pods));
    f.start();
    f.start();
    assert.equal(await f.waitForCacheSync(), true);
    assert.deepEqual(client.calls.filter((c) => c === 'list pods').length, 2);
    assert.deepEqual(client.calls.filter((c) => c === 'watch pods').length, 2);
    await f.shutdown();
  });

  it('a handler added after sync is replayed the cache as adds', async () => {
    const f = new SharedInformerFactory({ client: new FakeClient({ pods: [pod('a', {}), pod('b', {})] }), clock: new FakeClock() });
    const informer = f.informerFor(pods);
    f.start();
    await f.waitForCacheSync();
    const added: string[] = [];
    informer.addEventHandler({ onAdd: (o) => added.push(o.metadata!.name!) });
    assert.deepEqual(added.sort(), ['a', 'b']);
    await f.shutdown();
  });

  it('listers read by namespace and label selector; indexers can be added', async () => {
    const f = new SharedInformerFactory({ client: new FakeClient({ pods: [pod('a', { app: 'web' }), pod('b', { app: 'db' }), pod('c', { app: 'web' }, 'other')] }), clock: new FakeClock() });
    const lister = f.lister(pods);
    f.addIndexers(pods, { app: (o: MetaObject) => [o.metadata?.labels?.app ?? ''] });
    f.start();
    await f.waitForCacheSync();
    const names = (os: MetaObject[]) => os.map((o) => o.metadata!.name).sort();
    assert.deepEqual(names(lister.list(parseLabelSelector('app=web'))), ['a', 'c']);
    assert.deepEqual(names(lister.namespace('ns').list()), ['a', 'b']);
    assert.equal(lister.namespace('other').get('c')?.metadata?.name, 'c');
    assert.equal(lister.namespace('ns').get('c'), undefined);
    assert.deepEqual(names(lister.byIndex('app', 'db')), ['b']);
    await f.shutdown();
  });

  it('owner-graph informers share a whole-object informer if there is one, else watch metadata only', async () => {
    const client = new FakeClient({ pods: [pod('a', {})], configmaps: [{ kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } }] });
    const f = new SharedInformerFactory({ client, clock: new FakeClock() });
    const seen: string[] = [];
    for (const info of [pods, configmaps]) f.ownerGraphInformer(info).addEventHandler({ onAdd: (o) => seen.push(`${o.kind} ${o.metadata!.name}`) });
    f.informerFor(pods);
    f.start();
    assert.equal(await f.waitForCacheSync(), true);
    assert.deepEqual(client.calls.sort(), ['list pods', 'list-metadata configmaps', 'watch pods', 'watch-metadata configmaps']);
    assert.deepEqual(seen.sort(), ['PartialObjectMetadata cm', 'Pod a']);
    await f.shutdown();
  });

  it('waitForCacheSync answers false when aborted first', async () => {
    const client: InformerClient = {
      resource: (info) => ({ ...new FakeClient({}).resource(info), list: () => new Promise<never>(() => undefined) }),
    };
    const f = new SharedInformerFactory({ client, clock: new FakeClock() });
    f.informerFor(pods);
    f.start();
    const abort = new AbortController();
    const synced = f.waitForCacheSync(abort.signal);
    abort.abort();
    assert.equal(await synced, false);
  });
});
