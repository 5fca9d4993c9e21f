import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../api/types.js';
import { ContainerBackOff, backOffKey } from './backoff.js';
import { computePodActions, planPodSync, type PodActions, type ProbeResults } from './planner.js';
import type { PodRuntimeState } from './runtime-state.js';
import { T0, ctr, exited, makePod, runtimeState, sandbox } from './testing.js';

type Expect = Partial<PodActions> & { kill?: [string, string][] };

const dead = sandbox({ state: 'SANDBOX_NOTREADY', ips: [] });
const sidecar = { name: 'proxy', restartPolicy: 'Always' as const };
const deleted = (pod: Pod): Pod => ({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });

const cases: { name: string; pod: Pod; state: PodRuntimeState; probes?: ProbeResults; want: Expect }[] = [
  { name: 'new pod: create sandbox attempt 0, start every container', pod: makePod({ containers: ['a', 'b'] }), state: runtimeState([], []), want: { killPod: true, createSandbox: true, attempt: 0, sandboxId: '', containersToStart: [0, 1] } },
  { name: 'everything running: nothing to do', pod: makePod({ containers: ['a', 'b'] }), state: runtimeState([sandbox()], [ctr('a'), ctr('b')]), want: { killPod: false, createSandbox: false, attempt: 0, sandboxId: 'sb0', containersToStart: [] } },
  { name: 'dead sandbox, Always: kill and recreate with the next attempt', pod: makePod(), state: runtimeState([dead], [exited('nginx', 137)]), want: { killPod: true, createSandbox: true, attempt: 1, sandboxId: 'sb0', containersToStart: [0] } },
  { name: 'dead sandbox, Never, containers ran: kill only', pod: makePod({ restartPolicy: 'Never' }), state: runtimeState([dead], [exited('nginx', 0)]), want: { killPod: true, createSandbox: false } },
  { name: 'dead sandbox, OnFailure, all succeeded: kill only', pod: makePod({ restartPolicy: 'OnFailure' }), state: runtimeState([dead], [exited('nginx', 0)]), want: { killPod: true, createSandbox: false } },
  { name: 'dead sandbox, OnFailure: recreate and start only the failed', pod: makePod({ restartPolicy: 'OnFailure', containers: ['a', 'b'] }), state: runtimeState([dead], [exited('a', 0), exited('b', 1)]), want: { killPod: true, createSandbox: true, attempt: 1, containersToStart: [1] } },
  { name: 'dead sandbox, Never, nothing ran yet (attempt 0 died): recreate', pod: makePod({ restartPolicy: 'Never' }), state: runtimeState([dead], []), want: { createSandbox: true, attempt: 1, containersToStart: [0] } },
  { name: 'two ready sandboxes: recreate', pod: makePod(), state: runtimeState([sandbox({ id: 'sb1', attempt: 1 }), sandbox()], [ctr('nginx')]), want: { killPod: true, createSandbox: true, attempt: 2, sandboxId: 'sb1' } },
  { name: 'ready sandbox without an IP: recreate', pod: makePod(), state: runtimeState([sandbox({ ips: [] })], [ctr('nginx')]), want: { createSandbox: true, attempt: 1, sandboxId: 'sb0' } },
  { name: 'host network sandbox needs no IP', pod: makePod({ hostNetwork: true }), state: runtimeState([sandbox({ ips: [], networkMode: 'NODE' })], [ctr('nginx')]), want: { createSandbox: false, killPod: false } },
  { name: 'network mode changed: recreate without naming the old sandbox', pod: makePod({ hostNetwork: true }), state: runtimeState([sandbox()], [ctr('nginx')]), want: { createSandbox: true, attempt: 1, sandboxId: '' } },
  { name: 'exited under Always: restart', pod: makePod({ containers: ['a', 'b'] }), state: runtimeState([sandbox()], [ctr('a'), exited('b', 0)]), want: { killPod: false, containersToStart: [1] } },
  { name: 'succeeded under OnFailure with another running: keep', pod: makePod({ restartPolicy: 'OnFailure', containers: ['a', 'b'] }), state: runtimeState([sandbox()], [ctr('a'), exited('b', 0)]), want: { killPod: false, containersToStart: [] } },
  { name: 'all succeeded under OnFailure: pod done', pod: makePod({ restartPolicy: 'OnFailure' }), state: runtimeState([sandbox()], [exited('nginx', 0)]), want: { killPod: true, createSandbox: false, containersToStart: [] } },
  { name: 'failed under OnFailure: restart', pod: makePod({ restartPolicy: 'OnFailure' }), state: runtimeState([sandbox()], [exited('nginx', 2)]), want: { killPod: false, containersToStart: [0] } },
  { name: 'failed under Never: pod done', pod: makePod({ restartPolicy: 'Never' }), state: runtimeState([sandbox()], [exited('nginx', 1)]), want: { killPod: true, containersToStart: [] } },
  {
    name: 'image changed: kill and restart whatever the policy',
    pod: makePod({ restartPolicy: 'Never', containers: [{ name: 'nginx', image: 'nginx:1.27' }] }),
    state: runtimeState([sandbox()], [ctr('nginx', { image: 'nginx:1.26' })]),
    want: { containersToStart: [0], kill: [['nginx', 'Container nginx definition changed, will be restarted']] },
  },
  {
    name: 'liveness failure under Always: kill and restart',
    pod: makePod(),
    state: runtimeState([sandbox()], [ctr('nginx')]),
    probes: { liveness: () => 'Failure', startup: () => undefined },
    want: { killPod: false, containersToStart: [0], kill: [['nginx', 'Container nginx failed liveness probe, will be restarted']] },
  },
  {
    name: 'liveness failure under Never: kill, nothing left, pod done',
    pod: makePod({ restartPolicy: 'Never' }),
    state: runtimeState([sandbox()], [ctr('nginx')]),
    probes: { liveness: () => 'Failure', startup: () => undefined },
    want: { killPod: true, containersToStart: [], kill: [['nginx', 'Container nginx failed liveness probe']] },
  },
  { name: 'unknown state: kill before restart', pod: makePod(), state: runtimeState([sandbox()], [ctr('nginx', { state: 'CONTAINER_UNKNOWN' })]), want: { containersToStart: [0], kill: [['nginx', 'Container is in "CONTAINER_UNKNOWN" state, try killing it before restart']] } },
  { name: 'created but never started: start again', pod: makePod(), state: runtimeState([sandbox()], [ctr('nginx', { state: 'CONTAINER_CREATED' })]), want: { containersToStart: [0], killPod: false } },
  { name: 'deleted pod: exited containers are not restarted', pod: deleted(makePod()), state: runtimeState([sandbox()], [exited('nginx', 1)]), want: { killPod: true, containersToStart: [] } },
  { name: 'only the latest attempt counts', pod: makePod({ restartPolicy: 'OnFailure' }), state: runtimeState([sandbox()], [exited('nginx', 0, { restartCount: 1 }), exited('nginx', 1)]), want: { killPod: true, containersToStart: [] } },

  { name: 'init: nothing ran: start the first', pod: makePod({ initContainers: ['i0', 'i1'] }), state: runtimeState([sandbox()], []), want: { initContainersToStart: [0], containersToStart: [], killPod: false } },
  { name: 'init: new sandbox starts the first init container only', pod: makePod({ initContainers: ['i0'] }), state: runtimeState([], []), want: { createSandbox: true, initContainersToStart: [0], containersToStart: [] } },
  { name: 'init: running: wait', pod: makePod({ initContainers: ['i0', 'i1'] }), state: runtimeState([sandbox()], [ctr('i0')]), want: { initContainersToStart: [], containersToStart: [], killPod: false } },
  { name: 'init: first done: start the next', pod: makePod({ initContainers: ['i0', 'i1'] }), state: runtimeState([sandbox()], [exited('i0', 0)]), want: { initContainersToStart: [1], containersToStart: [] } },
  { name: 'init: all done: start the app containers together', pod: makePod({ initContainers: ['i0', 'i1'], containers: ['a', 'b'] }), state: runtimeState([sandbox()], [exited('i1', 0), exited('i0', 0)]), want: { initContainersToStart: [], containersToStart: [0, 1] } },
  { name: 'init: failed under Always: restart it', pod: makePod({ initContainers: ['i0', 'i1'] }), state: runtimeState([sandbox()], [exited('i0', 1)]), want: { initContainersToStart: [0], killPod: false } },
  { name: 'init: OOMKilled counts as failed', pod: makePod({ initContainers: ['i0'], restartPolicy: 'Never' }), state: runtimeState([sandbox()], [exited('i0', 0, { reason: 'OOMKilled' })]), want: { killPod: true, initContainersToStart: [] } },
  { name: 'init: failed under Never: pod done', pod: makePod({ initContainers: ['i0'], restartPolicy: 'Never' }), state: runtimeState([sandbox()], [exited('i0', 1)]), want: { killPod: true, initContainersToStart: [], containersToStart: [] } },
  { name: 'init: removed after the app started: not rerun', pod: makePod({ initContainers: ['i0'] }), state: runtimeState([sandbox()], [ctr('nginx')]), want: { initContainersToStart: [], containersToStart: [], killPod: false } },
  { name: 'sidecar running: start the next init container', pod: makePod({ initContainers: [sidecar, 'i1'] }), state: runtimeState([sandbox()], [ctr('proxy')]), want: { initContainersToStart: [1], containersToStart: [] } },
  { name: 'sidecar last and running: initialized, start the app', pod: makePod({ initContainers: ['i0', sidecar] }), state: runtimeState([sandbox()], [ctr('proxy'), exited('i0', 0)]), want: { initContainersToStart: [], containersToStart: [0] } },
  { name: 'sidecar exited while the app runs: restart the sidecar only', pod: makePod({ initContainers: [sidecar, 'i1'] }), state: runtimeState([sandbox()], [ctr('nginx'), exited('proxy', 1)]), want: { initContainersToStart: [0], containersToStart: [], killPod: false } },
  { name: 'sidecar removed while the app runs: start it again', pod: makePod({ initContainers: [sidecar] }), state: runtimeState([sandbox()], [ctr('nginx')]), want: { initContainersToStart: [0], killPod: false } },
  { name: 'app done under Never: sidecars do not keep the pod alive', pod: makePod({ initContainers: [sidecar], restartPolicy: 'Never' }), state: runtimeState([sandbox()], [ctr('proxy'), exited('nginx', 0)]), want: { killPod: true, initContainersToStart: [], containersToStart: [] } },
  {
    name: 'sidecar with a startup probe not yet run: wait',
    pod: makePod({ initContainers: [{ ...sidecar, startupProbe: { exec: { command: ['true'] } } }, 'i1'] }),
    state: runtimeState([sandbox()], [ctr('proxy')]),
    want: { initContainersToStart: [], containersToStart: [] },
  },
  {
    name: 'sidecar failed its startup probe: kill and restart it',
    pod: makePod({ initContainers: [{ ...sidecar, startupProbe: { exec: { command: ['true'] } } }, 'i1'] }),
    state: runtimeState([sandbox()], [ctr('proxy')]),
    probes: { liveness: () => undefined, startup: () => 'Failure' },
    want: { initContainersToStart: [0], kill: [['proxy', 'Init container proxy failed startup probe']] },
  },
];

for (const c of cases) {
  test(`computePodActions: ${c.name}`, () => {
    const got = computePodActions(c.pod, c.state, c.probes);
    const { kill, ...want } = c.want;
    for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k as keyof PodActions], v, k);
    assert.deepEqual(
      got.containersToKill.map((k) => [k.name, k.message]),
      kill ?? [],
      'containersToKill',
    );
  });
}

test('planPodSync: an exited container inside its back-off waits, with upstream message and retry time', () => {
  const pod = makePod();
  const backoff = new ContainerBackOff({ initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 });
  const key = backOffKey(pod, pod.spec!.containers[0]!);
  const finishedAt = T0 + 1000;
  const state = runtimeState([sandbox()], [exited('nginx', 1, { finishedAt })]);

  // The first crash restarts at once.
  assert.equal(planPodSync({ pod, state, backoff, now: finishedAt }).backOff.size, 0);
  backoff.next(key, finishedAt, finishedAt);

  const plan = planPodSync({ pod, state, backoff, now: finishedAt + 5000 });
  assert.deepEqual(plan.containersToStart, [0]);
  assert.deepEqual(plan.backOff.get('nginx'), { delayMs: 10_000, retryAt: finishedAt + 10_000, message: 'back-off 10s restarting failed container=nginx pod=web_default(uid-1)' });
  assert.equal(planPodSync({ pod, state, backoff, now: finishedAt + 10_000 }).backOff.size, 0);
});

test('ContainerBackOff doubles to the cap and resets after a long clean run', () => {
  const b = new ContainerBackOff({ initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 });
  const delays: number[] = [];
  let t = T0;
  for (let i = 0; i < 8; i++) {
    b.next('k', t, t);
    delays.push(b.get('k'));
    t += b.get('k');
  }
  assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  // Ran for 11 minutes since the last restart: start over.
  b.next('k', t + 660_000, t + 660_000);
  assert.equal(b.get('k'), 10_000);
  assert.equal(b.isInBackOffSince('k', t + 660_000, t + 660_000 + 9_999), true);
  assert.equal(b.isInBackOffSince('k', t + 660_000, t + 660_000 + 10_000), false);
});
