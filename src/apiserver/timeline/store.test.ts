import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { microTime } from '../../api/time.js';
import type { TimelineStep, TimelineStepName } from '../../api/timeline/types.js';
import { StatusError } from '../../api/errors.js';
import { FakeClock } from '../../util/clock.js';
import { TimelineStore, type TimelineEvent, type TimelineStoreOptions } from './store.js';
import { loadTimelineFile, SqliteTimelineWriter, type TimelineCommit, type TimelineFileWriter } from './file.js';
import type { TimelineSink } from './sink.js';

const clock0 = Date.UTC(2026, 0, 1);
const logger = pino({ level: 'silent' });
const pod = (uid: string, name = `pod-${uid}`, namespace = 'default') => ({ uid, name, namespace });
const step = (name: TimelineStepName, atMs: number, extra: Partial<TimelineStep> = {}): TimelineStep => ({ step: name, component: 'test', start: microTime(clock0 + atMs), ...extra });

async function storeWith(opts: Partial<TimelineStoreOptions> = {}): Promise<{ store: TimelineStore; clock: FakeClock }> {
  const clock = new FakeClock(clock0);
  const store = new TimelineStore({ clock, logger, ...opts });
  await store.start();
  return { store, clock };
}

describe('TimelineStore merge', () => {
  it('keeps steps sorted by start whatever order they arrive in, and fills the pod from the steps', async () => {
    const { store } = await storeWith();
    store.record([{ pod: pod('u1'), steps: [step('Bound', 300, { attributes: { node: 'n1' } }), step('RequestReceived', 0)] }]);
    store.record([{ pod: pod('u1'), steps: [step('SchedulingQueued', 100), step('CreatedByController', 50, { attributes: { controller: 'replicaset-controller', ownerKind: 'ReplicaSet', ownerName: 'web-1' } })] }]);
    const t = store.get('default', 'u1')!;
    assert.deepEqual(
      t.steps.map((s) => s.step),
      ['RequestReceived', 'CreatedByController', 'SchedulingQueued', 'Bound'],
    );
    assert.deepEqual(t.pod, { namespace: 'default', name: 'pod-u1', uid: 'u1', nodeName: 'n1', owner: { kind: 'ReplicaSet', name: 'web-1' } });
    assert.equal(store.get('other', 'u1'), undefined, 'a timeline is found only in its pod namespace');
  });

  it('replaces a series step (same step, container and probe) instead of adding a row', async () => {
    const { store } = await storeWith();
    const probe = (count: number, kind: string) => step('ProbeFailed', 1000, { container: 'app', count, lastTime: microTime(clock0 + 1000 * count), attributes: { probe: kind } });
    store.record([{ pod: pod('u1'), steps: [probe(1, 'readiness'), probe(1, 'liveness')] }]);
    store.record([{ pod: pod('u1'), steps: [probe(3, 'readiness')] }]);
    const rows = store.get('default', 'u1')!.steps;
    assert.equal(rows.length, 2);
    assert.equal(rows.find((s) => s.attributes?.probe === 'readiness')?.count, 3);
    assert.equal(rows.find((s) => s.attributes?.probe === 'liveness')?.count, 1);
  });

  it('keeps one copy of a step sent twice (a batch retried after a lost answer)', async () => {
    const { store } = await storeWith();
    const batch = [{ pod: pod('u1'), steps: [step('SandboxCreated', 10), step('PodIPAssigned', 20)] }];
    store.record(batch);
    store.record(batch);
    assert.equal(store.get('default', 'u1')!.steps.length, 2);
  });

  it('drops the oldest repeats first at the per-pod cap and says it truncated', async () => {
    const { store } = await storeWith({ maxStepsPerPod: 4 });
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0), step('SchedulingAttempt', 10), step('SchedulingAttempt', 20), step('SchedulingAttempt', 30), step('Bound', 40)] }]);
    const t = store.get('default', 'u1')!;
    assert.equal(t.truncated, true);
    assert.deepEqual(
      t.steps.map((s) => `${s.step}@${Date.parse(s.start) - clock0}`),
      ['RequestReceived@0', 'SchedulingAttempt@20', 'SchedulingAttempt@30', 'Bound@40'],
    );
  });

  it('tells every sink the merged timeline and the steps that were added, and survives one that throws', async () => {
    const seen: string[] = [];
    const sinks: TimelineSink[] = [
      {
        stepsRecorded: () => {
          throw new Error('broken sink');
        },
      },
      { stepsRecorded: (t, added) => seen.push(`${t.metadata.name}:${added.map((s) => s.step).join(',')}:${t.steps.length}`) },
    ];
    const { store } = await storeWith({ sinks });
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
    store.record([{ pod: pod('u1'), steps: [step('Persisted', 5)] }]);
    assert.deepEqual(seen, ['u1:RequestReceived:1', 'u1:Persisted:2']);
  });

  it('keeps nothing when turned off', async () => {
    const { store } = await storeWith({ enabled: false });
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
    assert.equal(store.size, 0);
    assert.deepEqual(store.list({ namespace: '' }), []);
  });
});

describe('TimelineStore retention and caps', () => {
  it('removes a record the retention after its pod was deleted, on the clock', async () => {
    const { store, clock } = await storeWith({ retentionMs: 60 * 60_000, sweepIntervalMs: 60_000 });
    store.record([{ pod: pod('gone'), steps: [step('RequestReceived', 0), step('Deleted', 1000)] }]);
    store.record([{ pod: pod('alive'), steps: [step('RequestReceived', 0)] }]);
    assert.equal(store.get('default', 'gone')!.deletedAt, microTime(clock0 + 1000));
    await clock.advance(59 * 60_000);
    assert.ok(store.get('default', 'gone'), 'kept within the retention');
    await clock.advance(2 * 60_000);
    assert.equal(store.get('default', 'gone'), undefined);
    assert.ok(store.get('default', 'alive'), 'a live pod is never expired');
  });

  it('takes a record whose pod is gone without a Deleted step as deleted once quiet, then expires it', async () => {
    const live = new Set(['here']);
    const { store, clock } = await storeWith({ retentionMs: 60 * 60_000, sweepIntervalMs: 60_000, podsExisting: async (uids) => new Set(uids.filter((uid) => live.has(uid))) });
    store.record([{ pod: pod('here'), steps: [step('RequestReceived', 0)] }, { pod: pod('lost'), steps: [step('RequestReceived', 0)] }]);
    await clock.advance(5 * 60_000);
    assert.equal(store.get('default', 'lost')!.deletedAt, undefined, 'a quiet spell first: the cache may lag a new pod');
    await clock.advance(6 * 60_000);
    assert.equal(store.get('default', 'lost')!.deletedAt, microTime(clock0 + 10 * 60_000));
    assert.equal(store.get('default', 'here')!.deletedAt, undefined);
    await clock.advance(61 * 60_000);
    assert.equal(store.get('default', 'lost'), undefined);
  });

  it('evicts deleted pods first (earliest deletion first), then the oldest, at the global cap', async () => {
    const { store } = await storeWith({ maxPods: 3 });
    store.record([{ pod: pod('a'), steps: [step('RequestReceived', 0)] }]);
    store.record([{ pod: pod('b'), steps: [step('RequestReceived', 0), step('Deleted', 500)] }]);
    store.record([{ pod: pod('c'), steps: [step('RequestReceived', 0), step('Deleted', 200)] }]);
    store.record([{ pod: pod('d'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(store.list({ namespace: '' }).map((t) => t.metadata.name), ['a', 'b', 'd']);
    store.record([{ pod: pod('e'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(store.list({ namespace: '' }).map((t) => t.metadata.name), ['a', 'd', 'e']);
    store.record([{ pod: pod('f'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(store.list({ namespace: '' }).map((t) => t.metadata.name), ['d', 'e', 'f']);
  });
});

describe('TimelineStore watch', () => {
  it('sends the current records, then changes; resumes from a resourceVersion; 410 when too old', async () => {
    const { store } = await storeWith({ historySize: 3, maxPods: 10 });
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
    const events: TimelineEvent[] = [];
    const cancel = store.watch({ namespace: 'default' }, undefined, (e) => events.push(e));
    store.record([{ pod: pod('u1'), steps: [step('Persisted', 5)] }, { pod: pod('x', 'x', 'other'), steps: [step('RequestReceived', 0)] }]);
    cancel();
    store.record([{ pod: pod('u2'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.steps.length}`),
      ['ADDED u1 1', 'MODIFIED u1 2'],
    );
    const from = events[1]!.resourceVersion;
    const resumed: string[] = [];
    store.watch({ namespace: '' }, from, (e) => resumed.push(`${e.type} ${e.object.metadata.name}`))();
    assert.deepEqual(resumed, ['ADDED x', 'ADDED u2']);
    store.record([{ pod: pod('u3'), steps: [step('RequestReceived', 0)] }, { pod: pod('u4'), steps: [step('RequestReceived', 0)] }]);
    assert.throws(
      () => store.watch({ namespace: '' }, from, () => {}),
      (err: unknown) => err instanceof StatusError && err.code === 410 && /too old resource version/.test(err.message),
    );
  });

  it('announces an expired record as DELETED', async () => {
    const { store, clock } = await storeWith({ retentionMs: 1000, sweepIntervalMs: 1000 });
    store.record([{ pod: pod('u1'), steps: [step('Deleted', 0)] }]);
    const events: string[] = [];
    store.watch({ namespace: 'default' }, store.resourceVersion, (e) => events.push(`${e.type} ${e.object.metadata.name}`));
    await clock.advance(2000);
    assert.deepEqual(events, ['DELETED u1']);
  });
});

/** A fresh directory's timeline.db for fn, removed afterwards. */
async function withTimelineFile(fn: (file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-'));
  try {
    await fn(join(dir, 'timeline.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('TimelineStore persistence', () => {
  it('loads what it kept from its file after a restart; a resourceVersion from before is 410', async () => {
    await withTimelineFile(async (file) => {
      const first = await storeWith({ file });
      first.store.record([{ pod: { ...pod('u1'), nodeName: 'n1' }, steps: [step('RequestReceived', 0), step('Bound', 10, { attributes: { node: 'n1' } })] }]);
      first.store.record([{ pod: pod('u2'), steps: [step('RequestReceived', 0), step('Deleted', 10)] }]);
      const rv = first.store.resourceVersion;
      await first.store.stop();

      const second = await storeWith({ file });
      assert.deepEqual(second.store.get('default', 'u1'), first.store.get('default', 'u1'));
      assert.equal(second.store.get('default', 'u2')!.deletedAt, microTime(clock0 + 10));
      assert.equal(second.store.resourceVersion, rv);
      assert.throws(() => second.store.watch({ namespace: '' }, rv - 1, () => {}), (err: unknown) => err instanceof StatusError && err.code === 410);
      second.store.record([{ pod: pod('u1'), steps: [step('Ready', 20)] }]);
      assert.equal(second.store.get('default', 'u1')!.metadata.resourceVersion, String(rv + 1));
      await second.store.stop();
    });
  });

  it('writes behind: the changes of one window go in one commit, committed() resolves only after it, new steps are appended in any order', async () => {
    await withTimelineFile(async (file) => {
      const { store, clock } = await storeWith({ file, commitDelayMs: 10 });
      // Each row of steps as `uid rowid step,step…`, in order.
      const stored = () => {
        const db = new Database(file, { readonly: true });
        try {
          return (db.prepare('SELECT r.uid, s.rowid AS id, s.body FROM timeline_record_steps s JOIN timeline_records r USING (rec) ORDER BY r.uid, s.rowid').all() as { uid: string; id: number; body: string }[]).map(
            (r) => `${r.uid} ${r.id} ${(JSON.parse(r.body) as TimelineStep[]).map((s) => s.step).join(',')}`,
          );
        } finally {
          db.close();
        }
      };
      await store.committed();
      store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
      store.record([{ pod: pod('u1'), steps: [step('Persisted', 5)] }, { pod: pod('u2'), steps: [step('RequestReceived', 0)] }]);
      let answered = false;
      const committed = store.committed().then(() => (answered = true));
      await new Promise((r) => setImmediate(r));
      assert.equal(answered, false, 'not answered before the commit');
      assert.deepEqual(stored(), [], 'nothing written yet');
      await clock.advance(10);
      await committed;
      const first = stored();
      assert.deepEqual(first.map((r) => r.replace(/ \d+ /, ' ')), ['u1 RequestReceived,Persisted', 'u2 RequestReceived'], 'both batches, one row per record');
      store.record([{ pod: pod('u1'), steps: [step('Bound', 10)] }]);
      await clock.advance(10);
      await store.committed();
      const second = stored();
      assert.deepEqual(second[0], first[0], "u1's stored row is kept");
      assert.match(second[1]!, /^u1 \d+ Bound$/, 'the new step appended');
      // A step arriving out of start order is appended too; loading sorts.
      store.record([{ pod: pod('u1'), steps: [step('Authenticated', 1)] }]);
      await clock.advance(10);
      await store.committed();
      const third = stored();
      assert.deepEqual(third.slice(0, 2), second.slice(0, 2));
      assert.match(third[2]!, /^u1 \d+ Authenticated$/);
      // A series step replaced: the record's rows are written again, once each.
      store.record([{ pod: pod('u2'), steps: [step('ProbeFailed', 20, { count: 1, container: 'c' })] }]);
      await clock.advance(10);
      store.record([{ pod: pod('u2'), steps: [step('ProbeFailed', 20, { count: 2, container: 'c' })] }]);
      await store.stop();
      assert.deepEqual(
        stored()
          .filter((r) => r.startsWith('u2'))
          .map((r) => r.replace(/ \d+ /, ' ')),
        ['u2 RequestReceived,ProbeFailed'],
      );
      const reopened = await storeWith({ file });
      assert.deepEqual(reopened.store.get('default', 'u1')!.steps.map((s) => s.step), ['RequestReceived', 'Authenticated', 'Persisted', 'Bound']);
      assert.equal(reopened.store.get('default', 'u2')!.steps[1]!.count, 2);
      await reopened.store.stop();
    });
  });

  it('a record evicted and recorded again before the commit is written from its new steps only', async () => {
    await withTimelineFile(async (file) => {
      const { store, clock } = await storeWith({ file, commitDelayMs: 10, maxPods: 1 });
      store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0), step('Persisted', 5)] }]);
      await clock.advance(10);
      await store.committed();
      store.record([{ pod: pod('u2'), steps: [step('RequestReceived', 0)] }]);
      store.record([{ pod: pod('u1'), steps: [step('Bound', 10)] }]);
      await clock.advance(10);
      await store.committed();
      await store.stop();
      const reopened = await storeWith({ file });
      assert.deepEqual(reopened.store.get('default', 'u1')!.steps.map((s) => s.step), ['Bound'], 'the evicted rows are not brought back');
      assert.equal(reopened.store.get('default', 'u2'), undefined);
      await reopened.store.stop();
    });
  });

  it('loads a file whose records carry their steps in the head (before steps had rows) or are keyed by UID, and moves them', async () => {
    await withTimelineFile(async (file) => {
      const legacy = new Database(file);
      legacy.exec('CREATE TABLE timelines (uid TEXT PRIMARY KEY, body TEXT NOT NULL)');
      const head = { apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimeline', metadata: { name: 'u1', namespace: 'default', resourceVersion: '7' }, pod: pod('u1') };
      legacy.prepare('INSERT INTO timelines (uid, body) VALUES (?, ?)').run('u1', JSON.stringify({ ...head, steps: [step('RequestReceived', 0)] }));
      // And a record of the next format: one row per step object.
      legacy.prepare('INSERT INTO timelines (uid, body) VALUES (?, ?)').run('u2', JSON.stringify({ ...head, metadata: { ...head.metadata, name: 'u2' }, pod: pod('u2') }));
      legacy.exec('CREATE TABLE timeline_steps (uid TEXT NOT NULL, body TEXT NOT NULL)');
      for (const s of [step('RequestReceived', 0), step('Persisted', 5)]) legacy.prepare('INSERT INTO timeline_steps (uid, body) VALUES (?, ?)').run('u2', JSON.stringify(s));
      legacy.close();
      const first = await storeWith({ file });
      const db = new Database(file, { readonly: true });
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
      db.close();
      assert.deepEqual(tables, ['timeline_intake', 'timeline_meta', 'timeline_record_steps', 'timeline_records'], 'the UID-keyed tables moved to numbered records');
      assert.deepEqual(first.store.get('default', 'u1')!.steps.map((s) => s.step), ['RequestReceived']);
      assert.deepEqual(first.store.get('default', 'u2')!.steps.map((s) => s.step), ['RequestReceived', 'Persisted']);
      first.store.record([{ pod: pod('u1'), steps: [step('Persisted', 5)] }]);
      await first.store.stop();
      const second = await storeWith({ file });
      assert.deepEqual(second.store.get('default', 'u1')!.steps.map((s) => s.step), ['RequestReceived', 'Persisted'], 'each step once');
      assert.deepEqual(second.store.get('default', 'u2')!.steps.map((s) => s.step), ['RequestReceived', 'Persisted']);
      assert.equal(second.store.resourceVersion, 8);
      await second.store.stop();
    });
  });

  it('writes a head only when more than its resourceVersion changed, and a restart goes on from the last resourceVersion committed', async () => {
    await withTimelineFile(async (file) => {
      const commits: TimelineCommit[] = [];
      const writer = (f: string): TimelineFileWriter => {
        const sqlite = new SqliteTimelineWriter(f);
        return { write: (c) => (commits.push(c), sqlite.write(c)), close: () => sqlite.close() };
      };
      const { store, clock } = await storeWith({ file, writer });
      const commit = async (steps: TimelineStep[]) => {
        store.record([{ pod: pod('u1'), steps }]);
        await clock.advance(10);
        await store.committed();
      };
      await commit([step('RequestReceived', 0)]);
      await commit([step('Bound', 10, { attributes: { node: 'n1' } })]);
      await commit([step('Ready', 20)]);
      await commit([step('Deleted', 30)]);
      await commit([step('FinalizerRemoved', 40)]);
      assert.deepEqual(
        commits.map((c) => [c.resourceVersion, c.writes.map((w) => [w.head?.pod.nodeName ?? (w.head ? 'head' : 'no head'), w.head?.deletedAt ?? '', w.steps && (JSON.parse(w.steps) as TimelineStep[]).map((s) => s.step)])]),
        [
          [1, [['head', '', ['RequestReceived']]]],
          [2, [['n1', '', ['Bound']]]],
          [3, [['no head', '', ['Ready']]]],
          [4, [['n1', store.get('default', 'u1')!.deletedAt, ['Deleted']]]],
          [5, [['no head', '', ['FinalizerRemoved']]]],
        ],
      );
      await store.stop();
      const reopened = await storeWith({ file });
      const t = reopened.store.get('default', 'u1')!;
      assert.deepEqual([t.pod.nodeName, t.steps.map((s) => s.step)], ['n1', ['RequestReceived', 'Bound', 'Ready', 'Deleted', 'FinalizerRemoved']]);
      assert.equal(reopened.store.resourceVersion, 5, "the store's, not the last head's (4)");
      reopened.store.record([{ pod: pod('u1'), steps: [step('ContainerExited', 50)] }]);
      assert.equal(reopened.store.get('default', 'u1')!.metadata.resourceVersion, '6');
      await reopened.store.stop();
    });
  });

  it('a failed write rejects who waited for it, and the next commit writes the records whole', async () => {
    await withTimelineFile(async (file) => {
      let failNext = false;
      const writer = (f: string): TimelineFileWriter => {
        const sqlite = new SqliteTimelineWriter(f);
        return {
          write: (writes) => (failNext ? ((failNext = false), Promise.reject(new Error('disk full'))) : sqlite.write(writes)),
          close: () => sqlite.close(),
        };
      };
      const { store, clock } = await storeWith({ file, writer });
      store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
      await clock.advance(10);
      await store.committed();
      failNext = true;
      store.record([{ pod: pod('u1'), steps: [step('Persisted', 5)] }]);
      const failed = assert.rejects(store.committed(), (err: unknown) => err instanceof StatusError && err.code === 500);
      await clock.advance(10);
      await failed;
      await clock.advance(10);
      await store.stop();
      const reopened = await storeWith({ file });
      assert.deepEqual(reopened.store.get('default', 'u1')!.steps.map((s) => s.step), ['RequestReceived', 'Persisted']);
      await reopened.store.stop();
    });
  });
});

describe('TimelineStore while the machine is busy', () => {
  /** A store whose machine is busy while `machine.busy`, and the steps its sink was told of, as `uid:step`. */
  async function busyStore(opts: Partial<TimelineStoreOptions> = {}) {
    const machine = { busy: true };
    const merged: string[] = [];
    const sink: TimelineSink = { stepsRecorded: (t, added) => merged.push(...added.map((s) => `${t.pod.uid}:${s.step}`)) };
    const { store, clock } = await storeWith({ busy: () => machine.busy, mergeCheckMs: 250, maxMergeDelayMs: 10_000, sinks: [sink], ...opts });
    return { store, clock, machine, merged };
  }

  it('merges a batch once the machine is not busy, in the order batches came', async () => {
    const { store, clock, machine, merged } = await busyStore();
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
    store.record([{ pod: pod('u1'), steps: [step('Persisted', 5)] }, { pod: pod('u2'), steps: [step('RequestReceived', 1)] }]);
    await clock.advance(1000);
    assert.deepEqual(merged, [], 'nothing merged while busy');
    machine.busy = false;
    await clock.advance(250);
    assert.deepEqual(merged, ['u1:RequestReceived', 'u1:Persisted', 'u2:RequestReceived']);
    await store.stop();
  });

  it('merges after the longest delay when the machine stays busy', async () => {
    const { store, clock, merged } = await busyStore();
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
    await clock.advance(9750);
    assert.deepEqual(merged, []);
    await clock.advance(250);
    assert.deepEqual(merged, ['u1:RequestReceived']);
    await store.stop();
  });

  it('a read merges what waits first, and nothing waits while a watch is open', async () => {
    const { store, clock, merged } = await busyStore();
    store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(store.get('default', 'u1')?.steps.map((s) => s.step), ['RequestReceived']);
    store.record([{ pod: pod('u2'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(store.list({ namespace: '' }).map((t) => t.metadata.name), ['u1', 'u2']);
    store.record([{ pod: pod('u3'), steps: [step('RequestReceived', 0)] }]);
    const events: string[] = [];
    const cancel = store.watch({ namespace: '' }, store.resourceVersion, (e) => events.push(`${e.type} ${e.object.metadata.name}`));
    assert.deepEqual(merged, ['u1:RequestReceived', 'u2:RequestReceived', 'u3:RequestReceived'], 'merged before the watch began');
    store.record([{ pod: pod('u4'), steps: [step('RequestReceived', 0)] }]);
    assert.deepEqual(events, ['ADDED u4'], 'a watcher hears of a batch at once');
    cancel();
    store.record([{ pod: pod('u5'), steps: [step('RequestReceived', 0)] }]);
    await clock.advance(250);
    assert.equal(merged.length, 4, 'waits again once no one watches');
    await store.stop();
    assert.equal(merged.length, 5, 'stop merges what waits');
  });

  it('keeps a waiting batch in the file: answered once written, merged after a crash, its row removed by the commit of its merge', async () => {
    await withTimelineFile(async (file) => {
      const rows = (table: string) => {
        const db = new Database(file, { readonly: true });
        try {
          return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      let writer: SqliteTimelineWriter | undefined;
      const { store, clock } = await busyStore({ file, commitDelayMs: 10, writer: (f) => (writer = new SqliteTimelineWriter(f)) });
      store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0), step('Persisted', 5)] }]);
      let answered = false;
      const committed = store.committed().then(() => (answered = true));
      await new Promise((r) => setImmediate(r));
      assert.equal(answered, false, 'not answered before it is written');
      await clock.advance(10);
      await committed;
      assert.deepEqual([rows('timeline_intake'), rows('timeline_records')], [1, 0], 'the batch as it came, not merged');
      // The process dies: its file closed as it was, without stop().
      await writer!.close();

      const restarted = await storeWith({ file, commitDelayMs: 10 });
      assert.deepEqual(restarted.store.get('default', 'u1')?.steps.map((s) => s.step), ['RequestReceived', 'Persisted']);
      await restarted.clock.advance(10);
      await restarted.store.committed();
      assert.deepEqual([rows('timeline_intake'), rows('timeline_records')], [0, 1], 'merged and written; its intake row gone');
      await restarted.store.stop();
    });
  });

  it('a batch merged before its row was written is not written as a row', async () => {
    await withTimelineFile(async (file) => {
      const { store, clock } = await busyStore({ file, commitDelayMs: 10 });
      store.record([{ pod: pod('u1'), steps: [step('RequestReceived', 0)] }]);
      assert.ok(store.get('default', 'u1'));
      await clock.advance(10);
      await store.committed();
      const loaded = loadTimelineFile(file);
      assert.deepEqual([loaded.intake.length, loaded.timelines.length], [0, 1]);
      await store.stop();
    });
  });
});
