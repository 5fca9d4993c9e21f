import assert from 'node:assert/strict';
import test from 'node:test';
import { microTime } from '../api/time.js';
import type { PodTimeline } from '../api/timeline/types.js';
import { renderWaterfall } from './timeline.js';

const t0 = Date.parse('2026-01-01T10:00:00Z');
const at = (ms: number) => microTime(t0 + ms);
const timeline: PodTimeline = {
  apiVersion: 'timeline.kite.dev/v1alpha1',
  kind: 'PodTimeline',
  metadata: { name: 'u1', namespace: 'default' },
  pod: { namespace: 'default', name: 'web', uid: 'u1' },
  steps: [
    { step: 'RequestReceived', component: 'kube-apiserver', start: at(0) },
    { step: 'SchedulingQueued', component: 'default-scheduler', start: at(10) },
    { step: 'Bound', component: 'default-scheduler', start: at(500), attributes: { node: 'node-1' } },
    { step: 'ContainerStarted', component: 'kubelet/node-1', container: 'a', containerType: 'regular', start: at(600), end: at(1000) },
    { step: 'ProbeFailed', component: 'kubelet/node-1', container: 'a', containerType: 'regular', start: at(700), lastTime: at(1000), count: 3, detail: 'readiness probe failed' },
  ],
};

test('renderWaterfall: the why line on top, a header, one row per step with offset, lane, duration and a bar', () => {
  const text = renderWaterfall(timeline, 'Running, not Ready: ...', t0 + 1000, 160);
  const lines = text.trimEnd().split('\n');
  assert.equal(lines[0], 'Running, not Ready: ...');
  assert.match(lines[1]!, /^OFFSET\s+LANE\s+STEP\s+DURATION\s+COMPONENT\s+DETAIL$/);
  assert.equal(lines.length, 2 + 6); // five steps and the queueing wait
  assert.match(lines[2]!, /^\+0ms\s+API\s+RequestReceived\s+-\s+kube-apiserver\s+│/);
  assert.match(lines[4]!, /^\+10ms\s+scheduling\s+\(queueing\)\s+490ms\s+default-scheduler\s+░{20} /);
  assert.match(lines.find((l) => l.includes('ProbeFailed'))!, /ProbeFailed ×3\s+300ms\s+kubelet\/node-1\s+ +█+ +readiness probe failed$/);
  // The bar is scaled to the span: the container's 400 ms of 1000 ms take 40 % of 40 cells.
  assert.equal(/█+/.exec(lines.find((l) => l.includes('ContainerStarted'))!)![0].length, 16);
});

test('renderWaterfall: no steps yet', () => {
  assert.equal(renderWaterfall(undefined, 'Pending: x', t0, 120), 'Pending: x\n(no timeline steps recorded yet)\n');
});
