// Security settings sent to the runtime, as upstream's kuberuntime/security_context.go and
// pkg/securitycontext: the container's effective context (its own fields over the pod's), namespace
// modes, seccomp profiles, masked and read-only /proc paths, and the runAsNonRoot check.
import type { Container, Pod } from '../../api/types.js';
import type { SeccompProfile } from 'kubernetes-types/core/v1.js';
import type { KubeletConfig } from '../config.js';
import { formatPod } from './backoff.js';
import type { LinuxContainerSecurityContext, LinuxSandboxSecurityContext, NamespaceOption, SecurityProfile } from '../runtime/types.js';

/** /proc and /sys paths hidden from non-privileged containers (securitycontext.DefaultMaskedPaths). */
export const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
export const DEFAULT_READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** The fields where a container's securityContext overrides the pod's (DetermineEffectiveSecurityContext). */
export interface EffectiveSecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  seccompProfile?: SeccompProfile;
  privileged?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  procMount?: string;
}

export function effectiveSecurityContext(pod: Pod, container: Container): EffectiveSecurityContext {
  const p = pod.spec?.securityContext ?? {};
  const c = container.securityContext ?? {};
  return {
    runAsUser: c.runAsUser ?? p.runAsUser,
    runAsGroup: c.runAsGroup ?? p.runAsGroup,
    runAsNonRoot: c.runAsNonRoot ?? p.runAsNonRoot,
    seccompProfile: c.seccompProfile ?? p.seccompProfile,
    privileged: c.privileged,
    readOnlyRootFilesystem: c.readOnlyRootFilesystem,
    allowPrivilegeEscalation: c.allowPrivilegeEscalation,
    capabilities: c.capabilities,
    procMount: c.procMount,
  };
}

/** The pod's namespaces: the node's for hostNetwork/hostPID/hostIPC, one pid namespace per pod when shared. */
export function namespaceOptions(pod: Pod): NamespaceOption {
  const spec = pod.spec;
  return {
    network: spec?.hostNetwork ? 'NODE' : 'POD',
    pid: spec?.hostPID ? 'NODE' : spec?.shareProcessNamespace ? 'POD' : 'CONTAINER',
    ipc: spec?.hostIPC ? 'NODE' : 'POD',
  };
}

/** Supplemental groups: fsGroup first, then the pod's own list. */
function supplementalGroups(pod: Pod): number[] | undefined {
  const sc = pod.spec?.securityContext;
  const groups = [...(sc?.fsGroup !== undefined ? [sc.fsGroup] : []), ...(sc?.supplementalGroups ?? [])];
  return groups.length > 0 ? groups : undefined;
}

/**
 * getSeccompProfile: the container's profile over the pod's; none set means Unconfined (the
 * kubelet's seccompDefault is off). Localhost profiles live under <rootDir>/seccomp.
 */
export function seccompProfile(profile: SeccompProfile | undefined, cfg: Pick<KubeletConfig, 'rootDir'>): SecurityProfile {
  switch (profile?.type) {
    case 'RuntimeDefault':
      return { profile_type: 'RuntimeDefault' };
    case 'Localhost':
      return { profile_type: 'Localhost', localhost_ref: `${cfg.rootDir}/seccomp/${profile.localhostProfile ?? ''}` };
    default:
      return { profile_type: 'Unconfined' };
  }
}

/** Whether any container of the pod (init containers included) is privileged. */
export function hasPrivilegedContainer(pod: Pod): boolean {
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].some((c) => c.securityContext?.privileged === true);
}

/** The sandbox's security context (generatePodSandboxLinuxConfig). */
export function sandboxSecurityContext(pod: Pod, cfg: Pick<KubeletConfig, 'rootDir'>): LinuxSandboxSecurityContext {
  const sc = pod.spec?.securityContext;
  const out: LinuxSandboxSecurityContext = {
    namespace_options: namespaceOptions(pod),
    privileged: hasPrivilegedContainer(pod),
    seccomp: seccompProfile(sc?.seccompProfile, cfg),
  };
  if (sc?.runAsUser !== undefined) out.run_as_user = { value: sc.runAsUser };
  if (sc?.runAsGroup !== undefined) out.run_as_group = { value: sc.runAsGroup };
  const groups = supplementalGroups(pod);
  if (groups) out.supplemental_groups = groups;
  return out;
}

/** The container's security context (determineEffectiveSecurityContext + convertToRuntimeSecurityContext). */
export function containerSecurityContext(pod: Pod, container: Container, cfg: Pick<KubeletConfig, 'rootDir'>): LinuxContainerSecurityContext {
  const sc = effectiveSecurityContext(pod, container);
  const unmasked = sc.procMount === 'Unmasked';
  const out: LinuxContainerSecurityContext = {
    privileged: sc.privileged === true,
    readonly_rootfs: sc.readOnlyRootFilesystem === true,
    // allowPrivilegeEscalation unset keeps the runtime's default (privileges may escalate).
    no_new_privs: sc.allowPrivilegeEscalation === false,
    namespace_options: namespaceOptions(pod),
    seccomp: seccompProfile(sc.seccompProfile, cfg),
    masked_paths: unmasked ? [] : [...DEFAULT_MASKED_PATHS],
    readonly_paths: unmasked ? [] : [...DEFAULT_READONLY_PATHS],
  };
  if (sc.capabilities?.add?.length || sc.capabilities?.drop?.length) {
    out.capabilities = { add_capabilities: sc.capabilities.add ?? [], drop_capabilities: sc.capabilities.drop ?? [] };
  }
  if (sc.runAsUser !== undefined) out.run_as_user = { value: sc.runAsUser };
  if (sc.runAsGroup !== undefined) out.run_as_group = { value: sc.runAsGroup };
  const groups = supplementalGroups(pod);
  if (groups) out.supplemental_groups = groups;
  return out;
}

/** The user an image runs as, from ImageStatus: a numeric uid, or a user name; neither means root. */
export interface ImageUser {
  uid?: number;
  username?: string;
}

/** verifyRunAsNonRoot: the error message when the container would run as root despite runAsNonRoot, else undefined. */
export function verifyRunAsNonRoot(pod: Pod, container: Container, image: ImageUser): string | undefined {
  const sc = effectiveSecurityContext(pod, container);
  if (!sc.runAsNonRoot) return undefined;
  const who = `(pod: "${formatPod(pod)}", container: ${container.name})`;
  if (sc.runAsUser !== undefined) return sc.runAsUser === 0 ? `container's runAsUser breaks non-root policy ${who}` : undefined;
  const uid = image.uid ?? (image.username ? undefined : 0);
  if (uid === 0) return `container has runAsNonRoot and image will run as root ${who}`;
  if (uid === undefined && image.username) {
    return `container has runAsNonRoot and image has non-numeric user (${image.username}), cannot verify user is non-root ${who}`;
  }
  return undefined;
}
