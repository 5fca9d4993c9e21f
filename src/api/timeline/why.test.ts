import assert from 'node:assert/strict';
import test from 'node:test';
import { microTime, rfc3339 } from '../time.js';
import type { ContainerStatus, CoreEvent, Lease, Node, Pod } from '../types.js';
import type { PodTimeline, TimelineStep } from './types.js';
import { explainPod, largestFree, type WhyInput } from './why.js';

const t0 = Date.parse('2026-01-01T14:00:00Z');
const now = t0 + 600_000; // 14:10:00
const ts = (ms: number): string => rfc3339(t0 + ms);

function pod(over: { spec?: Partial<NonNullable<Pod['spec']>>; status?: Pod['status']; metadata?: Partial<NonNullable<Pod['metadata']>> } = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'u1', creationTimestamp: ts(0), ...over.metadata },
    spec: { containers: [{ name: 'app', image: 'busybox:1.36' }], ...over.spec },
    status: over.status ?? { phase: 'Pending' },
  };
}

const bound = (status: Pod['status'], spec: Partial<NonNullable<Pod['spec']>> = {}, metadata: Partial<NonNullable<Pod['metadata']>> = {}): Pod => pod({ spec: { nodeName: 'node-1', ...spec }, status, metadata });
const running = (cs: Partial<ContainerStatus> = {}): ContainerStatus => ({ name: 'app', image: 'busybox:1.36', imageID: '', ready: false, restartCount: 0, started: true, state: { running: { startedAt: ts(10_000) } }, ...cs });
const waiting = (reason: string, message?: string, cs: Partial<ContainerStatus> = {}): ContainerStatus => ({ name: 'app', image: 'busybox:1.36', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } }, ...cs });
const event = (reason: string, message: string, over: Partial<CoreEvent> = {}): CoreEvent => ({ metadata: { name: `web.${reason}` }, involvedObject: { kind: 'Pod', name: 'web' }, reason, message, lastTimestamp: ts(588_000), firstTimestamp: ts(500_000), count: 1, ...over });
const timeline = (steps: TimelineStep[]): PodTimeline => ({ apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimeline', metadata: { name: 'u1', namespace: 'default' }, pod: { namespace: 'default', name: 'web', uid: 'u1' }, steps });
const readyNode: Node = { metadata: { name: 'node-1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
const freshLease: Lease = { metadata: { name: 'node-1' }, spec: { renewTime: microTime(now - 5000) } };
const cpu3 = { containers: [{ name: 'app', image: 'busybox:1.36', resources: { requests: { cpu: '3' } } }] };

interface Case {
  name: string;
  input: Omit<WhyInput, 'now'>;
  message: string;
  reason: string;
  next?: string;
}

const cases: Case[] = [
  {
    name: 'unschedulable from the timeline summary, with the largest free',
    input: {
      pod: pod({ spec: cpu3, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] } }),
      timeline: timeline([
        {
          step: 'SchedulingAttempt',
          component: 'default-scheduler',
          start: microTime(t0 + 1000),
          lastTime: microTime(now - 12_000),
          count: 4,
          scheduling: {
            result: 'Unschedulable',
            nodes: 6,
            feasible: 0,
            plugins: [
              { plugin: 'NodeResourcesFit', rejected: 5, reasons: { 'Insufficient cpu': 5 } },
              { plugin: 'TaintToleration', rejected: 1, reasons: { 'node(s) had untolerated taint {dedicated: gpu}': 1 } },
            ],
          },
        },
      ]),
      largestFree: { cpu: { node: 'sim-3', free: '2' } },
    },
    message: 'Pending: 0/6 nodes fit — 5 Insufficient cpu (needs 3, largest free 2 on sim-3), 1 untolerated taint dedicated=gpu; retrying on cluster changes (last attempt 12s ago)',
    reason: 'Unschedulable',
    next: 'default-scheduler',
  },
  {
    name: 'unschedulable from the FailedScheduling event when the timeline has no steps yet',
    input: {
      pod: pod({ spec: { ...cpu3, nodeSelector: { disktype: 'ssd' } } }),
      timeline: timeline([]),
      events: [
        event('FailedScheduling', '0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) didn\'t match Pod\'s node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.', { lastTimestamp: ts(590_000) }),
        event('FailedScheduling', '0/3 nodes are available: 3 Insufficient cpu.', { lastTimestamp: ts(100_000) }),
      ],
    },
    message: "Pending: 0/3 nodes fit — 2 don't match its nodeSelector disktype=ssd, 1 untolerated taint node-role.kubernetes.io/control-plane; retrying on cluster changes (last attempt 10s ago)",
    reason: 'Unschedulable',
  },
  {
    name: 'unschedulable, only the needs known',
    input: { pod: pod({ spec: cpu3 }), events: [event('FailedScheduling', '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.')] },
    message: 'Pending: 0/1 nodes fit — 1 Insufficient cpu (needs 3); retrying on cluster changes (last attempt 12s ago)',
    reason: 'Unschedulable',
  },
  {
    name: 'pending with no attempt yet',
    input: { pod: pod() },
    message: 'Pending: waiting for default-scheduler to place it (no attempt yet)',
    reason: 'SchedulingQueued',
  },
  {
    name: 'gated',
    input: { pod: pod({ spec: { schedulingGates: [{ name: 'example.com/a' }, { name: 'example.com/b' }] }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] } }) },
    message: 'SchedulingGated: waiting for scheduling gates example.com/a, example.com/b to be removed; the scheduler does not try before',
    reason: 'SchedulingGated',
  },
  {
    name: 'ContainerCreating while an image is pulled (events)',
    input: { pod: bound({ phase: 'Pending', containerStatuses: [waiting('ContainerCreating')] }), node: readyNode, lease: freshLease, events: [event('Pulling', 'Pulling image "busybox:1.36"', { lastTimestamp: ts(590_000) })] },
    message: 'ContainerCreating: kubelet on node-1 is pulling image "busybox:1.36" (for 10s)',
    reason: 'ImagePull',
    next: 'kubelet/node-1',
  },
  {
    name: 'ContainerCreating waiting for the sandbox (timeline)',
    input: {
      pod: bound({ phase: 'Pending', containerStatuses: [waiting('ContainerCreating')] }),
      node: readyNode,
      timeline: timeline([
        { step: 'Bound', component: 'default-scheduler', start: microTime(now - 3000) },
        { step: 'KubeletAdmitted', component: 'kubelet/node-1', start: microTime(now - 2000) },
      ]),
    },
    message: 'ContainerCreating: waiting for kubelet on node-1 to create the pod sandbox (bound 3s ago)',
    reason: 'ContainerCreating',
  },
  {
    name: 'ContainerCreating with only the API server steps: the status decides',
    input: {
      pod: bound({ phase: 'Pending', containerStatuses: [waiting('ContainerCreating')] }),
      node: readyNode,
      timeline: timeline([{ step: 'Persisted', component: 'kube-apiserver', start: microTime(now - 3000) }]),
    },
    message: 'ContainerCreating: waiting for kubelet on node-1 to create container app',
    reason: 'ContainerCreating',
  },
  {
    name: 'image pull back-off with the next retry from the timeline',
    input: {
      pod: bound({ phase: 'Pending', containerStatuses: [waiting('ImagePullBackOff', 'Back-off pulling image "nope:1"')] }),
      node: readyNode,
      timeline: timeline([{ step: 'ImagePullFailed', component: 'kubelet/node-1', container: 'app', start: microTime(t0), count: 3, lastTime: microTime(now - 1000), attributes: { error: 'not found', nextRetry: microTime(now + 40_000) } }]),
    },
    message: 'ImagePullBackOff: image busybox:1.36 for container app cannot be pulled (not found); kubelet on node-1 retries in 40s',
    reason: 'ImagePullBackOff',
  },
  {
    name: 'ErrImagePull from the status alone',
    input: { pod: bound({ phase: 'Pending', containerStatuses: [waiting('ErrImagePull', 'failed to resolve reference "registry.kite.local/nope:1": not found')] }), node: readyNode },
    message: 'ErrImagePull: image busybox:1.36 for container app cannot be pulled (failed to resolve reference "registry.kite.local/nope:1": not found); kubelet on node-1 retries with back-off (up to 5m)',
    reason: 'ErrImagePull',
  },
  {
    name: 'init container running, with its log',
    input: {
      pod: bound(
        { phase: 'Pending', initContainerStatuses: [running({ name: 'wait-service', state: { running: { startedAt: ts(600_000 - 130_000) } } })], containerStatuses: [waiting('PodInitializing')] },
        { initContainers: [{ name: 'wait-service', image: 'busybox:1.36' }] },
      ),
      node: readyNode,
      lastLogLines: { 'wait-service': 'waiting\n' },
    },
    message: "Init:0/1: init container wait-service running for 2m10s (exit codes so far: none) — its log says 'waiting'",
    reason: 'InitContainerRunning',
  },
  {
    name: 'init container crash looping',
    input: {
      pod: bound(
        { phase: 'Pending', initContainerStatuses: [waiting('CrashLoopBackOff', 'back-off 20s restarting failed container=init pod=web_default(u1)', { name: 'init', restartCount: 2, lastState: { terminated: { exitCode: 2, finishedAt: ts(590_000) } } })] },
        { initContainers: [{ name: 'init', image: 'busybox:1.36' }] },
      ),
      node: readyNode,
    },
    message: 'Init:CrashLoopBackOff: init container init: exit 2 twice, next start in 10s',
    reason: 'CrashLoopBackOff',
  },
  {
    name: 'CrashLoopBackOff with the back-off step and the last log line',
    input: {
      pod: bound({ phase: 'Running', containerStatuses: [waiting('CrashLoopBackOff', 'back-off 1m20s restarting failed container', { restartCount: 5, lastState: { terminated: { exitCode: 1, finishedAt: ts(590_000) } } })] }),
      node: readyNode,
      timeline: timeline([{ step: 'BackOff', component: 'kubelet/node-1', container: 'app', start: microTime(t0), count: 5, attributes: { delayMs: 80_000, nextStart: microTime(now + 80_000) } }]),
      lastLogLines: { app: 'boom' },
    },
    message: "CrashLoopBackOff: container app: exit 1 five times, next start in 80s, last log line 'boom'",
    reason: 'CrashLoopBackOff',
  },
  {
    name: 'CreateContainerConfigError',
    input: { pod: bound({ phase: 'Pending', containerStatuses: [waiting('CreateContainerConfigError', 'secret "db" not found')] }), node: readyNode },
    message: 'CreateContainerConfigError: container app cannot start: secret "db" not found; kubelet on node-1 retries on its next sync',
    reason: 'CreateContainerConfigError',
  },
  {
    name: 'running, not ready: readiness probe failing (timeline)',
    input: {
      pod: bound({ phase: 'Running', containerStatuses: [running()] }, { containers: [{ name: 'app', image: 'nginx', readinessProbe: { httpGet: { port: 80, path: '/' } } }] }),
      node: readyNode,
      timeline: timeline([{ step: 'ProbeFailed', component: 'kubelet/node-1', container: 'app', start: microTime(t0 + 131_000), count: 7, lastTime: microTime(now - 1000), attributes: { probe: 'readiness', failures: 7, threshold: 3, error: 'Get "http://10.217.201.4:80/": dial tcp 10.217.201.4:80: connect: connection refused' } }]),
    },
    message: 'Running, not Ready: readiness probe GET :80/ of app failing 3/3 (connection refused) since 14:02:11',
    reason: 'ProbeFailing',
  },
  {
    name: 'running, not ready: readiness probe failing (event)',
    input: {
      pod: bound({ phase: 'Running', containerStatuses: [running()] }, { containers: [{ name: 'app', image: 'nginx', readinessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 5 } }] }),
      node: readyNode,
      events: [event('Unhealthy', 'Readiness probe failed: dial tcp 10.217.201.4:8080: connect: connection refused', { count: 2, firstTimestamp: ts(131_000), involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{app}' } })],
    },
    message: 'Running, not Ready: readiness probe TCP :8080 of app failing 2/5 (connection refused) since 14:02:11',
    reason: 'ProbeFailing',
  },
  {
    name: 'running and ready',
    input: { pod: bound({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: ts(60_000) }], containerStatuses: [running({ ready: true })] }), node: readyNode, lease: freshLease },
    message: 'Running: all containers ready since 14:01:00; nothing to wait for',
    reason: 'Ready',
    next: 'nobody',
  },
  {
    name: 'running on a node whose kubelet went silent',
    input: {
      pod: bound({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [running({ ready: true })] }),
      node: readyNode,
      lease: { metadata: { name: 'node-1' }, spec: { renewTime: microTime(now - 52_000) } },
    },
    message: 'Running (as last reported): kubelet on node-1 is unreachable since 14:09:08 (Lease 52s old); the node lifecycle controller marks its pods not Ready and taint eviction removes them',
    reason: 'NodeUnreachable',
  },
  {
    name: 'completed',
    input: { pod: bound({ phase: 'Succeeded', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: ts(300_000) } } }] }, { restartPolicy: 'Never' }, { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'pi', uid: 'j', controller: true }] }) },
    message: 'Completed: all containers exited 0 (last at 14:05:00); restartPolicy Never, so nothing runs again; its Job pi counts it',
    reason: 'Succeeded',
  },
  {
    name: 'error, restartPolicy Never',
    input: { pod: bound({ phase: 'Failed', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 3, reason: 'Error', finishedAt: ts(300_000) } } }] }, { restartPolicy: 'Never' }), lastLogLines: { app: 'cannot open /data' } },
    message: "Error: container app exited 3 at 14:05:00, last log line 'cannot open /data'; restartPolicy Never: it stays stopped; nothing replaces it (no controller owns it)",
    reason: 'Error',
  },
  {
    name: 'OOMKilled',
    input: { pod: bound({ phase: 'Failed', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: ts(300_000) } } }] }, { restartPolicy: 'Never', containers: [{ name: 'app', image: 'x', resources: { limits: { memory: '64Mi' } } }] }) },
    message: 'OOMKilled: container app ran out of memory (limit 64Mi) and was killed (exit 137) at 14:05:00; restartPolicy Never: it stays stopped; nothing replaces it (no controller owns it)',
    reason: 'OOMKilled',
  },
  {
    name: 'evicted, with a controller',
    input: {
      pod: bound({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory. ' }, {}, { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d9', uid: 'r', controller: true }] }),
      ownerExists: true,
    },
    message: 'Evicted: The node was low on resource: memory; its ReplicaSet web-5d9 makes a replacement',
    reason: 'Evicted',
  },
  {
    name: 'kubelet rejected (Failed with a reason)',
    input: { pod: bound({ phase: 'Failed', reason: 'OutOfcpu', message: 'Pod was rejected: Node didn\'t have enough resource: cpu, requested: 3000, used: 0, capacity: 2000' }) },
    message: "OutOfcpu: Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000; nothing replaces it (no controller owns it)",
    reason: 'OutOfcpu',
  },
  {
    name: 'terminating on an unreachable node',
    input: {
      pod: bound({ phase: 'Running', containerStatuses: [running({ ready: true })] }, {}, { deletionTimestamp: ts(555_000 + 30_000), deletionGracePeriodSeconds: 30 }),
      node: { metadata: { name: 'node-1' }, status: { conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: ts(60_000) }] } },
      lease: { metadata: { name: 'node-1' }, spec: { renewTime: microTime(now - 52_000) } },
    },
    message: 'Terminating for 45s: kubelet on node-1 is unreachable since 14:01:00 (Lease 52s old); the pod goes when the node returns or is deleted',
    reason: 'NodeUnreachable',
  },
  {
    name: 'terminating, held by an unknown finalizer',
    input: { pod: bound({ phase: 'Running', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 0 } } }] }, {}, { deletionTimestamp: ts(0), finalizers: ['example.com/x'] }), node: readyNode, lease: freshLease },
    message: 'Terminating: finalizer example.com/x, owned by no running controller; the pod stays until someone removes it from metadata.finalizers',
    reason: 'FinalizerPending',
    next: 'the user',
  },
  {
    name: 'terminating within the grace period, preStop running',
    input: {
      pod: bound({ phase: 'Running', containerStatuses: [running({ ready: true })] }, {}, { deletionTimestamp: ts(620_000), deletionGracePeriodSeconds: 30 }),
      node: readyNode,
      lease: freshLease,
      timeline: timeline([{ step: 'PreStop', component: 'kubelet/node-1', container: 'app', start: microTime(now - 9000) }]),
    },
    message: 'Terminating for 10s: kubelet on node-1 is running the preStop hook of app (grace period 30s, SIGKILL at 14:10:20)',
    reason: 'Terminating',
  },
  {
    name: 'PodInitializing: init done, the app container being created',
    input: {
      pod: bound(
        { phase: 'Pending', initContainerStatuses: [{ ...running({ name: 'init' }), state: { terminated: { exitCode: 0, reason: 'Completed' } } }], containerStatuses: [waiting('PodInitializing')] },
        { initContainers: [{ name: 'init', image: 'busybox:1.36' }] },
      ),
      node: readyNode,
    },
    message: 'PodInitializing: waiting for kubelet on node-1 to create container app',
    reason: 'ContainerCreating',
  },
  {
    name: 'NotReady: one container completed while another runs',
    input: {
      pod: bound(
        { phase: 'Running', containerStatuses: [{ ...running({ name: 'job' }), state: { terminated: { exitCode: 0, reason: 'Completed' } } }, running({ name: 'app', ready: true })] },
        { containers: [{ name: 'job', image: 'x' }, { name: 'app', image: 'x' }] },
      ),
      node: readyNode,
    },
    message: 'NotReady: container job exited while others run',
    reason: 'ContainersCompleted',
  },
  {
    name: 'ExitCode:N (no reason from the runtime), restartPolicy OnFailure',
    input: { pod: bound({ phase: 'Running', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 2, finishedAt: ts(300_000) } } }] }, { restartPolicy: 'OnFailure' }), node: readyNode },
    message: 'ExitCode:2: container app exited 2 at 14:05:00; kubelet on node-1 restarts it (restartPolicy OnFailure)',
    reason: 'Error',
  },
  {
    name: 'ContainerStatusUnknown',
    input: { pod: bound({ phase: 'Failed', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' } } }] }, { restartPolicy: 'Never' }) },
    message: 'ContainerStatusUnknown: container app exited 137; restartPolicy Never: it stays stopped; nothing replaces it (no controller owns it)',
    reason: 'ContainerStatusUnknown',
  },
  {
    name: 'Unknown: NodeLost and deleted, the node silent',
    input: {
      pod: bound({ phase: 'Running', reason: 'NodeLost', containerStatuses: [running({ ready: true })] }, {}, { deletionTimestamp: ts(600_000), deletionGracePeriodSeconds: 30 }),
      node: { metadata: { name: 'node-1' }, status: { conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: ts(60_000) }] } },
    },
    message: 'Unknown for 30s: kubelet on node-1 is unreachable since 14:01:00; the pod goes when the node returns or is deleted',
    reason: 'NodeUnreachable',
  },
  {
    name: 'deleted and stopped, the object not removed yet',
    input: { pod: bound({ phase: 'Succeeded', containerStatuses: [{ ...running(), state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }, {}, { deletionTimestamp: ts(590_000) }), node: readyNode },
    message: 'Completed: deleted and stopped; waiting for kubelet on node-1 to remove the pod object',
    reason: 'Deleting',
  },
  {
    name: 'deleted, only the timeline left',
    input: { timeline: { ...timeline([]), deletedAt: microTime(now - 90_000) } },
    message: 'Deleted: the pod was deleted at 14:08:30 (90s ago); only its timeline is left',
    reason: 'Deleted',
  },
];

for (const c of cases) {
  test(`why: ${c.name}`, () => {
    const got = explainPod({ ...c.input, now });
    assert.equal(got.message, c.message);
    assert.equal(got.reason, c.reason);
    if (c.next) assert.equal(got.next, c.next);
  });
}

test('largestFree: allocatable minus the requests of non-terminal pods, per resource', () => {
  const node = (name: string, cpu: string): Node => ({ metadata: { name }, status: { allocatable: { cpu, memory: '4Gi' } } });
  const on = (nodeName: string, cpu: string, phase = 'Running'): Pod => ({ metadata: { name: `p-${nodeName}-${cpu}` }, spec: { nodeName, containers: [{ name: 'c', image: 'x', resources: { requests: { cpu } } }] }, status: { phase } });
  const free = largestFree([node('sim-1', '4'), node('sim-2', '4'), node('sim-3', '2')], [on('sim-1', '3'), on('sim-2', '2500m'), on('sim-2', '4', 'Succeeded')], ['cpu', 'memory', 'nvidia.com/gpu']);
  assert.deepEqual(free, { cpu: { node: 'sim-3', free: '2' }, memory: { node: 'sim-1', free: '4Gi' } });
});
