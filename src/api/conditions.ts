// metav1.Condition lists as apimachinery's api/meta conditions helpers keep them.
import type { Condition } from 'kubernetes-types/meta/v1.js';

export type { Condition };

export function findStatusCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * meta.SetStatusCondition on a copy: one condition per type; lastTransitionTime moves (to `now`) only
 * when the status changes; reason, message and observedGeneration follow the new condition.
 */
export function setStatusCondition(conditions: readonly Condition[] | undefined, condition: Omit<Condition, 'lastTransitionTime'>, now: string): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === condition.type);
  const old = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = old && old.status === condition.status ? old.lastTransitionTime : now;
  const next: Condition = { ...condition, lastTransitionTime };
  if (i < 0) list.push(next);
  else list[i] = next;
  return list;
}
