// kite server --otlp-endpoint: the pod timelines leave as OTLP/HTTP traces to a receiver on loopback,
// one trace per pod, the steps as spans, the create request's traceparent linked from the pod's span.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { PodTimelineStepBatch, TimelineStep } from '../../src/api/timeline/types.js';
import { stepBatchPath } from '../../src/client/timeline/recorder.js';
import { OtlpReceiver } from '../../src/apiserver/timeline/otel/testing.js';
import { eventually, kiteBin, kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';
import { raw } from './raw.js';

const clientTrace = '5b8aa5a2d2c872e8321cf37308d69df2';
const clientSpan = '051581bf3cb55c13';
const pods = [
  { namespace: 'default', name: 'tlo-web', uid: '0a1b2c3d-0000-4000-8000-00000000a001', traceparent: `00-${clientTrace}-${clientSpan}-01` },
  { namespace: 'default', name: 'tlo-db', uid: '0a1b2c3d-0000-4000-8000-00000000a002' },
];
const traceIdOf = (uid: string) => uid.replaceAll('-', '');

function steps(p: (typeof pods)[number], t0: number): TimelineStep[] {
  const at = (ms: number) => new Date(t0 + ms).toISOString().replace('Z', '000Z');
  return [
    { step: 'RequestReceived', component: 'kube-apiserver', start: at(0), attributes: { user: 'admin', ...(p.traceparent && { traceparent: p.traceparent }) } },
    { step: 'Persisted', component: 'kube-apiserver', start: at(3) },
    { step: 'Bound', component: 'default-scheduler', start: at(20), attributes: { node: 'tlo-node' } },
    { step: 'SandboxCreated', component: 'kubelet/tlo-node', start: at(30), end: at(130) },
    { step: 'PodIPAssigned', component: 'kubelet/tlo-node', start: at(131), attributes: { ip: '10.217.203.9' } },
    { step: 'ContainerStarted', component: 'kubelet/tlo-node', container: 'app', containerType: 'regular', start: at(200) },
    { step: 'ContainerRestarted', component: 'kubelet/tlo-node', container: 'app', start: at(300), count: 3, lastTime: at(900) },
  ];
}

async function postSteps(server: KiteServer, records: PodTimelineStepBatch['records']): Promise<void> {
  const batch: PodTimelineStepBatch = { apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimelineStepBatch', records };
  const r = await raw(server.kubeconfig, { method: 'POST', path: stepBatchPath, body: JSON.stringify(batch) });
  assert.ok(r.code >= 200 && r.code < 300, `step batch: ${r.code} ${r.body}`);
}

describe('kite server --otlp-endpoint', () => {
  const receiver = new OtlpReceiver();
  const dataDir = tempDir('tlo-otel');
  let server: KiteServer;

  before(async () => {
    const endpoint = await receiver.start();
    // No controllers, so no ServiceAccount admission (it waits for the default ServiceAccount they make).
    server = await startServer({ dataDir, extraArgs: ['--components', 'apiserver', '--disable-admission-plugins', 'ServiceAccount', '--otlp-endpoint', endpoint] });
  });
  after(async () => {
    await server?.stop();
    await receiver.stop();
    removeDir(dataDir);
  });

  it('exports one trace per pod with its steps as spans, the pod span when it is gone', async () => {
    const t0 = Date.now();
    const lives = pods.map((p) => ({ pod: p, steps: steps(p, t0) }));
    await postSteps(server, lives.map(({ pod: { namespace, name, uid }, steps: s }) => ({ pod: { namespace, name, uid }, steps: s })));
    for (const { pod } of lives) {
      await eventually(() => (receiver.spans.filter((s) => s.traceId === traceIdOf(pod.uid)).length >= 6 ? true : undefined), `the spans of ${pod.name}`);
    }
    for (const { pod } of lives) {
      const spans = receiver.spans.filter((s) => s.traceId === traceIdOf(pod.uid));
      assert.deepEqual(spans.map((s) => s.name).sort(), ['Bound', 'ContainerStarted', 'Persisted', 'PodIPAssigned', 'RequestReceived', 'SandboxCreated'], 'the restart series waits for the end');
      const sandbox = spans.find((s) => s.name === 'SandboxCreated')!;
      assert.equal(sandbox.service, 'kubelet');
      assert.equal(sandbox.attrs.get('k8s.pod.name')?.stringValue, pod.name);
      assert.equal(sandbox.attrs.get('k8s.pod.uid')?.stringValue, pod.uid);
      assert.equal(sandbox.attrs.get('k8s.namespace.name')?.stringValue, 'default');
      assert.equal(sandbox.attrs.get('k8s.node.name')?.stringValue, 'tlo-node');
      assert.equal(BigInt(sandbox.endTimeUnixNano) - BigInt(sandbox.startTimeUnixNano), 100_000_000n);
      assert.equal(spans.find((s) => s.name === 'ContainerStarted')!.attrs.get('k8s.container.name')?.stringValue, 'app');
    }

    const tEnd = t0 + 5000;
    const deleted: TimelineStep = { step: 'Deleted', component: 'kube-apiserver', start: new Date(tEnd).toISOString().replace('Z', '000Z') };
    await postSteps(server, pods.map(({ namespace, name, uid }) => ({ pod: { namespace, name, uid }, steps: [deleted] })));
    for (const { pod } of lives) {
      await eventually(() => (receiver.spans.some((s) => s.traceId === traceIdOf(pod.uid) && s.name === 'Pod') ? true : undefined), `the pod span of ${pod.name}`);
    }
    for (const { pod } of lives) {
      const traces = new Set(receiver.spans.filter((s) => s.attrs.get('k8s.pod.uid')?.stringValue === pod.uid).map((s) => s.traceId));
      assert.deepEqual([...traces], [traceIdOf(pod.uid)], 'one trace per pod');
    }
    for (const { pod } of lives) {
      const spans = receiver.spans.filter((s) => s.traceId === traceIdOf(pod.uid));
      const root = spans.find((s) => s.name === 'Pod')!;
      assert.ok(!root.parentSpanId);
      assert.equal(root.service, 'kube-apiserver');
      assert.equal(BigInt(root.endTimeUnixNano) - BigInt(root.startTimeUnixNano), 5_000_000_000n, 'first step .. Deleted');
      assert.equal(spans.length, 9, 'six steps, the restart series, Deleted and the pod');
      assert.ok(spans.filter((s) => s !== root).every((s) => s.parentSpanId === root.spanId));
      const restarts = spans.filter((s) => s.name === 'ContainerRestarted');
      assert.equal(restarts.length, 1, 'a series is one span');
      assert.equal(String(restarts[0]!.attrs.get('kite.step.count')?.intValue), '3');
      const links = root.links?.map((l) => [l.traceId, l.spanId]) ?? [];
      assert.deepEqual(links, pod.traceparent ? [[clientTrace, clientSpan]] : [], 'the create request traceparent is linked');
    }
  });

  it("links a pod created with a traceparent header to the client's span, with the API server's steps as spans", async () => {
    const traceparent = '00-8f3c1d2e4b5a69788796a5b4c3d2e1f0-1a2b3c4d5e6f7081-01';
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'tlo-traced' }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } });
    const created = await raw(server.kubeconfig, { method: 'POST', path: '/api/v1/namespaces/default/pods', body, headers: { traceparent } });
    assert.equal(created.code, 201, created.body);
    const uid = (created.json() as { metadata: { uid: string } }).metadata.uid;
    kubectlOk(server, ['delete', 'pod', 'tlo-traced', '--wait=false']);
    const root = await eventually(() => receiver.spans.find((s) => s.traceId === traceIdOf(uid) && s.name === 'Pod'), 'the pod span of tlo-traced');
    assert.deepEqual(root.links?.map((l) => [l.traceId, l.spanId]), [['8f3c1d2e4b5a69788796a5b4c3d2e1f0', '1a2b3c4d5e6f7081']]);
    assert.equal(root.attrs.get('k8s.pod.name')?.stringValue, 'tlo-traced');
    const names = new Set(receiver.spans.filter((s) => s.traceId === traceIdOf(uid)).map((s) => s.name));
    for (const step of ['RequestReceived', 'Authenticated', 'Authorized', 'Admission', 'Persisted', 'DeleteRequested', 'Deleted']) assert.ok(names.has(step), `${step} in ${[...names].join(', ')}`);
  });
});

describe('kite server --otlp-endpoint with a bad URL', () => {
  it('refuses to start with one clear line', () => {
    const dataDir = tempDir('tlo-bad');
    try {
      const r = spawnSync(process.execPath, [kiteBin, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--otlp-endpoint', 'grpc://127.0.0.1:4317'], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 1);
      assert.match(r.stderr, /--otlp-endpoint must be an http or https URL, got "grpc:\/\/127.0.0.1:4317"/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    } finally {
      removeDir(dataDir);
    }
  });
});
