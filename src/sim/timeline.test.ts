import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Pod } from '../api/types.js';
import { rfc3339 } from '../api/time.js';
import { FakeTimelineRecorder } from '../client/timeline/recorder.js';
import { FakeClock } from '../util/clock.js';
import { startSim } from './sim.js';
import { FakeSimApi } from './testing.js';

const logger = pino({ level: 'silent' });

async function run() {
  const api = new FakeSimApi();
  const clock = new FakeClock();
  const timeline = new FakeTimelineRecorder();
  const handle = startSim({ api, nodes: 2, clock, logger, random: () => 0, timeline });
  await handle.registered;
  await clock.advance(0);
  return { api, clock, handle, timeline };
}

const pod = (name: string, node = 'sim-0', extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name, namespace: 'default', uid: `${name}-uid` },
  spec: { nodeName: node, containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra },
  status: { phase: 'Pending' },
});

const rows = (timeline: FakeTimelineRecorder, uid: string) => timeline.steps(uid).map((s) => [s.step, s.container ?? '']);

test("a simulated pod's life: the kubelet steps its stages stand for, under kubelet/<node>", async () => {
  const { api, clock, handle, timeline } = await run();
  api.addPod(pod('web', 'sim-0', { initContainers: [{ name: 'init', image: 'busybox' }] }));
  await clock.advance(2_000);
  assert.equal(api.pod('default', 'web')?.status?.phase, 'Running');
  assert.deepEqual(rows(timeline, 'web-uid'), [
    ['KubeletAdmitted', ''],
    ['SandboxCreated', ''],
    ['PodIPAssigned', ''],
    ['ContainerCreated', 'init'],
    ['ContainerStarted', 'init'],
    ['ContainerExited', 'init'],
    ['ContainerCreated', 'app'],
    ['ContainerStarted', 'app'],
    ['ContainersReady', ''],
    ['Ready', ''],
  ]);
  const steps = timeline.steps('web-uid');
  assert.ok(steps.every((s) => s.component === 'kubelet/sim-0'));
  assert.deepEqual(timeline.records[0]?.pod, { namespace: 'default', name: 'web', uid: 'web-uid' });
  assert.equal(steps[2]?.attributes?.ip, api.pod('default', 'web')?.status?.podIP);
  assert.deepEqual([steps[3]?.containerType, steps[6]?.containerType], ['init', 'regular']);

  const before = timeline.records.length;
  api.markDeleted('default', 'web', rfc3339(clock.now()));
  await clock.advance(500);
  assert.deepEqual(
    timeline.steps('web-uid').slice(before).map((s) => [s.step, s.container ?? '', s.attributes ?? {}]),
    [
      ['SIGTERM', 'app', {}],
      ['ContainerExited', 'app', { exitCode: 0, reason: 'Completed' }],
      ['StatusFinal', '', { phase: 'Succeeded' }],
    ],
  );
  await handle.stop();
});

test('a node whose heartbeat is stopped records nothing for its pods', async () => {
  const { api, clock, handle, timeline } = await run();
  const n = api.nodeTable.items.get('sim-1')!;
  api.nodeTable.put({ ...n, metadata: { ...n.metadata, annotations: { 'sim.kite.dev/heartbeat': 'stopped' } } }, 'MODIFIED');
  await clock.advance(0);
  api.addPod(pod('dead', 'sim-1'));
  api.addPod(pod('alive', 'sim-0'));
  await clock.advance(5_000);
  assert.deepEqual(timeline.steps('dead-uid'), []);
  assert.ok(timeline.steps('alive-uid').some((s) => s.step === 'Ready'));
  await handle.stop();
});

test('crash loop: exits, BackOff and ContainerRestarted as series counted by restartCount', async () => {
  const { api, clock, handle, timeline } = await run();
  api.addPod({ ...pod('crash'), metadata: { ...pod('crash').metadata, annotations: { 'sim.kite.dev/scenario': 'crash-loop' } } });
  await clock.advance(60_000);
  const restarts = api.pod('default', 'crash')?.status?.containerStatuses?.[0]?.restartCount ?? 0;
  assert.ok(restarts >= 2);
  const restarted = timeline.steps('crash-uid').filter((s) => s.step === 'ContainerRestarted');
  assert.deepEqual(
    restarted.map((s) => s.count),
    Array.from({ length: restarts }, (_, i) => i + 1),
  );
  const backOffs = timeline.steps('crash-uid').filter((s) => s.step === 'BackOff');
  assert.ok(backOffs.length > 0 && backOffs.every((s) => s.attributes?.reason === 'CrashLoopBackOff' && s.count! >= 1 && s.lastTime === s.start));
  assert.ok(timeline.steps('crash-uid').some((s) => s.step === 'ContainerExited' && s.attributes?.exitCode !== 0));
  await handle.stop();
});
