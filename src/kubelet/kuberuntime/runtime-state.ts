// What the runtime says about pods (upstream's kubecontainer.PodStatus): sandboxes and every
// container attempt, grouped by pod UID through the kubelet's labels, so a restarted kubelet reads
// back restart counts, hashes and attempts from the runtime alone.
import type { ContainerState, NamespaceMode, PodSandboxState, Runtime } from '../runtime/types.js';
import { isNotFound } from '../runtime/types.js';
import { POD_UID_LABEL, containerIdentity, sandboxIdentity } from './labels.js';

export interface SandboxRuntimeStatus {
  id: string;
  attempt: number;
  state: PodSandboxState;
  /** ms since the epoch. */
  createdAt: number;
  /** The primary IP first; empty for host-network sandboxes and dead ones. */
  ips: string[];
  /** The network namespace mode the sandbox was made with ('NODE' = hostNetwork). */
  networkMode: NamespaceMode;
}

export interface ContainerRuntimeStatus {
  id: string;
  sandboxId: string;
  name: string;
  state: ContainerState;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode: number;
  reason: string;
  message: string;
  restartCount: number;
  hash: string;
  /** The image as the runtime names it (containerd: the first repo tag, e.g. docker.io/library/nginx:1.22). */
  image: string;
  /** The repo digest: docker.io/library/busybox@sha256:... */
  imageRef: string;
}

export interface PodRuntimeState {
  uid: string;
  name: string;
  namespace: string;
  /** Newest first. */
  sandboxes: SandboxRuntimeStatus[];
  /** Every attempt of every container, newest first. */
  containers: ContainerRuntimeStatus[];
}

export function emptyRuntimeState(uid: string, name = '', namespace = ''): PodRuntimeState {
  return { uid, name, namespace, sandboxes: [], containers: [] };
}

/** The latest attempt of a container (kubecontainer.PodStatus.FindContainerStatusByName). */
export function findContainerStatus(state: PodRuntimeState, name: string): ContainerRuntimeStatus | undefined {
  return state.containers.find((c) => c.name === name);
}

/** Every attempt of a container, newest first. */
export function containerAttempts(state: PodRuntimeState, name: string): ContainerRuntimeStatus[] {
  return state.containers.filter((c) => c.name === name);
}

/** CRI timestamps are decimal nanoseconds; 0 means never. */
export function nanosToMs(ns: string | number | undefined): number | undefined {
  if (ns === undefined || ns === '' || ns === '0' || ns === 0) return undefined;
  return Number(BigInt(ns) / 1_000_000n);
}

export interface RuntimeStateOptions {
  /** Reads a termination-message file from the host path of its mount (unset: messages come from the runtime). */
  readTerminationMessage?: (hostPath: string) => Promise<string | undefined>;
}

/**
 * The runtime state of the pods with the given UIDs (all kubelet-managed pods when omitted). An
 * object that disappears between the list and its status call is skipped, as upstream does.
 */
export async function listPodRuntimeStates(runtime: Runtime, podUID?: string, opts: RuntimeStateOptions = {}): Promise<Map<string, PodRuntimeState>> {
  const selector = podUID ? { [POD_UID_LABEL]: podUID } : undefined;
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(selector ? { label_selector: selector } : undefined), runtime.listContainers(selector ? { label_selector: selector } : undefined)]);
  const pods = new Map<string, PodRuntimeState>();
  const podFor = (uid: string, name: string, namespace: string): PodRuntimeState => {
    let p = pods.get(uid);
    if (!p) pods.set(uid, (p = emptyRuntimeState(uid, name, namespace)));
    return p;
  };

  // Sandbox and container statuses are independent: ask for all of them at once.
  const sandboxStatuses = Promise.all(
    sandboxes.map(async (s) => {
      const who = sandboxIdentity(s.labels);
      if (!who) return;
      let status;
      try {
        status = (await runtime.podSandboxStatus(s.id)).status;
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      const ips = status.network?.ip ? [status.network.ip, ...(status.network.additional_ips ?? []).map((a) => a.ip)] : [];
      podFor(who.podUID, who.podName, who.podNamespace).sandboxes.push({
        id: s.id,
        attempt: s.metadata?.attempt ?? 0,
        state: status.state,
        createdAt: nanosToMs(status.created_at) ?? 0,
        ips: status.state === 'SANDBOX_READY' ? ips : [],
        networkMode: status.linux?.namespaces?.options?.network ?? 'POD',
      });
    }),
  );

  const containerStatuses = Promise.all(
    containers.map(async (c) => {
      const who = containerIdentity(c.labels, c.annotations);
      if (!who) return;
      let st;
      try {
        st = await runtime.containerStatus(c.id);
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      let message = st.message ?? '';
      // The application's own termination message wins over the runtime's (getTerminationMessage).
      const finishedAt = nanosToMs(st.finished_at);
      if (opts.readTerminationMessage && who.terminationMessagePath && (finishedAt !== undefined || st.exit_code !== 0)) {
        const mount = st.mounts?.find((m) => m.container_path === who.terminationMessagePath);
        const text = mount ? await opts.readTerminationMessage(mount.host_path) : undefined;
        if (text) message = text;
      }
      podFor(who.podUID, who.podName, who.podNamespace).containers.push({
        id: c.id,
        sandboxId: c.pod_sandbox_id,
        name: who.containerName,
        state: st.state,
        createdAt: nanosToMs(st.created_at) ?? 0,
        startedAt: nanosToMs(st.started_at),
        finishedAt,
        exitCode: st.exit_code ?? 0,
        reason: st.reason ?? '',
        message,
        restartCount: who.restartCount,
        hash: who.hash,
        image: st.image?.image || c.image?.image || c.image?.user_specified_image || '',
        imageRef: st.image_ref ?? c.image_ref ?? '',
      });
    }),
  );
  await Promise.all([sandboxStatuses, containerStatuses]);

  for (const p of pods.values()) {
    p.sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
    // Same-instant creations are told apart by restart count (the later attempt counts higher).
    p.containers.sort((a, b) => b.createdAt - a.createdAt || b.restartCount - a.restartCount);
  }
  return pods;
}

/** The runtime state of one pod (empty when the runtime has nothing of it). */
export async function getPodRuntimeState(runtime: Runtime, podUID: string, opts: RuntimeStateOptions = {}): Promise<PodRuntimeState> {
  return (await listPodRuntimeStates(runtime, podUID, opts)).get(podUID) ?? emptyRuntimeState(podUID);
}
