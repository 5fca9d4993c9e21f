import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { TimedWorkerQueue } from './timedworkers.js';

const NOW = Date.UTC(2026, 0, 1);

function queue(work: (key: string) => Promise<void> = async () => {}) {
  const clock = new FakeClock(NOW);
  const fired: string[] = [];
  const errors: string[] = [];
  const q = new TimedWorkerQueue(
    clock,
    async (key) => {
      fired.push(`${key}@${clock.now() - NOW}`);
      await work(key);
    },
    (_err, key) => errors.push(key),
  );
  return { clock, q, fired, errors };
}

describe('TimedWorkerQueue', () => {
  it('fires work at its time, once per key; work due now starts at once', async () => {
    const { clock, q, fired } = queue();
    q.addWork('a', NOW, NOW + 1000);
    q.addWork('a', NOW, NOW + 10);
    q.addWork('now', NOW, NOW);
    await clock.advance(0);
    assert.deepEqual(fired, ['now@0']);
    await clock.advance(999);
    assert.deepEqual(fired, ['now@0']);
    await clock.advance(1);
    assert.deepEqual(fired, ['now@0', 'a@1000']);
    assert.equal(q.getWorker('a'), undefined, 'finished work leaves the queue');
  });

  it('cancels scheduled work, reporting it; running work is not cancelled', async () => {
    let release!: () => void;
    const { clock, q, fired } = queue((key) => (key === 'slow' ? new Promise<void>((r) => (release = r)) : Promise.resolve()));
    q.addWork('a', NOW, NOW + 1000);
    assert.equal(q.getWorker('a')?.fireAt, NOW + 1000);
    assert.equal(q.cancelWork('a'), true);
    assert.equal(q.cancelWork('a'), false);
    q.addWork('slow', NOW, NOW);
    assert.equal(q.getWorker('slow'), undefined, 'work started at once has no timer');
    q.addWork('slow', NOW, NOW);
    assert.equal(q.cancelWork('slow'), false);
    await clock.advance(2000);
    assert.deepEqual(fired, ['slow@0']);
    release();
    await q.cancelAndWait();
  });

  it('a failed work is reported and leaves the queue', async () => {
    const { clock, q, errors } = queue(async () => {
      throw new Error('boom');
    });
    q.addWork('a', NOW, NOW + 5);
    await clock.advance(5);
    assert.deepEqual(errors, ['a']);
    assert.equal(q.cancelWork('a'), false);
  });
});
