import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeCondition, Taint } from 'kubernetes-types/core/v1.js';
import type { Lease, Node } from '../../api/types.js';
import { rfc3339 } from '../../api/time.js';
import { assessNodeHealth, computeZoneState, noScheduleTaintDiff, swapTaints, zoneTaintingRate, type NodeHealthData } from './health.js';

const t0 = Date.UTC(2026, 0, 1);
const s = (sec: number) => t0 + sec * 1000;
const timeouts = { nodeMonitorGracePeriodMs: 50_000, nodeStartupGracePeriodMs: 60_000 };

function node(conditions?: NodeCondition[]): Node {
  return { metadata: { name: 'n', creationTimestamp: rfc3339(t0) }, status: { conditions } };
}
const ready = (status: string, heartbeatSec: number, transitionSec = 0): NodeCondition => ({
  type: 'Ready',
  status,
  reason: 'KubeletReady',
  lastHeartbeatTime: rfc3339(s(heartbeatSec)),
  lastTransitionTime: rfc3339(s(transitionSec)),
});
const lease = (renewSec: number): Lease => ({ metadata: { name: 'n', namespace: 'kube-node-lease' }, spec: { renewTime: new Date(s(renewSec)).toISOString() } });

test('assessNodeHealth: when a node is judged silent, from this controller\'s own observation times', () => {
  const seen = (probeSec: number, c?: NodeCondition, leaseSec?: number): NodeHealthData => ({
    ready: c,
    probeTimestamp: s(probeSec),
    readyTransitionTimestamp: s(0),
    leaseRenewTime: leaseSec === undefined ? undefined : new Date(s(leaseSec)).toISOString(),
  });
  const cases: { name: string; node: Node; lease?: Lease; saved?: NodeHealthData; now: number; probe: number; silent: boolean }[] = [
    { name: 'first sight: alive as of now, whatever its heartbeat says', node: node([ready('True', -3600)]), now: s(100), probe: s(100), silent: false },
    { name: 'same heartbeat, within the grace period', node: node([ready('True', 0)]), saved: seen(0, ready('True', 0)), now: s(50), probe: s(0), silent: false },
    { name: 'same heartbeat, past the grace period', node: node([ready('True', 0)]), saved: seen(0, ready('True', 0)), now: s(51), probe: s(0), silent: true },
    { name: 'a new heartbeat counts when seen, not when stamped', node: node([ready('True', 5)]), saved: seen(0, ready('True', 0)), now: s(40), probe: s(40), silent: false },
    { name: 'a renewed Lease is a heartbeat', node: node([ready('True', 0)]), lease: lease(30), saved: seen(0, ready('True', 0), 20), now: s(70), probe: s(70), silent: false },
    { name: 'an unchanged Lease is not', node: node([ready('True', 0)]), lease: lease(20), saved: seen(20, ready('True', 0), 20), now: s(71), probe: s(20), silent: true },
    { name: 'never posted: the startup grace period from creation', node: node(), now: s(60), probe: s(0), silent: false },
    { name: 'never posted, past the startup grace period', node: node(), now: s(61), probe: s(0), silent: true },
  ];
  for (const c of cases) {
    const a = assessNodeHealth(c.node, c.lease, c.saved, c.now, timeouts);
    assert.equal(a.health.probeTimestamp, c.probe, c.name);
    assert.equal(a.conditions !== undefined, c.silent, c.name);
  }
});

test('assessNodeHealth: a silent node\'s kubelet conditions go Unknown with upstream\'s reasons; NetworkUnavailable stays', () => {
  const conditions: NodeCondition[] = [
    { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', lastTransitionTime: rfc3339(s(0)) },
    { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', lastHeartbeatTime: rfc3339(s(0)), lastTransitionTime: rfc3339(s(0)) },
    ready('True', 0),
  ];
  const saved = { ready: ready('True', 0), probeTimestamp: s(0), readyTransitionTimestamp: s(0) };
  const a = assessNodeHealth(node(conditions), undefined, saved, s(60), timeouts);
  assert.deepEqual(
    a.conditions?.map((c) => [c.type, c.status, c.reason, c.message, c.lastHeartbeatTime, c.lastTransitionTime]),
    [
      ['NetworkUnavailable', 'False', 'RouteCreated', undefined, undefined, rfc3339(s(0))],
      ['MemoryPressure', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.', rfc3339(s(0)), rfc3339(s(60))],
      ['Ready', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.', rfc3339(s(0)), rfc3339(s(60))],
      ['DiskPressure', 'Unknown', 'NodeStatusNeverUpdated', 'Kubelet never posted node status.', rfc3339(s(0)), rfc3339(s(60))],
      ['PIDPressure', 'Unknown', 'NodeStatusNeverUpdated', 'Kubelet never posted node status.', rfc3339(s(0)), rfc3339(s(60))],
    ],
  );
  assert.equal(a.observedReady.status, 'True');
  assert.equal(a.currentReady?.status, 'Unknown');
  assert.equal(a.healthAfterWrite?.readyTransitionTimestamp, s(60));
  assert.equal(a.healthAfterWrite?.probeTimestamp, s(0), 'the write is no heartbeat');

  // Already Unknown: nothing to write again, and the transition time stays.
  const unknown = a.conditions!;
  const again = assessNodeHealth(node(unknown), undefined, a.healthAfterWrite, s(65), timeouts);
  assert.equal(again.conditions, undefined);
  assert.equal(again.currentReady?.lastTransitionTime, rfc3339(s(60)));
});

test('noScheduleTaintDiff: the condition taints and unschedulable, others left alone', () => {
  const cond = (type: string, status: string): NodeCondition => ({ type, status });
  const taint = (key: string, effect = 'NoSchedule'): Taint => ({ key, effect });
  const cases: { name: string; node: Node; add: string[]; remove: string[] }[] = [
    { name: 'healthy', node: { status: { conditions: [cond('Ready', 'True'), cond('MemoryPressure', 'False')] } }, add: [], remove: [] },
    { name: 'unreachable', node: { status: { conditions: [cond('Ready', 'Unknown')] } }, add: ['node.kubernetes.io/unreachable'], remove: [] },
    {
      name: 'not ready under memory and disk pressure, cordoned',
      node: { spec: { unschedulable: true }, status: { conditions: [cond('Ready', 'False'), cond('MemoryPressure', 'True'), cond('DiskPressure', 'True'), cond('PIDPressure', 'True'), cond('NetworkUnavailable', 'True')] } },
      add: ['node.kubernetes.io/not-ready', 'node.kubernetes.io/memory-pressure', 'node.kubernetes.io/disk-pressure', 'node.kubernetes.io/pid-pressure', 'node.kubernetes.io/network-unavailable', 'node.kubernetes.io/unschedulable'],
      remove: [],
    },
    {
      name: 'back to Ready: the stale taints go, the user\'s and the NoExecute ones stay',
      node: {
        spec: { taints: [taint('node.kubernetes.io/unreachable'), taint('node.kubernetes.io/unreachable', 'NoExecute'), taint('example.com/gpu'), taint('node.kubernetes.io/unschedulable')] },
        status: { conditions: [cond('Ready', 'True')] },
      },
      add: [],
      remove: ['node.kubernetes.io/unreachable', 'node.kubernetes.io/unschedulable'],
    },
  ];
  for (const c of cases) {
    const d = noScheduleTaintDiff(c.node);
    assert.deepEqual(d.add.map((t) => t.key), c.add, c.name);
    assert.deepEqual(d.remove.map((t) => t.key), c.remove, c.name);
    assert.ok([...d.add, ...d.remove].every((t) => t.effect === 'NoSchedule'), c.name);
  }
});

test('swapTaints: adds with timeAdded, removes by key and effect, undefined when nothing changes', () => {
  const unreachable = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
  const notReady = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' };
  const user = { key: 'example.com/x', value: 'y', effect: 'NoExecute' };
  assert.deepEqual(swapTaints([user, notReady], [unreachable], [notReady], s(1)), [user, { ...unreachable, timeAdded: rfc3339(s(1)) }]);
  assert.equal(swapTaints([user], [], [notReady], s(1)), undefined);
  assert.equal(swapTaints([{ ...unreachable, timeAdded: rfc3339(s(1)) }], [unreachable], [], s(1)), undefined);
  assert.deepEqual(swapTaints([notReady], [], [notReady], s(1)), []);
});

test('computeZoneState and the tainting rate of each state', () => {
  const c = (status: string): NodeCondition => ({ type: 'Ready', status });
  const zone = (ready: number, notReady: number) => [...Array.from({ length: ready }, () => c('True')), ...Array.from({ length: notReady }, () => c('Unknown'))];
  const cases: [string, (NodeCondition | undefined)[], string][] = [
    ['all ready', zone(3, 0), 'Normal'],
    ['two down of two: full', zone(0, 2), 'FullDisruption'],
    ['never posted counts as not ready', [undefined], 'FullDisruption'],
    ['two down of three: fewer than three', zone(1, 2), 'Normal'],
    ['three down of five: 60%', zone(2, 3), 'PartialDisruption'],
    ['three down of six: 50%', zone(3, 3), 'Normal'],
  ];
  for (const [name, ready, state] of cases) assert.equal(computeZoneState(ready, 0.55).state, state, name);
  const rates = { nodeEvictionRate: 0.1, secondaryNodeEvictionRate: 0.01, largeClusterSizeThreshold: 50 };
  assert.equal(zoneTaintingRate('Normal', 10, rates), 0.1);
  assert.equal(zoneTaintingRate('FullDisruption', 10, rates), 0.1);
  assert.equal(zoneTaintingRate('PartialDisruption', 51, rates), 0.01);
  assert.equal(zoneTaintingRate('PartialDisruption', 50, rates), 0);
});
