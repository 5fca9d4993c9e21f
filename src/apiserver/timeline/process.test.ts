import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import pino from 'pino';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { microTime } from '../../api/time.js';
import type { PodTimeline, PodTimelineStepBatch, TimelineStep } from '../../api/timeline/types.js';
import { FakeClock, realClock } from '../../util/clock.js';
import { loadTimelineFile } from './file.js';
import type { TimelineEvent } from './store.js';
import { ProcessPodTimelines, servePodTimelines, startTimelineProcess, type TimelinePort, type TimelineProcess } from './process.js';

const t0 = Date.UTC(2026, 0, 1);
const logger = pino({ level: 'silent' });
const step = (name: TimelineStep['step'], atMs: number): TimelineStep => ({ step: name, component: 'test', start: microTime(t0 + atMs) });
const body = (records: PodTimelineStepBatch['records']) => Buffer.from(JSON.stringify({ apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimelineStepBatch', records }));

/** A MessageChannel's end as a TimelinePort: the same messages the child's channel carries, in this process. */
const channelPort = (port: MessagePort): TimelinePort => ({ postMessage: (m) => port.postMessage(m), onMessage: (listener) => port.on('message', listener) });

describe('pod timelines across a message port (as in their process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-port-'));
  const file = join(dir, 'timeline.db');
  // The API server's pods by UID, as its PodIndex has them.
  const pods = new Map<string, Pod>([
    ['u-web', { metadata: { namespace: 'default', name: 'web', uid: 'u-web', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'rs', controller: true }] }, spec: { nodeName: 'n1', containers: [] } }],
    ['u-db', { metadata: { namespace: 'default', name: 'db', uid: 'u-db' }, spec: { nodeName: 'n2', containers: [] } }],
  ]);
  const sunk: { uid: string; added: string[] }[] = [];
  const channel = new MessageChannel();
  let timelines: ProcessPodTimelines;

  before(async () => {
    await servePodTimelines(channelPort(channel.port1), { file, sinks: true }, realClock, logger);
    timelines = new ProcessPodTimelines(channelPort(channel.port2), {
      enabled: true,
      pods,
      sinks: [{ stepsRecorded: (t, added) => sunk.push({ uid: t.pod.uid, added: added.map((s) => s.step) }) }],
      logger,
    });
  });
  after(() => {
    channel.port1.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('merges a batch with the API server pods facts, refusing a node the pods of other nodes, and answers once it is in the file', async () => {
    const refused = await timelines.ingest(
      body([
        { pod: { namespace: 'default', name: 'renamed', uid: 'u-web' }, steps: [step('SandboxCreated', 100), step('Ready', 900)] },
        { pod: { namespace: 'default', name: 'db', uid: 'u-db' }, steps: [step('SandboxCreated', 200)] },
      ]),
      'application/json',
      'n1',
    );
    assert.deepEqual(refused, ['default/db']);
    const t = await timelines.get('default', 'u-web');
    assert.deepEqual(t?.pod, { namespace: 'default', name: 'web', uid: 'u-web', nodeName: 'n1', owner: { kind: 'ReplicaSet', name: 'web-1' } });
    assert.deepEqual(
      t?.steps.map((s) => s.step),
      ['SandboxCreated', 'Ready'],
    );
    assert.equal(await timelines.get('default', 'u-db'), undefined);
    assert.equal(await timelines.get('other', 'u-web'), undefined, 'a get is namespaced');
    // Merged, or (the machine busy) still the batch as it came, to be merged when it is not.
    const inFile = loadTimelineFile(file);
    assert.deepEqual(
      [...inFile.timelines.map((l) => [l.timeline.metadata.name, l.timeline.steps.length]), ...inFile.intake.flat().map((r) => [r.pod.uid, r.steps.length])],
      [['u-web', 2]],
    );
    assert.deepEqual(sunk, [{ uid: 'u-web', added: ['SandboxCreated', 'Ready'] }]);
  });

  it('answers a bad batch with the Status the handlers send (422 with the field path, 400 for another kind)', async () => {
    await assert.rejects(timelines.ingest(body([{ pod: { namespace: 'default', name: 'web', uid: '' }, steps: [] }]), 'application/json', undefined), {
      name: 'StatusError',
      code: 422,
      reason: 'Invalid',
      message: /records\[0\]\.pod\.uid/,
    });
    await assert.rejects(timelines.ingest(Buffer.from('{"apiVersion":"timeline.kite.dev/v1alpha1","kind":"Pod"}'), 'application/json', undefined), { name: 'StatusError', code: 400 });
    await assert.rejects(timelines.ingest(Buffer.from('{"records": ['), 'application/json', undefined), { name: 'StatusError', code: 400 });
  });

  it('lists by field selector, and watches: initial events, the API server own steps as they merge, nothing after cancel', async () => {
    const list = await timelines.list({ namespace: '', fieldSelector: 'pod.nodeName=n1' });
    assert.deepEqual(
      list.items.map((t) => t.metadata.name),
      ['u-web'],
    );
    assert.equal(list.resourceVersion, await timelines.resourceVersion());
    assert.deepEqual((await timelines.list({ namespace: '', fieldSelector: 'pod.nodeName=n9' })).items, []);

    const events: TimelineEvent[] = [];
    let seen: () => void = () => {};
    const cancel = await timelines.watch({ namespace: 'default', name: 'u-web' }, undefined, (e) => {
      events.push(e);
      seen();
    });
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED'],
      'the initial state arrives before the watch is answered',
    );
    const next = new Promise<void>((resolve) => (seen = resolve));
    timelines.record([{ kind: 'created', pod: { namespace: 'default', name: 'web', uid: 'u-web' }, received: t0, user: 'alice', groups: [], admission: { plugins: [], mutating: 0, micros: [], mutated: [] }, persisted: t0 + 50, resourceVersion: '7' }]);
    await next;
    const modified = events[1]!;
    assert.equal(modified.type, 'MODIFIED');
    assert.deepEqual(
      (modified.object as PodTimeline).steps.map((s) => s.step),
      ['RequestReceived', 'Persisted', 'SandboxCreated', 'Ready'],
    );
    cancel();
    timelines.record([{ kind: 'deleteRequested', pod: { namespace: 'default', name: 'web', uid: 'u-web' }, at: t0 + 800, user: 'alice', gracePeriodSeconds: 30 }]);
    assert.equal((await timelines.get('default', 'u-web'))?.steps.length, 5);
    assert.equal(events.length, 2, 'a cancelled watch hears nothing more');

    await assert.rejects(timelines.watch({ namespace: '' }, -5, () => {}), { name: 'StatusError', code: 410 });
  });

  it('stops: what was recorded is in the file, and later calls fail as the server would answer them', async () => {
    timelines.record([{ kind: 'deleted', pod: { namespace: 'default', name: 'web', uid: 'u-web' }, at: t0 + 5000 }]);
    await timelines.stop();
    const [loaded] = loadTimelineFile(file).timelines;
    assert.equal(loaded?.timeline.steps.at(-1)?.step, 'Deleted');
    assert.equal(loaded?.timeline.deletedAt, microTime(t0 + 5000));
    timelines.fail(new Error('the process exited'));
    await assert.rejects(timelines.get('default', 'u-web'), { name: 'StatusError', code: 500 });
  });
});

describe('pod timelines across a message port, the machine busy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-held-'));
  const pods = new Map<string, Pod>([['u-web', { metadata: { namespace: 'default', name: 'web', uid: 'u-web' }, spec: { nodeName: 'n1', containers: [] } }]]);
  const channel = new MessageChannel();
  after(() => {
    channel.port1.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds batches and notes in the API server until a read, which sees them, and answers the batch then', async () => {
    const file = join(dir, 'held.db');
    await servePodTimelines(channelPort(channel.port1), { file, sinks: false }, realClock, logger);
    // A virtual clock: no look at the machine comes by itself; the machine is always busy.
    const timelines = new ProcessPodTimelines(channelPort(channel.port2), { enabled: true, pods, sinks: [], logger, busy: () => true, clock: new FakeClock() });
    let answered = false;
    const ingested = timelines.ingest(body([{ pod: { namespace: 'default', name: 'web', uid: 'u-web' }, steps: [step('SandboxCreated', 100)] }]), 'application/json', 'n1').then((refused) => {
      answered = true;
      return refused;
    });
    timelines.record([{ kind: 'deleted', pod: { namespace: 'default', name: 'web', uid: 'u-web' }, at: t0 + 5000 }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(answered, false, 'the batch waits in the API server');
    const inFile = loadTimelineFile(file);
    assert.deepEqual([inFile.timelines, inFile.intake], [[], []], 'nothing reached the store');
    // The read went after what was held: the note is merged; the batch, which first asks for its pods' facts, is answered.
    assert.equal((await timelines.get('default', 'u-web'))?.deletedAt, microTime(t0 + 5000));
    assert.deepEqual(await ingested, []);
    assert.deepEqual(
      (await timelines.get('default', 'u-web'))?.steps.map((s) => s.step),
      ['SandboxCreated', 'Deleted'],
    );
    await timelines.stop();
  });
});

/** The scheduling policy of each of a process's threads (field 41 of its stat): 5 is SCHED_IDLE. */
function threadPolicies(pid: number): Map<string, number> {
  const policies = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    policies.set(tid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]));
  }
  return policies;
}

// The real child (timeline-process.ts, under tsx as the server's build runs its .js).
describe('pod timelines in their own process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-process-'));
  const pods = new Map<string, Pod>([['u-web', { metadata: { namespace: 'default', name: 'web', uid: 'u-web' }, spec: { nodeName: 'n1', containers: [] } }]]);
  const started: TimelineProcess[] = [];
  const start = (file: string, options: { commitDelayMs?: number } = {}) => {
    const exits: Error[] = [];
    const child = startTimelineProcess({ file, sinks: false, ...options }, (err) => {
      exits.push(err);
      timelines.fail(err);
    });
    started.push(child);
    const timelines = new ProcessPodTimelines(child.port, { enabled: true, pods, sinks: [], logger });
    return { child, timelines, exits };
  };
  after(async () => {
    await Promise.all(started.map((c) => c.end()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers from a process whose every thread has the idle CPU policy, and ends without an unasked exit', async () => {
    const { child, timelines, exits } = start(join(dir, 'served.db'));
    // Posted before the child serves: held until it says it is ready.
    const refused = await timelines.ingest(body([{ pod: { namespace: 'default', name: 'web', uid: 'u-web' }, steps: [step('SandboxCreated', 100)] }]), 'application/json', 'n1');
    assert.deepEqual(refused, []);
    assert.equal((await timelines.get('default', 'u-web'))?.pod.nodeName, 'n1', 'the facts come from this side');
    assert.equal(readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim(), 'pod-timelines');
    const policies = threadPolicies(child.pid!);
    assert.ok(policies.size > 1, 'V8 and libuv threads are there too');
    assert.deepEqual([...new Set(policies.values())], [5], 'every thread is SCHED_IDLE');
    await timelines.stop();
    await child.end();
    assert.deepEqual(exits, []);
  });

  it('stops its store when its server goes without stopping it: what was recorded reaches the file', async () => {
    const file = join(dir, 'orphaned.db');
    const { child, timelines } = start(file, { commitDelayMs: 600_000 });
    timelines.record([{ kind: 'deleted', pod: { namespace: 'default', name: 'web', uid: 'u-web' }, at: t0 + 5000 }]);
    assert.equal((await timelines.get('default', 'u-web'))?.deletedAt, microTime(t0 + 5000), 'merged in memory');
    assert.deepEqual(loadTimelineFile(file).timelines, [], 'not yet written: the commit waits 10 minutes');
    await child.end();
    assert.deepEqual(
      loadTimelineFile(file).timelines.map((l) => l.timeline.steps.map((s) => s.step)),
      [['Deleted']],
    );
  });

  it('fails every call with a 500 once the process is killed', async () => {
    const { child, timelines, exits } = start(join(dir, 'killed.db'));
    assert.equal(await timelines.get('default', 'u-web'), undefined);
    process.kill(child.pid!, 'SIGKILL');
    await assert.rejects(timelines.get('default', 'u-web'), { name: 'StatusError', code: 500, message: /pod timeline process failed: the process exited \(SIGKILL\)/ });
    assert.equal(exits.length, 1);
  });
});
