import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import type { WatchEvent } from '../../client/rest.js';
import { FakeApi } from './fakeapi.js';

describe('FakeApi', () => {
  let api: FakeApi;
  before(async () => {
    api = await FakeApi.start();
  });
  after(() => api.stop());

  const cms = () => api.client().resource('configmaps').namespace('default');

  it('serves the verbs with the real server semantics', async () => {
    const created = await cms().create({ metadata: { name: 'a', labels: { app: 'x' } }, data: { k: 'v' } });
    assert.ok(created.metadata?.uid);
    assert.equal(created.kind, 'ConfigMap');
    await assert.rejects(cms().create({ metadata: { name: 'a' } }), (e) => hasStatusCode(e, 409));
    const stale = { ...created, data: { k: 'w' } };
    await cms().update(stale);
    await assert.rejects(cms().update(stale), (e: StatusError) => e.code === 409 && /the object has been modified/.test(e.message));
    const patched = await cms().patch('a', 'strategic', { data: { j: '1' } });
    assert.deepEqual(patched.data, { k: 'w', j: '1' });
    assert.deepEqual((await cms().list({ labelSelector: 'app=x' })).items.map((c) => c.metadata?.name), ['a']);
    assert.equal((await cms().list({ labelSelector: 'app=y' })).items.length, 0);
    const meta = await cms().listMetadata();
    assert.equal(meta.kind, 'PartialObjectMetadataList');
    assert.equal((meta.items[0] as { data?: unknown }).data, undefined);
    await assert.rejects(api.client().resource('', 'v1', 'namespaces').create({ metadata: { name: 'x' }, kind: 'Pod' }), (e) => hasStatusCode(e, 400));
  });

  it('keeps an object with finalizers until the last one is removed, as the registry does', async () => {
    await cms().create({ metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    const pending = (await cms().delete('held')) as ConfigMap;
    assert.ok(pending.metadata?.deletionTimestamp);
    assert.ok(await cms().get('held'));
    await cms().patch('held', 'merge', { metadata: { finalizers: null } });
    await assert.rejects(cms().get('held'), (e) => hasStatusCode(e, 404));
  });

  it('streams watch events and ends the watch on abort', async () => {
    const { metadata } = await cms().list();
    const ac = new AbortController();
    const events: WatchEvent<ConfigMap>[] = [];
    const done = (async () => {
      for await (const ev of cms().watch({ resourceVersion: metadata?.resourceVersion }, ac.signal)) {
        events.push(ev);
        if (events.length === 2) ac.abort();
      }
    })();
    await cms().create({ metadata: { name: 'w' } });
    await cms().delete('w');
    await done;
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata?.name}`), ['ADDED w', 'DELETED w']);
  });

  it('records actions and fails the request asked to fail', async () => {
    api.failNext('get', 'a', new StatusError(500, 'InternalError', 'etcd is sad'));
    await assert.rejects(cms().get('a'), (e: StatusError) => e.code === 500 && e.message === 'etcd is sad');
    assert.ok(await cms().get('a'));
    const last = api.actions.at(-1)!;
    assert.deepEqual([last.verb, last.resource, last.namespace, last.name, last.user], ['get', 'configmaps', 'default', 'a', 'kubernetes-admin']);
  });
});
