import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { FakeRuntime } from '../runtime/fake/fake.js';
import { CONTAINER_NAME_LABEL, CONTAINER_RESTART_COUNT_ANNOTATION, POD_UID_LABEL } from './labels.js';
import { CONTAINER_GC_PERIOD_MS, ContainerGC, type PodStateProvider } from './gc.js';

type PodState = 'syncing' | 'terminated' | 'deleted';

/** What the pod workers know: a UID missing from the map is a pod the kubelet never saw. */
function podStates(states: Record<string, PodState>): PodStateProvider {
  return {
    shouldPodContentBeRemoved: (uid) => !(uid in states) || states[uid] === 'deleted',
    shouldPodRuntimeBeRemoved: (uid) => !(uid in states) || states[uid] !== 'syncing',
  };
}

async function setup(states: Record<string, PodState>, opts: { ready?: boolean; maxPerPodContainer?: number; maxContainers?: number; minimumContainerTTLMs?: number } = {}) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime(clock);
  const recorder = new FakeRecorder();
  const podLogsDir = await mkdtemp(join(tmpdir(), 'kite-gc-'));
  const gc = new ContainerGC({
    runtime,
    pods: podStates(states),
    allSourcesReady: () => opts.ready ?? true,
    cfg: { minimumContainerTTLMs: opts.minimumContainerTTLMs ?? 0, maxPerPodContainer: opts.maxPerPodContainer ?? 1, maxContainers: opts.maxContainers ?? -1, podLogsDir },
    clock,
    recorder,
    nodeRef: { kind: 'Node', name: 'n1', uid: 'n1' },
    log: () => {},
  });
  runtime.addImage('busybox');
  return { clock, runtime, recorder, gc, podLogsDir };
}

/** A sandbox of the pod, ready unless stopped. */
async function sandbox(runtime: FakeRuntime, uid: string, ready = true): Promise<string> {
  const id = await runtime.runPodSandbox({ metadata: { name: uid, namespace: 'ns', uid, attempt: 0 }, labels: { [POD_UID_LABEL]: uid } });
  if (!ready) await runtime.stopPodSandbox(id);
  return id;
}

/** Attempts of one container, a second apart; all dead unless the newest is to keep running. */
async function attempts(clock: FakeClock, runtime: FakeRuntime, sandboxId: string, uid: string, name: string, n: number, newestRunning = false): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await runtime.createContainer(
      sandboxId,
      { metadata: { name, attempt: i }, image: { image: 'busybox' }, labels: { [POD_UID_LABEL]: uid, [CONTAINER_NAME_LABEL]: name }, annotations: { [CONTAINER_RESTART_COUNT_ANNOTATION]: String(i) } },
      { metadata: { name: uid, namespace: 'ns', uid, attempt: 0 } },
    );
    await runtime.startContainer(id);
    if (!(newestRunning && i === n - 1)) runtime.exitContainer(id, 1);
    ids.push(id);
    await clock.advance(1000);
  }
  return ids;
}

const left = (runtime: FakeRuntime) => [...runtime.containers.keys()].sort();

describe('ContainerGC', () => {
  it('a live pod keeps its newest dead attempt per container beside the running one', async () => {
    const { clock, runtime, gc } = await setup({ p1: 'syncing' });
    const s = await sandbox(runtime, 'p1');
    const app = await attempts(clock, runtime, s, 'p1', 'app', 4, true);
    const init = await attempts(clock, runtime, s, 'p1', 'init', 2);
    await gc.garbageCollect();
    assert.deepEqual(left(runtime), [app[2]!, app[3]!, init[1]!].sort());
  });

  it('the newest attempt dead: only it stays (it carries the last state and the restart count)', async () => {
    const { clock, runtime, gc } = await setup({ p1: 'syncing' });
    const s = await sandbox(runtime, 'p1');
    const app = await attempts(clock, runtime, s, 'p1', 'app', 3);
    await gc.garbageCollect();
    assert.deepEqual(left(runtime), [app[2]!]);
  });

  const podCases: { name: string; state?: PodState; ready?: boolean; all?: boolean; wantContainersLeft: number; wantSandboxesLeft: number; wantLogs: boolean }[] = [
    { name: 'a deleted, terminated pod loses everything, its log directory too', state: 'deleted', wantContainersLeft: 0, wantSandboxesLeft: 0, wantLogs: false },
    { name: 'a pod never seen (gone while the kubelet was down) loses everything', wantContainersLeft: 0, wantSandboxesLeft: 0, wantLogs: false },
    { name: 'before the pod informer synced, an unknown pod is only trimmed', ready: false, wantContainersLeft: 1, wantSandboxesLeft: 1, wantLogs: true },
    { name: 'a terminated pod still in the API keeps its newest dead container and sandbox', state: 'terminated', wantContainersLeft: 1, wantSandboxesLeft: 1, wantLogs: true },
    { name: 'deleteAllUnusedContainers: a terminated pod still in the API loses them', state: 'terminated', all: true, wantContainersLeft: 0, wantSandboxesLeft: 0, wantLogs: true },
  ];
  for (const tc of podCases) {
    it(tc.name, async () => {
      const { clock, runtime, gc, podLogsDir } = await setup(tc.state ? { p1: tc.state } : {}, { ready: tc.ready });
      await sandbox(runtime, 'p1', false);
      await clock.advance(1000);
      const s = await sandbox(runtime, 'p1');
      await attempts(clock, runtime, s, 'p1', 'app', 2);
      await runtime.stopPodSandbox(s);
      const logs = join(podLogsDir, 'ns_p1_p1');
      await mkdir(join(logs, 'app'), { recursive: true });
      await writeFile(join(logs, 'app', '0.log'), 'x');
      await (tc.all ? gc.deleteAllUnusedContainers() : gc.garbageCollect());
      assert.equal(runtime.containers.size, tc.wantContainersLeft);
      assert.equal(runtime.sandboxes.size, tc.wantSandboxesLeft);
      assert.equal(existsSync(logs), tc.wantLogs);
      await rm(podLogsDir, { recursive: true });
    });
  }

  it('a ready sandbox and one that still has containers are never removed', async () => {
    const { clock, runtime, gc } = await setup({ p1: 'syncing' });
    const old = await sandbox(runtime, 'p1');
    await attempts(clock, runtime, old, 'p1', 'app', 1);
    await runtime.stopPodSandbox(old);
    const ready = await sandbox(runtime, 'p1');
    await gc.garbageCollect();
    assert.deepEqual([...runtime.sandboxes.keys()].sort(), [old, ready].sort());
  });

  it('maxContainers: an equal share per unit, then the oldest overall', async () => {
    const { clock, runtime, gc } = await setup({ p1: 'syncing', p2: 'syncing' }, { maxPerPodContainer: -1, maxContainers: 3 });
    const a = await attempts(clock, runtime, await sandbox(runtime, 'p1'), 'p1', 'a', 3);
    const b = await attempts(clock, runtime, await sandbox(runtime, 'p2'), 'p2', 'b', 2);
    // A share of 1 each leaves a[2] and b[1]: within 3.
    await gc.garbageCollect();
    assert.deepEqual(left(runtime), [a[2]!, b[1]!].sort());
  });

  it('minimumContainerTTL: younger dead containers stay', async () => {
    const { clock, runtime, gc } = await setup({ p1: 'syncing' }, { minimumContainerTTLMs: 10_000 });
    const app = await attempts(clock, runtime, await sandbox(runtime, 'p1'), 'p1', 'app', 3);
    await gc.garbageCollect();
    assert.deepEqual(left(runtime), app);
    await clock.advance(10_000);
    await gc.garbageCollect();
    assert.deepEqual(left(runtime), [app[2]!]);
  });

  it('a container in an unknown state is stopped before it is removed', async () => {
    const { clock, runtime, gc } = await setup({ p1: 'syncing' });
    const app = await attempts(clock, runtime, await sandbox(runtime, 'p1'), 'p1', 'app', 2);
    runtime.containers.get(app[0]!)!.state = 'CONTAINER_UNKNOWN';
    await gc.garbageCollect();
    assert.deepEqual(runtime.callsOf('stopContainer'), [[app[0], 2]]);
    assert.deepEqual(left(runtime), [app[1]!]);
  });

  it('runs every minute; a failed run is a ContainerGCFailed event on the node', async () => {
    // Sources not ready: no log directory is read, so each run is over within the clock's step.
    const { clock, runtime, recorder, gc } = await setup({ p1: 'syncing' }, { ready: false });
    await attempts(clock, runtime, await sandbox(runtime, 'p1'), 'p1', 'app', 2);
    gc.start();
    await clock.advance(CONTAINER_GC_PERIOD_MS);
    assert.equal(runtime.containers.size, 1);
    runtime.failNext('listContainers', new Error('runtime down'));
    await clock.advance(CONTAINER_GC_PERIOD_MS);
    assert.deepEqual(
      recorder.events.map((e) => `${e.object.kind}/${e.object.name} ${e.type} ${e.reason} ${e.message}`),
      ['Node/n1 Warning ContainerGCFailed runtime down'],
    );
    await gc.stop();
  });
});
