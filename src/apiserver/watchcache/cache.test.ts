import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../storage/sqlite/sqlite-store.js';
import { FakeClock } from '../../util/clock.js';
import type { StoredObject } from '../../api/meta.js';
import { decodeStored } from '../registry/registry.js';
import { TooOldError, WatchCache, type CacheEvent } from './cache.js';

const prefix = '/registry/configmaps/';

describe('WatchCache event window', () => {
  let store: SqliteStore;
  let cache: WatchCache;
  let written = 0;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    cache = new WatchCache({ store, prefix, decode: decodeStored, clock: new FakeClock(), capacity: 3 });
    await cache.start();
  });
  afterEach(async () => {
    cache.stop();
    await store.close();
  });

  /** Writes n objects and returns their revisions, in order. */
  async function write(n: number): Promise<number[]> {
    const revs: number[] = [];
    for (let i = 0; i < n; i++) {
      const key = `${prefix}default/c${written++}`;
      revs.push((await store.create(key, JSON.stringify({ metadata: { name: key } }))).modRevision);
    }
    await cache.waitUntil(revs[revs.length - 1]!, 1000);
    return revs;
  }

  function history(afterRv: number): number[] {
    const seen: CacheEvent[] = [];
    const cancel = cache.watch(afterRv, { send: (e) => (seen.push(e), true), close: () => undefined });
    cancel();
    return seen.map((e) => e.rv);
  }

  it('keeps exactly the last `capacity` events, across many bulk trims', async () => {
    // Ten times the capacity: the window is trimmed in bulk several times over.
    const revs = await write(31);
    const last = revs.slice(-3);
    assert.deepEqual(history(revs[27]!), last, 'resuming at the start of the window replays all of it');
    assert.deepEqual(history(revs[29]!), last.slice(2));
    assert.deepEqual(history(revs[30]!), []);
    assert.throws(() => history(revs[26]!), TooOldError, 'one event older than the window is gone');
    try {
      history(revs[0]!);
      assert.fail('expected TooOldError');
    } catch (err) {
      assert.ok(err instanceof TooOldError);
      assert.equal(err.oldest, revs[28]!, 'the oldest resumable revision is the window start');
    }
  });

  it('delivers live events after history to a registered watcher', async () => {
    const revs = await write(5);
    const seen: number[] = [];
    const cancel = cache.watch(revs[3]!, { send: (e) => (seen.push(e.rv), true), close: () => undefined });
    const more = await write(2);
    cancel();
    assert.deepEqual(seen, [revs[4]!, ...more]);
  });
});

describe('WatchCache expected writes', () => {
  let store: SqliteStore;
  let cache: WatchCache;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    cache = new WatchCache({ store, prefix, decode: decodeStored, clock: new FakeClock() });
    await cache.start();
  });
  afterEach(async () => {
    cache.stop();
    await store.close();
  });

  it("keeps the writer's object for its own event, with the event's resourceVersion", async () => {
    const key = `${prefix}default/mine`;
    const object: StoredObject = { metadata: { name: 'mine' }, data: { a: '1' } };
    const value = JSON.stringify(object);
    const withdraw = cache.expectWrite(key, value, object);
    const kv = await store.create(key, value);
    withdraw();
    const cached = cache.get(key)!;
    assert.equal(cached.object, object, 'the same instance, not a parse of the value');
    assert.equal(object.metadata.resourceVersion, String(kv.modRevision));
  });

  it('decodes an event whose value is not the expected one, and forgets withdrawn promises', async () => {
    const key = `${prefix}default/other`;
    const expected = { metadata: { name: 'other' }, data: { a: 'expected' } };
    const withdraw = cache.expectWrite(key, JSON.stringify(expected), expected);
    await store.create(key, JSON.stringify({ metadata: { name: 'other' }, data: { a: 'written' } }));
    assert.notEqual(cache.get(key)!.object, expected);
    assert.deepEqual(cache.get(key)!.object.data, { a: 'written' });
    withdraw();
    const late = { metadata: { name: 'late' } };
    const lateKey = `${prefix}default/late`;
    cache.expectWrite(lateKey, JSON.stringify(late), late)();
    await store.create(lateKey, JSON.stringify(late));
    assert.notEqual(cache.get(lateKey)!.object, late, 'a promise withdrawn before the event is not used');
  });
});

describe('WatchCache after its store watch breaks', () => {
  it('lists again until the store answers (an etcd member died, an election is under way)', async () => {
    const store = new SqliteStore(':memory:');
    const clock = new FakeClock();
    let failLists = 0;
    let breakWatch = () => {};
    // The store, with lists that fail on demand and a watch the test can break.
    const flaky = new Proxy(store, {
      get(target, prop) {
        if (prop === 'list') {
          return async (opts: Parameters<SqliteStore['list']>[0]) => {
            if (failLists > 0) {
              failLists--;
              throw new Error('etcd unavailable');
            }
            return target.list(opts);
          };
        }
        if (prop === 'watch') {
          return (opts: Parameters<SqliteStore['watch']>[0], sink: Parameters<SqliteStore['watch']>[1]) => {
            const stop = new AbortController();
            target.watch({ ...opts, signal: AbortSignal.any([opts.signal, stop.signal]) }, { ...sink, end: () => undefined });
            breakWatch = () => {
              stop.abort();
              sink.end(new Error('etcd watch stream broke'));
            };
          };
        }
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const cache = new WatchCache({ store: flaky, prefix, decode: decodeStored, clock });
    try {
      await cache.start();
      await store.create(`${prefix}default/before`, JSON.stringify({ metadata: { name: 'before' } }));
      failLists = 3;
      breakWatch();
      // Three failed lists (200, 400, 800 ms apart), then one that works.
      for (let i = 0; i < 40 && failLists > 0; i++) await clock.advance(250);
      assert.equal(failLists, 0, 'every failing list was tried');
      const kv = await store.create(`${prefix}default/after`, JSON.stringify({ metadata: { name: 'after' } }));
      for (let i = 0; i < 40 && !cache.get(`${prefix}default/after`); i++) await clock.advance(250);
      assert.ok(await cache.waitUntil(kv.modRevision, 1000), 'the cache follows the store again');
      assert.ok(cache.get(`${prefix}default/before`), 'with what was written before the break');
    } finally {
      cache.stop();
      await store.close();
    }
  });
});
