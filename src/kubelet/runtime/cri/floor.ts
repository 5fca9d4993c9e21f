// The floor under the kubelet: what the runtime itself costs to start a pod, measured with bare CRI
// calls (RunPodSandbox, CreateContainer, StartContainer) one pod at a time. A kubelet benchmark
// prints its pod start latency beside these numbers.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { podCgroupParent, removeCgroup } from '../../cm/cgroups.js';
import type { ContainerConfig, PodSandboxConfig, Runtime } from '../types.js';

export interface FloorOptions {
  /** A fully qualified image with a `sleep` binary (busybox); pulled first when absent. */
  image: string;
  /** Log directories of the measured pods go here (and are removed with them). */
  podsDir: string;
  count: number;
  /** The pods' cgroup root (cgroupfs path); each pod is a BestEffort pod below it. */
  cgroupRoot?: string;
  namespace?: string;
  /**
   * Keep every pod running until the last one has started, then tear them all down: the shape of a
   * kubelet benchmark whose pods pile up (containerd slows down as shims accumulate).
   */
  keepRunning?: boolean;
}

/** Milliseconds per pod, in the order the pods ran. */
export interface FloorSamples {
  /** RunPodSandbox called → StartContainer returned (the container runs). */
  podStartMs: number[];
  runPodSandboxMs: number[];
  /** CreateContainer + StartContainer. */
  createStartMs: number[];
  /** StopContainer (no grace) + RemoveContainer + StopPodSandbox + RemovePodSandbox. */
  teardownMs: number[];
}

interface FloorPod {
  sandboxId?: string;
  containerId?: string;
  cgroupParent: string;
  logDirectory: string;
}

/** Torn down also when a step failed, so a failed run leaves nothing behind. */
async function teardown(runtime: Runtime, pod: FloorPod, samples: FloorSamples): Promise<void> {
  const t = performance.now();
  if (pod.containerId) {
    await runtime.stopContainer(pod.containerId, 0);
    await runtime.removeContainer(pod.containerId);
  }
  if (pod.sandboxId) {
    await runtime.stopPodSandbox(pod.sandboxId);
    await runtime.removePodSandbox(pod.sandboxId);
  }
  if (pod.containerId && pod.sandboxId) samples.teardownMs.push(performance.now() - t);
  // runc leaves the pod-level cgroup folders, and containerd the logs.
  await removeCgroup(pod.cgroupParent);
  await rm(pod.logDirectory, { recursive: true, force: true });
}

export async function measureFloor(runtime: Runtime, opts: FloorOptions): Promise<FloorSamples> {
  if (!(await runtime.imageStatus({ image: opts.image }))) await runtime.pullImage({ image: opts.image });
  const samples: FloorSamples = { podStartMs: [], runPodSandboxMs: [], createStartMs: [], teardownMs: [] };
  const running: FloorPod[] = [];
  try {
    for (let i = 0; i < opts.count; i++) {
      const uid = randomUUID();
      const namespace = opts.namespace ?? 'kite-floor';
      const name = `floor-${i}`;
      const pod: FloorPod = { cgroupParent: podCgroupParent('BestEffort', uid, opts.cgroupRoot), logDirectory: join(opts.podsDir, `${namespace}_${name}_${uid}`) };
      running.push(pod);
      const sandboxConfig: PodSandboxConfig = {
        metadata: { name, uid, namespace, attempt: 0 },
        hostname: name,
        log_directory: pod.logDirectory,
        linux: { cgroup_parent: pod.cgroupParent, security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
      };
      const containerConfig: ContainerConfig = {
        metadata: { name: 'sleep', attempt: 0 },
        image: { image: opts.image },
        command: ['sleep', '3600'],
        log_path: 'sleep/0.log',
      };
      const t0 = performance.now();
      pod.sandboxId = await runtime.runPodSandbox(sandboxConfig);
      const t1 = performance.now();
      pod.containerId = await runtime.createContainer(pod.sandboxId, containerConfig, sandboxConfig);
      await runtime.startContainer(pod.containerId);
      const t2 = performance.now();
      samples.runPodSandboxMs.push(t1 - t0);
      samples.createStartMs.push(t2 - t1);
      samples.podStartMs.push(t2 - t0);
      if (!opts.keepRunning) await teardown(runtime, running.pop()!, samples);
    }
  } finally {
    for (const pod of running) await teardown(runtime, pod, samples);
  }
  return samples;
}
