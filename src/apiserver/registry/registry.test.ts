import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../storage/sqlite/sqlite-store.js';
import { FakeClock } from '../../util/clock.js';
import { findResource } from '../../api/resources.js';
import type { StoredObject } from '../../api/meta.js';
import { parseLabelSelector } from '../../api/labels.js';
import { parseFieldSelector } from '../../api/fields.js';
import { WatchCache } from '../watchcache/cache.js';
import { StatusError } from '../../api/errors.js';
import { Registry, decodeStored } from './registry.js';
import type { ResourceStrategy } from './strategy.js';
import { Selection } from './selection.js';

const info = findResource('', 'v1', 'configmaps')!;
const user = { name: 'tester', groups: ['system:masters'] };
const write = { dryRun: false, user, subresource: '' };

/** A strategy with the generic behaviour and a graceful delete driven by a label, to test the registry alone. */
const strategy: ResourceStrategy = {
  info,
  storagePrefix: '/registry/configmaps/',
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  returnDeletedObject: false,
  prepareForCreate() {},
  prepareForUpdate() {},
  prepareForSubresourceUpdate() {},
  validate: (obj) => (obj.metadata.name === 'invalid' ? [{ type: 'FieldValueInvalid', field: 'metadata.name', badValue: 'invalid', detail: 'no' }] : []),
  validateUpdate: () => [],
  validateSubresourceUpdate: () => [],
  gracefulDelete: (obj, requested) => (obj.metadata.labels?.graceful ? { gracePeriodSeconds: requested ?? 30 } : undefined),
  selectableFields: (obj) => ({ 'metadata.name': obj.metadata.name ?? '', 'metadata.namespace': obj.metadata.namespace ?? '' }),
};

const everything = new Selection(parseLabelSelector(''), parseFieldSelector(''));
const cm = (name: string, extra: Partial<StoredObject['metadata']> = {}, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data,
});

async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 0;
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return err.code;
  }
}

describe('Registry', () => {
  let store: SqliteStore;
  let clock: FakeClock;
  let reg: Registry;
  let cache: WatchCache;
  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    clock = new FakeClock(Date.UTC(2026, 0, 1));
    cache = new WatchCache({ store, prefix: strategy.storagePrefix, decode: decodeStored, clock, capacity: 5 });
    const admitter = { mutate: async () => undefined, validate: async () => undefined };
    reg = new Registry({ store, cache, strategy, clock, admitter, synchronousWatch: true });
    await cache.start();
  });
  afterEach(async () => {
    cache.stop();
    await store.close();
  });

  it('answers a resourceVersion from the future with the 504 after the 3 s wait, on the injected clock', async () => {
    await reg.create('default', cm('a'), write);
    for (const match of ['Exact', 'NotOlderThan']) {
      const pending = reg.list('default', { selection: everything, resourceVersion: '999999', resourceVersionMatch: match });
      let settled = false;
      pending.catch(() => undefined).finally(() => (settled = true));
      await clock.advance(2999);
      assert.equal(settled, false, `${match} waits for the cache`);
      await clock.advance(1);
      await assert.rejects(pending, (err: StatusError) => {
        assert.equal(err.code, 504);
        assert.equal(err.reason, 'Timeout');
        assert.match(err.message, /^Too large resource version: 999999, current: \d+$/);
        assert.deepEqual(err.details?.causes, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
        return true;
      });
    }
    const get = statusOf(reg.awaitResourceVersion('999999'));
    await clock.advance(3000);
    assert.equal(await get, 504);
    assert.equal(await statusOf(reg.list('default', { selection: everything, resourceVersion: 'abc' })), 400);
    assert.equal(await statusOf(reg.list('default', { selection: everything, resourceVersion: '18446744073709551616' })), 400);
  });

  it('fills server metadata on create and refuses duplicates and invalid objects', async () => {
    const created = await reg.create('default', cm('a', { generateName: 'x-' }), write);
    assert.equal(created.metadata.namespace, 'default');
    assert.match(created.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.equal(created.metadata.creationTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(created.metadata.generation, 1);
    assert.ok(Number(created.metadata.resourceVersion) > 0);
    assert.equal(await statusOf(reg.create('default', cm('a'), write)), 409);
    assert.equal(await statusOf(reg.create('default', cm('invalid'), write)), 422);
    const generated = await reg.create('default', { ...cm(''), metadata: { generateName: 'gen-' } }, write);
    assert.match(generated.metadata.name!, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('updates with optimistic concurrency and skips no-op writes', async () => {
    await reg.create('default', cm('first'), write);
    const a = await reg.create('default', cm('a'), write);
    const stale = { ...a, metadata: { ...a.metadata, resourceVersion: '1' } };
    assert.equal(await statusOf(reg.update('default', 'a', () => stale, write)), 409);
    const same = await reg.update('default', 'a', () => a, write);
    assert.equal(same.object.metadata.resourceVersion, a.metadata.resourceVersion, 'a no-op does not write');
    const reordered = { data: a.data, metadata: { ...a.metadata }, kind: a.kind, apiVersion: a.apiVersion };
    const stillSame = await reg.update('default', 'a', () => reordered, write);
    assert.equal(stillSame.object.metadata.resourceVersion, a.metadata.resourceVersion, 'key order is not a change');
    const sparse = await reg.update('default', 'a', () => ({ ...a, metadata: { ...a.metadata, annotations: undefined } }), write);
    assert.equal(sparse.object.metadata.resourceVersion, a.metadata.resourceVersion, 'an undefined field is not a change');
    const nested = await reg.update('default', 'a', () => ({ ...a, metadata: { ...a.metadata, labels: { x: 'y' } } }), write);
    assert.notEqual(nested.object.metadata.resourceVersion, a.metadata.resourceVersion, 'a new nested field is a change');
    const changed = await reg.update('default', 'a', (cur) => ({ ...cur!, data: { k: 'v' } }), write);
    assert.notEqual(changed.object.metadata.resourceVersion, a.metadata.resourceVersion);
    assert.equal(changed.object.metadata.generation, 2);
    const unconditional = await reg.update('default', 'a', () => ({ ...cm('a'), data: { k: 'w' } }), write);
    assert.equal(unconditional.object.metadata.uid, a.metadata.uid, 'server fields survive a PUT that omits them');
    assert.equal(await statusOf(reg.update('default', 'missing', () => cm('missing'), write)), 404);
  });

  it('holds a finalized object until its last finalizer is removed', async () => {
    await reg.create('default', cm('f', { finalizers: ['example.com/hold'] }), write);
    const marked = await reg.delete('default', 'f', {}, write);
    assert.equal(marked.deleted, false);
    assert.equal(marked.object.metadata.deletionTimestamp, '2026-01-01T00:00:00Z');
    assert.equal(marked.object.metadata.deletionGracePeriodSeconds, 0);
    const released = await reg.update('default', 'f', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, finalizers: [] } }), write);
    assert.equal(released.object.metadata.name, 'f');
    assert.equal(await statusOf(reg.get('default', 'f')), 404);
  });

  it('deletes gracefully: only a shorter grace moves the deadline, and grace 0 removes', async () => {
    await reg.create('default', cm('g', { labels: { graceful: 'yes' } }), write);
    const first = await reg.delete('default', 'g', {}, write);
    assert.equal(first.object.metadata.deletionTimestamp, '2026-01-01T00:00:30Z');
    const longer = await reg.delete('default', 'g', { gracePeriodSeconds: 60 }, write);
    assert.equal(longer.object.metadata.deletionGracePeriodSeconds, 30);
    const shorter = await reg.delete('default', 'g', { gracePeriodSeconds: 5 }, write);
    assert.equal(shorter.object.metadata.deletionGracePeriodSeconds, 5);
    assert.equal(shorter.object.metadata.deletionTimestamp, '2026-01-01T00:00:05Z');
    const gone = await reg.delete('default', 'g', { gracePeriodSeconds: 0 }, write);
    assert.equal(gone.deleted, true);
    assert.equal(await statusOf(reg.get('default', 'g')), 404);
  });

  it('checks delete preconditions and honours dry run', async () => {
    await reg.create('default', cm('first'), write);
    const p = await reg.create('default', cm('p'), write);
    assert.equal(await statusOf(reg.delete('default', 'p', { preconditions: { uid: 'other' } }, write)), 409);
    assert.equal(await statusOf(reg.delete('default', 'p', { preconditions: { resourceVersion: '1' } }, write)), 409);
    await reg.delete('default', 'p', { preconditions: { uid: p.metadata.uid } }, { ...write, dryRun: true });
    assert.equal((await reg.get('default', 'p')).metadata.uid, p.metadata.uid);
  });

  it('pages lists with continue tokens at one revision', async () => {
    for (const n of ['a', 'b', 'c', 'd', 'e']) await reg.create('default', cm(n), write);
    const page1 = await reg.list('default', { selection: everything, limit: 2 });
    assert.deepEqual(page1.items.map((i) => i.metadata.name), ['a', 'b']);
    assert.equal(page1.remainingItemCount, 3);
    await reg.create('default', cm('bb'), write);
    const page2 = await reg.list('default', { selection: everything, limit: 2, continueToken: page1.continueToken });
    assert.deepEqual(page2.items.map((i) => i.metadata.name), ['c', 'd'], 'a later create does not show up in the paged list');
    const page3 = await reg.list('default', { selection: everything, limit: 2, continueToken: page2.continueToken });
    assert.deepEqual(page3.items.map((i) => i.metadata.name), ['e']);
    assert.equal(page3.continueToken, undefined);
  });

  it('watches with selector transitions and resumes from before the cache window', async () => {
    const start = await reg.create('default', cm('w', { labels: { team: 'x' } }), write);
    const events: string[] = [];
    const sel = new Selection(parseLabelSelector('team=x'), parseFieldSelector(''));
    const sink = { event: (t: string, o: StoredObject) => events.push(`${t} ${o.metadata.name}`) > 0, fail: () => undefined, end: () => undefined };
    const cancel = await reg.watch('default', { selection: sel, resourceVersion: start.metadata.resourceVersion }, sink);
    await reg.update('default', 'w', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { team: 'y' } } }), write);
    await reg.update('default', 'w', (cur) => ({ ...cur!, metadata: { ...cur!.metadata, labels: { team: 'x' } } }), write);
    await reg.delete('default', 'w', {}, write);
    cancel();
    assert.deepEqual(events, ['DELETED w', 'ADDED w', 'DELETED w']);

    // More events than the cache keeps: a resume from the start replays the store's history.
    for (let i = 0; i < 8; i++) await reg.create('default', cm(`h${i}`), write);
    const replayed: string[] = [];
    const stop = await reg.watch('default', { selection: everything, resourceVersion: start.metadata.resourceVersion }, {
      event: (t, o) => replayed.push(`${t} ${o.metadata.name}`) > 0,
      fail: () => undefined,
      end: () => undefined,
    });
    // The store replays on later turns of the event loop.
    for (let i = 0; i < 50 && replayed.length < 12; i++) await new Promise((r) => setImmediate(r));
    stop();
    assert.deepEqual(replayed.slice(0, 4), ['MODIFIED w', 'MODIFIED w', 'DELETED w', 'ADDED h0']);
  });

  it('answers a watch and a paged list from below the compacted revision with 410 Expired', async () => {
    const first = await reg.create('default', cm('c0'), write);
    for (let i = 1; i < 10; i++) await reg.create('default', cm(`c${i}`), write);
    const page = await reg.list('default', { selection: everything, limit: 3 });
    await reg.create('default', cm('later'), write);
    await store.compact(await store.currentRevision());
    const failures: number[] = [];
    await reg.watch('default', { selection: everything, resourceVersion: first.metadata.resourceVersion }, {
      event: () => true,
      fail: (err) => failures.push(err.code),
      end: () => undefined,
    });
    for (let i = 0; i < 50 && failures.length === 0; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(failures, [410]);
    assert.equal(await statusOf(reg.list('default', { selection: everything, limit: 3, continueToken: page.continueToken })), 410);
  });
});
