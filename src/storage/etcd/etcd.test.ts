import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeStoreConformance } from '../conformance.js';
import { isStorageError } from '../store.js';
import { startEtcd, type EtcdServer } from '../testing/etcd-server.js';
import { EtcdStore } from './etcd-store.js';

let server: EtcdServer;
before(async () => {
  server = await startEtcd();
});
after(() => server.stop());

// Each store gets its own prefix: one etcd serves every test, sharing only the revision counter.
let stores = 0;
describeStoreConformance('etcd', async () => new EtcdStore({ endpoints: [server.endpoint], prefix: `/t${++stores}` }));

void describe('EtcdStore', () => {
  void it('keeps keys under its prefix, invisible to a store with another prefix', async (t) => {
    const one = new EtcdStore({ endpoints: [server.endpoint], prefix: '/one' });
    const two = new EtcdStore({ endpoints: [server.endpoint], prefix: '/one-more' });
    t.after(() => Promise.all([one.close(), two.close()]));
    await one.create('/a', '1');
    await two.create('/a', '2');
    assert.deepEqual(
      (await one.list({ prefix: '/' })).items.map((kv) => [kv.key, kv.value]),
      [['/a', '1']],
    );
    assert.equal((await two.get('/a'))?.value, '2');
  });

  void it('lists more than the 4 MiB gRPC default in one response', async (t) => {
    const store = new EtcdStore({ endpoints: [server.endpoint], prefix: '/big' });
    t.after(() => store.close());
    const value = 'x'.repeat(1 << 20);
    for (let i = 0; i < 5; i++) await store.create(`/${i}`, value);
    const { items } = await store.list({ prefix: '/' });
    assert.equal(items.length, 5);
    assert.ok(items.every((kv) => kv.value.length === value.length));
  });

  void it('answers TooLarge for a value gRPC refuses before etcd sees it', async (t) => {
    const store = new EtcdStore({ endpoints: [server.endpoint], prefix: '/big' });
    t.after(() => store.close());
    await assert.rejects(store.create('/huge', 'x'.repeat(3 << 20)), (err) => isStorageError(err, 'TooLarge'));
  });

  void it('answers Unavailable when no endpoint is reachable', async (t) => {
    const store = new EtcdStore({ endpoints: ['127.0.0.1:1'] });
    t.after(() => store.close());
    await assert.rejects(store.get('/a'), (err) => isStorageError(err, 'Unavailable'));
    await assert.rejects(store.create('/a', 'v'), (err) => isStorageError(err, 'Unavailable'));
  });

  void it('ends a watch with Unavailable when etcd goes away', async (t) => {
    const own = await startEtcd();
    const store = new EtcdStore({ endpoints: [own.endpoint] });
    t.after(() => store.close());
    const first = await store.create('/w', '1');
    const seen: number[] = [];
    let established!: () => void;
    const firstEvent = new Promise<void>((resolve) => (established = resolve));
    const ended = new Promise<Error | undefined>((resolve) =>
      store.watch(
        { prefix: '/', afterRevision: 0, signal: new AbortController().signal },
        {
          event: (e) => {
            seen.push(e.revision);
            established();
          },
          end: resolve,
        },
      ),
    );
    await firstEvent;
    await own.stop();
    const err = await ended;
    assert.ok(isStorageError(err, 'Unavailable'), String(err));
    assert.deepEqual(seen, [first.modRevision]);
  });
});
