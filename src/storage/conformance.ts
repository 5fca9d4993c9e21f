// The one conformance suite every Store backend runs unchanged (after upstream's storage/testing
// store_tests.go). Revisions are only compared with each other, never with absolute numbers, so a
// backend may share its revision counter with other users (one etcd for many test prefixes).
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStorageError, type Store, type StorageErrorCode, type WatchEvent } from './store.js';

/** Records one watch; `until` waits for a condition on what arrived (the test timeout bounds it). */
class Recorder {
  readonly events: WatchEvent[] = [];
  readonly ends: (Error | undefined)[] = [];
  private waiters: (() => void)[] = [];
  readonly controller = new AbortController();

  constructor(store: Store, prefix: string, afterRevision: number) {
    store.watch(
      { prefix, afterRevision, signal: this.controller.signal },
      {
        event: (e) => this.push(() => this.events.push(e)),
        end: (err) => this.push(() => this.ends.push(err)),
      },
    );
  }

  private push(record: () => void): void {
    record();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  async until(done: () => boolean): Promise<void> {
    while (!done()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async count(n: number): Promise<WatchEvent[]> {
    await this.until(() => this.events.length >= n || this.ends.length > 0);
    assert.equal(this.events.length, n, `expected ${n} events, ended with ${String(this.ends[0])}`);
    return this.events;
  }

  async ended(): Promise<Error | undefined> {
    await this.until(() => this.ends.length > 0);
    return this.ends[0];
  }
}

async function rejectsWith(p: Promise<unknown>, code: StorageErrorCode) {
  await assert.rejects(p, (err) => isStorageError(err, code) || assert.fail(`expected ${code}, got ${String(err)}`));
}

const summary = (e: WatchEvent) => [e.type, e.kv.key, e.kv.value, e.prevKv?.value];

export function describeStoreConformance(name: string, makeStore: () => Promise<Store>): void {
  void describe(`Store conformance: ${name}`, { timeout: 60_000 }, () => {
    let store: Store;
    const watches: Recorder[] = [];
    const watch = (prefix: string, afterRevision: number) => {
      const r = new Recorder(store, prefix, afterRevision);
      watches.push(r);
      return r;
    };

    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      for (const w of watches.splice(0)) w.controller.abort();
      await store.close();
    });

    void it('creates, gets and refuses to create twice', async () => {
      const kv = await store.create('/a/x', 'one');
      assert.deepEqual(kv, { key: '/a/x', value: 'one', createRevision: kv.modRevision, modRevision: kv.modRevision });
      assert.deepEqual(await store.get('/a/x'), kv);
      assert.equal(await store.get('/a/y'), undefined);
      await rejectsWith(store.create('/a/x', 'two'), 'KeyExists');
      assert.equal((await store.get('/a/x'))?.value, 'one');
    });

    void it('keeps one revision counter across keys, increasing with every write', async () => {
      const a = await store.create('/r/a', '1');
      const b = await store.create('/r/b', '1');
      const a2 = await store.update('/r/a', '2', a.modRevision);
      const d = await store.delete('/r/b');
      assert.ok(a.modRevision < b.modRevision && b.modRevision < a2.modRevision && a2.modRevision < d.modRevision);
      assert.equal(await store.currentRevision(), d.modRevision);
    });

    void it('updates with compare-and-swap, reporting the current value on conflict', async () => {
      const v1 = await store.create('/a/x', 'one');
      const v2 = await store.update('/a/x', 'two', v1.modRevision);
      assert.equal(v2.createRevision, v1.createRevision);
      assert.ok(v2.modRevision > v1.modRevision);
      await assert.rejects(store.update('/a/x', 'stale', v1.modRevision), (err) => {
        assert.ok(isStorageError(err, 'Conflict'));
        assert.deepEqual(err.current, v2);
        return true;
      });
      assert.deepEqual(await store.get('/a/x'), v2);
      await rejectsWith(store.update('/a/missing', 'v', v1.modRevision), 'NotFound');
    });

    void it('deletes with and without a precondition, then lets the key be created anew', async () => {
      const v1 = await store.create('/a/x', 'one');
      await assert.rejects(store.delete('/a/x', v1.modRevision + 1000), (err) => {
        assert.ok(isStorageError(err, 'Conflict'));
        assert.deepEqual(err.current, v1);
        return true;
      });
      const gone = await store.delete('/a/x', v1.modRevision);
      assert.deepEqual(gone, { key: '/a/x', value: 'one', createRevision: v1.createRevision, modRevision: gone.modRevision });
      assert.ok(gone.modRevision > v1.modRevision);
      assert.equal(await store.get('/a/x'), undefined);
      await rejectsWith(store.delete('/a/x'), 'NotFound');
      await rejectsWith(store.update('/a/x', 'v', gone.modRevision), 'NotFound');
      const again = await store.create('/a/x', 'again');
      assert.ok(again.createRevision > gone.modRevision);
      const plain = await store.delete('/a/x');
      assert.equal(plain.value, 'again');
    });

    void it('lists a prefix in key order at the current revision', async () => {
      await store.create('/p/b', 'b');
      await store.create('/p/a', 'a');
      await store.create('/pz', 'outside');
      await store.create('/o/a', 'outside');
      const c = await store.create('/p/c', 'c');
      await store.delete('/p/c');
      const res = await store.list({ prefix: '/p/' });
      assert.deepEqual(
        res.items.map((kv) => [kv.key, kv.value]),
        [
          ['/p/a', 'a'],
          ['/p/b', 'b'],
        ],
      );
      assert.equal(res.revision, await store.currentRevision());
      assert.equal(res.more, false);
      assert.ok(res.revision > c.modRevision);
      assert.deepEqual((await store.list({ prefix: '/nothing/' })).items, []);
    });

    void it('pages with limit and startAfter, reporting more and remaining, at a pinned revision', async () => {
      for (const k of ['a', 'b', 'c', 'd', 'e']) await store.create(`/pg/${k}`, k);
      const first = await store.list({ prefix: '/pg/', limit: 2 });
      assert.deepEqual(
        first.items.map((kv) => kv.value),
        ['a', 'b'],
      );
      assert.equal(first.more, true);
      assert.equal(first.remaining, 3);
      // Changes after the first page must not show in later pages read at its revision.
      const c = await store.get('/pg/c');
      await store.update('/pg/c', 'c2', c!.modRevision);
      await store.delete('/pg/d');
      await store.create('/pg/bb', 'new');
      const second = await store.list({ prefix: '/pg/', limit: 2, startAfter: '/pg/b', revision: first.revision });
      assert.deepEqual(
        second.items.map((kv) => kv.value),
        ['c', 'd'],
      );
      assert.equal(second.revision, first.revision);
      assert.equal(second.more, true);
      assert.equal(second.remaining, 1);
      const last = await store.list({ prefix: '/pg/', limit: 2, startAfter: '/pg/d', revision: first.revision });
      assert.deepEqual(
        last.items.map((kv) => kv.value),
        ['e'],
      );
      assert.equal(last.more, false);
      const now = await store.list({ prefix: '/pg/', startAfter: '/pg/b' });
      assert.deepEqual(
        now.items.map((kv) => kv.value),
        ['new', 'c2', 'e'],
      );
      const exact = await store.list({ prefix: '/pg/', limit: 5 });
      assert.equal(exact.more, false);
      assert.equal(exact.items.length, 5);
    });

    void it('takes any limit the API allows (up to int64): a huge one, at the current or a pinned revision, is "all"', async () => {
      for (const k of ['a', 'b']) await store.create(`/huge/${k}`, k);
      const current = await store.list({ prefix: '/huge/', limit: 2 ** 63 });
      assert.deepEqual(
        current.items.map((kv) => kv.value),
        ['a', 'b'],
      );
      assert.equal(current.more, false);
      const pinned = await store.list({ prefix: '/huge/', limit: Number.MAX_SAFE_INTEGER, revision: current.revision });
      assert.equal(pinned.items.length, 2);
      assert.equal(pinned.more, false);
    });

    void it('lists at an old revision, with the values and revisions of then', async () => {
      const a1 = await store.create('/h/a', 'a1');
      const b1 = await store.create('/h/b', 'b1');
      const then = await store.currentRevision();
      await store.update('/h/a', 'a2', a1.modRevision);
      await store.delete('/h/b');
      await store.create('/h/c', 'c1');
      const old = await store.list({ prefix: '/h/', revision: then });
      assert.deepEqual(old.items, [a1, b1]);
      assert.equal(old.revision, then);
      const before = await store.list({ prefix: '/h/', revision: a1.modRevision });
      assert.deepEqual(before.items, [a1]);
    });

    void it('refuses a value above 1.5 MiB with TooLarge', async () => {
      const big = 'x'.repeat(1.6 * (1 << 20));
      await rejectsWith(store.create('/big/a', big), 'TooLarge');
      const kv = await store.create('/big/a', 'small');
      await rejectsWith(store.update('/big/a', big, kv.modRevision), 'TooLarge');
      assert.deepEqual(await store.get('/big/a'), kv);
    });

    void it('refuses to list at a future revision', async () => {
      await store.create('/f/a', 'a');
      await rejectsWith(store.list({ prefix: '/f/', revision: (await store.currentRevision()) + 1000 }), 'TooLarge');
    });

    void it('replays history after a revision, in order, with previous values', async () => {
      const start = await store.create('/w/a', 'a1');
      const b = await store.create('/w/b', 'b1');
      await store.update('/w/a', 'a2', start.modRevision);
      await store.create('/other/x', 'ignored');
      await store.delete('/w/b', b.modRevision);
      const events = await watch('/w/', start.modRevision).count(3);
      assert.deepEqual(events.map(summary), [
        ['put', '/w/b', 'b1', undefined],
        ['put', '/w/a', 'a2', 'a1'],
        ['delete', '/w/b', 'b1', 'b1'],
      ]);
      assert.deepEqual(events[1].prevKv, start);
      assert.deepEqual(events[0].kv, b);
      assert.ok(events.every((e, i) => i === 0 || e.revision > events[i - 1].revision));
    });

    void it('delivers live puts and deletes with prevKv and the deletion revision', async () => {
      const w = watch('/live/', await store.currentRevision());
      const created = await store.create('/live/a', 'v1');
      const updated = await store.update('/live/a', 'v2', created.modRevision);
      const deleted = await store.delete('/live/a');
      const [put, upd, del] = await w.count(3);
      assert.deepEqual(put, { type: 'put', kv: created, prevKv: undefined, revision: created.modRevision });
      assert.deepEqual(upd, { type: 'put', kv: updated, prevKv: created, revision: updated.modRevision });
      assert.equal(del.type, 'delete');
      assert.equal(del.revision, deleted.modRevision);
      assert.deepEqual(del.kv, { key: '/live/a', value: 'v2', createRevision: created.createRevision, modRevision: deleted.modRevision });
      assert.deepEqual(del.prevKv, updated);
    });

    void it('joins replay and live events without gaps or duplicates', async () => {
      const first = await store.create('/j/0', '0');
      for (let i = 1; i < 20; i++) await store.create(`/j/${i}`, String(i));
      const w = watch('/j/', first.modRevision);
      const writes: Promise<unknown>[] = [];
      for (let i = 20; i < 40; i++) writes.push(store.create(`/j/${i}`, String(i)));
      await Promise.all(writes);
      const events = await w.count(39);
      assert.deepEqual(
        events.map((e) => Number(e.kv.value)).sort((x, y) => x - y),
        Array.from({ length: 39 }, (_, i) => i + 1),
      );
      assert.ok(events.every((e, i) => i === 0 || e.revision > events[i - 1].revision));
      assert.ok(events.every((e) => e.revision === e.kv.modRevision));
    });

    void it('ends a watch on abort, exactly once and without error', async () => {
      const w = watch('/ab/', await store.currentRevision());
      const kv = await store.create('/ab/a', '1');
      await w.count(1);
      w.controller.abort();
      assert.equal(await w.ended(), undefined);
      await store.update('/ab/a', '2', kv.modRevision);
      // A second watch seeing the write proves it was dispatched; the aborted one must stay silent.
      await watch('/ab/', kv.modRevision).count(1);
      assert.equal(w.events.length, 1);
      assert.equal(w.ends.length, 1);
    });

    void it('ends a watch at once when its signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const ended = new Promise<Error | undefined>((resolve) =>
        store.watch({ prefix: '/x/', afterRevision: 0, signal: controller.signal }, { event: () => assert.fail('no events expected'), end: resolve }),
      );
      assert.equal(await ended, undefined);
    });

    void it('ends a watch whose sink throws with that error; the write still succeeds', async () => {
      const ended = new Promise<Error | undefined>((resolve) =>
        store.watch(
          { prefix: '/t/', afterRevision: 0, signal: new AbortController().signal },
          {
            event: () => {
              throw new Error('consumer bug');
            },
            end: resolve,
          },
        ),
      );
      const kv = await store.create('/t/a', '1');
      assert.match(String(await ended), /consumer bug/);
      assert.deepEqual(await store.get('/t/a'), kv);
    });

    void it('ends open watches with Unavailable on close', async () => {
      const other = await makeStore();
      const ended = new Promise<Error | undefined>((resolve) =>
        other.watch({ prefix: '/', afterRevision: 0, signal: new AbortController().signal }, { event: () => {}, end: resolve }),
      );
      await other.close();
      const err = await ended;
      assert.ok(isStorageError(err, 'Unavailable'), String(err));
    });

    void it('compacts history: old lists and watches answer Compacted, current values stay', async () => {
      const a1 = await store.create('/c/a', 'a1');
      const b1 = await store.create('/c/b', 'b1');
      const a2 = await store.update('/c/a', 'a2', a1.modRevision);
      await store.delete('/c/b', b1.modRevision);
      const at = await store.currentRevision();
      const a3 = await store.update('/c/a', 'a3', a2.modRevision);
      await store.compact(at);
      assert.ok((await store.compactedRevision()) >= at);
      await rejectsWith(store.list({ prefix: '/c/', revision: a2.modRevision }), 'Compacted');
      assert.equal(await watch('/c/', a1.modRevision).ended().then((err) => isStorageError(err, 'Compacted')), true);
      assert.deepEqual((await store.list({ prefix: '/c/', revision: at })).items, [a2]);
      assert.deepEqual((await store.list({ prefix: '/c/' })).items, [a3]);
      assert.deepEqual(await store.get('/c/a'), a3);
      const [e] = await watch('/c/', at).count(1);
      assert.deepEqual(e, { type: 'put', kv: a3, prevKv: a2, revision: a3.modRevision });
      // Compacting again to an older revision changes nothing.
      await store.compact(a1.modRevision);
      assert.deepEqual((await store.list({ prefix: '/c/', revision: at })).items, [a2]);
      const b = await store.create('/c/b', 'b2');
      assert.ok(b.createRevision > a3.modRevision);
    });

    void it('refuses to compact to a future revision, and compacts fine afterwards', async () => {
      const before = await store.create('/cf/0', '0');
      const kv = await store.create('/cf/a', '1');
      await rejectsWith(store.compact(kv.modRevision + 1000), 'TooLarge');
      await store.update('/cf/a', '2', kv.modRevision);
      await store.compact(kv.modRevision);
      assert.ok((await store.compactedRevision()) >= kv.modRevision);
      await rejectsWith(store.list({ prefix: '/cf/', revision: before.modRevision }), 'Compacted');
    });
  });
}
