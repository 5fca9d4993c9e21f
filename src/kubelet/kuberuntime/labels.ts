// The labels and annotations the kubelet puts on sandboxes and containers (upstream's
// kuberuntime/labels.go): they are how a restarted kubelet finds which pod, container and attempt a
// runtime object belongs to, so they are read back as much as they are written.

export const POD_NAME_LABEL = 'io.kubernetes.pod.name';
export const POD_NAMESPACE_LABEL = 'io.kubernetes.pod.namespace';
export const POD_UID_LABEL = 'io.kubernetes.pod.uid';
export const CONTAINER_NAME_LABEL = 'io.kubernetes.container.name';
/** containerd's CRI plugin marks sandboxes and containers it made for the kubelet with this. */
export const KUBERNETES_MANAGED_LABEL = 'io.cri-containerd.kind';

export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';
export const CONTAINER_RESTART_COUNT_ANNOTATION = 'io.kubernetes.container.restartCount';
export const CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION = 'io.kubernetes.container.terminationMessagePath';
export const CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION = 'io.kubernetes.container.terminationMessagePolicy';
export const CONTAINER_PRESTOP_HANDLER_ANNOTATION = 'io.kubernetes.container.preStopHandler';
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';
export const POD_DELETION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.deletionGracePeriod';
export const POD_TERMINATION_GRACE_PERIOD_ANNOTATION = 'io.kubernetes.pod.terminationGracePeriod';

/** What the kubelet reads back from a sandbox's labels. */
export interface SandboxIdentity {
  podName: string;
  podNamespace: string;
  podUID: string;
}

/** What the kubelet reads back from a container's labels and annotations. */
export interface ContainerIdentity extends SandboxIdentity {
  containerName: string;
  restartCount: number;
  hash: string;
  terminationMessagePath: string;
  terminationMessagePolicy: string;
}

export function sandboxIdentity(labels: Record<string, string> | undefined): SandboxIdentity | undefined {
  const l = labels ?? {};
  const podUID = l[POD_UID_LABEL];
  if (!podUID) return undefined;
  return { podName: l[POD_NAME_LABEL] ?? '', podNamespace: l[POD_NAMESPACE_LABEL] ?? '', podUID };
}

export function containerIdentity(labels: Record<string, string> | undefined, annotations: Record<string, string> | undefined): ContainerIdentity | undefined {
  const pod = sandboxIdentity(labels);
  const name = labels?.[CONTAINER_NAME_LABEL];
  if (!pod || !name) return undefined;
  const a = annotations ?? {};
  const restartCount = Number.parseInt(a[CONTAINER_RESTART_COUNT_ANNOTATION] ?? '0', 10);
  return {
    ...pod,
    containerName: name,
    restartCount: Number.isFinite(restartCount) ? restartCount : 0,
    hash: a[CONTAINER_HASH_ANNOTATION] ?? '',
    terminationMessagePath: a[CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION] ?? '',
    terminationMessagePolicy: a[CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION] ?? '',
  };
}

/**
 * The value of CONTAINER_HASH_ANNOTATION: upstream (1.31+) hashes only the container's name and
 * image, so a kubelet upgrade never restarts containers and an image change does. FNV-1a, 32 bits,
 * hex; the runtime manager compares it with the running container's to decide a restart.
 */
export function hashContainer(container: { name: string; image?: string }): string {
  const text = JSON.stringify({ name: container.name, image: container.image ?? '' });
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}
