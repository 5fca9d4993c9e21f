import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock.js';
import { EventRecorder, NOTE_LENGTH_LIMIT, truncateNote } from './event-recorder.js';
import { microTime } from '../api/time.js';
import { makePod } from './testing/builders.js';
import { FakeSchedulerClient } from './testing/fake-client.js';
import { silentLogger } from './testing/harness.js';

function setup() {
  const client = new FakeSchedulerClient();
  const clock = new FakeClock();
  const rec = new EventRecorder({ client, clock, logger: silentLogger, reportingController: 'default-scheduler', reportingInstance: 'default-scheduler-host' });
  rec.start();
  return { client, clock, rec };
}

describe('EventRecorder', () => {
  it('creates an events.k8s.io/v1 event for the first occurrence', async () => {
    const { client, clock, rec } = setup();
    rec.eventf(makePod().name('web').uid('u1').obj(), 'Warning', 'FailedScheduling', 'Scheduling', 'no fit');
    await rec.stop();
    const ev = client.events[0]!;
    assert.match(ev.metadata!.name!, /^web\.[0-9a-f]+$/);
    assert.deepEqual(
      [ev.metadata!.namespace, ev.eventTime, ev.reportingController, ev.reportingInstance, ev.type, ev.reason, ev.action, ev.note],
      ['default', microTime(clock.now()), 'default-scheduler', 'default-scheduler-host', 'Warning', 'FailedScheduling', 'Scheduling', 'no fit'],
    );
    assert.deepEqual(ev.regarding, { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1', resourceVersion: undefined });
  });

  it('names a related object, which tells events about one pod apart', async () => {
    const { client, rec } = setup();
    const victim = makePod().name('low').uid('u1').obj();
    for (const by of ['a', 'b']) rec.eventf(victim, 'Normal', 'Preempted', 'Preempting', `by ${by}`, makePod().name(by).uid(`u-${by}`).obj());
    await rec.stop();
    assert.deepEqual(
      client.events.map((e) => e.related),
      ['a', 'b'].map((n) => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: n, uid: `u-${n}`, resourceVersion: undefined })),
    );
    assert.deepEqual(client.eventPatches, []);
  });

  it('turns repeats into a series: count 2 at once, later counts on refresh and at the end', async () => {
    const { client, clock, rec } = setup();
    const pod = makePod().name('web').obj();
    for (let i = 0; i < 4; i++) rec.eventf(pod, 'Warning', 'FailedScheduling', 'Scheduling', `attempt ${i}`);
    await clock.advance(0);
    assert.equal(client.events.length, 1);
    assert.deepEqual(client.eventPatches.map((p) => p.patch.series?.count), [2]);
    // Six minutes without a repeat end the series with its final count.
    await clock.advance(12 * 60_000);
    assert.deepEqual(client.eventPatches.map((p) => p.patch.series?.count), [2, 4]);
    rec.eventf(pod, 'Warning', 'FailedScheduling', 'Scheduling', 'again');
    await rec.stop();
    assert.equal(client.events.length, 2, 'a new event after the series ended');
  });

  it('keeps events of different reasons or pods apart', async () => {
    const { client, rec } = setup();
    const pod = makePod().name('web').obj();
    rec.eventf(pod, 'Warning', 'FailedScheduling', 'Scheduling', 'x');
    rec.eventf(pod, 'Normal', 'Scheduled', 'Binding', 'y');
    rec.eventf(makePod().name('db').obj(), 'Warning', 'FailedScheduling', 'Scheduling', 'x');
    await rec.stop();
    assert.equal(client.events.length, 3);
  });

  it('truncates notes to the API limit', () => {
    const long = 'x'.repeat(NOTE_LENGTH_LIMIT + 10);
    const t = truncateNote(long);
    assert.equal(t.length, NOTE_LENGTH_LIMIT);
    assert.ok(t.endsWith(' ...'));
    assert.equal(truncateNote('short'), 'short');
  });
});
