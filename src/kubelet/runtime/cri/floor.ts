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

export async function measureFloor(runtime: Runtime, opts: FloorOptions): Promise<FloorSamples> {
  if (!(await runtime.imageStatus({ image: opts.image }))) await runtime.pullImage({ image: opts.image });
  const samples: FloorSamples = { podStartMs: [], runPodSandboxMs: [], createStartMs: [], teardownMs: [] };
  for (let i = 0; i < opts.count; i++) {
    const uid = randomUUID();
    const namespace = opts.namespace ?? 'kite-floor';
    const name = `floor-${i}`;
    const cgroupParent = podCgroupParent('BestEffort', uid, opts.cgroupRoot);
    const logDirectory = join(opts.podsDir, `${namespace}_${name}_${uid}`);
    const sandboxConfig: PodSandboxConfig = {
      metadata: { name, uid, namespace, attempt: 0 },
      hostname: name,
      log_directory: logDirectory,
      linux: { cgroup_parent: cgroupParent, security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
    };
    const containerConfig: ContainerConfig = {
      metadata: { name: 'sleep', attempt: 0 },
      image: { image: opts.image },
      command: ['sleep', '3600'],
      log_path: 'sleep/0.log',
    };
    let sandboxId: string | undefined;
    let containerId: string | undefined;
    try {
      const t0 = performance.now();
      sandboxId = await runtime.runPodSandbox(sandboxConfig);
      const t1 = performance.now();
      containerId = await runtime.createContainer(sandboxId, containerConfig, sandboxConfig);
      await runtime.startContainer(containerId);
      const t2 = performance.now();
      samples.runPodSandboxMs.push(t1 - t0);
      samples.createStartMs.push(t2 - t1);
      samples.podStartMs.push(t2 - t0);
    } finally {
      // Torn down also when a step failed, so a failed run leaves nothing behind.
      const t3 = performance.now();
      if (containerId) {
        await runtime.stopContainer(containerId, 0);
        await runtime.removeContainer(containerId);
      }
      if (sandboxId) {
        await runtime.stopPodSandbox(sandboxId);
        await runtime.removePodSandbox(sandboxId);
      }
      if (containerId && sandboxId) samples.teardownMs.push(performance.now() - t3);
      // runc leaves the pod-level cgroup folders, and containerd the logs.
      await removeCgroup(cgroupParent);
      await rm(logDirectory, { recursive: true, force: true });
    }
  }
  return samples;
}
