import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PodTimeline, TimelineStep, TimelineStepName } from '../../api/timeline/types.js';
import { loadTimelineFile, SqliteTimelineWriter } from './file.js';

function head(uid: string): Omit<PodTimeline, 'steps'> {
  return { apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimeline', metadata: { name: uid, namespace: 'default' }, pod: { name: `pod-${uid}`, namespace: 'default', uid } };
}

/** Steps as a write carries them: one JSON array. */
const rows = (...steps: TimelineStep[]) => JSON.stringify(steps);

function step(name: TimelineStepName, ms: number, detail?: string): TimelineStep {
  return { step: name, component: 'kubelet', start: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString().replace('Z', '000Z'), ...(detail ? { detail } : {}) };
}

test('what the writer stores loads back as the records: steps appended or replaced, heads kept when a write has none, records removed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-file-'));
  try {
    const file = join(dir, 'timeline.db');
    assert.deepEqual(loadTimelineFile(file), { timelines: [], resourceVersion: 0, intake: [] }, 'a new file');
    const writer = new SqliteTimelineWriter(file);
    writer.commit({
      resourceVersion: 3,
      writes: [
        { uid: 'u1', head: head('u1'), steps: rows(step('Bound', 2, 'tab\there, newline\nthere')) },
        { uid: 'u2', head: head('u2'), steps: rows(step('SchedulingQueued', 1)) },
        { uid: 'u3', head: head('u3') },
      ],
    });
    // u1 appends a step that started earlier without a head, u2's rows and head are replaced, u3 is removed.
    writer.commit({
      resourceVersion: 7,
      writes: [
        { uid: 'u1', steps: rows(step('SchedulingQueued', 1)) },
        { uid: 'u2', head: { ...head('u2'), deletedAt: '2026-01-01T00:00:09.000000Z' }, steps: rows(step('Ready', 5)), rewrite: true },
        { uid: 'u3', removed: true },
      ],
    });
    // Batches not merged: kept as rows, in order, until a commit clears them.
    const batch = (uid: string) => JSON.stringify([{ pod: { namespace: 'default', name: uid, uid }, steps: [step('Ready', 6)] }]);
    writer.commit({ resourceVersion: 8, writes: [], intake: [batch('u4')] });
    writer.commit({ resourceVersion: 9, writes: [], intake: [batch('u5'), batch('u6')] });
    assert.deepEqual(loadTimelineFile(file).intake.map((b) => b[0]!.pod.uid), ['u4', 'u5', 'u6']);
    writer.commit({ resourceVersion: 10, writes: [], clearIntake: true, intake: [batch('u7')] });
    void writer.close();
    const { timelines, resourceVersion, intake } = loadTimelineFile(file);
    assert.deepEqual(intake.map((b) => b[0]!.pod.uid), ['u7'], 'cleared first, then the new row');
    assert.equal(resourceVersion, 10);
    assert.deepEqual(
      timelines.map((l) => [l.timeline.metadata.name, l.timeline.steps.map((s) => s.step), l.timeline.deletedAt, l.legacy]),
      [
        ['u1', ['SchedulingQueued', 'Bound'], undefined, false],
        ['u2', ['Ready'], '2026-01-01T00:00:09.000000Z', false],
      ],
    );
    assert.equal(timelines[0]!.timeline.steps[1]!.detail, 'tab\there, newline\nthere');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a commit that fails inside its transaction leaves nothing of it, and the next one writes its records afresh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-file-'));
  try {
    const file = join(dir, 'timeline.db');
    const writer = new SqliteTimelineWriter(file);
    writer.commit({ resourceVersion: 1, writes: [{ uid: 'u1', head: head('u1'), steps: rows(step('Bound', 2)) }] });
    // u2 is added, then u1 is removed, then a record new to the file without its head rolls all of it back.
    const refused = { resourceVersion: 4, writes: [{ uid: 'u2', head: head('u2'), steps: rows(step('SchedulingQueued', 1)) }, { uid: 'u1', removed: true }, { uid: 'u3', steps: rows(step('Ready', 3)) }] };
    assert.throws(() => writer.commit(refused), /u3 is not in the file/);
    writer.commit({
      resourceVersion: 6,
      writes: [
        { uid: 'u2', head: head('u2'), steps: rows(step('SchedulingQueued', 1)), rewrite: true },
        { uid: 'u1', steps: rows(step('Ready', 5)) },
      ],
    });
    void writer.close();
    const { timelines, resourceVersion } = loadTimelineFile(file);
    assert.equal(resourceVersion, 6);
    assert.deepEqual(
      timelines.map((l) => [l.timeline.metadata.name, l.timeline.steps.map((s) => s.step)]),
      [
        ['u1', ['Bound', 'Ready']],
        ['u2', ['SchedulingQueued']],
      ],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
