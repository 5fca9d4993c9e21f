import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { PodTimeline, TimelineStep } from '../../../api/timeline/types.js';
import { newLogger } from '../../../util/log.js';
import { OtlpTimelineSink, otlpEndpoint } from './exporter.js';
import { OtlpReceiver } from './testing.js';

function podTimeline(name: string, uid: string, steps: TimelineStep[]): PodTimeline {
  const deleted = steps.find((s) => s.step === 'Deleted');
  return {
    apiVersion: 'timeline.kite.dev/v1alpha1',
    kind: 'PodTimeline',
    metadata: { name: uid, namespace: 'apps' },
    pod: { namespace: 'apps', name, uid, nodeName: 'node-a' },
    steps,
    ...(deleted && { deletedAt: deleted.start }),
  };
}

const at = (s: number) => `2026-03-01T08:00:${String(s).padStart(2, '0')}.250000Z`;
const nanos = (s: number) => String(BigInt(Date.UTC(2026, 2, 1, 8, 0, s)) * 1_000_000n + 250_000_000n);

function lifeOf(traceparent?: string): TimelineStep[] {
  return [
    { step: 'RequestReceived', component: 'kube-apiserver', start: at(0), attributes: { user: 'admin', ...(traceparent && { traceparent }) } },
    { step: 'Persisted', component: 'kube-apiserver', start: at(1) },
    { step: 'Bound', component: 'default-scheduler', start: at(2), attributes: { node: 'node-a' } },
    { step: 'SandboxCreated', component: 'kubelet/node-a', start: at(3), end: at(4) },
    { step: 'ContainerStarted', component: 'kubelet/node-a', container: 'app', start: at(5) },
    { step: 'ProbeFailed', component: 'kubelet/node-a', container: 'app', start: at(6), count: 2, lastTime: at(8), attributes: { probe: 'readiness', failures: 2, threshold: 3 } },
    { step: 'Ready', component: 'kubelet/node-a', start: at(9) },
  ];
}

describe('OTLP export of pod timelines', () => {
  const receiver = new OtlpReceiver();
  let endpoint = '';
  before(async () => {
    endpoint = await receiver.start();
  });
  after(() => receiver.stop());

  it('sends one trace per pod, its steps as spans, to an OTLP/HTTP receiver', async () => {
    const sink = new OtlpTimelineSink({ endpoint, logger: newLogger('test') });
    const clientTrace = '0af7651916cd43dd8448eb211c80319c';
    const clientSpan = 'b7ad6b7169203331';
    const pods = [
      { name: 'web', uid: '11111111-2222-4333-8444-555555555555', steps: lifeOf(`00-${clientTrace}-${clientSpan}-01`) },
      { name: 'db', uid: 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee', steps: lifeOf() },
    ];
    for (const p of pods) {
      // As the store calls it: steps arrive in batches, the timeline grows.
      sink.stepsRecorded(podTimeline(p.name, p.uid, p.steps.slice(0, 3)), p.steps.slice(0, 3));
      sink.stepsRecorded(podTimeline(p.name, p.uid, p.steps), p.steps.slice(3));
    }
    await sink.flush();
    assert.ok(receiver.contentTypes.every((t) => t.startsWith('application/json')), 'OTLP/JSON');
    for (const p of pods) {
      const traceId = p.uid.replaceAll('-', '');
      const spans = receiver.spans.filter((s) => s.traceId === traceId);
      assert.deepEqual(spans.map((s) => s.name).sort(), ['Bound', 'ContainerStarted', 'Persisted', 'Ready', 'RequestReceived', 'SandboxCreated'], 'the series waits for the end');
      assert.equal(new Set(spans.map((s) => s.parentSpanId)).size, 1, 'one parent: the pod span');
      const sandbox = spans.find((s) => s.name === 'SandboxCreated')!;
      assert.equal(sandbox.service, 'kubelet');
      assert.equal(sandbox.startTimeUnixNano, nanos(3));
      assert.equal(sandbox.endTimeUnixNano, nanos(4));
      assert.equal(sandbox.attrs.get('k8s.pod.name')?.stringValue, p.name);
      assert.equal(sandbox.attrs.get('k8s.pod.uid')?.stringValue, p.uid);
      assert.equal(sandbox.attrs.get('k8s.namespace.name')?.stringValue, 'apps');
      assert.equal(sandbox.attrs.get('k8s.node.name')?.stringValue, 'node-a');
      const started = spans.find((s) => s.name === 'ContainerStarted')!;
      assert.equal(started.attrs.get('k8s.container.name')?.stringValue, 'app');
      assert.equal(started.startTimeUnixNano, started.endTimeUnixNano, 'an instant');
      assert.equal(spans.find((s) => s.name === 'Bound')!.service, 'default-scheduler');
      assert.equal(spans.find((s) => s.name === 'Persisted')!.service, 'kube-apiserver');
    }

    // The pods go: the series and the roots follow.
    for (const p of pods) {
      const deleted: TimelineStep = { step: 'Deleted', component: 'kube-apiserver', start: at(30) };
      sink.stepsRecorded(podTimeline(p.name, p.uid, [...p.steps, deleted]), [deleted]);
    }
    await sink.stop();
    const traces = new Set(receiver.spans.map((s) => s.traceId));
    assert.deepEqual([...traces].sort(), pods.map((p) => p.uid.replaceAll('-', '')).sort(), 'one trace per pod');
    for (const p of pods) {
      const spans = receiver.spans.filter((s) => s.traceId === p.uid.replaceAll('-', ''));
      const roots = spans.filter((s) => s.parentSpanId === undefined || s.parentSpanId === '');
      assert.equal(roots.length, 1);
      const root = roots[0]!;
      assert.equal(root.name, 'Pod');
      assert.equal(root.startTimeUnixNano, nanos(0));
      assert.equal(root.endTimeUnixNano, nanos(30));
      assert.ok(spans.filter((s) => s !== root).every((s) => s.parentSpanId === root.spanId));
      const probe = spans.filter((s) => s.name === 'ProbeFailed');
      assert.equal(probe.length, 1, 'a series is one span');
      assert.equal(probe[0]!.attrs.get('kite.step.count')?.intValue?.toString(), '2');
      assert.equal(probe[0]!.endTimeUnixNano, nanos(8));
      assert.equal(probe[0]!.status?.code, 2, 'ERROR');
      const request = spans.find((s) => s.name === 'RequestReceived')!;
      if (p.name === 'web') {
        assert.deepEqual(root.links?.map((l) => [l.traceId, l.spanId]), [[clientTrace, clientSpan]]);
        assert.deepEqual(request.links?.map((l) => [l.traceId, l.spanId]), [[clientTrace, clientSpan]]);
      } else {
        assert.equal(root.links?.length ?? 0, 0);
      }
    }
  });

  it('exports a step sent twice once', async () => {
    receiver.spans.length = 0;
    const sink = new OtlpTimelineSink({ endpoint, logger: newLogger('test') });
    const step: TimelineStep = { step: 'PodIPAssigned', component: 'kubelet/node-a', start: at(10), attributes: { ip: '10.217.203.7' } };
    const tl = podTimeline('web', '12345678-1234-4234-8234-123456789abc', [step]);
    sink.stepsRecorded(tl, [step]);
    sink.stepsRecorded(tl, [{ ...step }]);
    await sink.stop();
    assert.equal(receiver.spans.filter((s) => s.name === 'PodIPAssigned').length, 1);
  });

  it('tells the log when exports start failing and when they work again', async () => {
    receiver.spans.length = 0;
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const sink = new OtlpTimelineSink({ endpoint, logger });
    const tl = (step: TimelineStep) => podTimeline('web', '22345678-1234-4234-8234-123456789abc', [step]);
    const first: TimelineStep = { step: 'Persisted', component: 'kube-apiserver', start: at(1) };
    receiver.failWith = 400;
    try {
      sink.stepsRecorded(tl(first), [first]);
      await sink.flush();
    } finally {
      receiver.failWith = undefined;
    }
    assert.deepEqual(lines.map((l) => [l.level, l.msg]), [[40, 'exporting pod timeline spans over OTLP failed; this batch is lost, later ones are still sent']]);
    const second: TimelineStep = { step: 'Bound', component: 'default-scheduler', start: at(2) };
    sink.stepsRecorded(tl(second), [second]);
    await sink.stop();
    assert.equal(lines.at(-1)!.msg, 'exporting pod timeline spans over OTLP works again');
    assert.deepEqual(receiver.spans.map((s) => s.name), ['Bound']);
  });

  it('stops without failing when nothing listens at the endpoint', async () => {
    const closed = new OtlpReceiver();
    const nowhere = await closed.start();
    await closed.stop();
    const lines: { msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
    const sink = new OtlpTimelineSink({ endpoint: nowhere, logger });
    const step: TimelineStep = { step: 'Persisted', component: 'kube-apiserver', start: at(1) };
    sink.stepsRecorded(podTimeline('web', '32345678-1234-4234-8234-123456789abc', [step]), [step]);
    await sink.stop();
    assert.deepEqual(lines.map((l) => l.msg), ['exporting pod timeline spans over OTLP failed; this batch is lost, later ones are still sent']);
  });

  it('takes only http and https endpoints, with one line for anything else', () => {
    assert.equal(otlpEndpoint('http://127.0.0.1:4318/v1/traces'), 'http://127.0.0.1:4318/v1/traces');
    assert.equal(otlpEndpoint('https://collector.example:4318/v1/traces'), 'https://collector.example:4318/v1/traces');
    for (const bad of ['grpc://127.0.0.1:4317', 'file:///tmp/x', '127.0.0.1:4318', '']) {
      assert.throws(() => otlpEndpoint(bad), (err: Error) => err.message === `--otlp-endpoint must be an http or https URL, got "${bad}"` && !err.message.includes('\n'));
    }
    assert.throws(() => new OtlpTimelineSink({ endpoint: 'ftp://x', logger: newLogger('test') }), /--otlp-endpoint/);
  });
});
