import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../storage/sqlite/sqlite-store.js';
import { FakeClock } from '../../util/clock.js';
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
