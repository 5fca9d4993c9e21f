import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RuntimeError, type ContainerConfig, type PodSandboxConfig, type Runtime } from '../types.js';
import { measureFloor } from './floor.js';

/** Records the calls measureFloor makes; everything else is unreachable. */
function recordingRuntime(opts: { imagePresent: boolean; failStartAt?: number }) {
  const calls: string[] = [];
  const sandboxes: PodSandboxConfig[] = [];
  const containers: ContainerConfig[] = [];
  let n = 0;
  const runtime: Partial<Runtime> = {
    imageStatus: async (image) => {
      calls.push(`ImageStatus ${image.image}`);
      return opts.imagePresent ? { id: 'sha256:1', repo_tags: [image.image], repo_digests: [], size: 1 } : undefined;
    },
    pullImage: async (image) => {
      calls.push(`PullImage ${image.image}`);
      return 'sha256:1';
    },
    runPodSandbox: async (config) => {
      sandboxes.push(config);
      await mkdir(config.log_directory!, { recursive: true });
      calls.push('RunPodSandbox');
      return `sb-${n}`;
    },
    createContainer: async (id, config) => {
      containers.push(config);
      calls.push(`CreateContainer ${id}`);
      return `c-${n}`;
    },
    startContainer: async (id) => {
      calls.push(`StartContainer ${id}`);
      if (opts.failStartAt === n) throw new RuntimeError('UNKNOWN', 'failed to start containerd task');
      n++;
    },
    stopContainer: async (id, timeout) => void calls.push(`StopContainer ${id} ${timeout}`),
    removeContainer: async (id) => void calls.push(`RemoveContainer ${id}`),
    stopPodSandbox: async (id) => void calls.push(`StopPodSandbox ${id}`),
    removePodSandbox: async (id) => void calls.push(`RemovePodSandbox ${id}`),
  };
  return { runtime: runtime as Runtime, calls, sandboxes, containers };
}

describe('measureFloor', () => {
  let podsDir: string;
  before(async () => {
    podsDir = await mkdtemp(join(tmpdir(), 'kite-floor-'));
  });
  after(async () => {
    await rm(podsDir, { recursive: true, force: true });
  });

  const cgroupRoot = '/kite-floor-unit-test';

  it('keeps every pod running until the last has started when asked to', async () => {
    const rt = recordingRuntime({ imagePresent: true });
    const samples = await measureFloor(rt.runtime, { image: 'busybox', podsDir, count: 3, cgroupRoot, keepRunning: true });
    assert.equal(samples.podStartMs.length, 3);
    assert.equal(samples.teardownMs.length, 3);
    const lastStart = rt.calls.lastIndexOf('StartContainer c-2');
    const firstStop = rt.calls.findIndex((c) => c.startsWith('StopPodSandbox'));
    assert.ok(lastStart >= 0 && firstStop > lastStart, rt.calls.join('\n'));
  });

  it('pulls a missing image, runs pods one by one and tears each down', async () => {
    const rt = recordingRuntime({ imagePresent: false });
    const samples = await measureFloor(rt.runtime, { image: 'docker.io/library/busybox:1.35', podsDir, count: 2, cgroupRoot });
    assert.deepEqual(rt.calls, [
      'ImageStatus docker.io/library/busybox:1.35',
      'PullImage docker.io/library/busybox:1.35',
      'RunPodSandbox', 'CreateContainer sb-0', 'StartContainer c-0',
      'StopContainer c-0 0', 'RemoveContainer c-0', 'StopPodSandbox sb-0', 'RemovePodSandbox sb-0',
      'RunPodSandbox', 'CreateContainer sb-1', 'StartContainer c-1',
      'StopContainer c-1 0', 'RemoveContainer c-1', 'StopPodSandbox sb-1', 'RemovePodSandbox sb-1',
    ]);
    for (const key of ['podStartMs', 'runPodSandboxMs', 'createStartMs', 'teardownMs'] as const) assert.equal(samples[key].length, 2, key);
    const sb = rt.sandboxes[0]!;
    assert.equal(sb.linux!.cgroup_parent, `${cgroupRoot}/besteffort/pod${sb.metadata.uid}`);
    assert.equal(sb.log_directory, join(podsDir, `kite-floor_floor-0_${sb.metadata.uid}`));
    assert.notEqual(rt.sandboxes[1]!.metadata.uid, sb.metadata.uid);
    assert.deepEqual(rt.containers[0]!.command, ['sleep', '3600']);
    assert.equal(rt.containers[0]!.log_path, 'sleep/0.log');
    await assert.rejects(stat(sb.log_directory!), { code: 'ENOENT' });
  });

  it('does not pull a present image', async () => {
    const rt = recordingRuntime({ imagePresent: true });
    await measureFloor(rt.runtime, { image: 'busybox', podsDir, count: 1, cgroupRoot });
    assert.ok(!rt.calls.some((c) => c.startsWith('PullImage')));
  });

  it('tears down a pod whose start failed and reports the error', async () => {
    const rt = recordingRuntime({ imagePresent: true, failStartAt: 0 });
    await assert.rejects(measureFloor(rt.runtime, { image: 'busybox', podsDir, count: 3, cgroupRoot }), /failed to start containerd task/);
    assert.deepEqual(rt.calls.slice(-4), ['StopContainer c-0 0', 'RemoveContainer c-0', 'StopPodSandbox sb-0', 'RemovePodSandbox sb-0']);
    assert.equal(rt.calls.filter((c) => c === 'RunPodSandbox').length, 1);
  });
});
