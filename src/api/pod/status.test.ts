import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, ContainerStatus, Pod } from '../types.js';
import { formatReady, formatRestarts, isRestartableInitContainer, podStatusReason, summarizePod } from './status.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const MIN = 60_000;

type Extra = Partial<ContainerStatus>;
const base = (name: string, extra: Extra): ContainerStatus => ({ name, image: 'busybox', imageID: '', ready: false, restartCount: 0, ...extra });
const running = (name: string, ready: boolean, extra: Extra = {}) =>
  base(name, { ready, started: true, state: { running: { startedAt: ago(5 * MIN) } }, ...extra });
const waiting = (name: string, reason: string, extra: Extra = {}) => base(name, { started: false, state: { waiting: { reason } }, ...extra });
const terminated = (name: string, t: { exitCode: number; reason?: string; signal?: number }, extra: Extra = {}) =>
  base(name, { started: false, state: { terminated: { ...t, finishedAt: ago(MIN) } }, ...extra });
/** A container that has crashed `count` times, the last time `finishedAgo` ms ago. */
const crashed = (count: number, finishedAgo: number): Extra => ({
  restartCount: count,
  lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: ago(finishedAgo) } },
});
const sidecar = (name: string): Container => ({ name, image: 'envoy', restartPolicy: 'Always' });

interface PodShape {
  phase?: string;
  reason?: string;
  deleting?: boolean;
  init?: (string | Container)[];
  containers?: string[];
  initStatuses?: ContainerStatus[];
  statuses?: ContainerStatus[];
  conditions?: Record<string, string | [string, string]>;
}

function makePod(p: PodShape): Pod {
  const container = (c: string | Container): Container => (typeof c === 'string' ? { name: c, image: 'busybox' } : c);
  return {
    metadata: { name: 'web', namespace: 'default', ...(p.deleting ? { deletionTimestamp: ago(10_000) } : {}) },
    spec: { initContainers: (p.init ?? []).map(container), containers: (p.containers ?? ['app']).map(container) },
    status: {
      phase: p.phase,
      reason: p.reason,
      initContainerStatuses: p.initStatuses,
      containerStatuses: p.statuses,
      conditions: Object.entries(p.conditions ?? {}).map(([type, v]) =>
        typeof v === 'string' ? { type, status: v } : { type, status: v[0], reason: v[1] },
      ),
    },
  };
}

void test('isRestartableInitContainer: only restartPolicy Always marks a sidecar', () => {
  assert.equal(isRestartableInitContainer(sidecar('s')), true);
  assert.equal(isRestartableInitContainer({ name: 'i', restartPolicy: 'OnFailure' }), false);
  assert.equal(isRestartableInitContainer({ name: 'i' }), false);
  assert.equal(isRestartableInitContainer(undefined), false);
});

void test('READY, STATUS and RESTARTS as upstream printPod computes them', () => {
  const cases: { name: string; pod: PodShape; ready: string; status: string; restarts: string }[] = [
    { name: 'new pod', pod: { phase: 'Pending' }, ready: '0/1', status: 'Pending', restarts: '0' },
    {
      name: 'creating',
      pod: { phase: 'Pending', statuses: [waiting('app', 'ContainerCreating')] },
      ready: '0/1',
      status: 'ContainerCreating',
      restarts: '0',
    },
    {
      name: 'first init container running',
      pod: { phase: 'Pending', init: ['setup'], initStatuses: [running('setup', false)], statuses: [waiting('app', 'PodInitializing')] },
      ready: '0/1',
      status: 'Init:0/1',
      restarts: '0',
    },
    {
      name: 'second of two init containers',
      pod: {
        phase: 'Pending',
        init: ['a', 'b'],
        initStatuses: [terminated('a', { exitCode: 0, reason: 'Completed' }), waiting('b', 'PodInitializing')],
      },
      ready: '0/1',
      status: 'Init:1/2',
      restarts: '0',
    },
    {
      name: 'init container failed',
      pod: { phase: 'Pending', init: ['a'], initStatuses: [terminated('a', { exitCode: 1, reason: 'Error' })] },
      ready: '0/1',
      status: 'Init:Error',
      restarts: '0',
    },
    {
      name: 'init container crash-looping counts its restarts',
      pod: { phase: 'Pending', init: ['a'], initStatuses: [waiting('a', 'CrashLoopBackOff', crashed(4, 2 * MIN))] },
      ready: '0/1',
      status: 'Init:CrashLoopBackOff',
      restarts: '4 (2m ago)',
    },
    {
      name: 'init exit code without reason',
      pod: { phase: 'Pending', init: ['a'], initStatuses: [terminated('a', { exitCode: 2 })] },
      ready: '0/1',
      status: 'Init:ExitCode:2',
      restarts: '0',
    },
    {
      name: 'init killed by signal',
      pod: { phase: 'Pending', init: ['a'], initStatuses: [terminated('a', { exitCode: 137, signal: 9 })] },
      ready: '0/1',
      status: 'Init:Signal:9',
      restarts: '0',
    },
    {
      name: 'init done, app starting',
      pod: {
        phase: 'Pending',
        init: ['a'],
        initStatuses: [terminated('a', { exitCode: 0, reason: 'Completed' })],
        statuses: [waiting('app', 'PodInitializing')],
        conditions: { Initialized: 'True' },
      },
      ready: '0/1',
      status: 'PodInitializing',
      restarts: '0',
    },
    {
      name: 'running and ready',
      pod: { phase: 'Running', statuses: [running('app', true)], conditions: { Ready: 'True' } },
      ready: '1/1',
      status: 'Running',
      restarts: '0',
    },
    {
      name: 'running, readiness probe failing',
      pod: { phase: 'Running', statuses: [running('app', false)], conditions: { Ready: 'False' } },
      ready: '0/1',
      status: 'Running',
      restarts: '0',
    },
    {
      name: 'crash loop with last termination',
      pod: { phase: 'Running', statuses: [waiting('app', 'CrashLoopBackOff', crashed(3, 2 * MIN + 30_000))] },
      ready: '0/1',
      status: 'CrashLoopBackOff',
      restarts: '3 (2m30s ago)',
    },
    {
      name: 'restarts without a known termination time',
      pod: { phase: 'Running', statuses: [running('app', true, { restartCount: 2 })] },
      ready: '1/1',
      status: 'Running',
      restarts: '2',
    },
    {
      name: 'image pull back-off',
      pod: { phase: 'Pending', statuses: [waiting('app', 'ImagePullBackOff')] },
      ready: '0/1',
      status: 'ImagePullBackOff',
      restarts: '0',
    },
    {
      name: 'image pull error',
      pod: { phase: 'Pending', statuses: [waiting('app', 'ErrImagePull')] },
      ready: '0/1',
      status: 'ErrImagePull',
      restarts: '0',
    },
    {
      name: 'restartPolicy Never pod that succeeded',
      pod: { phase: 'Succeeded', statuses: [terminated('app', { exitCode: 0, reason: 'Completed' })] },
      ready: '0/1',
      status: 'Completed',
      restarts: '0',
    },
    {
      name: 'failed with Error',
      pod: { phase: 'Failed', statuses: [terminated('app', { exitCode: 1, reason: 'Error' })] },
      ready: '0/1',
      status: 'Error',
      restarts: '0',
    },
    {
      name: 'OOM killed',
      pod: { phase: 'Running', statuses: [terminated('app', { exitCode: 137, reason: 'OOMKilled' }, crashed(1, 10_000))] },
      ready: '0/1',
      status: 'OOMKilled',
      restarts: '1 (10s ago)',
    },
    {
      name: 'exit code without reason',
      pod: { phase: 'Failed', statuses: [terminated('app', { exitCode: 3 })] },
      ready: '0/1',
      status: 'ExitCode:3',
      restarts: '0',
    },
    {
      name: 'signal without reason',
      pod: { phase: 'Failed', statuses: [terminated('app', { exitCode: 143, signal: 15 })] },
      ready: '0/1',
      status: 'Signal:15',
      restarts: '0',
    },
    {
      // The first container (looked at last) decides; a running one turns Completed back.
      name: 'one container completed, the other running, pod not Ready',
      pod: {
        phase: 'Running',
        containers: ['app', 'job'],
        statuses: [running('app', true), terminated('job', { exitCode: 0, reason: 'Completed' })],
        conditions: { Ready: 'False' },
      },
      ready: '1/2',
      status: 'NotReady',
      restarts: '0',
    },
    {
      name: 'one container completed, the other running, pod Ready',
      pod: {
        phase: 'Running',
        containers: ['app', 'job'],
        statuses: [running('app', true), terminated('job', { exitCode: 0, reason: 'Completed' })],
        conditions: { Ready: 'True' },
      },
      ready: '1/2',
      status: 'Running',
      restarts: '0',
    },
    {
      name: 'being deleted',
      pod: { phase: 'Running', deleting: true, statuses: [running('app', true)] },
      ready: '1/1',
      status: 'Terminating',
      restarts: '0',
    },
    {
      name: 'deleted after it completed keeps Completed',
      pod: { phase: 'Succeeded', deleting: true, statuses: [terminated('app', { exitCode: 0, reason: 'Completed' })] },
      ready: '0/1',
      status: 'Completed',
      restarts: '0',
    },
    {
      name: 'node lost',
      pod: { phase: 'Running', reason: 'NodeLost', deleting: true, statuses: [running('app', true)] },
      ready: '1/1',
      status: 'Unknown',
      restarts: '0',
    },
    {
      name: 'scheduling gated',
      pod: { phase: 'Pending', conditions: { PodScheduled: ['False', 'SchedulingGated'] } },
      ready: '0/1',
      status: 'SchedulingGated',
      restarts: '0',
    },
    { name: 'evicted', pod: { phase: 'Failed', reason: 'Evicted' }, ready: '0/1', status: 'Evicted', restarts: '0' },
    {
      name: 'admission failure',
      pod: { phase: 'Failed', reason: 'OutOfcpu', statuses: [] },
      ready: '0/1',
      status: 'OutOfcpu',
      restarts: '0',
    },
    {
      name: 'sidecar and app running count both, with both restarts',
      pod: {
        phase: 'Running',
        init: [sidecar('proxy')],
        initStatuses: [running('proxy', true, crashed(2, 5 * MIN))],
        statuses: [running('app', true, crashed(1, 3 * MIN))],
        conditions: { Initialized: 'True', Ready: 'True' },
      },
      ready: '2/2',
      status: 'Running',
      restarts: '3 (3m ago)',
    },
    {
      name: 'started sidecar counts while a later init container runs',
      pod: {
        phase: 'Pending',
        init: [sidecar('proxy'), 'migrate'],
        initStatuses: [running('proxy', true), running('migrate', false)],
        statuses: [waiting('app', 'PodInitializing')],
      },
      ready: '1/2',
      status: 'Init:1/2',
      restarts: '0',
    },
    {
      name: 'sidecar not started yet blocks initialization',
      pod: { phase: 'Pending', init: [sidecar('proxy')], initStatuses: [running('proxy', false, { started: false })] },
      ready: '0/2',
      status: 'Init:0/1',
      restarts: '0',
    },
    {
      name: 'once initialized, plain init restarts no longer count',
      pod: {
        phase: 'Running',
        init: ['setup'],
        initStatuses: [terminated('setup', { exitCode: 0, reason: 'Completed' }, crashed(5, 30 * MIN))],
        statuses: [running('app', true)],
        conditions: { Initialized: 'True', Ready: 'True' },
      },
      ready: '1/1',
      status: 'Running',
      restarts: '0',
    },
  ];
  for (const c of cases) {
    const pod = makePod(c.pod);
    const summary = summarizePod(pod);
    assert.equal(formatReady(summary), c.ready, `${c.name}: READY`);
    assert.equal(summary.reason, c.status, `${c.name}: STATUS`);
    assert.equal(podStatusReason(pod), c.status, `${c.name}: podStatusReason`);
    assert.equal(formatRestarts(summary, NOW), c.restarts, `${c.name}: RESTARTS`);
  }
});
