// The pod summary kubectl shows in READY, STATUS and RESTARTS, computed the way upstream's printPod
// (pkg/printers/internalversion, 1.33) does, so the server's Table, the kubelet and the lifecycle
// timeline all agree on words like "Init:1/2", "CrashLoopBackOff", "NotReady" or "Terminating".
import type { Container, ContainerStatus, Pod } from '../types.js';
import { humanDuration } from '../duration.js';

/** status.reason the node lifecycle controller sets on pods of an unreachable node. */
export const NODE_UNREACHABLE_POD_REASON = 'NodeLost';
/** PodScheduled condition reason while spec.schedulingGates is non-empty. */
export const POD_REASON_SCHEDULING_GATED = 'SchedulingGated';

type ContainerStateTerminated = NonNullable<NonNullable<ContainerStatus['state']>['terminated']>;

export interface PodSummary {
  /** Ready regular containers plus started, ready sidecars (READY's numerator). */
  ready: number;
  /** Regular containers plus sidecars (READY's denominator). */
  total: number;
  /** The STATUS column. */
  reason: string;
  /** The RESTARTS count: init containers while initializing, otherwise sidecars plus regular containers. */
  restarts: number;
  /** ms since the epoch of the latest lastState.terminated.finishedAt among the counted containers. */
  lastRestart?: number;
}

/** A sidecar: an init container with restartPolicy Always. */
export function isRestartableInitContainer(container: Container | undefined): boolean {
  return container?.restartPolicy === 'Always';
}

export function isPodPhaseTerminal(phase: string | undefined): boolean {
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Whether the pod's condition of this type has status True. */
export function podConditionTrue(pod: Pod, type: string): boolean {
  return pod.status?.conditions?.find((c) => c.type === type)?.status === 'True';
}

/** A terminated container's reason, or Signal:N / ExitCode:N when the runtime gave none. */
export function terminatedReason(t: ContainerStateTerminated): string {
  if (t.reason) return t.reason;
  return t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode ?? 0}`;
}

function lastTermination(cs: ContainerStatus): number | undefined {
  const finishedAt = cs.lastState?.terminated?.finishedAt;
  const t = finishedAt ? Date.parse(finishedAt) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

function later(a: number | undefined, b: number | undefined): number | undefined {
  return b !== undefined && (a === undefined || a < b) ? b : a;
}

export function summarizePod(pod: Pod): PodSummary {
  const spec = pod.spec;
  const status = pod.status ?? {};
  const initSpecs = spec?.initContainers ?? [];
  const initByName = new Map(initSpecs.map((c) => [c.name, c]));

  const total = (spec?.containers?.length ?? 0) + initSpecs.filter(isRestartableInitContainer).length;
  let ready = 0;
  let reason = status.reason || status.phase || '';
  if (status.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === POD_REASON_SCHEDULING_GATED)) {
    reason = POD_REASON_SCHEDULING_GATED;
  }

  // Init containers run in order: the first one that has neither succeeded nor started as a
  // sidecar decides the reason, and later ones are not looked at.
  let restarts = 0;
  let lastRestart: number | undefined;
  let sidecarRestarts = 0;
  let lastSidecarRestart: number | undefined;
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const sidecar = isRestartableInitContainer(initByName.get(cs.name));
    restarts += cs.restartCount ?? 0;
    lastRestart = later(lastRestart, lastTermination(cs));
    if (sidecar) {
      sidecarRestarts += cs.restartCount ?? 0;
      lastSidecarRestart = later(lastSidecarRestart, lastTermination(cs));
    }
    const terminated = cs.state?.terminated;
    const waiting = cs.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (sidecar && cs.started) {
      if (cs.ready) ready++;
      continue;
    }
    if (terminated) reason = `Init:${terminatedReason(terminated)}`;
    else if (waiting?.reason && waiting.reason !== 'PodInitializing') reason = `Init:${waiting.reason}`;
    else reason = `Init:${i}/${initSpecs.length}`;
    initializing = true;
    break;
  }

  if (!initializing || podConditionTrue(pod, 'Initialized')) {
    // Once initialized, only sidecars' restarts still count among the init containers'.
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    // Backwards, so the first container with something to say has the last word.
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      restarts += cs.restartCount ?? 0;
      lastRestart = later(lastRestart, lastTermination(cs));
      const terminated = cs.state?.terminated;
      if (cs.state?.waiting?.reason) reason = cs.state.waiting.reason;
      else if (terminated) reason = terminatedReason(terminated);
      else if (cs.ready && cs.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    // Some containers completed while another still runs: the pod is not done.
    if (reason === 'Completed' && hasRunning) reason = podConditionTrue(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  if (pod.metadata?.deletionTimestamp) {
    if (status.reason === NODE_UNREACHABLE_POD_REASON) reason = 'Unknown';
    else if (!isPodPhaseTerminal(status.phase)) reason = 'Terminating';
  }

  return { ready, total, reason, restarts, lastRestart };
}

/** The STATUS column. */
export function podStatusReason(pod: Pod): string {
  return summarizePod(pod).reason;
}

/** The READY column: "1/2". */
export function formatReady(summary: PodSummary): string {
  return `${summary.ready}/${summary.total}`;
}

/** The RESTARTS column: "0", or "3 (2m ago)" when the last termination time is known. */
export function formatRestarts(summary: PodSummary, now: number): string {
  if (summary.restarts === 0 || summary.lastRestart === undefined) return String(summary.restarts);
  return `${summary.restarts} (${humanDuration(now - summary.lastRestart)} ago)`;
}
