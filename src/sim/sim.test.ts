import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Pod } from '../api/types.js';
import { summarizePod } from '../api/pod/status.js';
import { FakeClock } from '../util/clock.js';
import { microTime, rfc3339 } from '../api/time.js';
import { heartbeatStopped, startSim } from './sim.js';
import { FakeSimApi } from './testing.js';

const logger = pino({ level: 'silent' });

/** The default stages against the fake API; random 0 makes every delay its minimum. */
async function run(nodes = 2) {
  const api = new FakeSimApi();
  const clock = new FakeClock();
  const handle = startSim({ api, nodes, clock, logger, random: () => 0 });
  await handle.registered;
  await clock.advance(0);
  return { api, clock, handle, t0: clock.now() };
}

function pod(name: string, spec: Partial<Pod['spec']> = {}, annotations?: Record<string, string>): Pod {
  return {
    metadata: { name, namespace: 'default', annotations },
    spec: { nodeName: 'sim-0', containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: '2025-12-31T23:59:00Z' }] },
  };
}

const status = (p: Pod | undefined) => summarizePod(p!).reason;

test('nodes register Ready with the kubelet conditions, and post status again every 5 minutes', async () => {
  const { api, clock, handle, t0 } = await run();
  // The conditions come with the create, as the kubelet's initial node carries them.
  assert.equal(api.count('createNode'), 2);
  const node = api.nodeTable.items.get('sim-1')!;
  assert.deepEqual(
    node.status?.conditions?.map((c) => [c.type, c.status, c.reason]),
    [
      ['NetworkUnavailable', 'False', 'RouteCreated'],
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ],
  );
  assert.equal(node.status?.conditions?.[4]?.message, 'kubelet is posting ready status');
  assert.equal(node.status?.conditions?.[4]?.lastHeartbeatTime, rfc3339(t0));
  assert.equal(node.status?.capacity?.cpu, '32');
  assert.equal(api.count('patchNodeStatus'), 0);

  await clock.advance(269_000);
  assert.equal(api.count('patchNodeStatus'), 0);
  await clock.advance(1000);
  assert.equal(api.count('patchNodeStatus'), 2);
  const ready = api.nodeTable.items.get('sim-1')!.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.lastHeartbeatTime, rfc3339(t0 + 270_000));
  assert.equal(ready?.lastTransitionTime, rfc3339(t0));

  // Something marks the node NotReady: the next sync reports it Ready again, with a new transition.
  const n = api.nodeTable.items.get('sim-0')!;
  api.nodeTable.put({ ...n, status: { ...n.status, conditions: n.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown' } : c)) } }, 'MODIFIED');
  await clock.advance(0);
  const back = api.nodeTable.items.get('sim-0')!.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(back?.status, 'True');
  assert.equal(back?.lastTransitionTime, rfc3339(t0 + 270_000));
  await handle.stop();
});

test('a bound pod starts: Running and Ready, as the kubelet reports it', async () => {
  const { api, clock, handle, t0 } = await run();
  api.addPod(pod('web'));
  api.addPod(pod('elsewhere', { nodeName: 'worker-1' }));
  api.addPod(pod('unbound', { nodeName: undefined }));
  await clock.advance(199);
  assert.equal(api.pod('default', 'web')!.status?.phase, 'Pending');
  await clock.advance(1);
  const p = api.pod('default', 'web')!;
  const s = p.status!;
  assert.equal(s.phase, 'Running');
  assert.equal(status(p), 'Running');
  assert.equal(s.hostIP, '198.18.0.1');
  assert.deepEqual(s.hostIPs, [{ ip: '198.18.0.1' }]);
  assert.equal(s.podIP, '100.64.0.1');
  assert.deepEqual(s.podIPs, [{ ip: '100.64.0.1' }]);
  assert.equal(s.startTime, rfc3339(t0 + 200));
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status]),
    [
      ['PodReadyToStartContainers', 'True'],
      ['Initialized', 'True'],
      ['Ready', 'True'],
      ['ContainersReady', 'True'],
      ['PodScheduled', 'True'],
    ],
  );
  // The scheduler's transition stays.
  assert.equal(s.conditions?.[4]?.lastTransitionTime, '2025-12-31T23:59:00Z');
  const cs = s.containerStatuses?.[0];
  assert.equal(cs?.image, 'docker.io/library/nginx:1.27');
  assert.match(cs?.imageID ?? '', /^docker\.io\/library\/nginx@sha256:[0-9a-f]{64}$/);
  assert.match(cs?.containerID ?? '', /^kite-sim:\/\/[0-9a-f]{64}$/);
  assert.deepEqual(
    [cs?.ready, cs?.started, cs?.restartCount, cs?.state?.running?.startedAt, cs?.lastState],
    [true, true, 0, rfc3339(t0 + 200), {}],
  );
  await clock.advance(0);
  // As with kwok's default stages, the plain lifecycle costs one status write and no events.
  assert.deepEqual(api.events, []);
  // Pods of other nodes and unscheduled pods are not ours.
  assert.equal(api.pod('default', 'elsewhere')!.status?.phase, 'Pending');
  assert.equal(api.pod('default', 'unbound')!.status?.phase, 'Pending');
  assert.equal(api.count('patchPodStatus'), 1);
  await handle.stop();
});

test('a stage file after the default set can record kubelet events', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-sim-stages-'));
  const file = join(dir, 'events.yaml');
  writeFileSync(
    file,
    [
      'name: pod-started-events',
      'selector: [{ key: .status.phase, operator: In, values: [Running] }]',
      'steps:',
      '  - event:',
      '      $each: .spec.containers',
      '      $do: { type: Normal, reason: Started, message: "Started container {{ item.name }}", fieldPath: "{{ concat(\'spec.containers{\', item.name, \'}\') }}" }',
      '',
    ].join('\n'),
  );
  try {
    const api = new FakeSimApi();
    const clock = new FakeClock();
    const handle = startSim({ api, nodes: 1, clock, logger, random: () => 0, stages: `default,${file}` });
    await handle.registered;
    api.addPod(pod('web'));
    await clock.advance(200);
    await clock.advance(0);
    assert.equal(api.pod('default', 'web')!.status?.phase, 'Running');
    await handle.stop();
    assert.deepEqual(
      api.events.map((e) => [e.reason, e.message, e.involvedObject?.fieldPath, e.source?.host]),
      [['Started', 'Started container app', 'spec.containers{app}', 'sim-0']],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('init containers run first; sidecars keep running', async () => {
  const { api, clock, handle } = await run();
  api.addPod(
    pod('init', {
      initContainers: [
        { name: 'setup', image: 'busybox' },
        { name: 'proxy', image: 'envoy', restartPolicy: 'Always' },
      ],
    }),
  );
  await clock.advance(200);
  let p = api.pod('default', 'init')!;
  assert.equal(status(p), 'Init:0/2');
  assert.equal(p.status?.conditions?.find((c) => c.type === 'Initialized')?.message, 'containers with incomplete status: [setup proxy]');
  assert.equal(p.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
  await clock.advance(200);
  p = api.pod('default', 'init')!;
  assert.equal(status(p), 'Running');
  const [setup, proxy] = p.status!.initContainerStatuses!;
  assert.equal(setup?.state?.terminated?.reason, 'Completed');
  assert.equal(setup?.state?.terminated?.startedAt, p.status?.startTime);
  assert.equal(proxy?.state?.running !== undefined && proxy.started, true);
  assert.equal(summarizePod(p).ready, 2);
  await handle.stop();
});

test('a pod whose commands exit succeeds (completion rule)', async () => {
  const { api, clock, handle } = await run();
  const job = { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'exit 0'] }] };
  api.addPod(pod('job', job));
  api.addPod(pod('always', { ...job, restartPolicy: 'Always' }));
  api.addPod(pod('server', { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox', command: ['sleep', '3600'] }] }));
  await clock.advance(200);
  assert.equal(api.pod('default', 'job')!.status?.phase, 'Running');
  await clock.advance(1000);
  const p = api.pod('default', 'job')!;
  assert.equal(p.status?.phase, 'Succeeded');
  assert.equal(status(p), 'Completed');
  const t = p.status?.containerStatuses?.[0]?.state?.terminated;
  assert.deepEqual([t?.exitCode, t?.reason, t?.containerID], [0, 'Completed', p.status?.containerStatuses?.[0]?.containerID]);
  assert.equal(p.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'PodCompleted');
  assert.equal(api.pod('default', 'always')!.status?.phase, 'Running');
  assert.equal(api.pod('default', 'server')!.status?.phase, 'Running');
  await handle.stop();
});

test('a pod whose command fails fails with its exit code (Never) or restarts (OnFailure)', async () => {
  const { api, clock, handle } = await run();
  const containers = [
    { name: 'main', image: 'busybox', command: ['sh', '-c', 'exit 42'] },
    { name: 'side', image: 'busybox', command: ['true'] },
  ];
  api.addPod(pod('never', { restartPolicy: 'Never', containers }));
  api.addPod(pod('onfailure', { restartPolicy: 'OnFailure', containers: [{ name: 'main', image: 'busybox', command: ['false'] }] }));
  await clock.advance(200);
  await clock.advance(2000);
  const failed = api.pod('default', 'never')!;
  assert.equal(failed.status?.phase, 'Failed');
  assert.equal(status(failed), 'Error');
  const [main, side] = failed.status!.containerStatuses!;
  assert.deepEqual([main?.state?.terminated?.exitCode, main?.state?.terminated?.reason], [42, 'Error']);
  assert.deepEqual([side?.state?.terminated?.exitCode, side?.state?.terminated?.reason], [0, 'Completed']);
  assert.equal(failed.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'PodFailed');
  let restarting = api.pod('default', 'onfailure')!;
  assert.equal(restarting.status?.phase, 'Running');
  const cs = restarting.status!.containerStatuses![0]!;
  assert.deepEqual([cs.restartCount, cs.state?.waiting?.reason, cs.lastState?.terminated?.exitCode], [1, 'CrashLoopBackOff', 1]);
  // Started again after 10 s, it fails again: the next back-off doubles.
  await clock.advance(11_000);
  restarting = api.pod('default', 'onfailure')!;
  const again = restarting.status!.containerStatuses![0]!;
  assert.deepEqual([again.restartCount, again.state?.waiting?.message?.startsWith('back-off 20s ')], [2, true]);
  assert.equal(restarting.status?.phase, 'Running');
  await handle.stop();
});

test('graceful deletion: containers stop, then the pod is deleted with grace 0 and its IP freed', async () => {
  const { api, clock, handle } = await run();
  api.addPod(pod('web'));
  api.addPod(pod('never-started', { nodeName: 'sim-1' }, { 'sim.kite.dev/scenario': 'slow-start' }));
  await clock.advance(200);
  api.markDeleted('default', 'web', rfc3339(clock.now()));
  await clock.advance(499);
  assert.equal(api.pod('default', 'web')!.status?.phase, 'Running');
  await clock.advance(1);
  const stopped = api.pod('default', 'web')!;
  assert.equal(stopped.status?.phase, 'Succeeded');
  assert.equal(stopped.status?.containerStatuses?.[0]?.state?.terminated?.reason, 'Completed');
  await clock.advance(200);
  assert.equal(api.pod('default', 'web'), undefined);
  assert.equal(api.count('deletePod'), 1);

  api.markDeleted('default', 'never-started', rfc3339(clock.now()));
  await clock.advance(200);
  assert.equal(api.pod('default', 'never-started'), undefined);

  api.addPod(pod('next'));
  await clock.advance(200);
  assert.equal(api.pod('default', 'next')!.status?.podIP, '100.64.0.1');
  await handle.stop();
});

test('crash-loop scenario: restarts counted, back-off doubling', async () => {
  const { api, clock, handle } = await run();
  api.addPod(pod('crash', {}, { 'sim.kite.dev/scenario': 'crash-loop' }));
  await clock.advance(200);
  assert.equal(status(api.pod('default', 'crash')), 'Running');
  await clock.advance(2000);
  let p = api.pod('default', 'crash')!;
  let cs = p.status!.containerStatuses![0]!;
  assert.equal(status(p), 'CrashLoopBackOff');
  assert.equal(cs.restartCount, 1);
  assert.equal(cs.state?.waiting?.message, `back-off 10s restarting failed container=app pod=crash_default(${p.metadata?.uid})`);
  assert.deepEqual([cs.lastState?.terminated?.exitCode, cs.lastState?.terminated?.reason], [1, 'Error']);
  const firstID = cs.lastState?.terminated?.containerID;
  assert.equal(p.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');

  await clock.advance(9999);
  assert.equal(status(api.pod('default', 'crash')), 'CrashLoopBackOff');
  await clock.advance(1);
  p = api.pod('default', 'crash')!;
  cs = p.status!.containerStatuses![0]!;
  assert.equal(status(p), 'Running');
  assert.equal(cs.restartCount, 1);
  assert.notEqual(cs.containerID, firstID);
  assert.equal(cs.lastState?.terminated?.reason, 'Error');

  await clock.advance(2000);
  cs = api.pod('default', 'crash')!.status!.containerStatuses![0]!;
  assert.equal(cs.restartCount, 2);
  assert.match(cs.state?.waiting?.message ?? '', /^back-off 20s /);
  await clock.advance(20_000);
  assert.equal(status(api.pod('default', 'crash')), 'Running');
  assert.ok(api.events.some((e) => e.reason === 'BackOff' && e.type === 'Warning'));
  await handle.stop();
});

test('image-pull-error scenario: ErrImagePull, ImagePullBackOff, retried', async () => {
  const { api, clock, handle } = await run();
  api.addPod(pod('pull', { containers: [{ name: 'app', image: 'nosuch/image:v1' }] }, { 'sim.kite.dev/scenario': 'image-pull-error' }));
  await clock.advance(500);
  let p = api.pod('default', 'pull')!;
  assert.equal(status(p), 'ErrImagePull');
  assert.equal(p.status?.phase, 'Pending');
  assert.match(p.status?.containerStatuses?.[0]?.state?.waiting?.message ?? '', /failed to resolve reference "docker\.io\/nosuch\/image:v1"/);
  await clock.advance(1000);
  p = api.pod('default', 'pull')!;
  assert.equal(status(p), 'ImagePullBackOff');
  assert.equal(p.status?.containerStatuses?.[0]?.state?.waiting?.message, 'Back-off pulling image "nosuch/image:v1"');
  await clock.advance(10_000);
  assert.equal(status(api.pod('default', 'pull')), 'ErrImagePull');
  assert.deepEqual(
    api.events.slice(0, 5).map((e) => [e.type, e.reason]),
    [
      ['Normal', 'Pulling'],
      ['Warning', 'Failed'],
      ['Warning', 'Failed'],
      ['Normal', 'BackOff'],
      ['Warning', 'Failed'],
    ],
  );
  await handle.stop();
});

test('slow-start scenario: ContainerCreating for the annotated delay', async () => {
  const { api, clock, handle } = await run();
  api.addPod(pod('slow', {}, { 'sim.kite.dev/scenario': 'slow-start', 'sim.kite.dev/start-delay': '45s' }));
  await clock.advance(200);
  assert.equal(status(api.pod('default', 'slow')), 'ContainerCreating');
  await clock.advance(44_999);
  assert.equal(status(api.pod('default', 'slow')), 'ContainerCreating');
  await clock.advance(1);
  assert.equal(status(api.pod('default', 'slow')), 'Running');
  await handle.stop();
});

test('heartbeat annotation: a stopped node renews no Lease and plays no stage; removed, it resumes at once', async () => {
  const { api, clock, handle } = await run();
  api.addPod(pod('web'));
  await clock.advance(200);
  assert.equal(api.pod('default', 'web')!.status?.phase, 'Running');
  const renewTime = (n: string) => api.leaseTable.items.get(`kube-node-lease/${n}`)?.spec?.renewTime;
  const annotate = (annotations: Record<string, string> | undefined) => {
    const n = api.nodeTable.items.get('sim-0')!;
    api.nodeTable.put({ ...n, metadata: { ...n.metadata, annotations } }, 'MODIFIED');
  };
  annotate({ 'sim.kite.dev/heartbeat': 'stopped' });
  await clock.advance(0);
  const lastRenewal = renewTime('sim-0');
  await clock.advance(30_000);
  assert.equal(renewTime('sim-0'), lastRenewal, 'no renewal while stopped');
  assert.notEqual(renewTime('sim-1'), lastRenewal, 'the other node renews');

  // The node lifecycle controller marks it Unknown: nothing reports it Ready again.
  const n = api.nodeTable.items.get('sim-0')!;
  api.nodeTable.put({ ...n, status: { ...n.status, conditions: n.status!.conditions!.map((c) => ({ ...c, status: 'Unknown' })) } }, 'MODIFIED');
  // Its pods neither finish a deletion nor start.
  api.markDeleted('default', 'web', rfc3339(clock.now()));
  api.addPod(pod('late'));
  const patches = api.count('patchNodeStatus') + api.count('patchPodStatus');
  await clock.advance(10_000);
  assert.equal(api.nodeTable.items.get('sim-0')!.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'Unknown');
  assert.equal(api.pod('default', 'web')!.status?.phase, 'Running', 'stays Terminating');
  assert.equal(api.pod('default', 'late')!.status?.phase, 'Pending');
  assert.equal(api.count('patchNodeStatus') + api.count('patchPodStatus'), patches);

  annotate(undefined);
  await clock.advance(0);
  assert.equal(renewTime('sim-0'), microTime(clock.now()), 'renewed at once');
  assert.equal(api.nodeTable.items.get('sim-0')!.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  await clock.advance(1_000);
  assert.equal(api.pod('default', 'web'), undefined, 'the deletion is finished');
  assert.equal(api.pod('default', 'late')!.status?.phase, 'Running');
  await handle.stop();
});

test('heartbeat annotation values', () => {
  const cases: [Record<string, string> | undefined, boolean, string | undefined][] = [
    [undefined, false, undefined],
    [{ 'sim.kite.dev/heartbeat': 'stopped' }, true, undefined],
    [{ 'sim.kite.dev/heartbeat': 'Stopped' }, false, 'annotation sim.kite.dev/heartbeat must be "stopped" (or absent), got "Stopped"'],
    [{ 'sim.kite.dev/heartbeat': '' }, false, 'annotation sim.kite.dev/heartbeat must be "stopped" (or absent), got ""'],
  ];
  for (const [annotations, stopped, error] of cases) assert.deepEqual(heartbeatStopped({ metadata: { annotations } }), error ? { stopped, error } : { stopped });
});

test('heartbeat annotation: another value is reported and the node runs on', async () => {
  const { api, clock, handle } = await run(1);
  const n = api.nodeTable.items.get('sim-0')!;
  api.nodeTable.put({ ...n, metadata: { ...n.metadata, annotations: { 'sim.kite.dev/heartbeat': 'paused' } } }, 'MODIFIED');
  await clock.advance(0);
  const before = api.count('updateLease');
  await clock.advance(20_000);
  assert.equal(api.count('updateLease'), before + 2);
  await handle.stop();
});
