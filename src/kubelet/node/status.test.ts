import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { defaultKubeletConfig } from '../config.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { NodeStatusManager } from './status.js';
import { FakeNodeClient, FakeNodeRuntime, fakeMachine } from './testing.js';

function setup(client = new FakeNodeClient()) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const runtime = new FakeNodeRuntime();
  const recorder = new FakeRecorder();
  const cfg = defaultKubeletConfig({ nodeName: 'n1', rootDir: '/nonexistent', nodeIP: '10.0.0.5' });
  const errors: unknown[] = [];
  const mgr = new NodeStatusManager({ client, runtime, cfg, clock, recorder, machine: async () => fakeMachine, kubeletPort: 10250, onError: (e) => errors.push(e) });
  return { clock, runtime, recorder, cfg, mgr, client, errors };
}

test('registers the node with its status and records upstream events', async () => {
  const { mgr, client, clock, recorder, errors } = setup();
  mgr.start();
  const node = await mgr.whenRegistered();
  await clock.advance(0);
  assert.equal(node.metadata?.name, 'n1');
  assert.equal(client.node!.metadata!.labels!['kubernetes.io/hostname'], 'n1');
  const status = client.node!.status!;
  assert.deepEqual(status.addresses, [{ type: 'InternalIP', address: '10.0.0.5' }, { type: 'Hostname', address: 'n1' }]);
  assert.deepEqual(status.daemonEndpoints, { kubeletEndpoint: { Port: 10250 } });
  assert.equal(status.nodeInfo!.containerRuntimeVersion, 'containerd://1.6.20');
  assert.equal(status.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
  assert.deepEqual(
    recorder.events.map((e) => [e.reason, e.message]),
    [
      ['Starting', 'Starting kubelet.'],
      ['NodeHasSufficientMemory', 'Node n1 status is now: NodeHasSufficientMemory'],
      ['NodeHasNoDiskPressure', 'Node n1 status is now: NodeHasNoDiskPressure'],
      ['NodeHasSufficientPID', 'Node n1 status is now: NodeHasSufficientPID'],
      ['NodeReady', 'Node n1 status is now: NodeReady'],
      ['NodeAllocatableEnforced', 'Updated Node Allocatable limit across pods'],
    ],
  );
  assert.deepEqual(recorder.events[0]!.object, { kind: 'Node', name: 'n1', uid: 'n1' });
  assert.deepEqual(errors, []);
  await mgr.stop();
});

test('status is written on change at once, otherwise every report period; heartbeats move only when written', async () => {
  const { mgr, client, clock, runtime, recorder, cfg } = setup();
  mgr.start();
  await mgr.whenRegistered();
  await clock.advance(0);
  const heartbeat = () => client.node!.status!.conditions!.find((c) => c.type === 'Ready')!.lastHeartbeatTime;
  const registeredAt = heartbeat();
  // Nothing changes for a minute: checked every 10 s, nothing written.
  await clock.advance(60_000);
  assert.equal(client.statusPatches.length, 0);
  assert.equal(heartbeat(), registeredAt);
  // The network goes down: written at the next check.
  runtime.networkReady = false;
  await clock.advance(cfg.nodeStatusUpdateFrequencyMs);
  assert.equal(client.statusPatches.length, 1);
  const ready = client.node!.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.equal(ready.message, 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized');
  assert.equal(recorder.events.at(-1)!.reason, 'NodeNotReady');
  const transition = ready.lastTransitionTime;
  // Unchanged again: the next write comes when the report period (5 min) has passed.
  await clock.advance(cfg.nodeStatusReportFrequencyMs - cfg.nodeStatusUpdateFrequencyMs);
  assert.equal(client.statusPatches.length, 1);
  await clock.advance(cfg.nodeStatusUpdateFrequencyMs);
  assert.equal(client.statusPatches.length, 2);
  const later = client.node!.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(later.lastTransitionTime, transition);
  assert.notEqual(later.lastHeartbeatTime, ready.lastHeartbeatTime);
  await mgr.stop();
});

test('an existing node is taken over: kubelet labels restored, status reported at once', async () => {
  const client = new FakeNodeClient();
  client.node = { metadata: { name: 'n1', uid: 'old', labels: { 'kubernetes.io/hostname': 'wrong', team: 'a' } }, status: {} };
  const { mgr, clock } = setup(client);
  mgr.start();
  const node = await mgr.whenRegistered();
  assert.equal(node.metadata?.uid, 'old');
  assert.equal(client.node.metadata!.labels!['kubernetes.io/hostname'], 'n1');
  assert.equal(client.node.metadata!.labels!.team, 'a');
  await clock.advance(0);
  assert.equal(client.statusPatches.length, 1);
  await mgr.stop();
});

test('registration retries with backoff until the API answers', async () => {
  const client = new FakeNodeClient();
  let failures = 3;
  const create = client.create.bind(client);
  client.create = async (n) => {
    if (failures-- > 0) throw new Error('connection refused');
    return create(n);
  };
  const { mgr, clock, errors } = setup(client);
  mgr.start();
  await clock.advance(100 + 200 + 400);
  assert.equal(client.node?.metadata?.name, 'n1');
  assert.equal(errors.length, 3);
  await mgr.stop();
});

test('conditions someone else wrote (the node lifecycle controller\'s Unknown) are corrected at the next check', async () => {
  const { mgr, client, clock, cfg, recorder } = setup();
  mgr.start();
  await mgr.whenRegistered();
  await clock.advance(0);
  const writes = client.statusPatches.length;
  const conditions = client.node!.status!.conditions!.map((c) => ({ ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }));
  client.node = { ...client.node!, status: { ...client.node!.status, conditions } };
  await clock.advance(cfg.nodeStatusUpdateFrequencyMs);
  assert.equal(client.statusPatches.length, writes + 1);
  const ready = client.node.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'True');
  assert.equal(ready.reason, 'KubeletReady');
  assert.equal(recorder.events.at(-1)!.reason, 'NodeReady');
  await mgr.stop();
});
