import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { FakeRuntime, normalizeImage } from '../runtime/fake/fake.js';
import { IMAGE_GC_PERIOD_MS, ImageGCManager, type ImageGCPolicy } from './gc.js';

const PAUSE = 'registry.k8s.io/pause:3.10';
const MINUTE = 60_000;

/** A 1000-byte image filesystem: 700 bytes of other data plus the images' sizes. */
function setup(policy: Partial<ImageGCPolicy> = {}, capacity = 1000) {
  const clock = new FakeClock();
  const runtime = new FakeRuntime(clock);
  const recorder = new FakeRecorder();
  const disk = { capacity, other: 700 };
  const used = () => disk.other + [...runtime.images.values()].reduce((n, i) => n + i.size, 0);
  const gc = new ImageGCManager({
    runtime,
    imageFsStats: async () => ({ capacityBytes: disk.capacity, availableBytes: disk.capacity - used() }),
    policy: { imageGCHighThresholdPercent: 85, imageGCLowThresholdPercent: 80, imageMinimumGCAgeMs: 2 * MINUTE, imageMaximumGCAgeMs: 0, ...policy },
    pauseImage: PAUSE,
    clock,
    recorder,
    nodeRef: { kind: 'Node', name: 'n1', uid: 'n1' },
    log: () => {},
  });
  return { clock, runtime, recorder, gc, disk };
}

/** A container (exited or not, it counts as a user) of the image. */
async function useImage(runtime: FakeRuntime, image: string): Promise<void> {
  const sandbox = { metadata: { name: 'p', namespace: 'ns', uid: `uid-${image}`, attempt: 0 } };
  const id = await runtime.runPodSandbox(sandbox);
  await runtime.createContainer(id, { metadata: { name: 'c', attempt: 0 }, image: { image } }, sandbox);
}

const present = (runtime: FakeRuntime) => [...runtime.images.keys()].map((r) => r.replace('docker.io/library/', '')).sort();
const events = (r: FakeRecorder) => r.events.map((e) => `${e.type} ${e.reason} ${e.message}`);

describe('ImageGCManager', () => {
  const cases: { name: string; images: [string, number][]; inUse?: string[]; recent?: string[]; policy?: Partial<ImageGCPolicy>; wantLeft: string[]; wantEvents?: string[] }[] = [
    {
      name: 'under the high threshold: nothing goes',
      images: [['a:1', 50], ['b:1', 50], [PAUSE, 10]],
      wantLeft: ['a:1', 'b:1', PAUSE],
    },
    {
      // 700 + 60 + 50 + 40 + 10 = 860 used (86%): free down to 80% (800), 60 bytes, least recently used first.
      name: 'over the high threshold: unused images, least recently used first, down to the low threshold',
      images: [['old:1', 60], ['used:1', 50], ['next:1', 40], [PAUSE, 10]],
      inUse: ['used:1'],
      wantLeft: ['next:1', PAUSE, 'used:1'],
    },
    {
      name: 'images detected less than imageMinimumGCAge ago are spared, so the goal is missed',
      images: [['a:1', 100], [PAUSE, 60]],
      recent: ['a:1'],
      wantLeft: ['a:1', PAUSE],
      wantEvents: ['Warning FreeDiskSpaceFailed Failed to garbage collect required amount of images. Attempted to free 60 bytes, but only found 0 bytes eligible to free.'],
    },
    {
      name: 'imageMaximumGCAge: an image unused that long goes whatever the usage',
      images: [['a:1', 10], ['used:1', 10], [PAUSE, 10]],
      inUse: ['used:1'],
      policy: { imageMaximumGCAgeMs: 3 * MINUTE },
      wantLeft: [PAUSE, 'used:1'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const { clock, runtime, recorder, gc } = setup(tc.policy);
      for (const [ref, size] of tc.images) if (!tc.recent?.includes(ref)) runtime.addImage(ref, { size });
      for (const ref of tc.inUse ?? []) await useImage(runtime, ref);
      // Detected at start; the last used ones stay in use, the recent ones appear just before the run.
      gc.start();
      await clock.advance(IMAGE_GC_PERIOD_MS - MINUTE);
      for (const [ref, size] of tc.images) if (tc.recent?.includes(ref)) runtime.addImage(ref, { size });
      await gc.garbageCollect().catch(() => undefined);
      await gc.stop();
      assert.deepEqual(present(runtime), tc.wantLeft.map((r) => normalizeImage(r).replace('docker.io/library/', '')).sort());
      assert.deepEqual(events(recorder), tc.wantEvents ?? []);
    });
  }

  it('the least recently used goes first, ties broken by first detection', async () => {
    const { clock, runtime, gc, disk } = setup();
    disk.other = 0;
    runtime.addImage('first:1', { size: 100 });
    await gc.garbageCollect();
    await clock.advance(MINUTE);
    // Listed before the first one from now on.
    const first = runtime.images.get(normalizeImage('first:1'))!;
    runtime.images.delete(normalizeImage('first:1'));
    runtime.addImage('second:1', { size: 100 });
    runtime.images.set(normalizeImage('first:1'), first);
    await gc.garbageCollect();
    await clock.advance(10 * MINUTE);
    // 900 of 1000 used: 100 bytes to free, the first detected goes.
    disk.other = 700;
    await gc.garbageCollect();
    assert.deepEqual(present(runtime), ['second:1']);
  });

  it('a failing run is an ImageGCFailed event only when the one before failed too', async () => {
    const { clock, runtime, recorder, gc } = setup({}, 0);
    runtime.addImage('a:1');
    gc.start();
    await clock.advance(IMAGE_GC_PERIOD_MS);
    assert.deepEqual(events(recorder), ['Warning InvalidDiskCapacity invalid capacity 0 on image filesystem']);
    await clock.advance(IMAGE_GC_PERIOD_MS);
    assert.deepEqual(events(recorder).slice(1), ['Warning InvalidDiskCapacity invalid capacity 0 on image filesystem', 'Warning ImageGCFailed invalid capacity 0 on image filesystem']);
    await gc.stop();
  });

  it('deleteUnusedImages (for the eviction manager) removes every unused image old enough and answers the bytes freed', async () => {
    const { clock, runtime, gc } = setup();
    runtime.addImage('a:1', { size: 30 });
    runtime.addImage('b:1', { size: 20 });
    runtime.addImage('used:1', { size: 40 });
    runtime.addImage(PAUSE, { size: 5 });
    await useImage(runtime, 'used:1');
    gc.start();
    await clock.advance(3 * MINUTE);
    runtime.addImage('young:1', { size: 7 });
    assert.equal(await gc.deleteUnusedImages(), 50);
    assert.deepEqual(present(runtime), [PAUSE, 'used:1', 'young:1']);
    await gc.stop();
  });
});
