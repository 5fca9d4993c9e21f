import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { SpanStatusCode } from '@opentelemetry/api';
import type { PodTimeline, TimelineStep } from '../../../api/timeline/types.js';
import { hrTimeOf, parseTraceparent, planSpans, podSpanId, podTraceId, serviceOf, stepSpanId, type PlannedSpan } from './spans.js';

const uid = '6f1c2a3b-4d5e-4f60-8172-93a4b5c6d7e8';
const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
const clientSpan = '00f067aa0ba902b7';

function timeline(steps: TimelineStep[], extra: Partial<PodTimeline> = {}): PodTimeline {
  return {
    apiVersion: 'timeline.kite.dev/v1alpha1',
    kind: 'PodTimeline',
    metadata: { name: uid, namespace: 'default' },
    pod: { namespace: 'default', name: 'web', uid, nodeName: 'node-1', owner: { kind: 'ReplicaSet', name: 'web-5d8f' } },
    steps,
    ...extra,
  };
}

const received: TimelineStep = { step: 'RequestReceived', component: 'kube-apiserver', start: '2026-01-01T10:00:00.000100Z', attributes: { user: 'admin', traceparent: `00-${clientTrace}-${clientSpan}-01` } };
const admissionA: TimelineStep = { step: 'Admission', component: 'kube-apiserver', start: '2026-01-01T10:00:00.001000Z', end: '2026-01-01T10:00:00.001500Z', attributes: { phase: 'mutating', plugins: 'ServiceAccount 480µs', mutated: 'ServiceAccount: spec.volumes' } };
const admissionB: TimelineStep = { step: 'Admission', component: 'kube-apiserver', start: '2026-01-01T10:00:00.001000Z', end: '2026-01-01T10:00:00.001200Z', attributes: { phase: 'validating', plugins: 'PodSecurity 190µs' } };
const attempts: TimelineStep = {
  step: 'SchedulingAttempt',
  component: 'default-scheduler',
  start: '2026-01-01T10:00:00.010000Z',
  count: 3,
  lastTime: '2026-01-01T10:00:02.010000Z',
  scheduling: { result: 'Unschedulable', nodes: 2, feasible: 0, plugins: [], message: '0/2 nodes are available: 2 Insufficient cpu.' },
};
const bound: TimelineStep = { step: 'Bound', component: 'default-scheduler', start: '2026-01-01T10:00:03.000000Z', attributes: { node: 'node-1' } };
const pull: TimelineStep = { step: 'ImagePull', component: 'kubelet/node-1', container: 'app', containerType: 'regular', start: '2026-01-01T10:00:03.100000Z', end: '2026-01-01T10:00:03.440250Z', detail: 'pulled busybox', attributes: { image: 'busybox:1.36', size: 1100000 } };
const exited: TimelineStep = { step: 'ContainerExited', component: 'kubelet/node-1', container: 'app', start: '2026-01-01T10:00:05.000000Z', attributes: { exitCode: 1, reason: 'Error' } };
const restarts: TimelineStep = { step: 'ContainerRestarted', component: 'kubelet/node-1', container: 'app', start: '2026-01-01T10:00:06.000000Z', count: 2, lastTime: '2026-01-01T10:00:16.000000Z' };
const deleted: TimelineStep = { step: 'Deleted', component: 'kube-apiserver', start: '2026-01-01T10:01:00.000000Z' };

const all = [received, admissionA, admissionB, attempts, bound, pull, exited, restarts, deleted];
const byName = (spans: PlannedSpan[], name: string) => spans.filter((s) => s.name === name);

describe('pod timeline → spans', () => {
  it('puts every span of a pod in one trace named by its UID, under one root', () => {
    const spans = planSpans(timeline(all), all);
    assert.equal(podTraceId(uid), '6f1c2a3b4d5e4f60817293a4b5c6d7e8');
    assert.ok(spans.every((s) => s.traceId === '6f1c2a3b4d5e4f60817293a4b5c6d7e8'));
    const [root] = byName(spans, 'Pod');
    assert.ok(root);
    assert.equal(root.spanId, podSpanId(uid));
    assert.equal(root.parentSpanId, undefined);
    const children = spans.filter((s) => s !== root);
    assert.equal(children.length, all.length);
    assert.ok(children.every((s) => s.parentSpanId === root.spanId));
    assert.equal(new Set(spans.map((s) => s.spanId)).size, spans.length, 'span ids are distinct');
    assert.ok(spans.every((s) => /^[0-9a-f]{16}$/.test(s.spanId)));
  });

  it('derives the trace id of a UID that is not a UUID by hashing it', () => {
    const id = podTraceId('not-a-uuid');
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.equal(podTraceId('not-a-uuid'), id);
    assert.notEqual(podTraceId('other'), id);
    assert.notEqual(podTraceId('00000000-0000-0000-0000-000000000000'), '00000000000000000000000000000000');
  });

  it('keeps step times to the microsecond; an instant is a zero-length span', () => {
    const spans = planSpans(timeline([pull, bound]), [pull, bound]);
    const [p] = byName(spans, 'ImagePull');
    assert.deepEqual(p!.start, [Date.UTC(2026, 0, 1, 10, 0, 3) / 1000, 100_000_000]);
    assert.deepEqual(p!.end, [Date.UTC(2026, 0, 1, 10, 0, 3) / 1000, 440_250_000]);
    const [b] = byName(spans, 'Bound');
    assert.deepEqual(b!.start, b!.end);
    assert.deepEqual(hrTimeOf('2026-01-01T10:00:00Z'), [Date.UTC(2026, 0, 1, 10) / 1000, 0]);
    assert.equal(hrTimeOf('yesterday'), undefined);
  });

  it("names each component's service and carries the k8s attributes and the step's facts", () => {
    const spans = planSpans(timeline(all), all);
    const [p] = byName(spans, 'ImagePull');
    assert.deepEqual(p!.service, { 'service.name': 'kubelet', 'service.instance.id': 'node-1', 'k8s.node.name': 'node-1' });
    assert.equal(p!.attributes['k8s.pod.name'], 'web');
    assert.equal(p!.attributes['k8s.pod.uid'], uid);
    assert.equal(p!.attributes['k8s.namespace.name'], 'default');
    assert.equal(p!.attributes['k8s.node.name'], 'node-1');
    assert.equal(p!.attributes['k8s.container.name'], 'app');
    assert.equal(p!.attributes['kite.step.name'], 'ImagePull');
    assert.equal(p!.attributes['kite.step.component'], 'kubelet/node-1');
    assert.equal(p!.attributes['kite.step.container_type'], 'regular');
    assert.equal(p!.attributes['kite.step.detail'], 'pulled busybox');
    assert.equal(p!.attributes['kite.step.attributes.image'], 'busybox:1.36');
    assert.equal(p!.attributes['kite.step.attributes.size'], 1100000);
    const [b] = byName(spans, 'Bound');
    assert.deepEqual(b!.service, { 'service.name': 'default-scheduler' });
    assert.equal(b!.attributes['k8s.node.name'], 'node-1', 'the node the pod was bound to');
    const [a] = byName(spans, 'Admission').filter((s) => s.attributes['kite.step.attributes.phase'] === 'mutating');
    assert.equal(a!.attributes['kite.step.attributes.mutated'], 'ServiceAccount: spec.volumes');
    assert.equal(a!.attributes['k8s.node.name'], undefined);
    const [root] = byName(spans, 'Pod');
    assert.deepEqual(root!.service, { 'service.name': 'kube-apiserver' });
    assert.equal(root!.attributes['k8s.node.name'], 'node-1');
    assert.equal(root!.attributes['k8s.replicaset.name'], 'web-5d8f');
  });

  it('holds a series back while the pod lives, then exports it once with its final count', () => {
    const live = [received, attempts, bound, restarts];
    const before = planSpans(timeline(live), live);
    assert.deepEqual(before.map((s) => s.name), ['RequestReceived', 'Bound'], 'no series and no root while the pod lives');
    const grown: TimelineStep = { ...restarts, count: 5, lastTime: '2026-01-01T10:00:50.000000Z' };
    const final = [received, attempts, bound, grown, deleted];
    const atEnd = planSpans(timeline(final, { deletedAt: deleted.start }), [deleted]);
    assert.deepEqual(atEnd.map((s) => s.name).sort(), ['ContainerRestarted', 'Deleted', 'Pod', 'SchedulingAttempt']);
    const [r] = byName(atEnd, 'ContainerRestarted');
    assert.equal(r!.attributes['kite.step.count'], 5);
    assert.deepEqual(r!.start, hrTimeOf(restarts.start));
    assert.deepEqual(r!.end, hrTimeOf('2026-01-01T10:00:50.000000Z'), 'a series spans start..lastTime');
    assert.equal(r!.spanId, stepSpanId(uid, restarts), 'one id for the series whatever its count');
    const [s] = byName(atEnd, 'SchedulingAttempt');
    assert.equal(s!.attributes['kite.scheduling.result'], 'Unschedulable');
    assert.equal(s!.attributes['kite.scheduling.message'], '0/2 nodes are available: 2 Insufficient cpu.');
    assert.equal(s!.attributes['kite.step.count'], 3);
  });

  it('exports a series recorded after Deleted at once', () => {
    const late: TimelineStep = { ...restarts, count: 3 };
    const spans = planSpans(timeline([received, deleted, late], { deletedAt: deleted.start }), [late]);
    assert.deepEqual(spans.map((s) => s.name), ['ContainerRestarted']);
  });

  it('spans the root from the first step to Deleted and links it to the client span of the create request', () => {
    const spans = planSpans(timeline(all, { deletedAt: deleted.start }), [deleted]);
    const [root] = byName(spans, 'Pod');
    assert.deepEqual(root!.start, hrTimeOf(received.start));
    assert.deepEqual(root!.end, hrTimeOf(deleted.start));
    assert.equal(root!.links.length, 1);
    assert.equal(root!.links[0]!.context.traceId, clientTrace);
    assert.equal(root!.links[0]!.context.spanId, clientSpan);
    const [req] = byName(planSpans(timeline([received]), [received]), 'RequestReceived');
    assert.equal(req!.links[0]!.context.spanId, clientSpan, 'the request step links the client span before the pod is gone');
    assert.equal(byName(planSpans(timeline([bound]), [bound]), 'Bound')[0]!.links.length, 0);
  });

  it('marks failures as errors', () => {
    const spans = planSpans(timeline(all), all);
    assert.deepEqual(byName(spans, 'ContainerExited')[0]!.status, { code: SpanStatusCode.ERROR, message: 'exit code 1' });
    assert.deepEqual(byName(spans, 'SchedulingAttempt')[0]!.status, { code: SpanStatusCode.ERROR, message: '0/2 nodes are available: 2 Insufficient cpu.' });
    assert.equal(byName(spans, 'ImagePull')[0]!.status, undefined);
    const ok: TimelineStep = { ...exited, attributes: { exitCode: 0, reason: 'Completed' } };
    assert.equal(planSpans(timeline([ok]), [ok])[0]!.status, undefined);
  });

  it('skips a step whose time is not a MicroTime instead of failing the batch', () => {
    const bad: TimelineStep = { ...bound, start: 'soon' };
    assert.deepEqual(planSpans(timeline([bad, pull]), [bad, pull]).map((s) => s.name), ['ImagePull']);
  });

  it('carries hostile attribute keys as data, under its own prefix', () => {
    const step = JSON.parse('{"step":"Bound","component":"default-scheduler","start":"2026-01-01T10:00:03.000000Z","attributes":{"__proto__":"x","constructor":1,"traceparent":7}}') as TimelineStep;
    const [span] = planSpans(timeline([step]), [step]);
    assert.equal(Object.getPrototypeOf(span!.attributes), Object.prototype);
    assert.equal(span!.attributes['kite.step.attributes.__proto__'], 'x');
    assert.equal(span!.attributes['kite.step.attributes.constructor'], 1);
    const received = JSON.parse('{"step":"RequestReceived","component":"kube-apiserver","start":"2026-01-01T10:00:00.000000Z","attributes":{"traceparent":7}}') as TimelineStep;
    assert.deepEqual(planSpans(timeline([received]), [received])[0]!.links, [], 'a traceparent that is not a string links nothing');
  });

  it('reads only valid traceparent headers', () => {
    assert.deepEqual(parseTraceparent(`00-${clientTrace}-${clientSpan}-01`), { traceId: clientTrace, spanId: clientSpan, traceFlags: 1, isRemote: true });
    assert.equal(parseTraceparent(`00-${clientTrace}-${clientSpan}-00`)?.traceFlags, 0);
    assert.ok(parseTraceparent(`01-${clientTrace}-${clientSpan}-01-later`), 'a later version may append fields');
    for (const bad of [
      '',
      'garbage',
      `00-${clientTrace}-${clientSpan}-01-extra`,
      `ff-${clientTrace}-${clientSpan}-01`,
      `00-${'0'.repeat(32)}-${clientSpan}-01`,
      `00-${clientTrace}-${'0'.repeat(16)}-01`,
      `00-${clientTrace.toUpperCase()}-${clientSpan}-01`,
    ]) {
      assert.equal(parseTraceparent(bad), undefined, bad);
    }
  });

  it('maps components to services', () => {
    assert.deepEqual(serviceOf('endpointslice-controller'), { 'service.name': 'endpointslice-controller' });
    assert.deepEqual(serviceOf('kubelet/sim-3'), { 'service.name': 'kubelet', 'service.instance.id': 'sim-3', 'k8s.node.name': 'sim-3' });
  });
});
