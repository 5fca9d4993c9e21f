// Pod conditions as upstream's podutil.UpdatePodCondition keeps them: one per type, and the
// transition time moves only when the status does.
import type { PodCondition, PodStatus } from '../types.js';

/** The status with `condition` set (replacing the same type); lastTransitionTime kept if the status did not change. */
export function withPodCondition(status: PodStatus | undefined, condition: PodCondition): PodStatus {
  const conditions = [...(status?.conditions ?? [])];
  const i = conditions.findIndex((c) => c.type === condition.type);
  if (i < 0) return { ...status, conditions: [...conditions, condition] };
  const old = conditions[i]!;
  conditions[i] = old.status === condition.status ? { ...condition, lastTransitionTime: old.lastTransitionTime ?? condition.lastTransitionTime } : condition;
  return { ...status, conditions };
}

/** v1.PodReasonTerminationByKubelet: the DisruptionTarget reason on pods the kubelet ends itself (eviction, node shutdown). */
export const TERMINATION_BY_KUBELET = 'TerminationByKubelet';

/** The status of a pod the kubelet ends itself: phase, reason and message, and DisruptionTarget (TerminationByKubelet) with that message. */
export function terminatedByKubelet(status: PodStatus | undefined, phase: string, reason: string, message: string, now: string): PodStatus {
  const condition: PodCondition = { type: 'DisruptionTarget', status: 'True', reason: TERMINATION_BY_KUBELET, message, lastTransitionTime: now };
  return { ...withPodCondition(status, condition), phase, reason, message };
}
