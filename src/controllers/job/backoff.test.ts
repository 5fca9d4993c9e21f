import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { BackoffStore, finishedTime, remainingTimeForFailures, remainingTimePerIndex } from './backoff.js';

const T0 = Date.UTC(2026, 0, 1);
const t = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d+Z$/, 'Z');
const finishedAt = (ms: number, annotations?: Record<string, string>): Pod => ({
  metadata: { creationTimestamp: t(0), ...(annotations ? { annotations } : {}) },
  status: { containerStatuses: [{ name: 'c', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, finishedAt: t(ms) } } }] },
});

test('remainingTimeForFailures: 10 s doubling per failure, capped at 10 min', () => {
  const cases: [number, number, number][] = [
    [0, 0, 0],
    [1, 0, 10_000],
    [1, 4000, 6000],
    [2, 0, 20_000],
    [3, 0, 40_000],
    [7, 0, 600_000],
    [20, 0, 600_000],
    [1, 11_000, 0],
  ];
  for (const [failures, elapsed, want] of cases) assert.equal(remainingTimeForFailures(T0 + elapsed, failures, T0), want, `${failures} after ${elapsed}`);
});

test('finishedTime: containers, then Ready=False, then deletion less grace, then creation', () => {
  assert.equal(finishedTime(finishedAt(5000)), T0 + 5000);
  const notTerminated: Pod = { metadata: { creationTimestamp: t(0) }, status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: t(3000) }] } };
  assert.equal(finishedTime(notTerminated), T0 + 3000);
  assert.equal(finishedTime({ metadata: { creationTimestamp: t(0), deletionTimestamp: t(40_000), deletionGracePeriodSeconds: 30 } }), T0 + 10_000);
  assert.equal(finishedTime({ metadata: { creationTimestamp: t(7) } }), T0);
});

test('the back-off record counts the failures since the last success', () => {
  const store = new BackoffStore();
  let r = store.newBackoffRecord('ns/j', [], [finishedAt(1000), finishedAt(3000)]);
  assert.deepEqual([r.failuresAfterLastSuccess, r.lastFailureTime], [2, T0 + 3000]);
  store.updateBackoffRecord(r);
  r = store.newBackoffRecord('ns/j', [finishedAt(4000)], [finishedAt(2000), finishedAt(5000)]);
  assert.deepEqual([r.failuresAfterLastSuccess, r.lastFailureTime], [1, T0 + 5000]);
  r = store.newBackoffRecord('ns/j', [finishedAt(6000)], []);
  assert.deepEqual([r.failuresAfterLastSuccess, r.lastFailureTime], [0, undefined]);
  store.removeBackoffRecord('ns/j');
  assert.equal(store.newBackoffRecord('ns/j', [], []).failuresAfterLastSuccess, 0);
});

test('per index: the failure counts of the index last failed pod', () => {
  assert.equal(remainingTimePerIndex(T0, undefined), 0);
  const second = finishedAt(0, { 'batch.kubernetes.io/job-index-failure-count': '1' });
  assert.equal(remainingTimePerIndex(T0 + 5000, second), 15_000);
});
