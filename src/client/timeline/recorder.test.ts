import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { StatusError } from '../../api/errors.js';
import type { PodTimelineStepBatch } from '../../api/timeline/types.js';
import { FakeClock } from '../../util/clock.js';
import type { RestClient } from '../rest.js';
import { BatchingTimelineRecorder, stepTime } from './recorder.js';

/**
 * A recorder whose server first says whether it takes a batch (`turnAway`: the 429 of a saturated
 * server, before the body is asked for), then answers the batch it read.
 */
function recorder(answer: (batch: PodTimelineStepBatch) => void, turnAway: () => boolean = () => false) {
  const sent: PodTimelineStepBatch[] = [];
  let asked = 0;
  const rest = {
    request: async (opts: { body: () => PodTimelineStepBatch }) => {
      if (turnAway()) throw new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.');
      asked++;
      const batch = opts.body();
      answer(batch);
      sent.push(batch);
    },
  } as unknown as RestClient;
  return { sent, asked: () => asked, rec: new BatchingTimelineRecorder({ rest, clock: new FakeClock(), logger: pino({ level: 'silent' }) }) };
}

const recordPods = (rec: BatchingTimelineRecorder, n: number, from = 0) => {
  for (let i = from; i < from + n; i++) rec.record({ namespace: 'ns', name: `p${i}`, uid: `u${i}` }, { step: 'Bound', component: 'default-scheduler', start: stepTime(0) });
};

describe('BatchingTimelineRecorder', () => {
  it('splits a burst into batches within the server bounds (1,000 pods each)', async () => {
    const { sent, rec } = recorder(() => {});
    recordPods(rec, 2500);
    await rec.flush();
    assert.deepEqual(
      sent.map((b) => b.records.length),
      [1000, 1000, 500],
    );
    assert.equal(rec.dropped, 0);
  });

  it('drops a batch the server refuses as invalid, sends the rest, and does not send it again', async () => {
    let calls = 0;
    const { sent, rec } = recorder(() => {
      if (calls++ === 0) throw new StatusError(422, 'Invalid', 'invalid');
    });
    recordPods(rec, 1500);
    await rec.flush();
    assert.deepEqual(
      sent.map((b) => b.records.length),
      [500],
    );
    assert.equal(rec.dropped, 1000);
    await rec.flush();
    assert.equal(sent.length, 1);
  });

  it('holds its steps, unserialized, while a saturated server turns batches away before their bodies', async () => {
    let busy = true;
    const { sent, asked, rec } = recorder(
      () => {},
      () => busy,
    );
    recordPods(rec, 3);
    await rec.flush();
    recordPods(rec, 2, 3);
    await rec.flush();
    assert.equal(asked(), 0);
    assert.equal(rec.dropped, 0);
    busy = false;
    await rec.flush();
    assert.deepEqual(
      sent.map((b) => b.records.map((r) => r.pod.uid)),
      [['u0', 'u1', 'u2', 'u3', 'u4']],
    );
  });

  it('keeps what a busy or unreachable server did not take for the next flush', async () => {
    let fail = true;
    const { sent, rec } = recorder(() => {
      if (fail) throw new StatusError(429, 'TooManyRequests', 'busy');
    });
    recordPods(rec, 3);
    await rec.flush();
    assert.equal(sent.length, 0);
    fail = false;
    await rec.flush();
    assert.deepEqual(
      sent.map((b) => b.records.map((r) => r.pod.uid)),
      [['u0', 'u1', 'u2']],
    );
  });
});
