import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { CoreEvent } from '../../api/types.js';
import { notFound } from '../../api/errors.js';
import { FakeClock } from '../../util/clock.js';
import { EventBroadcaster, RETRY_SLEEP_MS, type EventBroadcasterOptions, type EventSink, type EventSource, type InvolvedObject } from './recorder.js';
import { COMBINED_PREFIX } from './correlator.js';

const logger = pino({ level: 'silent' });
const pod: InvolvedObject = { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1', apiVersion: 'v1', fieldPath: 'spec.containers{nginx}' };

/** Stores events like the API server: create gives a resourceVersion, patch merges. */
class FakeSink implements EventSink {
  readonly stored = new Map<string, CoreEvent>();
  readonly calls: string[] = [];
  failures = 0;
  private rv = 0;
  async create(e: CoreEvent): Promise<CoreEvent> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('connect ECONNREFUSED');
    }
    this.calls.push(`create ${e.metadata?.name}`);
    const out = { ...e, metadata: { ...e.metadata, resourceVersion: String(++this.rv) } };
    this.stored.set(e.metadata!.name!, out);
    return out;
  }
  async patch(e: CoreEvent, patch: object): Promise<CoreEvent> {
    this.calls.push(`patch ${e.metadata?.name} ${JSON.stringify(patch)}`);
    const cur = this.stored.get(e.metadata!.name!);
    if (!cur) throw notFound({ group: '', resource: 'events' }, e.metadata!.name!);
    const out = { ...cur, ...patch, metadata: { ...cur.metadata, resourceVersion: String(++this.rv) } };
    this.stored.set(e.metadata!.name!, out);
    return out;
  }
}

/** A recorder for `source` on its own broadcaster, with the broadcaster's flush beside it. */
function recorderOn(opts: EventBroadcasterOptions, source: EventSource = { component: 'kubelet', host: 'n1' }) {
  const broadcaster = new EventBroadcaster(opts);
  return Object.assign(broadcaster.newRecorder(source), { flush: () => broadcaster.flush() });
}

function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const sink = new FakeSink();
  const rec = recorderOn({ sink, clock, logger, random: () => 0.5 });
  return { clock, sink, rec };
}

test('a controller\'s events carry its component and no host', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const sink = new FakeSink();
  const rec = recorderOn({ sink, clock, logger }, { component: 'replicaset-controller' });
  rec.event({ kind: 'ReplicaSet', namespace: 'default', name: 'web-1', uid: 'rs1', apiVersion: 'apps/v1' }, 'Normal', 'SuccessfulCreate', 'Created pod: web-1-abcde');
  await rec.flush();
  const [e] = [...sink.stored.values()];
  assert.deepEqual(e!.source, { component: 'replicaset-controller' });
  assert.equal(e!.reportingComponent, 'replicaset-controller');
  assert.equal(e!.reportingInstance, '');
});

test('a new event is created with the kubelet as source and upstream\'s name', async () => {
  const { sink, rec } = setup();
  rec.event(pod, 'Normal', 'Pulling', 'Pulling image "nginx"');
  rec.event({ kind: 'Node', name: 'n1', uid: 'n1' }, 'Normal', 'Starting', 'Starting kubelet.');
  await rec.flush();
  const [e, node] = [...sink.stored.values()];
  assert.equal(e!.metadata?.name, `web.${(BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n).toString(16)}`);
  assert.equal(e!.metadata?.namespace, 'default');
  assert.deepEqual(e!.source, { component: 'kubelet', host: 'n1' });
  assert.equal(e!.reportingComponent, 'kubelet');
  assert.equal(e!.reportingInstance, 'n1');
  assert.equal(e!.count, 1);
  assert.equal(e!.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(node!.metadata?.namespace, 'default', 'node events live in default');
});

test('identical events are aggregated by patching count and lastTimestamp', async () => {
  const { clock, sink, rec } = setup();
  rec.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  await rec.flush();
  await clock.advance(60_000);
  rec.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  await clock.advance(60_000);
  rec.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container');
  await rec.flush();
  assert.equal(sink.stored.size, 1);
  const e = [...sink.stored.values()][0]!;
  assert.equal(e.count, 3);
  assert.equal(e.firstTimestamp, '2026-01-01T00:00:00Z');
  assert.equal(e.lastTimestamp, '2026-01-01T00:02:00Z');
  assert.match(sink.calls[1]!, /^patch web\.\w+ \{"count":2,"lastTimestamp":"2026-01-01T00:01:00Z","message":"Back-off restarting failed container"\}$/);
});

test('a patch of an expired event creates it again', async () => {
  const { sink, rec } = setup();
  rec.event(pod, 'Normal', 'Pulled', 'ok');
  await rec.flush();
  sink.stored.clear();
  rec.event(pod, 'Normal', 'Pulled', 'ok');
  await rec.flush();
  assert.equal(sink.stored.size, 1);
  assert.equal([...sink.stored.values()][0]!.count, 2);
  assert.match(sink.calls.at(-1)!, /^create /);
});

test('similar events with 10 different messages become one combined event', async () => {
  const { sink, rec } = setup();
  for (let i = 1; i <= 12; i++) rec.event(pod, 'Warning', 'Failed', `message ${i}`);
  await rec.flush();
  const events = [...sink.stored.values()];
  // 9 distinct events, then the 10th, 11th and 12th go to one combined event (count 3).
  assert.equal(events.length, 10);
  const combined = events.filter((e) => e.message?.startsWith(COMBINED_PREFIX));
  assert.equal(combined.length, 1);
  assert.equal(combined[0]!.message, `${COMBINED_PREFIX}message 12`);
  assert.equal(combined[0]!.count, 3);
});

test('the spam filter allows a burst of 25 per object, then one per 5 minutes', async () => {
  const { clock, sink, rec } = setup();
  for (let i = 0; i < 30; i++) rec.event(pod, 'Normal', `R${i % 5}`, 'same');
  await rec.flush();
  const count = () => [...sink.stored.values()].reduce((n, e) => n + (e.count ?? 0), 0);
  assert.equal(count(), 25);
  await clock.advance(300_000);
  rec.event(pod, 'Normal', 'R0', 'same');
  rec.event(pod, 'Normal', 'R0', 'same');
  await rec.flush();
  // One token came back; the skipped repeats still counted in the correlator, as upstream.
  assert.equal(sink.stored.size, 5);
  assert.equal(sink.calls.length, 26);
});

test('transport failures are retried after 10 s; a full queue drops events', async () => {
  const { clock, sink, rec } = setup();
  sink.failures = 2;
  rec.event(pod, 'Normal', 'Created', 'Created container nginx');
  await clock.advance(RETRY_SLEEP_MS * 0.5);
  assert.equal(sink.stored.size, 0);
  await clock.advance(RETRY_SLEEP_MS);
  await rec.flush();
  assert.equal(sink.stored.size, 1);

  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const slow = new FakeSink();
  const create = slow.create.bind(slow);
  slow.create = async (e) => {
    await gate;
    return create(e);
  };
  const bounded = recorderOn({ sink: slow, clock, logger, maxQueued: 2 });
  // One is being written, two wait, two are dropped: event() never blocks.
  for (let i = 0; i < 5; i++) bounded.event(pod, 'Normal', 'R', `m${i}`);
  release();
  await bounded.flush();
  assert.deepEqual([...slow.stored.values()].map((e) => e.message), ['m0', 'm1', 'm2']);
});

test('with concurrency N, N writers drain the queue at once; one is the default', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  for (const concurrency of [undefined, 3]) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sink = new FakeSink();
    const create = sink.create.bind(sink);
    let inFlight = 0;
    let most = 0;
    sink.create = async (e) => {
      most = Math.max(most, ++inFlight);
      await gate;
      inFlight--;
      return create(e);
    };
    const rec = recorderOn({ sink, clock, logger, concurrency });
    for (let i = 0; i < 5; i++) rec.event({ ...pod, name: `p${i}`, uid: `u${i}` }, 'Normal', 'Scheduled', `m${i}`);
    await Promise.resolve();
    release();
    await rec.flush();
    assert.equal(most, concurrency ?? 1);
    assert.equal(sink.stored.size, 5);
  }
});
