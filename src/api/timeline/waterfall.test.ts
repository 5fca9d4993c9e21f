import assert from 'node:assert/strict';
import test from 'node:test';
import { microTime } from '../time.js';
import type { PodTimeline, TimelineStep } from './types.js';
import { relaySegments, stepMicros, waterfall } from './waterfall.js';

const t0 = Date.parse('2026-01-01T10:00:00Z');
const at = (ms: number): string => microTime(t0 + ms);

function timeline(steps: TimelineStep[]): PodTimeline {
  return { apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimeline', metadata: { name: 'uid-1', namespace: 'default' }, pod: { namespace: 'default', name: 'web', uid: 'uid-1' }, steps };
}

const api = 'kube-apiserver';
const sched = 'default-scheduler';
const kubelet = 'kubelet/node-1';

// The seed's web pod: an init container, then nginx with postStart and probes.
const web = timeline([
  { step: 'RequestReceived', component: api, start: at(0) },
  { step: 'Authenticated', component: api, start: at(1) },
  { step: 'Admission', component: api, start: at(2), end: at(4), attributes: { phase: 'mutating', plugins: 'ServiceAccount 310µs', mutated: 'ServiceAccount: spec.volumes' }, detail: '1 mutating plugin; ServiceAccount changed spec.volumes' },
  { step: 'Persisted', component: api, start: at(5) },
  { step: 'SchedulingQueued', component: sched, start: at(6) },
  { step: 'SchedulingAttempt', component: sched, start: at(20), end: at(22), scheduling: { result: 'Scheduled', nodes: 3, feasible: 3, plugins: [], node: 'node-1' } },
  { step: 'Bound', component: sched, start: at(25), attributes: { node: 'node-1' } },
  { step: 'KubeletAdmitted', component: kubelet, start: at(30) },
  { step: 'SandboxCreated', component: kubelet, start: at(40), end: at(140) },
  { step: 'PodIPAssigned', component: kubelet, start: at(141), attributes: { ip: '10.217.201.5' } },
  { step: 'ImagePull', component: kubelet, container: 'wait-service', containerType: 'init', start: at(150), end: at(400), attributes: { waitMs: 50 } },
  { step: 'ContainerStarted', component: kubelet, container: 'wait-service', containerType: 'init', start: at(410) },
  { step: 'ContainerExited', component: kubelet, container: 'wait-service', containerType: 'init', start: at(900), attributes: { exitCode: 0 } },
  { step: 'ContainerStarted', component: kubelet, container: 'nginx', containerType: 'regular', start: at(1000) },
  { step: 'PostStart', component: kubelet, container: 'nginx', containerType: 'regular', start: at(1001), end: at(1100) },
  { step: 'ReadinessProbePassed', component: kubelet, container: 'nginx', containerType: 'regular', start: at(2000) },
  { step: 'ContainersReady', component: kubelet, start: at(2001) },
  { step: 'Ready', component: kubelet, start: at(2002) },
  { step: 'EndpointAdded', component: 'endpointslice-controller', start: at(2100), attributes: { service: 'myservice', ready: true } },
]);

test('stepMicros keeps the microseconds of MicroTime', () => {
  assert.equal(stepMicros('2026-01-01T10:00:00.123456Z') - stepMicros('2026-01-01T10:00:00Z'), 123_456);
  assert.equal(stepMicros('2026-01-01T10:00:01Z') - stepMicros('2026-01-01T10:00:00.5Z'), 500_000);
  assert.ok(Number.isNaN(stepMicros('yesterday')));
});

test('waterfall: offsets from the first step, durations, lanes in phase order', () => {
  const w = waterfall(web);
  assert.equal(w.startMs, t0);
  assert.equal(w.spanMs, 2100);
  assert.deepEqual(
    w.lanes.map((l) => l.id),
    ['api', 'scheduling', 'kubelet', 'init/wait-service', 'container/nginx', 'endpoints'],
  );
  const admission = w.rows.find((r) => r.step === 'Admission')!;
  assert.deepEqual([admission.offsetMs, admission.durationMs, admission.lane], [2, 2, 'api']);
  assert.equal(admission.detail, '1 mutating plugin; ServiceAccount changed spec.volumes');
  const sandbox = w.rows.find((r) => r.step === 'SandboxCreated')!;
  assert.deepEqual([sandbox.offsetMs, sandbox.durationMs, sandbox.lane, sandbox.component], [40, 100, 'kubelet', kubelet]);
  assert.equal(w.rows.find((r) => r.step === 'SchedulingAttempt')!.detail, '3/3 nodes fit; chose node-1');
  // Rows are in time order.
  const offsets = w.rows.map((r) => r.offsetMs);
  assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b));
});

test('waterfall: queueing and the pull queue are rows of their own', () => {
  const w = waterfall(web);
  const waits = w.rows.filter((r) => r.step === 'Wait').map((r) => [r.gap, r.offsetMs, r.durationMs, r.lane]);
  assert.deepEqual(waits, [
    ['queueing', 6, 14, 'scheduling'],
    ['pull-queue', 150, 50, 'init/wait-service'],
  ]);
});

test('waterfall: gated, then unschedulable until now, a series counted once', () => {
  const w = waterfall(
    timeline([
      { step: 'SchedulingGated', component: sched, start: at(0), attributes: { gates: 'example.com/a' } },
      { step: 'SchedulingUngated', component: sched, start: at(1000) },
      { step: 'SchedulingAttempt', component: sched, start: at(1010), lastTime: at(5000), count: 4, scheduling: { result: 'Unschedulable', nodes: 2, feasible: 0, plugins: [], message: '0/2 nodes are available: 2 Insufficient cpu.' } },
    ]),
    t0 + 9000,
  );
  assert.deepEqual(
    w.rows.map((r) => [r.step, r.gap ?? '', r.offsetMs, r.durationMs, r.count ?? 0]),
    [
      ['SchedulingGated', '', 0, 0, 0],
      ['Wait', 'gated', 0, 1000, 0],
      ['SchedulingUngated', '', 1000, 0, 0],
      ['Wait', 'queueing', 1000, 10, 0],
      ['SchedulingAttempt', '', 1010, 3990, 4],
      ['Wait', 'unschedulable', 5000, 4000, 0],
    ],
  );
  assert.equal(w.rows[4]!.detail, '0/2 nodes are available: 2 Insufficient cpu.');
  assert.equal(w.spanMs, 9000);
});

test('waterfall: back-off is a row up to the next start; a pull under way runs to now', () => {
  const w = waterfall(
    timeline([
      { step: 'ContainerStarted', component: kubelet, container: 'app', containerType: 'regular', start: at(0) },
      { step: 'BackOff', component: kubelet, container: 'app', containerType: 'regular', start: at(100), lastTime: at(2000), count: 3, attributes: { delayMs: 40_000 } },
      { step: 'ImagePull', component: kubelet, container: 'side', containerType: 'regular', start: at(3000) },
    ]),
    t0 + 10_000,
  );
  const backOff = w.rows.find((r) => r.step === 'BackOff')!;
  assert.deepEqual([backOff.gap, backOff.offsetMs, backOff.durationMs, backOff.count, backOff.lane], ['back-off', 100, 41_900, 3, 'container/app']);
  const pull = w.rows.find((r) => r.step === 'ImagePull')!;
  assert.deepEqual([pull.ongoing, pull.durationMs], [true, 7000]);
  assert.equal(w.spanMs, 42_000);
});

test('waterfall: termination and endpoint steps get their lanes; no steps, no rows', () => {
  const w = waterfall(
    timeline([
      { step: 'DeleteRequested', component: api, start: at(0), attributes: { gracePeriodSeconds: 30 } },
      { step: 'EndpointTerminating', component: 'endpointslice-controller', start: at(5) },
      { step: 'PreStop', component: kubelet, container: 'nginx', start: at(10), end: at(1010) },
      { step: 'SIGTERM', component: kubelet, container: 'nginx', start: at(1011) },
      { step: 'ContainerExited', component: kubelet, container: 'nginx', containerType: 'regular', start: at(1200), attributes: { exitCode: 0 } },
      { step: 'Deleted', component: api, start: at(1300) },
    ]),
  );
  assert.deepEqual(
    w.rows.map((r) => r.lane),
    ['termination', 'endpoints', 'termination', 'termination', 'container/nginx', 'termination'],
  );
  assert.deepEqual(waterfall(timeline([])), { startMs: 0, spanMs: 0, lanes: [], rows: [] });
});

test('relaySegments: back-to-back intervals from RequestReceived to Ready that add up exactly', () => {
  const segments = relaySegments(web);
  assert.equal(segments[0]!.step, 'Authenticated');
  assert.equal(segments[segments.length - 1]!.step, 'Ready');
  for (let i = 1; i < segments.length; i++) assert.equal(segments[i]!.startUs, segments[i - 1]!.endUs);
  assert.ok(segments.every((s) => s.durationMs >= 0));
  const total = segments.reduce((sum, s) => sum + (s.endUs - s.startUs), 0);
  assert.equal(total, 2002_000);
  // Each interval is attributed to the step that ends it: the sandbox's ends at its end.
  const sandbox = segments.find((s) => s.step === 'SandboxCreated')!;
  assert.deepEqual([sandbox.startUs - stepMicros(at(0)), sandbox.endUs - stepMicros(at(0))], [30_000, 140_000]);
  // The endpoint, after Ready, is not part of the relay.
  assert.ok(!segments.some((s) => s.step === 'EndpointAdded'));
});

test('relaySegments: microsecond times sum exactly; before Ready it ends at the latest step', () => {
  const tl = timeline([
    { step: 'RequestReceived', component: api, start: '2026-01-01T10:00:00.000001Z' },
    { step: 'Persisted', component: api, start: '2026-01-01T10:00:00.003334Z' },
    { step: 'Bound', component: sched, start: '2026-01-01T10:00:00.106667Z' },
  ]);
  const segments = relaySegments(tl);
  assert.deepEqual(
    segments.map((s) => [s.step, s.durationMs]),
    [
      ['Persisted', 3.333],
      ['Bound', 103.333],
    ],
  );
  assert.equal(segments.reduce((sum, s) => sum + (s.endUs - s.startUs), 0), 106_666);
  assert.deepEqual(relaySegments(timeline([])), []);
});
