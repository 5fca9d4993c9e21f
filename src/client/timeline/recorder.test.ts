import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { StatusError } from '../../api/errors.js';
import type { PodTimelineStepBatch } from '../../api/timeline/types.js';
import { FakeClock } from '../../util/clock.js';
import type { RestClient } from '../rest.js';
import { BatchingTimelineRecorder, stepTime } from './recorder.js';

function recorder(answer: (batch: PodTimelineStepBatch) => void | Promise<void>) {
  const sent: PodTimelineStepBatch[] = [];
  const rest = {
    request: async (opts: { body: PodTimelineStepBatch }) => {
      await answer(opts.body);
      sent.push(opts.body);
    },
  } as unknown as RestClient;
  const clock = new FakeClock();
  return { sent, clock, rec: new BatchingTimelineRecorder({ rest, clock, logger: pino({ level: 'silent' }) }) };
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

  it('stops within stopWaitMs when the server holds the last batch, and sends nothing after it stopped', async () => {
    let answer!: () => void;
    const { sent, clock, rec } = recorder(() => new Promise<void>((resolve) => (answer = resolve)));
    recordPods(rec, 2);
    let stopped = false;
    const stopping = rec.stop().then(() => (stopped = true));
    await clock.advance(1_999);
    assert.equal(stopped, false);
    await clock.advance(1);
    await stopping;
    assert.equal(stopped, true);
    answer();
    await clock.advance(0);
    assert.deepEqual(
      sent.map((b) => b.records.map((r) => r.pod.uid)),
      [['u0', 'u1']],
    );
    recordPods(rec, 1, 2);
    await clock.advance(10_000);
    assert.equal(sent.length, 1);
  });

  it('stops as soon as the last batch is answered', async () => {
    const { sent, clock, rec } = recorder(() => {});
    recordPods(rec, 2);
    await rec.stop();
    assert.equal(sent.length, 1);
    assert.equal(clock.pending(), 0);
  });
});
