import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KUBELET_VERSION, defaultNodeLabels, machineResources, nodeConditions, nodeImages, nodeInfo, nodeStatusHasChanged, runtimeErrors } from './setters.js';
import { memTotalBytes, prettyName } from './machine.js';
import { fakeMachine } from './testing.js';

test('machine facts parse as the kubelet reads them', () => {
  assert.equal(memTotalBytes('MemTotal:        8131928 kB\nMemFree: 1 kB\n'), 8131928 * 1024);
  assert.equal(prettyName('NAME="Debian"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'), 'Debian GNU/Linux 12 (bookworm)');
  assert.equal(prettyName(''), 'Linux');
});

test('labels, capacity and allocatable', () => {
  assert.deepEqual(defaultNodeLabels('n1', fakeMachine), {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': 'n1',
    'kubernetes.io/os': 'linux',
  });
  const r = machineResources({ ...fakeMachine, memoryCapacity: 8131928 * 1024 }, { maxPods: 110 });
  assert.deepEqual(r.capacity, { cpu: '4', 'ephemeral-storage': '100Gi', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '8131928Ki', pods: '110' });
  // Minus the hard eviction thresholds: memory.available 100Mi, nodefs.available 10%.
  assert.equal(r.allocatable!.memory, `${8131928 - 102400}Ki`);
  assert.equal(r.allocatable!['ephemeral-storage'], '90Gi');
  assert.equal(r.allocatable!.cpu, '4');
});

test('nodeInfo names the runtime as containerd://<version> and the kubelet version', () => {
  const info = nodeInfo(fakeMachine, { version: '0.1.0', runtime_name: 'containerd', runtime_version: 'v1.6.20', runtime_api_version: 'v1' });
  assert.equal(info.containerRuntimeVersion, 'containerd://1.6.20');
  assert.match(KUBELET_VERSION, /^v1\.33\.0\+kite/);
  assert.equal(info.kubeletVersion, KUBELET_VERSION);
  assert.equal(info.bootID, 'b-id');
});

test('images: largest first, at most 50, digests then tags, at most 5 names', () => {
  const images = Array.from({ length: 60 }, (_, i) => ({ id: `i${i}`, repo_tags: [`t${i}:1`], repo_digests: [`t${i}@sha256:x`], size: i }));
  const out = nodeImages(images);
  assert.equal(out.length, 50);
  assert.deepEqual(out[0], { names: ['t59@sha256:x', 't59:1'], sizeBytes: 59 });
  const many = nodeImages([{ id: 'x', repo_tags: ['a', 'b', 'c', 'd'], repo_digests: ['e', 'f'], size: 1 }]);
  assert.deepEqual(many[0]!.names, ['e', 'f', 'a', 'b', 'c']);
});

test('runtime errors read as upstream', () => {
  assert.deepEqual(runtimeErrors({ conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: true, reason: '', message: '' }] }), []);
  assert.deepEqual(runtimeErrors({ conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni not initialized' }] }), [
    'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:cni not initialized',
  ]);
});

test('conditions: heartbeat always now, transition kept while the status stays, events on change', () => {
  const t0 = Date.UTC(2026, 0, 1);
  const first = nodeConditions(undefined, [], t0);
  assert.deepEqual(first.events, ['NodeHasSufficientMemory', 'NodeHasNoDiskPressure', 'NodeHasSufficientPID', 'NodeReady']);
  const ready = first.conditions.find((c) => c.type === 'Ready')!;
  assert.deepEqual(ready, { type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'KubeletReady', message: 'kubelet is posting ready status' });
  const mem = first.conditions.find((c) => c.type === 'MemoryPressure')!;
  assert.equal(mem.message, 'kubelet has sufficient memory available');

  const same = nodeConditions(first.conditions, [], t0 + 10_000);
  assert.deepEqual(same.events, []);
  assert.equal(same.conditions.find((c) => c.type === 'Ready')!.lastHeartbeatTime, '2026-01-01T00:00:10Z');
  assert.equal(same.conditions.find((c) => c.type === 'Ready')!.lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.ok(!nodeStatusHasChanged({ conditions: first.conditions }, { conditions: same.conditions }));

  const down = nodeConditions(same.conditions, ['container runtime network not ready: NetworkReady=false reason:R message:M'], t0 + 20_000);
  assert.deepEqual(down.events, ['NodeNotReady']);
  const notReady = down.conditions.find((c) => c.type === 'Ready')!;
  assert.equal(notReady.status, 'False');
  assert.equal(notReady.reason, 'KubeletNotReady');
  assert.equal(notReady.lastTransitionTime, '2026-01-01T00:00:20Z');
  assert.ok(nodeStatusHasChanged({ conditions: same.conditions }, { conditions: down.conditions }));
  // Conditions someone else owns stay.
  const others = nodeConditions([{ type: 'NetworkUnavailable', status: 'False' }], [], t0);
  assert.equal(others.conditions[0]!.type, 'NetworkUnavailable');
});
