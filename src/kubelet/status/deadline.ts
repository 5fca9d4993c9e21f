// activeDeadlineSeconds (upstream's activeDeadlineHandler): a pod that has been active on the node
// longer than its deadline is failed with reason DeadlineExceeded, and the kubelet then stops it.
import type { Pod, PodStatus } from '../../api/types.js';

export const DEADLINE_EXCEEDED_REASON = 'DeadlineExceeded';
export const DEADLINE_EXCEEDED_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/** When the pod's active deadline ends (ms since the epoch), or undefined when it has none yet. */
export function activeDeadline(pod: Pod, status: PodStatus): number | undefined {
  const seconds = pod.spec?.activeDeadlineSeconds;
  const start = status.startTime ? Date.parse(status.startTime) : NaN;
  if (seconds === undefined || Number.isNaN(start)) return undefined;
  return start + seconds * 1000;
}

/** The status with the pod failed for its deadline, when the deadline has passed. */
export function enforceActiveDeadline(pod: Pod, status: PodStatus, now: number): { status: PodStatus; exceeded: boolean } {
  const deadline = activeDeadline(pod, status);
  if (deadline === undefined || now < deadline || status.phase === 'Succeeded' || status.phase === 'Failed') return { status, exceeded: false };
  return { status: { ...status, phase: 'Failed', reason: DEADLINE_EXCEEDED_REASON, message: DEADLINE_EXCEEDED_MESSAGE }, exceeded: true };
}
