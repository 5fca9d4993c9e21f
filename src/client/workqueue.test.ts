import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock.js';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  DelayingQueue,
  ItemExponentialFailureRateLimiter,
  RateLimitingQueue,
  WorkQueue,
} from './workqueue.js';

void test('dedupes keys while they wait and keeps FIFO order', async () => {
  const q = new WorkQueue<string>();
  for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
  assert.equal(q.len(), 3);
  assert.deepEqual([await q.get(), await q.get(), await q.get()], ['a', 'b', 'c']);
});

void test('a key re-added while processing is queued again only after done', async () => {
  const q = new WorkQueue<string>();
  q.add('a');
  const first = await q.get();
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 0, 'not handed to a second worker while processing');
  q.done(first!);
  assert.equal(q.len(), 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  assert.equal(q.len(), 0);
});

void test('a waiting worker receives the next add; shutDown drains then yields undefined', async () => {
  const q = new WorkQueue<string>();
  const waiting = q.get();
  q.add('x');
  assert.equal(await waiting, 'x');
  q.add('y');
  const idle = (async () => {
    await q.get(); // y
    return q.get();
  })();
  q.shutDown();
  q.add('z');
  assert.equal(await idle, undefined);
  assert.equal(q.shuttingDown(), true);
});

void test('addAfter waits on the clock and keeps the earliest deadline', async () => {
  const clock = new FakeClock();
  const q = new DelayingQueue<string>({ clock });
  q.addAfter('a', 1000);
  q.addAfter('a', 5000);
  q.addAfter('b', 2000);
  q.addAfter('b', 500);
  q.addAfter('now', 0);
  assert.equal(q.len(), 1);
  await clock.advance(499);
  assert.equal(q.len(), 1);
  await clock.advance(1);
  assert.equal(q.len(), 2);
  await clock.advance(500);
  assert.equal(q.len(), 3);
  await clock.advance(10_000);
  assert.equal(q.len(), 3, 'the later duplicate deadline was dropped');
  assert.deepEqual([await q.get(), await q.get(), await q.get()], ['now', 'b', 'a']);
});

void test('shutDown cancels pending delayed adds', async () => {
  const clock = new FakeClock();
  const q = new DelayingQueue<string>({ clock });
  q.addAfter('a', 100);
  q.shutDown();
  assert.equal(clock.pending(), 0);
  await clock.advance(200);
  assert.equal(await q.get(), undefined);
});

void test('per-item exponential backoff', () => {
  const rl = new ItemExponentialFailureRateLimiter<string>(5, 1000_000);
  const delays = Array.from({ length: 5 }, () => rl.when('a'));
  assert.deepEqual(delays, [5, 10, 20, 40, 80]);
  assert.equal(rl.numRequeues('a'), 5);
  assert.equal(rl.when('b'), 5);
  rl.forget('a');
  assert.equal(rl.numRequeues('a'), 0);
  for (let i = 0; i < 30; i++) rl.when('a');
  assert.equal(rl.when('a'), 1000_000, 'capped at 1000 s');
});

void test('token bucket allows a burst then spaces items at qps', async () => {
  const clock = new FakeClock();
  const rl = new BucketRateLimiter<string>(10, 100, clock);
  for (let i = 0; i < 100; i++) assert.equal(rl.when(`k${i}`), 0);
  assert.equal(Math.round(rl.when('x')), 100);
  assert.equal(Math.round(rl.when('y')), 200);
  await clock.advance(1000);
  // Ten tokens refilled, two were already spent in advance.
  for (let i = 0; i < 8; i++) assert.equal(rl.when(`z${i}`), 0);
  assert.equal(Math.round(rl.when('w')), 100);
});

void test('default controller rate limiter takes the larger delay', async () => {
  const clock = new FakeClock();
  const rl = defaultControllerRateLimiter<string>(clock);
  assert.equal(rl.when('a'), 5);
  assert.equal(rl.when('a'), 10);
  for (let i = 0; i < 98; i++) rl.when(`b${i}`);
  assert.equal(Math.round(rl.when('c')), 100, 'bucket exhausted: 100 ms beats the 5 ms item delay');
  assert.equal(rl.numRequeues('a'), 2);
});

void test('rate limited queue requeues with backoff and forgets', async () => {
  const clock = new FakeClock();
  const q = new RateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000) });
  q.add('a');
  const item = (await q.get())!;
  q.addRateLimited(item);
  q.done(item);
  await clock.advance(99);
  assert.equal(q.len(), 0);
  await clock.advance(1);
  assert.equal(q.len(), 1);
  await q.get();
  q.addRateLimited('a');
  q.done('a');
  await clock.advance(199);
  assert.equal(q.len(), 0);
  await clock.advance(1);
  assert.equal(q.len(), 1);
  assert.equal(q.numRequeues('a'), 2);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
});

void test('runWorker: success forgets failures and honours a requested recheck; a throw retries rate-limited unless dropped', async () => {
  const clock = new FakeClock();
  const q = new RateLimitingQueue<string>({ clock, rateLimiter: new ItemExponentialFailureRateLimiter<string>(1000, 60_000) });
  const seen: string[] = [];
  let failures = 0;
  const worker = q.runWorker(
    async (item) => {
      seen.push(item);
      if (item === 'flaky' && failures++ < 2) throw new Error('try again');
      if (item === 'bad') throw new Error('never works');
      if (item === 'recheck' && seen.filter((s) => s === 'recheck').length === 1) return 5000;
    },
    (_err, item) => (item === 'bad' ? 'drop' : 'retry'),
  );
  for (const k of ['flaky', 'bad', 'recheck']) q.add(k);
  await clock.advance(0);
  assert.deepEqual(seen, ['flaky', 'bad', 'recheck']);
  assert.equal(q.numRequeues('flaky'), 1, 'a failure is counted');
  assert.equal(q.numRequeues('bad'), 0, 'a dropped item is forgotten');
  await clock.advance(1000); // flaky's first back-off
  await clock.advance(2000); // its second
  await clock.advance(2000); // recheck's requested delay
  assert.deepEqual(seen, ['flaky', 'bad', 'recheck', 'flaky', 'flaky', 'recheck']);
  assert.equal(q.numRequeues('flaky'), 0, 'success forgets the failures');
  q.shutDown();
  await worker;
});
