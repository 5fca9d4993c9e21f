// PodDisruptionBudget helpers the eviction subresource, the disruption controller and the scheduler's
// preemption share: which budgets cover a pod, and the DisruptionAllowed condition
// (k8s.io/component-helpers/apps/poddisruptionbudget).
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from 'kubernetes-types/policy/v1.js';
import type { Pod } from './types.js';
import { labelSelectorAsSelector } from './labels.js';
import { findStatusCondition, setStatusCondition } from './conditions.js';

export const DISRUPTION_ALLOWED_CONDITION = 'DisruptionAllowed';
export const SUFFICIENT_PODS_REASON = 'SufficientPods';
export const INSUFFICIENT_PODS_REASON = 'InsufficientPods';
export const SYNC_FAILED_REASON = 'SyncFailed';

/**
 * How long a pod stays in status.disruptedPods once an eviction approved it: the controller expects to
 * see it terminating by then, else it counts it as healthy again (upstream's DeletionTimeout).
 */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

/** Whether the budget selects the pod: same namespace, a valid non-empty selector that matches (an empty one matches nothing). */
export function pdbSelectsPod(pdb: PodDisruptionBudget, pod: Pod): boolean {
  if ((pdb.metadata?.namespace ?? '') !== (pod.metadata?.namespace ?? '')) return false;
  try {
    const selector = labelSelectorAsSelector(pdb.spec?.selector);
    return !selector.empty() && selector.matches(pod.metadata?.labels ?? {});
  } catch {
    return false;
  }
}

/** The budgets that cover the pod (the PodDisruptionBudgetLister's GetPodPodDisruptionBudgets); none for a pod without labels. */
export function podDisruptionBudgetsFor(pdbs: Iterable<PodDisruptionBudget>, pod: Pod): PodDisruptionBudget[] {
  if (Object.keys(pod.metadata?.labels ?? {}).length === 0) return [];
  return [...pdbs].filter((pdb) => pdbSelectsPod(pdb, pod));
}

/** UpdateDisruptionAllowedCondition: True/SufficientPods while disruptions are allowed, else False/InsufficientPods. */
export function withDisruptionAllowedCondition(status: PodDisruptionBudgetStatus, now: string): PodDisruptionBudgetStatus {
  const allowed = status.disruptionsAllowed > 0;
  const conditions = setStatusCondition(
    status.conditions,
    {
      type: DISRUPTION_ALLOWED_CONDITION,
      status: allowed ? 'True' : 'False',
      reason: allowed ? SUFFICIENT_PODS_REASON : INSUFFICIENT_PODS_REASON,
      message: '',
      observedGeneration: status.observedGeneration,
    },
    now,
  );
  return { ...status, conditions };
}

/** ConditionsAreUpToDate: the condition exists, the status observed the current generation, and it agrees with disruptionsAllowed. */
export function disruptionConditionUpToDate(pdb: PodDisruptionBudget): boolean {
  const status = pdb.status;
  const cond = findStatusCondition(status?.conditions, DISRUPTION_ALLOWED_CONDITION);
  if (!status || !cond || (status.observedGeneration ?? 0) !== (pdb.metadata?.generation ?? 0)) return false;
  return status.disruptionsAllowed > 0 ? cond.status === 'True' && cond.reason === SUFFICIENT_PODS_REASON : cond.status === 'False' && cond.reason === INSUFFICIENT_PODS_REASON;
}
