// The kubelet's volume manager, reduced to what runs on one node without attach/detach: it sets up
// every volume of a pod under <rootDir>/pods/<uid>/volumes/<plugin>/<name> before the pod's
// containers are created, answers the CRI mounts for each container (makeMounts: subPath, readOnly,
// propagation), and tears it all down when the pod is gone. Contents of configMap, secret and
// projected volumes are written at every sync of the pod (the pod worker's resync each minute), so
// a token the token manager has rotated reaches the file then.
import { chmod, mkdir, rm } from 'node:fs/promises';
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Container, Pod, Volume } from '../../api/types.js';
import { Quantity } from '../../api/quantity.js';
import type { KubeletConfig } from '../config.js';
import { FAILED_MOUNT_VOLUME } from '../events.js';
import { type EventRecorder } from '../../client/record/recorder.js';
import { expand, mappingFor, type EnvSources } from '../kuberuntime/env.js';
import { podMemoryLimit } from '../kuberuntime/resources.js';
import type { KeyValue, Mount, MountPropagation } from '../runtime/types.js';
import { writeAtomic, type Payload } from './atomic-writer.js';
import { checkHostPathType } from './hostpath.js';
import { hostMounter, type Mounter } from './mounter.js';
import { DEFAULT_MODE, configMapPayload, downwardAPIPayload, projectedPayload, secretPayload } from './projections.js';
import { podRef } from '../../api/pod/reference.js';
import type { ServiceAccountTokenSource } from '../token/manager.js';

/** A pod's mounted volumes. */
export interface PodVolumes {
  /**
   * The CRI mounts of a container's volumeMounts. env (the container's final environment) expands
   * subPathExpr. Throws with upstream's message for a mount that names no volume or a bad subPath.
   */
  mounts(container: Container, env?: KeyValue[]): Mount[];
}

export interface VolumeManager {
  /** Sets up every volume; rejects with a VolumeMountError (FailedMount message) when one fails. */
  mountPod(pod: Pod): Promise<PodVolumes>;
  /** Unmounts and removes everything the pod had on the node (<rootDir>/pods/<uid>). */
  unmountPod(podUID: string): Promise<void>;
}

/** A volume that could not be set up; message as upstream's FailedMount event. */
export class VolumeMountError extends Error {
  constructor(
    readonly volume: string,
    message: string,
  ) {
    super(message);
    this.name = 'VolumeMountError';
  }
}

export interface VolumeManagerConfig {
  cfg: Pick<KubeletConfig, 'rootDir'>;
  sources: EnvSources;
  /** FailedMount events go to the pod. */
  recorder?: EventRecorder;
  /** The service-account tokens of projected volumes (the kubelet's token manager). */
  tokens?: ServiceAccountTokenSource;
  mounter?: Mounter;
  /** Node allocatable (cpu, memory, ...): downward API limits default to it, memory-backed emptyDirs are capped by it. */
  nodeAllocatable?: Record<string, string>;
}

/** The plugin folder names upstream uses (escaped qualified plugin names). */
export const PLUGIN_DIRS = {
  emptyDir: 'kubernetes.io~empty-dir',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
} as const;

interface MountedVolume {
  path: string;
  /** The plugin mounts it read-only whatever the volumeMount says (configMap, secret, downwardAPI, projected). */
  readOnly: boolean;
}

export function podDir(rootDir: string, podUID: string): string {
  return join(rootDir, 'pods', podUID);
}

const propagationModes: Record<string, MountPropagation> = {
  None: 'PROPAGATION_PRIVATE',
  HostToContainer: 'PROPAGATION_HOST_TO_CONTAINER',
  Bidirectional: 'PROPAGATION_BIDIRECTIONAL',
};

class MountedPodVolumes implements PodVolumes {
  constructor(private readonly volumes: Map<string, MountedVolume>) {}

  mounts(container: Container, env: KeyValue[] = []): Mount[] {
    const out: Mount[] = [];
    for (const vm of container.volumeMounts ?? []) {
      const vol = this.volumes.get(vm.name);
      if (!vol) throw new Error(`cannot find volume "${vm.name}" to mount into container "${container.name}"`);
      let hostPath = vol.path;
      let subPath = vm.subPath ?? '';
      if (vm.subPathExpr) subPath = expand(vm.subPathExpr, mappingFor(new Map(env.map((e) => [e.key, e.value]))));
      if (subPath) {
        if (isAbsolute(subPath)) throw new Error(`error SubPath \`${subPath}\` must not be an absolute path`);
        if (subPath.split('/').includes('..')) throw new Error(`unable to provision SubPath \`${subPath}\`: must not contain '..'`);
        hostPath = join(vol.path, subPath);
        provisionSubPath(vol.path, hostPath);
      }
      const propagation = propagationModes[vm.mountPropagation ?? 'None'] ?? 'PROPAGATION_PRIVATE';
      if (propagation === 'PROPAGATION_BIDIRECTIONAL' && container.securityContext?.privileged !== true) {
        throw new Error(`Bidirectional mount propagation is available only to privileged containers`);
      }
      out.push({ container_path: vm.mountPath, host_path: hostPath, readonly: vm.readOnly === true || vol.readOnly, propagation });
    }
    return out;
  }
}

/** Creates a missing subPath with the volume's own permissions, refusing one that resolves outside the volume. */
function provisionSubPath(volumePath: string, hostPath: string): void {
  try {
    statSync(hostPath);
  } catch {
    mkdirSync(hostPath, { recursive: true, mode: statSync(volumePath).mode & 0o7777 });
  }
  const root = realpathSync(volumePath);
  const real = realpathSync(hostPath);
  if (real !== root && !real.startsWith(`${root}/`)) {
    throw new Error(`subpath "${hostPath}" not within volume path "${volumePath}"`);
  }
}

export class KubeletVolumeManager implements VolumeManager {
  private readonly mounter: Mounter;
  private readonly nodeAllocatable: Record<string, string>;

  constructor(private readonly config: VolumeManagerConfig) {
    this.mounter = config.mounter ?? hostMounter;
    this.nodeAllocatable = config.nodeAllocatable ?? {};
  }

  async mountPod(pod: Pod): Promise<PodVolumes> {
    const uid = pod.metadata?.uid ?? '';
    if (!uid || uid.includes('/')) throw new Error(`invalid pod UID ${JSON.stringify(uid)}`);
    const mounted = new Map<string, MountedVolume>();
    const failures: VolumeMountError[] = [];
    for (const v of pod.spec?.volumes ?? []) {
      try {
        mounted.set(v.name, await this.setUp(pod, v));
      } catch (err) {
        const failure = new VolumeMountError(v.name, `MountVolume.SetUp failed for volume "${v.name}" : ${(err as Error).message}`);
        failures.push(failure);
        this.config.recorder?.event(
          podRef(pod),
          'Warning',
          FAILED_MOUNT_VOLUME,
          failure.message,
        );
      }
    }
    if (failures.length > 0) throw failures[0];
    return new MountedPodVolumes(mounted);
  }

  private volumeDir(pod: Pod, plugin: string, name: string): string {
    return join(podDir(this.config.cfg.rootDir, pod.metadata!.uid!), 'volumes', plugin, name);
  }

  private async setUp(pod: Pod, v: Volume): Promise<MountedVolume> {
    const { sources } = this.config;
    if (v.emptyDir) return { path: await this.setUpEmptyDir(pod, v), readOnly: false };
    if (v.hostPath) {
      await checkHostPathType(v.hostPath.path, v.hostPath.type);
      return { path: v.hostPath.path, readOnly: false };
    }
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    const write = async (plugin: string, payload: Payload): Promise<MountedVolume> => {
      const dir = this.volumeDir(pod, plugin, v.name);
      await writeAtomic(dir, payload, { fsGroup });
      return { path: dir, readOnly: true };
    };
    if (v.configMap) return write(PLUGIN_DIRS.configMap, await configMapPayload(pod, v.configMap, sources));
    if (v.secret) return write(PLUGIN_DIRS.secret, await secretPayload(pod, v.secret, sources));
    if (v.downwardAPI) {
      return write(PLUGIN_DIRS.downwardAPI, downwardAPIPayload(pod, v.downwardAPI.items, v.downwardAPI.defaultMode ?? DEFAULT_MODE, this.nodeAllocatable));
    }
    if (v.projected) return write(PLUGIN_DIRS.projected, await projectedPayload(pod, v.projected, sources, this.nodeAllocatable, this.config.tokens));
    throw new Error('no volume plugin matched');
  }

  private async setUpEmptyDir(pod: Pod, v: Volume): Promise<string> {
    const dir = this.volumeDir(pod, PLUGIN_DIRS.emptyDir, v.name);
    const medium = v.emptyDir?.medium ?? '';
    if (medium !== '' && medium !== 'Memory') throw new Error(`unsupported medium ${JSON.stringify(medium)} for emptyDir`);
    await mkdir(dir, { recursive: true });
    if (medium === 'Memory' && !(await this.mounter.mountsUnder(dir)).includes(dir)) {
      await this.mounter.mountTmpfs(dir, this.tmpfsSize(pod, v));
    }
    // Any user of the pod may write an emptyDir (upstream's perm 0777).
    await chmod(dir, 0o777);
    return dir;
  }

  /** calculateEmptyDirMemorySize: the smallest positive of sizeLimit, the pod's memory limit and node allocatable memory. */
  private tmpfsSize(pod: Pod, v: Volume): number | undefined {
    const candidates: Quantity[] = [];
    const allocatable = this.nodeAllocatable.memory;
    if (allocatable !== undefined) candidates.push(Quantity.from(allocatable));
    const podLimit = podMemoryLimit(pod);
    if (podLimit) candidates.push(podLimit);
    if (v.emptyDir?.sizeLimit !== undefined) candidates.push(Quantity.from(v.emptyDir.sizeLimit as string | number));
    const positive = candidates.filter((q) => q.sign() > 0).sort((a, b) => a.cmp(b));
    return positive[0] ? Number(positive[0].value()) : undefined;
  }

  async unmountPod(podUID: string): Promise<void> {
    if (!podUID || podUID.includes('/') || podUID === '.' || podUID === '..') throw new Error(`invalid pod UID ${JSON.stringify(podUID)}`);
    const dir = podDir(this.config.cfg.rootDir, podUID);
    for (const m of await this.mounter.mountsUnder(dir)) await this.mounter.unmount(m);
    // Never remove through a mount that is still there: it would delete its contents on the host.
    const left = await this.mounter.mountsUnder(dir);
    if (left.length > 0) throw new Error(`pod ${podUID} still has mounts: ${left.join(', ')}`);
    await rm(dir, { recursive: true, force: true });
    this.config.tokens?.deleteServiceAccountToken(podUID);
  }
}
