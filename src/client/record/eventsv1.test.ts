import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { EventsV1Event } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { microTime } from '../../api/time.js';
import { EventRecorder, NOTE_LENGTH_LIMIT, truncateNote, type EventsV1Sink } from './eventsv1.js';
import type { InvolvedObject } from './recorder.js';

class FakeSink implements EventsV1Sink {
  readonly events: EventsV1Event[] = [];
  readonly eventPatches: { name: string; patch: Partial<EventsV1Event> }[] = [];
  async createEvent(ev: EventsV1Event): Promise<void> {
    this.events.push(structuredClone(ev));
  }
  async patchEvent(_namespace: string, name: string, patch: Partial<EventsV1Event>): Promise<void> {
    this.eventPatches.push({ name, patch: structuredClone(patch) });
  }
}

const pod = (name: string, uid?: string): InvolvedObject => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name, uid, resourceVersion: undefined });

function setup() {
  const client = new FakeSink();
  const clock = new FakeClock();
  const rec = new EventRecorder({ sink: client, clock, logger: pino({ level: 'silent' }), reportingController: 'default-scheduler', reportingInstance: 'default-scheduler-host' });
  rec.start();
  return { client, clock, rec };
}

describe('EventRecorder', () => {
  it('creates an events.k8s.io/v1 event for the first occurrence', async () => {
    const { client, clock, rec } = setup();
    rec.eventf(pod('web', 'u1'), 'Warning', 'FailedScheduling', 'Scheduling', 'no fit');
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
    const victim = pod('low', 'u1');
    for (const by of ['a', 'b']) rec.eventf(victim, 'Normal', 'Preempted', 'Preempting', `by ${by}`, pod(by, `u-${by}`));
    await rec.stop();
    assert.deepEqual(
      client.events.map((e) => e.related),
      ['a', 'b'].map((n) => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: n, uid: `u-${n}`, resourceVersion: undefined })),
    );
    assert.deepEqual(client.eventPatches, []);
  });

  it('turns repeats into a series: count 2 at once, later counts on refresh and at the end', async () => {
    const { client, clock, rec } = setup();
    const web = pod('web');
    for (let i = 0; i < 4; i++) rec.eventf(web, 'Warning', 'FailedScheduling', 'Scheduling', `attempt ${i}`);
    await clock.advance(0);
    assert.equal(client.events.length, 1);
    assert.deepEqual(client.eventPatches.map((p) => p.patch.series?.count), [2]);
    // Six minutes without a repeat end the series with its final count.
    await clock.advance(12 * 60_000);
    assert.deepEqual(client.eventPatches.map((p) => p.patch.series?.count), [2, 4]);
    rec.eventf(web, 'Warning', 'FailedScheduling', 'Scheduling', 'again');
    await rec.stop();
    assert.equal(client.events.length, 2, 'a new event after the series ended');
  });

  it('keeps events of different reasons or pods apart', async () => {
    const { client, rec } = setup();
    const web = pod('web');
    rec.eventf(web, 'Warning', 'FailedScheduling', 'Scheduling', 'x');
    rec.eventf(web, 'Normal', 'Scheduled', 'Binding', 'y');
    rec.eventf(pod('db'), 'Warning', 'FailedScheduling', 'Scheduling', 'x');
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
