import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { StatusError } from '../api/errors.js';
import { FakeClock } from '../util/clock.js';
import { StageEngine, type StageActions } from './engine.js';
import { compileStages, type StageSpec } from './stage.js';

interface Obj {
  metadata: { name: string; uid?: string; resourceVersion: string };
  status: { phase?: string; note?: string };
}

const logger = pino({ level: 'silent' });

/** An object store whose writes come back to the engine like watch events, when `watch` is on. */
function harness(specs: StageSpec[], opts: { random?: () => number } = {}) {
  const clock = new FakeClock();
  const store = new Map<string, Obj>();
  let rv = 0;
  const log: string[] = [];
  const failures: StatusError[] = [];
  let watch = true;
  const put = (obj: Obj): Obj => {
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
    store.set(stored.metadata.name, stored);
    if (watch) engine.observe(stored);
    return stored;
  };
  const actions: StageActions<Obj> = {
    async patchStatus(obj, status) {
      const err = failures.shift();
      if (err) throw err;
      log.push(`${clock.now() - start} patch ${obj.metadata.name} ${JSON.stringify(status)}`);
      const cur = store.get(obj.metadata.name)!;
      return put({ ...cur, status: { ...cur.status, ...(status as Obj['status']) } });
    },
    async delete(obj) {
      log.push(`${clock.now() - start} delete ${obj.metadata.name}`);
      store.delete(obj.metadata.name);
      engine.forget(obj.metadata.name);
    },
    event(obj, ev) {
      log.push(`${clock.now() - start} event ${obj.metadata.name} ${ev.reason}`);
    },
  };
  const start = clock.now();
  const engine: StageEngine<Obj> = new StageEngine<Obj>({
    stages: compileStages(specs),
    actions,
    get: (key) => store.get(key),
    clock,
    logger,
    random: opts.random ?? (() => 0),
    workers: 2,
  });
  engine.start();
  return {
    clock,
    engine,
    log,
    failures,
    store,
    put,
    setWatch: (on: boolean) => (watch = on),
  };
}

const phase = (p: string | undefined) => [{ key: '.status.phase', operator: p ? ('In' as const) : ('DoesNotExist' as const), values: p ? [p] : undefined }];

const chain: StageSpec[] = [
  { name: 'one', selector: phase(undefined), delay: { ms: 1000 }, steps: [{ event: { reason: 'Starting' } }, { patchStatus: { phase: 'One' } }] },
  { name: 'two', selector: phase('One'), delay: { ms: 500, jitterMs: 1000 }, steps: [{ patchStatus: { phase: 'Two', note: '{{ concat(.metadata.name, "!") }}' } }] },
  { name: 'gone', selector: phase('Two'), delay: { ms: 100 }, steps: [{ delete: true }] },
];

test('a chain of stages plays in virtual time, each after its delay', async () => {
  const h = harness(chain, { random: () => 0.5 });
  h.put({ metadata: { name: 'a', uid: 'u1', resourceVersion: '' }, status: {} });
  await h.clock.advance(999);
  assert.deepEqual(h.log, []);
  assert.equal(h.engine.pending(), 1);
  await h.clock.advance(1);
  // two: 500 ms + half of the 1000 ms jitter.
  await h.clock.advance(1000);
  await h.clock.advance(100);
  assert.deepEqual(h.log, ['1000 event a Starting', '1000 patch a {"phase":"One"}', '2000 patch a {"phase":"Two","note":"a!"}', '2100 delete a']);
  assert.equal(h.store.size, 0);
  assert.equal(h.engine.pending(), 0);
  await h.engine.stop();
});

test('jitter stays within its bounds', async () => {
  for (const [random, at] of [
    [0, 1500],
    [0.999, 2499],
  ] as const) {
    const h = harness(chain, { random: () => random });
    h.put({ metadata: { name: 'a', resourceVersion: '' }, status: {} });
    await h.clock.advance(at - 1);
    assert.equal(h.log.length, 2, `random ${random}: not yet at ${at - 1}`);
    await h.clock.advance(1);
    assert.equal(h.log[2], `${at} patch a {"phase":"Two","note":"a!"}`);
    await h.engine.stop();
  }
});

test('an unrelated change keeps the pending deadline; a change of stage replaces it', async () => {
  const h = harness(chain);
  const a = h.put({ metadata: { name: 'a', uid: 'u1', resourceVersion: '' }, status: {} });
  await h.clock.advance(600);
  h.put({ ...a, status: { note: 'label changed' } });
  await h.clock.advance(400);
  assert.deepEqual(h.log, ['1000 event a Starting', '1000 patch a {"phase":"One"}']);

  const b = h.put({ metadata: { name: 'b', uid: 'u2', resourceVersion: '' }, status: {} });
  await h.clock.advance(600);
  // Someone else moves it on: stage "two" starts its own delay from now.
  h.put({ ...b, status: { phase: 'One' } });
  await h.clock.advance(499);
  assert.equal(h.log.filter((l) => l.includes(' b ')).length, 0);
  await h.clock.advance(1);
  assert.deepEqual(
    h.log.filter((l) => l.includes(' b ')),
    ['2100 patch b {"phase":"Two","note":"b!"}'],
  );
  await h.engine.stop();
});

test('a state already played is not played again before our write comes back', async () => {
  const h = harness([{ name: 'once', selector: phase(undefined), steps: [{ patchStatus: { phase: 'Done' } }] }]);
  h.setWatch(false);
  const a = h.put({ metadata: { name: 'a', resourceVersion: '' }, status: {} });
  h.engine.observe(a);
  await h.clock.advance(0);
  // The cache still holds the old state (its watch event is late) and something requeues the key.
  h.store.set('a', a);
  h.engine.observe(a);
  await h.clock.advance(1000);
  assert.equal(h.log.length, 1);
  await h.engine.stop();
});

test('a stage that changes nothing plays once per object state', async () => {
  const h = harness([{ name: 'note', selector: phase(undefined), delay: { ms: 100 }, steps: [{ event: { reason: 'Seen' } }] }]);
  const a = h.put({ metadata: { name: 'a', resourceVersion: '' }, status: {} });
  await h.clock.advance(1000);
  h.engine.observe(a);
  await h.clock.advance(1000);
  assert.deepEqual(h.log, ['100 event a Seen']);
  h.put({ ...a, status: { note: 'changed' } });
  await h.clock.advance(100);
  assert.deepEqual(h.log, ['100 event a Seen', '2100 event a Seen']);
  await h.engine.stop();
});

test('failed steps are retried with backoff; a vanished object is forgotten', async () => {
  const h = harness([{ name: 'once', selector: phase(undefined), steps: [{ patchStatus: { phase: 'Done' } }] }]);
  h.failures.push(new StatusError(500, 'InternalError', 'boom'), new StatusError(500, 'InternalError', 'boom'));
  h.put({ metadata: { name: 'a', resourceVersion: '' }, status: {} });
  await h.clock.advance(0);
  assert.deepEqual(h.log, []);
  // 200 ms, then 400 ms.
  await h.clock.advance(599);
  assert.deepEqual(h.log, []);
  await h.clock.advance(1);
  assert.deepEqual(h.log, ['600 patch a {"phase":"Done"}']);

  h.failures.push(new StatusError(404, 'NotFound', 'gone'));
  h.put({ metadata: { name: 'b', resourceVersion: '' }, status: {} });
  await h.clock.advance(10_000);
  assert.equal(h.engine.pending(), 0);
  assert.equal(h.log.length, 1);
  await h.engine.stop();
});

test('many objects wait on one timer', async () => {
  const h = harness(chain);
  for (let i = 0; i < 500; i++) h.put({ metadata: { name: `o${i}`, resourceVersion: '' }, status: {} });
  await h.clock.advance(0);
  assert.equal(h.engine.pending(), 500);
  assert.equal(h.clock.pending(), 1);
  await h.engine.stop();
});

test('settle applies the stages due at once, and stops at a delay or a stage that is not a status patch', async () => {
  const h = harness([
    { name: 'a', selector: phase(undefined), steps: [{ patchStatus: { phase: 'A' } }] },
    { name: 'b', selector: phase('A'), steps: [{ patchStatus: { phase: 'B', note: 'b' } }] },
    { name: 'c', selector: phase('B'), delay: { ms: 1 }, steps: [{ patchStatus: { phase: 'C' } }] },
    { name: 'x', selector: phase('X'), steps: [{ patchStatus: { phase: 'X2' } }, { delete: true }] },
    { name: 'ping', selector: phase('P'), steps: [{ patchStatus: { phase: 'Q' } }] },
    { name: 'pong', selector: phase('Q'), steps: [{ patchStatus: { phase: 'P' } }] },
  ]);
  const apply = (o: Obj, status: unknown) => ({ ...o, status: { ...o.status, ...(status as Obj['status']) } });
  const obj = (phase?: string): Obj => ({ metadata: { name: 'n', resourceVersion: '' }, status: { phase } });
  assert.deepEqual(h.engine.settle(obj(), apply).status, { phase: 'B', note: 'b' });
  assert.deepEqual(h.engine.settle(obj('X'), apply).status, { phase: 'X' });
  // Stages that keep matching each other stop after one round per stage.
  assert.equal(h.engine.settle(obj('P'), apply).status.phase, 'P');
  assert.deepEqual(h.log, []);
  await h.engine.stop();
});
