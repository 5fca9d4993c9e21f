// The pure half of SyncPod: upstream's computePodActions (sidecar-aware, 1.33) turns a pod's spec
// and what the runtime reports into a plan — kill the pod, (re)create its sandbox, which containers
// to kill and which init and regular containers to start — and planPodSync adds CrashLoopBackOff:
// which of those starts must wait, until when, and with what message.
import type { Container, Pod } from '../../api/types.js';
import { isRestartableInitContainer } from '../../api/pod/status.js';
import { goDuration } from '../../api/duration.js';
import type { NamespaceMode } from '../runtime/types.js';
import { backOffKey, formatPod, type BackOffView } from './backoff.js';
import { hashContainer } from './labels.js';
import { findContainerStatus, type ContainerRuntimeStatus, type PodRuntimeState } from './runtime-state.js';

/** Why a container is killed (upstream's containerKillReason; '' for spec changes). */
export type KillReason = '' | 'LivenessProbe' | 'StartupProbe' | 'Unknown';

export interface ContainerToKill {
  id: string;
  name: string;
  kind: 'init' | 'regular';
  reason: KillReason;
  /** The Killing event's message; empty means "Stopping container <name>". */
  message: string;
}

export interface PodActions {
  /** Stop every container and the sandbox (then, if createSandbox, start over). */
  killPod: boolean;
  createSandbox: boolean;
  /** The sandbox in use, or the one being replaced ('' when the pod never had one or its network mode changed). */
  sandboxId: string;
  /** The attempt of the sandbox to create (or of the current one). */
  attempt: number;
  /** Indexes into spec.initContainers, in spec order. */
  initContainersToStart: number[];
  /** Indexes into spec.containers. */
  containersToStart: number[];
  containersToKill: ContainerToKill[];
}

export type ProbeResult = 'Success' | 'Failure';

/** Liveness and startup results by container id (the prober's caches); absent = not yet probed. */
export interface ProbeResults {
  liveness(containerId: string): ProbeResult | undefined;
  startup(containerId: string): ProbeResult | undefined;
}

export const noProbeResults: ProbeResults = { liveness: () => undefined, startup: () => undefined };

export function networkNamespaceForPod(pod: Pod): NamespaceMode {
  return pod.spec?.hostNetwork ? 'NODE' : 'POD';
}

/** runtimeutil.PodSandboxChanged: whether a new sandbox is needed, its attempt, and the sandbox it replaces. */
export function podSandboxChanged(pod: Pod, state: PodRuntimeState): { changed: boolean; attempt: number; sandboxId: string } {
  const latest = state.sandboxes[0];
  if (!latest) return { changed: true, attempt: 0, sandboxId: '' };
  const ready = state.sandboxes.filter((s) => s.state === 'SANDBOX_READY').length;
  if (ready > 1 || latest.state !== 'SANDBOX_READY') return { changed: true, attempt: latest.attempt + 1, sandboxId: latest.id };
  if (latest.networkMode !== networkNamespaceForPod(pod)) return { changed: true, attempt: latest.attempt + 1, sandboxId: '' };
  if (!pod.spec?.hostNetwork && latest.ips.length === 0) return { changed: true, attempt: latest.attempt + 1, sandboxId: latest.id };
  return { changed: false, attempt: latest.attempt, sandboxId: latest.id };
}

function shouldRestartOnFailure(pod: Pod): boolean {
  return pod.spec?.restartPolicy !== 'Never';
}

function containerSucceeded(c: Container, state: PodRuntimeState): boolean {
  const s = findContainerStatus(state, c.name);
  return s !== undefined && s.state === 'CONTAINER_EXITED' && s.exitCode === 0;
}

function containerChanged(c: Container, s: ContainerRuntimeStatus): boolean {
  return s.hash !== '' && s.hash !== hashContainer(c);
}

function isInitContainerFailed(s: ContainerRuntimeStatus): boolean {
  if (s.reason.includes('OOMKilled')) return true;
  if (s.state === 'CONTAINER_EXITED' && s.exitCode !== 0) return true;
  return s.state === 'CONTAINER_UNKNOWN';
}

/** kubecontainer.ShouldContainerBeRestarted. */
export function shouldContainerBeRestarted(container: Container, pod: Pod, state: PodRuntimeState): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  const s = findContainerStatus(state, container.name);
  if (!s) return true;
  if (s.state === 'CONTAINER_RUNNING') return false;
  if (s.state === 'CONTAINER_UNKNOWN' || s.state === 'CONTAINER_CREATED') return true;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && s.exitCode === 0) return false;
  return true;
}

/** Any regular container created or running in the runtime: initialization happened at some point. */
function hasAnyRegularContainerCreated(pod: Pod, state: PodRuntimeState): boolean {
  return (pod.spec?.containers ?? []).some((c) => {
    const s = findContainerStatus(state, c.name);
    return s !== undefined && (s.state === 'CONTAINER_CREATED' || s.state === 'CONTAINER_RUNNING' || s.state === 'CONTAINER_EXITED');
  });
}

/** computeInitContainerActions; returns whether the pod has initialized. */
function computeInitContainerActions(pod: Pod, state: PodRuntimeState, probes: ProbeResults, changes: PodActions): boolean {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return true;

  // A created or running regular container means every init container ran once, even if the
  // runtime has since removed them. Exited ones do not count: after a reboot they belong to the
  // old sandbox.
  let podHasInitialized = (pod.spec?.containers ?? []).some((c) => {
    const s = findContainerStatus(state, c.name);
    return s?.state === 'CONTAINER_CREATED' || s?.state === 'CONTAINER_RUNNING';
  });
  let isPreviouslyInitialized = podHasInitialized;
  const restartOnFailure = shouldRestartOnFailure(pod);
  const toStart: number[] = [];
  const kill = (s: ContainerRuntimeStatus, reason: KillReason, message: string) => changes.containersToKill.push({ id: s.id, name: s.name, kind: 'init', reason, message });

  // Backwards: the last init container with a status tells how far initialization got, even
  // when earlier, completed ones were garbage collected.
  for (let i = inits.length - 1; i >= 0; i--) {
    const c = inits[i]!;
    const sidecar = isRestartableInitContainer(c);
    const s = findContainerStatus(state, c.name);
    if (!s) {
      if (isPreviouslyInitialized && sidecar) toStart.push(i);
      continue;
    }
    if (isPreviouslyInitialized && !sidecar) continue;

    switch (s.state) {
      case 'CONTAINER_CREATED':
        // Created but never started: the start failed; try again.
        toStart.push(i);
        break;
      case 'CONTAINER_RUNNING': {
        if (!sidecar) break;
        if (c.startupProbe) {
          const startup = probes.startup(s.id);
          if (startup === undefined) break;
          if (startup === 'Failure') {
            kill(s, 'StartupProbe', `Init container ${c.name} failed startup probe`);
            toStart.push(i);
            break;
          }
        }
        if (i === inits.length - 1) podHasInitialized = true;
        else if (!isPreviouslyInitialized) toStart.push(i + 1);
        if (containerChanged(c, s)) {
          kill(s, '', `Init container ${c.name} definition changed`);
          toStart.push(i);
          break;
        }
        if (c.livenessProbe && probes.liveness(s.id) === 'Failure') {
          kill(s, 'LivenessProbe', `Init container ${c.name} failed liveness probe`);
          toStart.push(i);
        }
        break;
      }
      case 'CONTAINER_EXITED':
        if (sidecar) {
          toStart.push(i);
        } else if (isInitContainerFailed(s)) {
          if (!restartOnFailure) {
            changes.killPod = true;
            changes.initContainersToStart = [];
            return false;
          }
          toStart.push(i);
        } else if (i === inits.length - 1) {
          podHasInitialized = true;
        } else {
          toStart.push(i + 1);
        }
        break;
      default: {
        const message = `Init container is in "${s.state}" state, try killing it before restart`;
        if (!sidecar && !restartOnFailure) {
          changes.killPod = true;
          changes.initContainersToStart = [];
          return false;
        }
        kill(s, 'Unknown', message);
        toStart.push(i);
      }
    }
    isPreviouslyInitialized = true;
  }
  if (!isPreviouslyInitialized) toStart.push(0);
  changes.initContainersToStart = toStart.reverse();
  return podHasInitialized;
}

/** computePodActions: what SyncPod must do to bring the runtime to the pod's spec. */
export function computePodActions(pod: Pod, state: PodRuntimeState, probes: ProbeResults = noProbeResults): PodActions {
  const sandbox = podSandboxChanged(pod, state);
  const changes: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxId: sandbox.sandboxId,
    attempt: sandbox.attempt,
    initContainersToStart: [],
    containersToStart: [],
    containersToKill: [],
  };
  const containers = pod.spec?.containers ?? [];

  // A new sandbox means starting over: everything is killed, init containers run again.
  if (sandbox.changed) {
    // A pod that must not restart and already ran is done: kill it, don't recreate.
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && state.containers.length !== 0) {
      changes.createSandbox = false;
      return changes;
    }
    const toStart = containers.flatMap((c, i) => (pod.spec?.restartPolicy === 'OnFailure' && containerSucceeded(c, state) ? [] : [i]));
    if (toStart.length === 0 && hasAnyRegularContainerCreated(pod, state)) {
      changes.createSandbox = false;
      return changes;
    }
    if ((pod.spec?.initContainers ?? []).length > 0) {
      changes.initContainersToStart = [0];
      return changes;
    }
    changes.containersToStart = toStart;
    return changes;
  }

  const initialized = computeInitContainerActions(pod, state, probes, changes);
  if (changes.killPod || !initialized) return changes;

  let keepCount = 0;
  containers.forEach((c, idx) => {
    const s = findContainerStatus(state, c.name);
    if (!s || s.state !== 'CONTAINER_RUNNING') {
      if (shouldContainerBeRestarted(c, pod, state)) {
        changes.containersToStart.push(idx);
        if (s?.state === 'CONTAINER_UNKNOWN') {
          changes.containersToKill.push({ id: s.id, name: s.name, kind: 'regular', reason: 'Unknown', message: `Container is in "${s.state}" state, try killing it before restart` });
        }
      }
      return;
    }
    let message: string;
    let reason: KillReason = '';
    let restart = shouldRestartOnFailure(pod);
    if (containerChanged(c, s)) {
      message = `Container ${c.name} definition changed`;
      restart = true; // a changed spec restarts whatever the policy
    } else if (probes.liveness(s.id) === 'Failure') {
      message = `Container ${c.name} failed liveness probe`;
      reason = 'LivenessProbe';
    } else if (probes.startup(s.id) === 'Failure') {
      message = `Container ${c.name} failed startup probe`;
      reason = 'StartupProbe';
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message = `${message}, will be restarted`;
      changes.containersToStart.push(idx);
    }
    changes.containersToKill.push({ id: s.id, name: s.name, kind: 'regular', reason, message });
  });

  if (keepCount === 0 && changes.containersToStart.length === 0) {
    changes.killPod = true;
    // Sidecars must not keep a finished pod alive.
    changes.initContainersToStart = [];
  }
  return changes;
}

export interface BackOffDecision {
  /** The current delay, e.g. 10 000 for "back-off 10s". */
  delayMs: number;
  /** When the container may start again. */
  retryAt: number;
  /** The CrashLoopBackOff waiting message. */
  message: string;
}

/** doBackOff's question: must this container wait before its next start? */
export function crashLoopBackOff(pod: Pod, container: Container, state: PodRuntimeState, backoff: BackOffView, now: number): BackOffDecision | undefined {
  const exited = state.containers.find((c) => c.name === container.name && c.state === 'CONTAINER_EXITED');
  if (!exited) return undefined;
  const finishedAt = exited.finishedAt ?? exited.createdAt;
  const key = backOffKey(pod, container);
  if (!backoff.isInBackOffSince(key, finishedAt, now)) return undefined;
  const delayMs = backoff.get(key);
  return { delayMs, retryAt: finishedAt + delayMs, message: `back-off ${goDuration(delayMs)} restarting failed container=${container.name} pod=${formatPod(pod)}` };
}

export interface PodSyncPlan extends PodActions {
  /** Starts that must wait, by container name. */
  backOff: Map<string, BackOffDecision>;
}

/** The whole plan for one sync: computePodActions plus which starts are held back by CrashLoopBackOff. */
export function planPodSync(input: { pod: Pod; state: PodRuntimeState; backoff: BackOffView; now: number; probes?: ProbeResults }): PodSyncPlan {
  const { pod, state, backoff, now } = input;
  const actions = computePodActions(pod, state, input.probes);
  const backOff = new Map<string, BackOffDecision>();
  // A fresh sandbox means every container starts over; exited attempts of the old one still count.
  const starts = [...actions.initContainersToStart.map((i) => pod.spec!.initContainers![i]!), ...actions.containersToStart.map((i) => pod.spec!.containers[i]!)];
  for (const c of starts) {
    const d = crashLoopBackOff(pod, c, state, backoff, now);
    if (d) backOff.set(c.name, d);
  }
  return { ...actions, backOff };
}
