import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KUBELET_VERSION, defaultNodeLabels, machineResources, nodeConditions, nodeImages, nodeInfo, nodeStatusHasChanged, runtimeErrors } from './setters.js';
import { memTotalBytes, prettyName } from './machine.js';
import { fakeMachine } from './testing.js';
import { DEFAULT_EVICTION_HARD } from '../eviction/thresholds.js';

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
  const r = machineResources({ ...fakeMachine, memoryCapacity: 8131928 * 1024 }, { maxPods: 110, evictionHard: DEFAULT_EVICTION_HARD });
  assert.deepEqual(r.capacity, { cpu: '4', 'ephemeral-storage': '100Gi', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '8131928Ki', pods: '110' });
  // Minus the hard eviction thresholds: memory.available 100Mi, nodefs.available 10%.
  assert.equal(r.allocatable!.memory, `${8131928 - 102400}Ki`);
  // 10% is a float32 as upstream's: 100Gi × 0.10000000149 leaves 96636764000 bytes, not 90Gi.
  assert.equal(r.allocatable!['ephemeral-storage'], '96636764000');
  assert.equal(r.allocatable!.cpu, '4');
  // The configured thresholds replace the defaults: a percentage of memory, no nodefs reservation at all.
  const custom = machineResources({ ...fakeMachine, memoryCapacity: 8 * 1024 ** 3 }, { maxPods: 110, evictionHard: { 'memory.available': '25%', 'imagefs.available': '1Gi' } });
  assert.equal(custom.allocatable!.memory, '6Gi');
  assert.equal(custom.allocatable!['ephemeral-storage'], '100Gi');
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

test('pressure conditions from the eviction manager, with their reasons and events', () => {
  const t0 = Date.UTC(2026, 0, 1);
  const calm = nodeConditions(undefined, [], t0);
  const cases = [
    { pressure: 'MemoryPressure', reason: 'KubeletHasInsufficientMemory', message: 'kubelet has insufficient memory available', event: 'NodeHasInsufficientMemory', back: 'NodeHasSufficientMemory' },
    { pressure: 'DiskPressure', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure', event: 'NodeHasDiskPressure', back: 'NodeHasNoDiskPressure' },
    { pressure: 'PIDPressure', reason: 'KubeletHasInsufficientPID', message: 'kubelet has insufficient PID available', event: 'NodeHasInsufficientPID', back: 'NodeHasSufficientPID' },
  ] as const;
  for (const c of cases) {
    const under = nodeConditions(calm.conditions, [], t0 + 10_000, new Set([c.pressure]));
    assert.deepEqual(under.events, [c.event]);
    const cond = under.conditions.find((x) => x.type === c.pressure)!;
    assert.deepEqual([cond.status, cond.reason, cond.message, cond.lastTransitionTime], ['True', c.reason, c.message, '2026-01-01T00:00:10Z']);
    assert.deepEqual(nodeConditions(under.conditions, [], t0 + 20_000).events, [c.back]);
  }
});
