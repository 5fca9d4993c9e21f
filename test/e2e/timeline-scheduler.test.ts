// The scheduler's, the EndpointSlice controller's and kite sim's pod timeline steps, on a kite
// server with a kite sim of three nodes, read back with the real kubectl: an unschedulable pod's
// SchedulingAttempt says exactly what its FailedScheduling event says; a gated pod shows the gate
// and, once it is removed, ungated and bound; a pod behind a Service shows its endpoint added.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodTimeline, TimelineStep } from '../../src/api/timeline/types.js';
import { eventually, kubectlOk, removeDir, startServer, startSim, tempDir, type KiteServer, type KiteSim } from './harness.js';

const ns = 'tls-timeline';

describe('pod timeline: scheduler, EndpointSlice controller and kite sim steps', () => {
  let server: KiteServer;
  let sim: KiteSim | undefined;
  const k = (args: string[], input?: string) => kubectlOk(server, args, input);

  before(async () => {
    server = await startServer({ dataDir: tempDir('tls-data') });
    sim = await startSim(server, 3);
    k(['create', 'namespace', ns]);
  });
  after(async () => {
    await sim?.stop();
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });

  const uidOf = (name: string) => k(['get', 'pod', name, '-n', ns, '-o', 'jsonpath={.metadata.uid}']).trim();
  const timeline = (uid: string): PodTimeline | undefined => {
    try {
      return JSON.parse(k(['get', '--raw', `/apis/timeline.kite.dev/v1alpha1/namespaces/${ns}/podtimelines/${uid}`])) as PodTimeline;
    } catch {
      return undefined;
    }
  };
  const stepsOf = (uid: string, step: TimelineStep['step']) => timeline(uid)?.steps.filter((s) => s.step === step) ?? [];
  const pod = (name: string, spec: string, labels = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
    app: ${name}
${labels}spec:
  terminationGracePeriodSeconds: 1
${spec}  containers:
  - name: main
    image: busybox:1.36
    command: ['sleep', '3600']
`;

  it("an unschedulable pod's SchedulingAttempt message is its FailedScheduling event's message", async () => {
    k(['apply', '-f', '-'], pod('too-big', '', '') + '    resources:\n      requests:\n        cpu: "1000"\n');
    const uid = uidOf('too-big');
    const event = await eventually(() => {
      const items = (JSON.parse(k(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=too-big,reason=FailedScheduling', '-o', 'json'])) as { items: { message: string }[] }).items;
      return items[0];
    }, 'the FailedScheduling event');
    const attempt = await eventually(() => stepsOf(uid, 'SchedulingAttempt')[0], 'the SchedulingAttempt step');
    assert.equal(attempt.component, 'default-scheduler');
    assert.equal(attempt.scheduling?.message, event.message);
    assert.match(event.message, /^0\/3 nodes are available: 3 Insufficient cpu\. /);
    assert.deepEqual(attempt.scheduling?.plugins, [{ plugin: 'NodeResourcesFit', rejected: 3, reasons: { 'Insufficient cpu': 3 } }]);
    assert.deepEqual([attempt.scheduling?.result, attempt.scheduling?.nodes, attempt.scheduling?.feasible], ['Unschedulable', 3, 0]);
    assert.equal(stepsOf(uid, 'SchedulingQueued').length, 1);
  });

  it('a gated pod shows SchedulingGated; with the gate removed, SchedulingUngated and Bound, then the simulated kubelet', async () => {
    k(['apply', '-f', '-'], pod('gated', '  schedulingGates:\n  - name: example.com/hold\n'));
    const uid = uidOf('gated');
    const gated = await eventually(() => stepsOf(uid, 'SchedulingGated')[0], 'SchedulingGated');
    assert.equal(gated.attributes?.gates, 'example.com/hold');
    assert.equal(stepsOf(uid, 'Bound').length, 0);
    k(['patch', 'pod', 'gated', '-n', ns, '--type=json', '-p', '[{"op":"remove","path":"/spec/schedulingGates"}]']);
    const bound = await eventually(() => stepsOf(uid, 'Bound')[0], 'Bound');
    const node = k(['get', 'pod', 'gated', '-n', ns, '-o', 'jsonpath={.spec.nodeName}']).trim();
    assert.equal(bound.attributes?.node, node);
    const names = (await eventually(() => (stepsOf(uid, 'Ready').length ? timeline(uid) : undefined), 'Ready from the simulated kubelet')).steps.map((s) => s.step);
    const order: TimelineStep['step'][] = ['SchedulingGated', 'SchedulingUngated', 'SchedulingQueued', 'SchedulingAttempt', 'Bound', 'KubeletAdmitted', 'ContainerStarted', 'Ready'];
    const positions = order.map((s) => names.indexOf(s));
    assert.ok(
      positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1]!)),
      `steps in order: ${names.join(', ')}`,
    );
    assert.equal(stepsOf(uid, 'Ready')[0]?.component, `kubelet/${node}`);
    // The scheduler thread's SLI is served on the API server's /metrics, observed for this binding (one attempt).
    const metrics = k(['get', '--raw', '/metrics']);
    assert.match(metrics, /^scheduler_pod_scheduling_sli_duration_seconds_count\{attempts="1"\} [1-9]/m);
  });

  it('a pod behind a Service shows EndpointAdded (ready) from the EndpointSlice controller', async () => {
    k(['apply', '-f', '-'], pod('behind', ''));
    k(['apply', '-f', '-'], `apiVersion: v1
kind: Service
metadata:
  name: behind
  namespace: ${ns}
spec:
  selector:
    app: behind
  ports:
  - port: 80
`);
    const uid = uidOf('behind');
    const added = await eventually(() => stepsOf(uid, 'EndpointAdded').find((s) => s.attributes?.ready === true), 'EndpointAdded, ready');
    assert.equal(added.component, 'endpointslice-controller');
    assert.equal(added.attributes?.service, 'behind');
    const slices = k(['get', 'endpointslices', '-n', ns, '-l', 'kubernetes.io/service-name=behind', '-o', 'jsonpath={.items[*].metadata.name}']).trim().split(' ');
    assert.ok(slices.includes(String(added.attributes?.slice)), `${String(added.attributes?.slice)} in ${slices.join(' ')}`);
  });
});
