import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '../../api/types.js';
import { formatReady, summarizePod } from '../../api/pod/status.js';
import type { PodRuntimeState } from '../kuberuntime/runtime-state.js';
import { T0, ctr, exited, makePod, runtimeState, sandbox } from '../kuberuntime/testing.js';
import { generateAPIPodStatus, type StartFailure } from './generate.js';

const sidecar = { name: 'proxy', restartPolicy: 'Always' as const };
const crash = (name: string, delay = '10s'): [string, StartFailure] => [name, { reason: 'CrashLoopBackOff', message: `back-off ${delay} restarting failed container=${name} pod=web_default(uid-1)` }];

interface Case {
  name: string;
  pod: Pod;
  state: PodRuntimeState;
  failures?: [string, StartFailure][];
  terminal?: boolean;
  /** phase, kubectl STATUS, READY. */
  want: [string, string, string];
  conditions?: Record<string, string>;
  check?: (s: PodStatus) => void;
}

const cond = (s: PodStatus, type: string) => s.conditions?.find((c) => c.type === type);

const cases: Case[] = [
  {
    name: 'nothing in the runtime yet',
    pod: makePod(),
    state: runtimeState([], []),
    want: ['Pending', 'ContainerCreating', '0/1'],
    conditions: { PodReadyToStartContainers: 'False', Initialized: 'True', Ready: 'False', ContainersReady: 'False', PodScheduled: 'True' },
    check: (s) => {
      assert.equal(cond(s, 'Ready')?.reason, 'ContainersNotReady');
      assert.equal(cond(s, 'Ready')?.message, 'containers with unready status: [nginx]');
      assert.equal(s.podIP, undefined);
      assert.deepEqual(s.containerStatuses?.[0], { name: 'nginx', image: 'busybox', imageID: '', ready: false, started: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } }, lastState: {} });
    },
  },
  {
    name: 'running',
    pod: makePod({ containers: ['b', 'a'] }),
    state: runtimeState([sandbox()], [ctr('b'), ctr('a')]),
    want: ['Running', 'Running', '2/2'],
    conditions: { PodReadyToStartContainers: 'True', Initialized: 'True', Ready: 'True', ContainersReady: 'True' },
    check: (s) => {
      assert.deepEqual(
        s.containerStatuses?.map((c) => c.name),
        ['a', 'b'],
        'regular statuses sorted by name',
      );
      const a = s.containerStatuses![0]!;
      assert.equal(a.containerID, 'containerd://a-0');
      assert.equal(a.imageID, 'docker.io/library/busybox@sha256:abc');
      assert.deepEqual(a.state, { running: { startedAt: '2026-01-01T00:00:00Z' } });
      assert.equal(a.started, true);
      assert.equal(s.podIP, '10.88.0.2');
      assert.deepEqual(s.podIPs, [{ ip: '10.88.0.2' }]);
      assert.deepEqual(s.hostIPs, [{ ip: '192.0.2.10' }]);
      assert.equal(s.qosClass, 'BestEffort');
      assert.equal(s.startTime, '2026-01-01T00:01:00Z');
      assert.deepEqual(
        s.conditions?.map((c) => c.type),
        ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'],
      );
    },
  },
  {
    name: 'first init container running',
    pod: makePod({ initContainers: ['wait-service', 'migrate'] }),
    state: runtimeState([sandbox()], [ctr('wait-service')]),
    want: ['Pending', 'Init:0/2', '0/1'],
    conditions: { Initialized: 'False', Ready: 'False' },
    check: (s) => {
      assert.equal(cond(s, 'Initialized')?.message, 'containers with incomplete status: [wait-service migrate]');
      assert.equal(cond(s, 'Initialized')?.reason, 'ContainersNotInitialized');
      assert.deepEqual(s.containerStatuses?.[0]?.state, { waiting: { reason: 'PodInitializing' } });
      assert.deepEqual(s.initContainerStatuses?.[1]?.state, { waiting: { reason: 'PodInitializing' } });
    },
  },
  { name: 'second init container running', pod: makePod({ initContainers: ['i0', 'i1'] }), state: runtimeState([sandbox()], [ctr('i1'), exited('i0', 0)]), want: ['Pending', 'Init:1/2', '0/1'] },
  {
    name: 'init container crash looping',
    pod: makePod({ initContainers: ['i0'] }),
    state: runtimeState([sandbox()], [exited('i0', 1)]),
    failures: [crash('i0')],
    want: ['Pending', 'Init:CrashLoopBackOff', '0/1'],
    check: (s) => assert.equal(s.initContainerStatuses?.[0]?.lastState?.terminated?.exitCode, 1),
  },
  { name: 'init done, app being created', pod: makePod({ initContainers: ['i0'] }), state: runtimeState([sandbox()], [exited('i0', 0)]), want: ['Pending', 'PodInitializing', '0/1'], conditions: { Initialized: 'True' } },
  {
    name: 'crash loop of a regular container',
    pod: makePod(),
    state: runtimeState([sandbox()], [exited('nginx', 1, { restartCount: 1 }), exited('nginx', 1, { id: 'old', finishedAt: T0 })]),
    failures: [crash('nginx')],
    want: ['Running', 'CrashLoopBackOff', '0/1'],
    check: (s) => {
      const c = s.containerStatuses![0]!;
      assert.deepEqual(c.state, { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container=nginx pod=web_default(uid-1)' } });
      assert.equal(c.lastState?.terminated?.reason, 'Error');
      assert.equal(c.lastState?.terminated?.containerID, 'containerd://nginx-1');
      assert.equal(c.restartCount, 1);
      assert.equal(summarizePod({ ...makePod(), status: s }).restarts, 1);
    },
  },
  {
    name: 'image pull failing',
    pod: makePod(),
    state: runtimeState([sandbox()], []),
    failures: [['nginx', { reason: 'ErrImagePull', message: 'failed to pull and unpack image' }]],
    want: ['Pending', 'ErrImagePull', '0/1'],
  },
  { name: 'ImagePullBackOff', pod: makePod(), state: runtimeState([sandbox()], []), failures: [['nginx', { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nginx"' }]], want: ['Pending', 'ImagePullBackOff', '0/1'] },
  { name: 'config error', pod: makePod(), state: runtimeState([sandbox()], []), failures: [['nginx', { reason: 'CreateContainerConfigError', message: 'configmap "x" not found' }]], want: ['Pending', 'CreateContainerConfigError', '0/1'] },
  {
    name: 'Never, exited 0',
    pod: makePod({ restartPolicy: 'Never' }),
    state: runtimeState([sandbox()], [exited('nginx', 0)]),
    want: ['Succeeded', 'Completed', '0/1'],
    check: (s) => {
      assert.equal(cond(s, 'ContainersReady')?.reason, 'PodCompleted');
      assert.equal(cond(s, 'Initialized')?.reason, 'PodCompleted');
      assert.equal(s.containerStatuses?.[0]?.state?.terminated?.finishedAt, '2026-01-01T00:00:01Z');
    },
  },
  { name: 'Never, exited 1', pod: makePod({ restartPolicy: 'Never' }), state: runtimeState([sandbox()], [exited('nginx', 1)]), want: ['Failed', 'Error', '0/1'], check: (s) => assert.equal(cond(s, 'Ready')?.reason, 'PodFailed') },
  { name: 'OnFailure, all succeeded', pod: makePod({ restartPolicy: 'OnFailure' }), state: runtimeState([sandbox()], [exited('nginx', 0)]), want: ['Succeeded', 'Completed', '0/1'] },
  { name: 'OnFailure, one done, one running', pod: makePod({ restartPolicy: 'OnFailure', containers: ['a', 'b'] }), state: runtimeState([sandbox()], [ctr('a'), exited('b', 0)]), want: ['Running', 'NotReady', '1/2'] },
  { name: 'Never, OOMKilled', pod: makePod({ restartPolicy: 'Never' }), state: runtimeState([sandbox()], [exited('nginx', 137, { reason: 'OOMKilled' })]), want: ['Failed', 'OOMKilled', '0/1'] },
  { name: 'init failed under Never', pod: makePod({ restartPolicy: 'Never', initContainers: ['i0'] }), state: runtimeState([sandbox()], [exited('i0', 2)]), want: ['Failed', 'Init:Error', '0/1'] },
  { name: 'killed on deletion: terminal Failed', pod: makePod(), state: runtimeState([sandbox({ state: 'SANDBOX_NOTREADY', ips: [] })], [exited('nginx', 137)]), terminal: true, want: ['Failed', 'Error', '0/1'] },
  { name: 'killed on deletion, clean exit: Succeeded', pod: makePod(), state: runtimeState([sandbox({ state: 'SANDBOX_NOTREADY', ips: [] })], [exited('nginx', 0)]), terminal: true, want: ['Succeeded', 'Completed', '0/1'] },
  {
    name: 'sidecar and app running',
    pod: makePod({ initContainers: [sidecar, 'i1'] }),
    state: runtimeState([sandbox()], [ctr('nginx'), ctr('proxy'), exited('i1', 0)]),
    want: ['Running', 'Running', '2/2'],
    conditions: { Initialized: 'True', Ready: 'True' },
  },
  { name: 'sidecar started, next init running', pod: makePod({ initContainers: [sidecar, 'i1'] }), state: runtimeState([sandbox()], [ctr('i1'), ctr('proxy')]), want: ['Pending', 'Init:1/2', '1/2'] },
  { name: 'host network pod gets the node IP', pod: makePod({ hostNetwork: true }), state: runtimeState([sandbox({ ips: [], networkMode: 'NODE' })], [ctr('nginx')]), want: ['Running', 'Running', '1/1'], check: (s) => assert.equal(s.podIP, '192.0.2.10') },
  {
    name: 'readiness gate without its condition',
    pod: { ...makePod(), spec: { ...makePod().spec!, readinessGates: [{ conditionType: 'example.com/lb' }] } },
    state: runtimeState([sandbox()], [ctr('nginx')]),
    want: ['Running', 'Running', '1/1'],
    conditions: { Ready: 'False', ContainersReady: 'True' },
    check: (s) => assert.equal(cond(s, 'Ready')?.message, 'corresponding condition of pod readiness gate "example.com/lb" does not exist.'),
  },
];

for (const c of cases) {
  test(`generateAPIPodStatus: ${c.name}`, () => {
    const s = generateAPIPodStatus({ pod: c.pod, state: c.state, startFailures: new Map(c.failures ?? []), nodeIP: '192.0.2.10', now: T0 + 60_000, podIsTerminal: c.terminal });
    const summary = summarizePod({ ...c.pod, status: s });
    assert.deepEqual([s.phase, summary.reason, formatReady(summary)], c.want);
    for (const [type, status] of Object.entries(c.conditions ?? {})) assert.equal(cond(s, type)?.status, status, type);
    c.check?.(s);
  });
}

test('generateAPIPodStatus keeps transition times, start time and a terminal phase', () => {
  const pod = makePod();
  const first = generateAPIPodStatus({ pod, state: runtimeState([sandbox()], [ctr('nginx')]), nodeIP: '192.0.2.10', now: T0 });
  const again = generateAPIPodStatus({ pod: { ...pod, status: first }, state: runtimeState([sandbox()], [ctr('nginx')]), nodeIP: '192.0.2.10', now: T0 + 5000 });
  assert.deepEqual(again.conditions, first.conditions);
  assert.equal(again.startTime, first.startTime);

  const crashed = generateAPIPodStatus({ pod: { ...pod, status: first }, state: runtimeState([sandbox()], [exited('nginx', 1)]), startFailures: new Map([crash('nginx')]), nodeIP: '192.0.2.10', now: T0 + 9000 });
  assert.equal(cond(crashed, 'Ready')?.lastTransitionTime, '2026-01-01T00:00:09Z');
  assert.equal(cond(crashed, 'PodScheduled')?.lastTransitionTime, '2026-01-01T00:00:00Z');

  const terminal = generateAPIPodStatus({ pod: { ...pod, status: { ...first, phase: 'Succeeded' } }, state: runtimeState([sandbox()], [ctr('nginx')]), nodeIP: '192.0.2.10', now: T0 });
  assert.equal(terminal.phase, 'Succeeded');
});

test('a container that was running and vanished from the runtime is shown as terminated, not waiting', () => {
  const pod = makePod();
  const running = generateAPIPodStatus({ pod, state: runtimeState([sandbox()], [ctr('nginx')]), nodeIP: '192.0.2.10', now: T0 });
  const s = generateAPIPodStatus({ pod: { ...pod, status: running }, state: runtimeState([sandbox()], []), nodeIP: '192.0.2.10', now: T0 + 1000 });
  const c = s.containerStatuses![0]!;
  assert.equal(c.lastState?.terminated?.reason, 'ContainerStatusUnknown');
  assert.equal(c.restartCount, 1);
  assert.equal(s.phase, 'Running');
});
