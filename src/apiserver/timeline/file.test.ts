import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PodTimeline, TimelineStep, TimelineStepName } from '../../api/timeline/types.js';
import { flatRows, loadTimelineFile, SqliteTimelineWriter, type TimelineWrite } from './file.js';

function head(uid: string): Omit<PodTimeline, 'steps'> {
  return { apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimeline', metadata: { name: uid, namespace: 'default' }, pod: { name: `pod-${uid}`, namespace: 'default', uid } };
}

function step(name: TimelineStepName, ms: number, detail?: string): TimelineStep {
  return { step: name, component: 'kubelet', start: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString().replace('Z', '000Z'), ...(detail ? { detail } : {}) };
}

test('flatRows: four strings per record, and what the writer stores from them loads back as the records', () => {
  const writes: TimelineWrite[] = [
    { uid: 'u1', head: head('u1'), steps: [step('Bound', 2, 'tab\there, newline\nthere')] },
    { uid: 'u2', head: head('u2'), steps: [step('SchedulingQueued', 1)] },
    { uid: 'u3', head: head('u3') },
  ];
  const rows = flatRows(writes);
  assert.equal(rows.length, 12);
  assert.deepEqual(rows.slice(8), ['u3', '', JSON.stringify(head('u3')), ''], 'a head without new steps');

  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-file-'));
  try {
    const file = join(dir, 'timeline.db');
    const writer = new SqliteTimelineWriter(file);
    writer.writeRows(rows);
    // u1 appends a step that started earlier, u2's rows are replaced, u3 is removed.
    writer.writeRows(flatRows([
      { uid: 'u1', head: head('u1'), steps: [step('SchedulingQueued', 1)] },
      { uid: 'u2', head: head('u2'), steps: [step('Ready', 5)], rewrite: true },
      { uid: 'u3' },
    ]));
    void writer.close();
    const loaded = loadTimelineFile(file).map((l) => [l.timeline.metadata.name, l.timeline.steps.map((s) => s.step), l.legacy]);
    assert.deepEqual(loaded, [
      ['u1', ['SchedulingQueued', 'Bound'], false],
      ['u2', ['Ready'], false],
    ]);
    assert.equal(loadTimelineFile(file)[0]!.timeline.steps[1]!.detail, 'tab\there, newline\nthere');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a commit that fails inside its transaction leaves nothing of it, and the next one writes its records afresh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-timeline-file-'));
  try {
    const file = join(dir, 'timeline.db');
    const writer = new SqliteTimelineWriter(file);
    writer.writeRows(flatRows([{ uid: 'u1', head: head('u1'), steps: [step('Bound', 2)] }]));
    // u2 is added, then u1 is removed, then a row SQLite refuses (a head that is no text) rolls all of it back.
    const refused = [...flatRows([{ uid: 'u2', head: head('u2'), steps: [step('SchedulingQueued', 1)] }, { uid: 'u1' }]), 'u3', '', null as unknown as string, ''];
    assert.throws(() => writer.writeRows(refused), /NOT NULL/);
    writer.writeRows(flatRows([
      { uid: 'u2', head: head('u2'), steps: [step('SchedulingQueued', 1)], rewrite: true },
      { uid: 'u1', head: head('u1'), steps: [step('Ready', 5)] },
    ]));
    void writer.close();
    const loaded = loadTimelineFile(file).map((l) => [l.timeline.metadata.name, l.timeline.steps.map((s) => s.step)]);
    assert.deepEqual(loaded, [
      ['u1', ['Bound', 'Ready']],
      ['u2', ['SchedulingQueued']],
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
