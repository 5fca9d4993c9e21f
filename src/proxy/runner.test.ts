import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock.js';
import { BoundedFrequencyRunner } from './runner.js';

function setup(fn?: () => Promise<void>) {
  const clock = new FakeClock();
  const runs: number[] = [];
  const start = clock.now();
  const runner = new BoundedFrequencyRunner({
    clock,
    minIntervalMs: 100,
    maxIntervalMs: 1000,
    fn: async () => {
      runs.push(clock.now() - start);
      await fn?.();
    },
    onError: () => {},
  });
  runner.start();
  return { clock, runs, runner };
}

describe('BoundedFrequencyRunner', () => {
  it('runs a first request at once and coalesces a burst into one run minIntervalMs later', async () => {
    const { clock, runs, runner } = setup();
    runner.run();
    await clock.advance(0);
    assert.deepEqual(runs, [0]);
    for (let i = 0; i < 5; i++) {
      runner.run();
      await clock.advance(10);
    }
    await clock.advance(200);
    assert.deepEqual(runs, [0, 100]);
    await runner.stop();
  });

  it('runs every maxIntervalMs without requests, and never overlaps a run in flight', async () => {
    let release!: () => void;
    const { clock, runs, runner } = setup(() => new Promise<void>((r) => (release = r)));
    await clock.advance(1000);
    assert.deepEqual(runs, [1000]);
    runner.run(); // while the first is in flight
    await clock.advance(500);
    assert.deepEqual(runs, [1000], 'no second run while one is in flight');
    release();
    await clock.advance(0);
    assert.deepEqual(runs, [1000, 1500], 'the pending request runs once the first ends');
    release();
    await clock.advance(1000);
    assert.deepEqual(runs, [1000, 1500, 2500]);
    release();
    await runner.stop();
  });

  it('retryAfter brings the next run forward', async () => {
    const { clock, runs, runner } = setup();
    runner.retryAfter(300);
    await clock.advance(300);
    assert.deepEqual(runs, [300]);
    await runner.stop();
  });
});
