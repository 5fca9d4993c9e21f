import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { RateLimitedTimedQueue, type TryResult } from './ratelimitedqueue.js';

/** Runs try() every 100 ms for ms, as the tainting pass does; returns when each value was processed. */
async function drain(clock: FakeClock, q: RateLimitedTimedQueue, ms: number, fn: (v: string) => TryResult = () => ({ done: true })) {
  const seen: [string, number][] = [];
  const t0 = clock.now();
  for (let t = 0; t <= ms; t += 100) {
    await q.try(async (v) => {
      seen.push([v.value, clock.now() - t0]);
      return fn(v.value);
    });
    await clock.advance(100);
  }
  return seen;
}

test('values are processed in order at the queue rate', async () => {
  const clock = new FakeClock();
  const q = new RateLimitedTimedQueue(clock, 0.1);
  for (const n of ['a', 'b', 'c']) assert.equal(q.add(n, `uid-${n}`), true);
  assert.equal(q.add('a', 'uid-a'), false, 'already queued');
  assert.deepEqual(await drain(clock, q, 25_000), [
    ['a', 0],
    ['b', 10_000],
    ['c', 20_000],
  ]);
  assert.equal(q.add('a', 'uid-a'), false, 'a processed value stays in the set until removed');
  assert.equal(q.remove('a'), true);
  assert.equal(q.add('a', 'uid-a'), true);
});

test('a failed value goes back with its retry delay; a removed one is dropped', async () => {
  const clock = new FakeClock();
  const q = new RateLimitedTimedQueue(clock, 10);
  q.add('flaky', '1');
  q.add('gone', '2');
  let failures = 1;
  const seen = await drain(clock, q, 1_000, (v) => (v === 'flaky' && failures-- > 0 ? { done: false, retryAfterMs: 500 } : { done: true }));
  assert.deepEqual(seen, [
    ['flaky', 0],
    ['gone', 100],
    ['flaky', 600],
  ]);
  q.add('x', '3');
  q.remove('x');
  assert.deepEqual(q.pending(), []);
});

test('swapLimiter: rate 0 stops the queue; a new rate starts empty while the old bucket is', async () => {
  const clock = new FakeClock();
  const q = new RateLimitedTimedQueue(clock, 1);
  q.add('a', '1');
  q.add('b', '2');
  q.swapLimiter(0);
  assert.deepEqual(await drain(clock, q, 5_000), []);
  q.swapLimiter(0.5);
  assert.equal(q.qps, 0.5);
  // The stopped bucket had no token, so the new one starts without one: the first value waits 2 s.
  assert.deepEqual(await drain(clock, q, 5_000), [
    ['a', 2_000],
    ['b', 4_000],
  ]);
});
