import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { Lease, Namespace, Node, PriorityClass } from '../../api/types.js';
import { leasePrinter, namespacePrinter, nodePrinter, priorityClassPrinter } from './cluster.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const stored = <T>(o: T) => o as T & StoredObject;

const nodeInfo = {
  kubeletVersion: 'v1.33.0-kite',
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  kernelVersion: '6.1.0-18-amd64',
  containerRuntimeVersion: 'containerd://1.7.24',
  architecture: 'amd64',
  bootID: '',
  kubeProxyVersion: '',
  machineID: '',
  operatingSystem: 'linux',
  systemUUID: '',
};

void test('node rows', () => {
  const cases: { name: string; node: Node; cells: unknown[] }[] = [
    {
      name: 'ready control-plane node with both addresses',
      node: {
        metadata: {
          name: 'cp-1',
          creationTimestamp: ago(5 * 86400),
          labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'master', 'node-role.kubernetes.io/': 'x' },
        },
        status: {
          conditions: [
            { type: 'MemoryPressure', status: 'False' },
            { type: 'Ready', status: 'True' },
          ],
          addresses: [
            { type: 'Hostname', address: 'cp-1' },
            { type: 'InternalIP', address: '10.0.0.1' },
            { type: 'ExternalIP', address: '203.0.113.7' },
          ],
          nodeInfo,
        },
      },
      cells: ['cp-1', 'Ready', 'control-plane,master', '5d', 'v1.33.0-kite', '10.0.0.1', '203.0.113.7', nodeInfo.osImage, nodeInfo.kernelVersion, nodeInfo.containerRuntimeVersion],
    },
    {
      // Taints do not show in STATUS; only spec.unschedulable does.
      name: 'cordoned worker with taints',
      node: {
        metadata: { name: 'worker-1', creationTimestamp: ago(3600), labels: { 'node-role.kubernetes.io/worker': '' } },
        spec: {
          unschedulable: true,
          taints: [
            { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
            { key: 'dedicated', value: 'gpu', effect: 'NoExecute' },
          ],
        },
        status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '10.0.0.2' }], nodeInfo },
      },
      cells: ['worker-1', 'Ready,SchedulingDisabled', 'worker', '60m', 'v1.33.0-kite', '10.0.0.2', '<none>', nodeInfo.osImage, nodeInfo.kernelVersion, nodeInfo.containerRuntimeVersion],
    },
    {
      name: 'kubelet stopped posting status',
      node: {
        metadata: { name: 'worker-2', creationTimestamp: ago(600) },
        spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] },
        status: { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown' }], nodeInfo },
      },
      cells: ['worker-2', 'NotReady', '<none>', '10m', 'v1.33.0-kite', '<none>', '<none>', nodeInfo.osImage, nodeInfo.kernelVersion, nodeInfo.containerRuntimeVersion],
    },
    {
      name: 'registered but never reported, cordoned',
      node: { metadata: { name: 'new' }, spec: { unschedulable: true } },
      cells: ['new', 'Unknown,SchedulingDisabled', '<none>', '<unknown>', '', '<none>', '<none>', '<unknown>', '<unknown>', '<unknown>'],
    },
  ];
  for (const c of cases) assert.deepEqual(nodePrinter.print(stored(c.node), NOW).cells, c.cells, c.name);
});

void test('namespace, lease and priority class rows', () => {
  const ns: Namespace = { metadata: { name: 'dev', creationTimestamp: ago(45) }, status: { phase: 'Terminating' } };
  assert.deepEqual(namespacePrinter.print(stored(ns), NOW).cells, ['dev', 'Terminating', '45s']);

  const held: Lease = { metadata: { name: 'kube-scheduler', namespace: 'kube-system', creationTimestamp: ago(120) }, spec: { holderIdentity: 'cp-1_4f2c' } };
  const free: Lease = { metadata: { name: 'node-1', namespace: 'kube-node-lease', creationTimestamp: ago(150) }, spec: {} };
  assert.deepEqual(leasePrinter.print(stored(held), NOW).cells, ['kube-scheduler', 'cp-1_4f2c', '2m']);
  assert.deepEqual(leasePrinter.print(stored(free), NOW).cells, ['node-1', '', '2m30s']);

  const pc: PriorityClass = { metadata: { name: 'system-node-critical', creationTimestamp: ago(86400 * 400) }, value: 2000001000, preemptionPolicy: 'PreemptLowerPriority' };
  const dflt: PriorityClass = { metadata: { name: 'low', creationTimestamp: ago(1) }, value: -5, globalDefault: true };
  assert.deepEqual(priorityClassPrinter.print(stored(pc), NOW).cells, ['system-node-critical', 2000001000, false, '400d', 'PreemptLowerPriority']);
  assert.deepEqual(priorityClassPrinter.print(stored(dflt), NOW).cells, ['low', -5, true, '1s', '']);
  assert.deepEqual(
    priorityClassPrinter.columns.map((c) => [c.name, c.type, c.priority]),
    [
      ['Name', 'string', 0],
      ['Value', 'integer', 0],
      ['Global-Default', 'boolean', 0],
      ['Age', 'string', 0],
      ['PreemptionPolicy', 'string', 0],
    ],
  );
});
