import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from '../../api/types.js';
import { makePod } from '../kuberuntime/testing.js';
import { admitPod, rejectedPodStatus, type AdmitResult } from './predicate.js';

function node(opts: { cpu?: string; memory?: string; pods?: string; labels?: Record<string, string>; taints?: NonNullable<Node['spec']>['taints'] } = {}): Node {
  return {
    metadata: { name: 'node-1', labels: opts.labels ?? { 'kubernetes.io/hostname': 'node-1' } },
    spec: { taints: opts.taints },
    status: { allocatable: { cpu: opts.cpu ?? '1', memory: opts.memory ?? '1Gi', pods: opts.pods ?? '110' } },
  };
}

function pod(uid: string, patch: (p: Pod) => void = () => {}, cpu?: string): Pod {
  const p = makePod({ uid, name: uid, containers: [{ name: 'c', resources: cpu ? { requests: { cpu } } : undefined }] });
  patch(p);
  return p;
}

const cases: { name: string; pod: Pod; node?: Node; admitted?: Pod[]; want: AdmitResult }[] = [
  { name: 'fits', pod: pod('a', undefined, '500m'), admitted: [pod('b', undefined, '500m')], want: { admit: true } },
  { name: 'too much cpu', pod: pod('a', undefined, '2'), want: { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000" } },
  { name: 'cpu used by admitted pods', pod: pod('a', undefined, '600m'), admitted: [pod('b', undefined, '500m')], want: { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 600, used: 500, capacity: 1000" } },
  {
    name: 'too much memory',
    pod: pod('a', (p) => (p.spec!.containers[0]!.resources = { requests: { memory: '2Gi' } })),
    want: { admit: false, reason: 'OutOfmemory', message: "Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824" },
  },
  { name: 'too many pods', pod: pod('a'), node: node({ pods: '1' }), admitted: [pod('b')], want: { admit: false, reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1" } },
  { name: 'the pod itself is not counted twice', pod: pod('a'), node: node({ pods: '1' }), admitted: [pod('a')], want: { admit: true } },
  {
    name: 'node selector mismatch',
    pod: pod('a', (p) => (p.spec!.nodeSelector = { disk: 'ssd' })),
    want: { admit: false, reason: 'NodeAffinity', message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector" },
  },
  {
    name: 'host port taken',
    pod: pod('a', (p) => (p.spec!.containers[0]!.ports = [{ containerPort: 80, hostPort: 8080 }])),
    admitted: [pod('b', (p) => (p.spec!.containers[0]!.ports = [{ containerPort: 80, hostPort: 8080 }]))],
    want: { admit: false, reason: 'NodePorts', message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports" },
  },
  {
    name: 'untolerated NoExecute taint',
    pod: pod('a'),
    node: node({ taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] }),
    want: { admit: false, reason: 'TaintToleration', message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate" },
  },
  { name: 'NoSchedule taints are not the kubelet’s business', pod: pod('a'), node: node({ taints: [{ key: 'k', effect: 'NoSchedule' }] }), want: { admit: true } },
  { name: 'other node name', pod: pod('a', (p) => (p.spec!.nodeName = 'node-2')), want: { admit: false, reason: 'NodeName', message: "Predicate NodeName failed: node(s) didn't match the requested node name" } },
];

for (const c of cases) {
  test(`admitPod: ${c.name}`, () => {
    assert.deepEqual(admitPod(c.pod, c.node ?? node(), c.admitted ?? []), c.want);
  });
}

test('rejectedPodStatus: Failed with the reason and upstream message', () => {
  const s = rejectedPodStatus(pod('a'), { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000" });
  assert.equal(s.phase, 'Failed');
  assert.equal(s.reason, 'OutOfcpu');
  assert.equal(s.message, "Pod was rejected: Node didn't have enough resource: cpu, requested: 2000, used: 0, capacity: 1000");
});
