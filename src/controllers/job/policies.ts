// How a Job judges its pods' outcomes, as upstream's pod_failure_policy.go and success_policy.go:
// the first pod-failure rule matching a failed pod decides (FailJob, FailIndex, Ignore, Count), and
// a success-policy rule is met by enough succeeded indexes.
import type { PodFailurePolicy, PodFailurePolicyOnExitCodesRequirement, SuccessPolicy } from 'kubernetes-types/batch/v1.js';
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1.js';
import { OrderedIntervals } from './indexes.js';

export type PodFailurePolicyAction = 'FailJob' | 'FailIndex' | 'Ignore' | 'Count';

export interface PodFailurePolicyMatch {
  /** The Job's failure message, when a FailJob rule matched. */
  failJobMessage?: string;
  /** Whether the failure counts toward backoffLimit (and backoffLimitPerIndex); false for Ignore. */
  countFailed: boolean;
  action?: PodFailurePolicyAction;
}

function exitCodeMatches(exitCode: number, req: PodFailurePolicyOnExitCodesRequirement): boolean {
  if (req.operator === 'In') return req.values.includes(exitCode);
  if (req.operator === 'NotIn') return !req.values.includes(exitCode);
  return false;
}

/** The first terminated container (non-zero exit) matching the requirement, app containers first. */
function matchOnExitCodes(pod: Pod, req: PodFailurePolicyOnExitCodesRequirement): ContainerStatus | undefined {
  for (const list of [pod.status?.containerStatuses, pod.status?.initContainerStatuses]) {
    for (const cs of list ?? []) {
      const t = cs.state?.terminated;
      if (!t) continue;
      if ((req.containerName == null || req.containerName === cs.name) && t.exitCode !== 0 && exitCodeMatches(t.exitCode, req)) return cs;
    }
  }
  return undefined;
}

/** Upstream's matchPodFailurePolicy; no policy or no matching rule counts the failure. */
export function matchPodFailurePolicy(policy: PodFailurePolicy | undefined, pod: Pod): PodFailurePolicyMatch {
  if (!policy) return { countFailed: true };
  const podName = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
  for (const [index, rule] of (policy.rules ?? []).entries()) {
    let what: string | undefined;
    if (rule.onExitCodes) {
      const cs = matchOnExitCodes(pod, rule.onExitCodes);
      if (cs) what = `Container ${cs.name} for pod ${podName} failed with exit code ${cs.state!.terminated!.exitCode}`;
    } else if (rule.onPodConditions) {
      const cond = (pod.status?.conditions ?? []).find((c) => rule.onPodConditions!.some((p) => p.type === c.type && p.status === c.status));
      if (cond) what = `Pod ${podName} has condition ${cond.type}`;
    }
    if (what === undefined) continue;
    switch (rule.action) {
      case 'Ignore':
        return { countFailed: false, action: 'Ignore' };
      case 'FailIndex':
        return { countFailed: true, action: 'FailIndex' };
      case 'Count':
        return { countFailed: true, action: 'Count' };
      case 'FailJob':
        return { failJobMessage: `${what} matching FailJob rule at index ${index}`, countFailed: true, action: 'FailJob' };
    }
    // An unknown action: clients skip the rule (and, as upstream's switch, fall through to the next).
  }
  return { countFailed: true };
}

/** Whether the succeeded indexes cover the rule's indexes, or at least succeededCount of them. */
function matchSucceededIndexesRule(rule: OrderedIntervals, succeeded: OrderedIntervals, succeededCount: number | undefined): boolean {
  let contains = 0;
  let r = 0;
  let s = 0;
  const ri = rule.intervals;
  const si = succeeded.intervals;
  while (r < ri.length && s < si.length) {
    const overlap = Math.min(ri[r]!.last, si[s]!.last) - Math.max(ri[r]!.first, si[s]!.first) + 1;
    if (overlap > 0) contains += overlap;
    if (si[s]!.last < ri[r]!.last) s++;
    else if (si[s]!.last > ri[r]!.last) r++;
    else {
      s++;
      r++;
    }
  }
  return contains === rule.total() || (succeededCount != null && contains >= succeededCount);
}

/** Upstream's matchSuccessPolicy: the message of the first rule met ("Matched rules at index N"). */
export function matchSuccessPolicy(policy: SuccessPolicy | undefined, completions: number, succeeded: OrderedIntervals): string | undefined {
  if (!policy || succeeded.intervals.length === 0) return undefined;
  for (const [index, rule] of (policy.rules ?? []).entries()) {
    if (rule.succeededIndexes != null) {
      const required = OrderedIntervals.parse(rule.succeededIndexes, completions);
      if (required.intervals.length === 0) continue;
      if (matchSucceededIndexesRule(required, succeeded, rule.succeededCount)) return `Matched rules at index ${index}`;
    } else if (rule.succeededCount != null && succeeded.total() >= rule.succeededCount) {
      return `Matched rules at index ${index}`;
    }
  }
  return undefined;
}
