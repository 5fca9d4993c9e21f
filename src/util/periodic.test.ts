import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';
import { Periodic } from './periodic.js';

test('runs a period after start and then a period after each run ends', async () => {
  const clock = new FakeClock();
  const t0 = clock.now();
  const runs: number[] = [];
  let release: (() => void) | undefined;
  const p = new Periodic({
    clock,
    periodMs: 1_000,
    onError: (err) => assert.fail(String(err)),
    run: async () => {
      runs.push(clock.now() - t0);
      // The second run is slow: it ends only when the test releases it.
      if (runs.length === 2) await new Promise<void>((r) => (release = r));
    },
  });
  assert.equal(p.isStopped, true);
  p.start();
  p.start(); // a second start does not add a second loop
  assert.equal(p.isStopped, false);
  await clock.advance(999);
  assert.deepEqual(runs, []);
  await clock.advance(1);
  assert.deepEqual(runs, [1_000]);
  await clock.advance(1_000);
  assert.deepEqual(runs, [1_000, 2_000]);
  await clock.advance(5_000); // still in the slow run: nothing overlaps it
  assert.deepEqual(runs, [1_000, 2_000]);
  release!();
  await clock.advance(1_000);
  assert.deepEqual(runs, [1_000, 2_000, 8_000]);
  await p.stop();
});

test('a failed run is reported and the loop goes on', async () => {
  const clock = new FakeClock();
  const errors: unknown[] = [];
  let n = 0;
  const p = new Periodic({
    clock,
    periodMs: 10,
    onError: (err) => errors.push(err),
    run: async () => {
      n++;
      if (n === 1) throw new Error('boom');
    },
  });
  p.start();
  await clock.advance(30);
  assert.equal(n, 3);
  assert.deepEqual(errors.map((e) => (e as Error).message), ['boom']);
  await p.stop();
});

test('stop waits for the run in flight and no run follows', async () => {
  const clock = new FakeClock();
  let release: (() => void) | undefined;
  let runs = 0;
  let finished = false;
  const p = new Periodic({
    clock,
    periodMs: 10,
    onError: (err) => assert.fail(String(err)),
    run: async () => {
      runs++;
      await new Promise<void>((r) => (release = r));
      finished = true;
    },
  });
  p.start();
  await clock.advance(10);
  assert.equal(runs, 1);
  let stopped = false;
  const stopping = p.stop().then(() => (stopped = true));
  assert.equal(p.isStopped, true);
  await clock.advance(0);
  assert.equal(stopped, false);
  release!();
  await stopping;
  assert.equal(finished, true);
  await clock.advance(100);
  assert.equal(runs, 1);
  assert.equal(clock.pending(), 0);
});
