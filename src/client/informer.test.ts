import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ObjectMeta } from '../api/meta.js';
import { StatusError, expired, internalError } from '../api/errors.js';
import { FakeClock } from '../util/clock.js';
import type { ListOptions, ObjectList, WatchOptions } from './client.js';
import { DeletedFinalStateUnknown } from './indexer.js';
import { SharedInformer, type ListerWatcher } from './informer.js';
import type { WatchEvent } from './rest.js';

interface Obj {
  metadata: ObjectMeta;
  spec?: { node?: string };
}
const obj = (name: string, rv: string, node?: string): Obj => ({ metadata: { name, namespace: 'ns', resourceVersion: rv }, spec: { node } });

/** A watch stream the test feeds event by event; it ends on close() or abort. */
class Stream {
  private queue: (WatchEvent<Obj> | Error | null)[] = [];
  private wake?: () => void;
  constructor(readonly opts: WatchOptions) {}
  send(ev: WatchEvent<Obj> | Error | null): void {
    this.queue.push(ev);
    this.wake?.();
  }
  async *iterate(signal?: AbortSignal): AsyncGenerator<WatchEvent<Obj>> {
    const onAbort = () => this.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      for (;;) {
        if (signal?.aborted) return;
        const next = this.queue.shift();
        if (next === undefined) {
          await new Promise<void>((r) => (this.wake = r));
          continue;
        }
        if (next === null) return;
        if (next instanceof Error) throw next;
        yield next;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** Answers each list from a script and hands out controllable watch streams: the reflector's edge cases. */
class ScriptedListerWatcher implements ListerWatcher<Obj> {
  lists: ListOptions[] = [];
  watches: Stream[] = [];
  /** Answers for successive list calls. */
  answers: (ObjectList<Obj> | Error)[] = [];
  watchErrors: Error[] = [];

  async list(opts: ListOptions): Promise<ObjectList<Obj>> {
    this.lists.push(opts);
    const a = this.answers.shift();
    if (!a) throw new Error('unexpected list');
    if (a instanceof Error) throw a;
    return a;
  }
  watch(opts: WatchOptions, signal?: AbortSignal): AsyncIterable<WatchEvent<Obj>> {
    const err = this.watchErrors.shift();
    if (err) throw err;
    const s = new Stream(opts);
    this.watches.push(s);
    return s.iterate(signal);
  }
  get stream(): Stream {
    return this.watches.at(-1)!;
  }
}

const list = (rv: string, items: Obj[], cont?: string): ObjectList<Obj> => ({ metadata: { resourceVersion: rv, continue: cont }, items });

function recorder() {
  const log: string[] = [];
  return {
    log,
    handler: {
      onAdd: (o: Obj, initial: boolean) => log.push(`add ${o.metadata.name}@${o.metadata.resourceVersion}${initial ? ' initial' : ''}`),
      onUpdate: (a: Obj, b: Obj) => log.push(`update ${a.metadata.name}@${a.metadata.resourceVersion}->${b.metadata.resourceVersion}`),
      onDelete: (o: Obj | DeletedFinalStateUnknown<Obj>) =>
        log.push(o instanceof DeletedFinalStateUnknown ? `tombstone ${o.key}@${o.obj.metadata.resourceVersion}` : `delete ${o.metadata.name}`),
    },
  };
}

async function setup(opts: { answers: (ObjectList<Obj> | Error)[]; resyncPeriodMs?: number; pageSize?: number }) {
  const clock = new FakeClock();
  const lw = new ScriptedListerWatcher();
  lw.answers = opts.answers;
  const errors: unknown[] = [];
  const inf = new SharedInformer<Obj>(lw, {
    clock,
    resyncPeriodMs: opts.resyncPeriodMs,
    pageSize: opts.pageSize,
    indexers: { node: (o) => (o.spec?.node ? [o.spec.node] : []) },
    onError: (e) => errors.push(e),
  });
  const rec = recorder();
  inf.addEventHandler(rec.handler);
  inf.start();
  await clock.advance(0);
  return { clock, lw, inf, rec, errors };
}

void test('lists from the watch cache, syncs, then watches from the list resourceVersion', async () => {
  const { lw, inf, rec } = await setup({ answers: [list('10', [obj('a', '5', 'n1'), obj('b', '7', 'n2')])] });
  assert.deepEqual(lw.lists, [{ labelSelector: undefined, fieldSelector: undefined, resourceVersion: '0', limit: 500 }]);
  assert.equal(inf.hasSynced(), true);
  await inf.waitForSync();
  assert.deepEqual(rec.log, ['add a@5 initial', 'add b@7 initial']);
  assert.equal(lw.stream.opts.resourceVersion, '10');
  assert.equal(lw.stream.opts.allowWatchBookmarks, true);
  assert.deepEqual(inf.indexer.byIndex('node', 'n1').map((o) => o.metadata.name), ['a']);
  assert.deepEqual(inf.indexer.byIndex('namespace', 'ns').length, 2);
  await inf.stop();
});

void test('watch events update the cache and handlers; a closed watch resumes from the last resourceVersion', async () => {
  const { clock, lw, inf, rec } = await setup({ answers: [list('10', [obj('a', '5', 'n1')])] });
  rec.log.length = 0;
  lw.stream.send({ type: 'ADDED', object: obj('c', '11', 'n1') });
  lw.stream.send({ type: 'MODIFIED', object: obj('a', '12', 'n2') });
  lw.stream.send({ type: 'DELETED', object: obj('c', '13', 'n1') });
  lw.stream.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
  await clock.advance(0);
  assert.deepEqual(rec.log, ['add c@11', 'update a@5->12', 'delete c']);
  assert.equal(inf.lastSyncResourceVersion(), '20');
  assert.deepEqual(inf.indexer.byIndex('node', 'n1'), []);
  assert.deepEqual(inf.indexer.byIndex('node', 'n2').map((o) => o.metadata.resourceVersion), ['12']);
  lw.stream.send(null);
  await clock.advance(0);
  assert.equal(lw.watches.length, 2);
  assert.equal(lw.stream.opts.resourceVersion, '20');
  assert.equal(lw.lists.length, 1, 'no relist');
  await inf.stop();
});

void test('410 on the watch relists and reports the difference with tombstones', async () => {
  const { clock, lw, inf, rec, errors } = await setup({
    answers: [list('10', [obj('a', '5'), obj('b', '6')]), list('30', [obj('a', '25'), obj('c', '28')])],
  });
  rec.log.length = 0;
  lw.stream.send({ type: 'ERROR', object: expired('too old resource version: 10 (20)').toStatus() as never });
  await clock.advance(0);
  assert.equal(lw.lists.length, 2);
  assert.equal(lw.lists[1]!.resourceVersion, '10');
  assert.deepEqual(rec.log, ['update a@5->25', 'add c@28', 'tombstone ns/b@6']);
  assert.deepEqual(inf.indexer.listKeys().sort(), ['ns/a', 'ns/c']);
  assert.equal(lw.stream.opts.resourceVersion, '30');
  assert.ok(errors[0] instanceof StatusError && errors[0].code === 410);
  await inf.stop();
});

void test('a list at an expired resourceVersion falls back to a consistent list', async () => {
  const { clock, lw, inf } = await setup({
    answers: [list('10', []), expired('too old'), list('40', [obj('z', '39')])],
  });
  lw.stream.send(expired('too old resource version'));
  await clock.advance(0);
  assert.deepEqual(
    lw.lists.map((l) => l.resourceVersion),
    ['0', '10', ''],
  );
  assert.equal(inf.lastSyncResourceVersion(), '40');
  await inf.stop();
});

void test('pages through a list with continue tokens and no resourceVersion on continuations', async () => {
  const { lw, inf, rec } = await setup({
    pageSize: 2,
    answers: [list('10', [obj('a', '1'), obj('b', '2')], 'tok1'), list('10', [obj('c', '3')])],
  });
  assert.deepEqual(lw.lists[1], { labelSelector: undefined, fieldSelector: undefined, limit: 2, continue: 'tok1' });
  assert.equal(rec.log.length, 3);
  assert.equal(lw.stream.opts.resourceVersion, '10');
  await inf.stop();
});

void test('watch failures back off on the clock, then relist', async () => {
  const clock = new FakeClock();
  const lw = new ScriptedListerWatcher();
  lw.answers = [list('10', []), list('11', []), list('12', [])];
  lw.watchErrors = [internalError('boom'), internalError('boom again')];
  const inf = new SharedInformer<Obj>(lw, { clock });
  inf.start();
  await clock.advance(0);
  assert.equal(lw.lists.length, 1);
  await clock.advance(799);
  assert.equal(lw.lists.length, 1, 'waits 800 ms');
  await clock.advance(1);
  assert.equal(lw.lists.length, 2);
  await clock.advance(1599);
  assert.equal(lw.lists.length, 2, 'then 1600 ms');
  await clock.advance(1);
  assert.equal(lw.lists.length, 3);
  assert.equal(lw.watches.length, 1);
  await inf.stop();
});

void test('resync redelivers cached objects as updates', async () => {
  const { clock, inf, rec } = await setup({ resyncPeriodMs: 60_000, answers: [list('10', [obj('a', '5')])] });
  rec.log.length = 0;
  await clock.advance(60_000);
  assert.deepEqual(rec.log, ['update a@5->5']);
  await clock.advance(60_000);
  assert.equal(rec.log.length, 2);
  await inf.stop();
});

void test('a handler added after sync receives the cache as adds; a throwing handler does not stop others', async () => {
  const { clock, lw, inf, errors } = await setup({ answers: [list('10', [obj('a', '5')])] });
  const late = recorder();
  inf.addEventHandler({ onAdd: () => { throw new Error('bad handler'); } });
  const remove = inf.addEventHandler(late.handler);
  lw.stream.send({ type: 'ADDED', object: obj('b', '11') });
  await clock.advance(0);
  assert.deepEqual(late.log, ['add a@5', 'add b@11']);
  assert.ok(errors.some((e) => (e as Error).message === 'bad handler'));
  remove();
  lw.stream.send({ type: 'ADDED', object: obj('c', '12') });
  await clock.advance(0);
  assert.equal(late.log.length, 2);
  await inf.stop();
});

void test('a dropped connection resumes the watch; repeated 410s back off', async () => {
  const { clock, lw, inf } = await setup({ answers: [list('10', []), list('20', []), list('30', [])] });
  lw.stream.send({ type: 'ADDED', object: obj('a', '11') });
  lw.stream.send(new Error('socket hang up'));
  await clock.advance(800);
  assert.equal(lw.lists.length, 1, 'no relist');
  assert.equal(lw.stream.opts.resourceVersion, '11');

  lw.stream.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } });
  lw.stream.send(expired('too old'));
  await clock.advance(0);
  assert.equal(lw.lists.length, 2, 'a 410 after progress relists at once');
  assert.equal(lw.lists[1]!.resourceVersion, '15');
  lw.stream.send(expired('too old'));
  await clock.advance(0);
  assert.equal(lw.lists.length, 2, 'a second 410 without progress waits');
  await clock.advance(1600);
  assert.equal(lw.lists.length, 3);
  await inf.stop();
});
