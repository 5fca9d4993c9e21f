import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { ControllerRevision, DaemonSet, Deployment, Pod, PodTemplate, ReplicaSet, ReplicationController, StatefulSet } from '../../api/types.js';
import {
  controllerRevisionPrinter,
  daemonSetPrinter,
  deploymentPrinter,
  podPrinter,
  podTemplatePrinter,
  replicaSetPrinter,
  replicationControllerPrinter,
  statefulSetPrinter,
} from './workloads.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const stored = <T>(o: T) => o as T & StoredObject;
const meta = (name: string, createdAgo = 300) => ({ name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: ago(createdAgo) });

void test('pod columns: names, types and wide priorities as upstream', () => {
  assert.deepEqual(
    podPrinter.columns.map((c) => [c.name, c.type, c.format, c.priority]),
    [
      ['Name', 'string', 'name', 0],
      ['Ready', 'string', '', 0],
      ['Status', 'string', '', 0],
      ['Restarts', 'string', '', 0],
      ['Age', 'string', '', 0],
      ['IP', 'string', '', 1],
      ['Node', 'string', '', 1],
      ['Nominated Node', 'string', '', 1],
      ['Readiness Gates', 'string', '', 1],
    ],
  );
});

void test('pod rows', () => {
  const cases: { name: string; pod: Pod; cells: unknown[]; done?: string }[] = [
    {
      name: 'waiting on its init container, not yet scheduled',
      pod: {
        metadata: meta('init-wait', 12),
        spec: { initContainers: [{ name: 'wait-db', image: 'busybox' }], containers: [{ name: 'app', image: 'nginx' }] },
        status: {
          phase: 'Pending',
          nominatedNodeName: 'node-2',
          initContainerStatuses: [
            { name: 'wait-db', image: 'busybox', imageID: '', ready: false, restartCount: 0, started: true, state: { running: { startedAt: ago(10) } } },
          ],
          containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
        },
      },
      cells: ['init-wait', '0/1', 'Init:0/1', '0', '12s', '<none>', '<none>', 'node-2', '<none>'],
    },
    {
      name: 'crash-looping with restarts and a last termination',
      pod: {
        metadata: meta('crash', 3 * 3600),
        spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'busybox' }] },
        status: {
          phase: 'Running',
          podIP: '10.1.0.9',
          podIPs: [{ ip: '10.1.0.9' }, { ip: 'fd00::9' }],
          containerStatuses: [
            {
              name: 'app',
              image: 'busybox',
              imageID: '',
              ready: false,
              restartCount: 7,
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' } },
              lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: ago(95), finishedAt: ago(90) } },
            },
          ],
        },
      },
      cells: ['crash', '0/1', 'CrashLoopBackOff', '7 (90s ago)', '3h', '10.1.0.9', 'node-1', '<none>', '<none>'],
    },
    {
      name: 'terminating, with a readiness gate',
      pod: {
        metadata: { ...meta('going', 600), deletionTimestamp: ago(-20), deletionGracePeriodSeconds: 30 },
        spec: { nodeName: 'node-1', readinessGates: [{ conditionType: 'example.com/lb' }], containers: [{ name: 'app', image: 'nginx' }] },
        status: {
          phase: 'Running',
          podIPs: [{ ip: '10.1.0.4' }],
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'example.com/lb', status: 'True' },
          ],
          containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: true, restartCount: 0, started: true, state: { running: {} } }],
        },
      },
      cells: ['going', '1/1', 'Terminating', '0', '10m', '10.1.0.4', 'node-1', '<none>', '1/1'],
    },
    {
      name: 'restartPolicy Never pod that completed',
      pod: {
        metadata: meta('job-once', 2 * 86400 + 3 * 3600),
        spec: { restartPolicy: 'Never', nodeName: 'node-1', containers: [{ name: 'main', image: 'busybox' }] },
        status: {
          phase: 'Succeeded',
          podIPs: [{ ip: '10.1.0.7' }],
          containerStatuses: [
            {
              name: 'main',
              image: 'busybox',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: ago(3600) } },
            },
          ],
        },
      },
      cells: ['job-once', '0/1', 'Completed', '0', '2d3h', '10.1.0.7', 'node-1', '<none>', '<none>'],
      done: 'Succeeded',
    },
    {
      name: 'sidecar counted in READY and RESTARTS',
      pod: {
        metadata: meta('meshed', 3600),
        spec: {
          nodeName: 'node-3',
          initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }],
          containers: [{ name: 'app', image: 'nginx' }],
          readinessGates: [{ conditionType: 'example.com/ready' }],
        },
        status: {
          phase: 'Running',
          podIPs: [{ ip: '10.1.0.12' }],
          conditions: [
            { type: 'Initialized', status: 'True' },
            { type: 'Ready', status: 'True' },
          ],
          initContainerStatuses: [
            {
              name: 'proxy',
              image: 'envoy',
              imageID: '',
              ready: true,
              started: true,
              restartCount: 1,
              state: { running: {} },
              lastState: { terminated: { exitCode: 137, reason: 'Error', finishedAt: ago(1200) } },
            },
          ],
          containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: true, started: true, restartCount: 0, state: { running: {} } }],
        },
      },
      cells: ['meshed', '2/2', 'Running', '1 (20m ago)', '60m', '10.1.0.12', 'node-3', '<none>', '0/1'],
    },
    {
      name: 'evicted by the kubelet',
      pod: {
        metadata: meta('evicted', 86400),
        spec: { nodeName: 'node-1', containers: [{ name: 'app', image: 'nginx' }] },
        status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' },
      },
      cells: ['evicted', '0/1', 'Evicted', '0', '24h', '<none>', 'node-1', '<none>', '<none>'],
      done: 'Failed',
    },
    {
      name: 'no creationTimestamp',
      pod: { metadata: { name: 'bare' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
      cells: ['bare', '0/1', '', '0', '<unknown>', '<none>', '<none>', '<none>', '<none>'],
    },
  ];
  for (const c of cases) {
    const row = podPrinter.print(stored(c.pod), NOW);
    assert.deepEqual(row.cells, c.cells, c.name);
    assert.equal(row.conditions?.[0]?.reason, c.done, `${c.name}: row condition`);
  }
  const failed = podPrinter.print(stored(cases[5]!.pod), NOW).conditions;
  assert.deepEqual(failed, [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }]);
});

const template = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      { name: 'nginx', image: 'nginx:1.27' },
      { name: 'log', image: 'busybox' },
    ],
  },
};

void test('deployment rows', () => {
  const cases: { name: string; d: Deployment; cells: unknown[] }[] = [
    {
      name: 'rolling out',
      d: {
        metadata: meta('web', 90),
        spec: { replicas: 3, selector: { matchLabels: { app: 'web', tier: 'fe' } }, template },
        status: { replicas: 3, readyReplicas: 2, updatedReplicas: 1, availableReplicas: 2 },
      },
      cells: ['web', '2/3', 1, 2, '90s', 'nginx,log', 'nginx:1.27,busybox', 'app=web,tier=fe'],
    },
    {
      name: 'fresh: replicas defaulted, no status, expression selector',
      d: {
        metadata: meta('api', 5),
        spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['b', 'a'] }] }, template },
      },
      cells: ['api', '0/1', 0, 0, '5s', 'nginx,log', 'nginx:1.27,busybox', 'app in (a,b)'],
    },
    {
      name: 'invalid selector',
      d: { metadata: meta('bad', 5), spec: { replicas: 0, selector: { matchExpressions: [{ key: 'app', operator: 'Near' }] }, template } },
      cells: ['bad', '0/0', 0, 0, '5s', 'nginx,log', 'nginx:1.27,busybox', '<invalid>'],
    },
  ];
  for (const c of cases) assert.deepEqual(deploymentPrinter.print(stored(c.d), NOW).cells, c.cells, c.name);
});

void test('replicaset rows', () => {
  const cases: { name: string; rs: ReplicaSet; cells: unknown[] }[] = [
    {
      name: 'scaled',
      rs: {
        metadata: meta('web-7d4b9c', 7200),
        spec: { replicas: 2, selector: { matchLabels: { app: 'web', 'pod-template-hash': '7d4b9c' } }, template },
        status: { replicas: 2, readyReplicas: 1 },
      },
      cells: ['web-7d4b9c', 2, 2, 1, '120m', 'nginx,log', 'nginx:1.27,busybox', 'app=web,pod-template-hash=7d4b9c'],
    },
    {
      name: 'empty selector and no status',
      rs: { metadata: meta('odd', 30), spec: { selector: {}, template }, status: { replicas: 0 } },
      cells: ['odd', 1, 0, 0, '30s', 'nginx,log', 'nginx:1.27,busybox', '<none>'],
    },
    {
      name: 'invalid selector',
      rs: { metadata: meta('bad', 30), spec: { replicas: 1, selector: { matchExpressions: [{ key: 'k', operator: 'Exists', values: ['v'] }] } }, status: { replicas: 0 } },
      cells: ['bad', 1, 0, 0, '30s', '', '', '<error>'],
    },
  ];
  for (const c of cases) assert.deepEqual(replicaSetPrinter.print(stored(c.rs), NOW).cells, c.cells, c.name);
});

const tmpl = (labels: Record<string, string> = { app: 'web' }) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }, { name: 'sidecar', image: 'busybox' }] },
});

void test('DaemonSet, StatefulSet, ControllerRevision, ReplicationController and PodTemplate columns and cells as upstream', () => {
  const cols = (p: typeof podPrinter) => p.columns.map((c) => `${c.name}${c.priority ? '*' : ''}`);
  assert.deepEqual(cols(daemonSetPrinter), ['Name', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age', 'Containers*', 'Images*', 'Selector*']);
  assert.deepEqual(cols(statefulSetPrinter), ['Name', 'Ready', 'Age', 'Containers*', 'Images*']);
  assert.deepEqual(cols(controllerRevisionPrinter), ['Name', 'Controller', 'Revision', 'Age']);
  assert.deepEqual(cols(replicationControllerPrinter), ['Name', 'Desired', 'Current', 'Ready', 'Age', 'Containers*', 'Images*', 'Selector*']);
  assert.deepEqual(cols(podTemplatePrinter), ['Name', 'Containers', 'Images', 'Pod Labels']);

  const ds: DaemonSet = {
    metadata: meta('agent'),
    spec: { selector: { matchLabels: { app: 'web' } }, template: { ...tmpl(), spec: { ...tmpl().spec, nodeSelector: { zone: 'a', 'kubernetes.io/os': 'linux' } } } },
    status: { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 1, numberAvailable: 2, numberMisscheduled: 0 },
  };
  assert.deepEqual(daemonSetPrinter.print(stored(ds), NOW).cells, ['agent', 3, 3, 2, 1, 2, 'kubernetes.io/os=linux,zone=a', '5m', 'nginx,sidecar', 'nginx:1.25,busybox', 'app=web']);
  const bare: DaemonSet = { metadata: meta('bare'), spec: { selector: { matchLabels: { app: 'web' } }, template: tmpl() } };
  assert.deepEqual(daemonSetPrinter.print(stored(bare), NOW).cells.slice(1, 7), [0, 0, 0, 0, 0, '<none>']);

  const ss: StatefulSet = { metadata: meta('db'), spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'web' } }, template: tmpl() }, status: { replicas: 3, readyReplicas: 1 } };
  assert.deepEqual(statefulSetPrinter.print(stored(ss), NOW).cells, ['db', '1/3', '5m', 'nginx,sidecar', 'nginx:1.25,busybox']);

  const cr: ControllerRevision = {
    metadata: { ...meta('db-7b9c'), ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u', controller: true }] },
    revision: 2,
  };
  assert.deepEqual(controllerRevisionPrinter.print(stored(cr), NOW).cells, ['db-7b9c', 'statefulset.apps/db', 2, '5m']);
  const orphan: ControllerRevision = { metadata: meta('x'), revision: 1 };
  assert.equal(controllerRevisionPrinter.print(stored(orphan), NOW).cells[1], '<none>');

  const rc: ReplicationController = { metadata: meta('web'), spec: { replicas: 3, selector: { app: 'web', tier: 'fe' }, template: tmpl() }, status: { replicas: 2, readyReplicas: 1 } };
  assert.deepEqual(replicationControllerPrinter.print(stored(rc), NOW).cells, ['web', 3, 2, 1, '5m', 'nginx,sidecar', 'nginx:1.25,busybox', 'app=web,tier=fe']);

  const pt: PodTemplate = { metadata: meta('t'), template: tmpl({ b: '2', a: '1' }) };
  assert.deepEqual(podTemplatePrinter.print(stored(pt), NOW).cells, ['t', 'nginx,sidecar', 'nginx:1.25,busybox', 'a=1,b=2']);
  assert.deepEqual(podTemplatePrinter.print(stored({ metadata: meta('e') } as PodTemplate), NOW).cells, ['e', '', '', '<none>']);
});
