// The pod-failure back-off, as upstream's backoff_utils.go: a Job that saw failures since its last
// success waits 10 s, doubling with each further failure up to 10 min, after its last failure
// before it creates replacement pods. The record lives in the controller's memory, per Job key.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { indexAbsoluteFailureCount } from './indexes.js';

/** Upstream's DefaultJobPodFailureBackOff. */
export const DEFAULT_POD_FAILURE_BACKOFF_MS = 10_000;
/** Upstream's MaxJobPodFailureBackOff. */
export const MAX_POD_FAILURE_BACKOFF_MS = 10 * 60_000;

export interface BackoffRecord {
  key: string;
  failuresAfterLastSuccess: number;
  /** Clock ms of the last failure, if any. */
  lastFailureTime?: number;
}

const timeOf = (t: string | undefined): number | undefined => {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
};

/**
 * When the pod finished: its containers' latest finishedAt when all terminated; else its Ready=False
 * transition; else its deletion time less the grace period; else its creation.
 */
export function finishedTime(pod: Pod): number {
  const statuses = pod.status?.containerStatuses ?? [];
  let latest: number | undefined;
  for (const cs of statuses) {
    const at = timeOf(cs.state?.terminated?.finishedAt);
    if (at === undefined) {
      latest = undefined;
      break;
    }
    if (latest === undefined || at > latest) latest = at;
  }
  if (latest !== undefined) return latest;
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  const readyFalse = ready?.status === 'False' ? timeOf(ready.lastTransitionTime) : undefined;
  if (readyFalse !== undefined) return readyFalse;
  const deleted = timeOf(pod.metadata?.deletionTimestamp);
  if (deleted !== undefined) return deleted - (pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000;
  return timeOf(pod.metadata?.creationTimestamp) ?? 0;
}

const byFinishedTime = (pods: readonly Pod[]) => [...pods].sort((a, b) => finishedTime(a) - finishedTime(b));

export class BackoffStore {
  private readonly records = new Map<string, BackoffRecord>();

  /** The record after this sync's newly finished pods (not stored until updateBackoffRecord). */
  newBackoffRecord(key: string, newSucceeded: readonly Pod[], newFailed: readonly Pod[]): BackoffRecord {
    const old = this.records.get(key);
    const record: BackoffRecord = { key, failuresAfterLastSuccess: old?.failuresAfterLastSuccess ?? 0, lastFailureTime: old?.lastFailureTime };
    const failed = byFinishedTime(newFailed);
    if (newSucceeded.length === 0) {
      if (failed.length === 0) return record;
      record.failuresAfterLastSuccess += failed.length;
      record.lastFailureTime = finishedTime(failed[failed.length - 1]!);
      return record;
    }
    record.failuresAfterLastSuccess = 0;
    record.lastFailureTime = undefined;
    const lastSuccess = Math.max(...newSucceeded.map(finishedTime));
    // Only the failures after the last success count.
    for (let i = failed.length - 1; i >= 0; i--) {
      const at = finishedTime(failed[i]!);
      if (at <= lastSuccess) break;
      record.lastFailureTime ??= at;
      record.failuresAfterLastSuccess++;
    }
    return record;
  }

  updateBackoffRecord(record: BackoffRecord): void {
    this.records.set(record.key, { ...record });
  }

  removeBackoffRecord(key: string): void {
    this.records.delete(key);
  }
}

/** How long creation must still wait after failuresCount failures, the last at lastFailureTime. */
export function remainingTimeForFailures(now: number, failuresCount: number, lastFailureTime: number | undefined): number {
  if (failuresCount === 0 || lastFailureTime === undefined) return 0;
  let backoff = DEFAULT_POD_FAILURE_BACKOFF_MS;
  for (let i = 1; i < failuresCount; i++) {
    backoff *= 2;
    if (backoff >= MAX_POD_FAILURE_BACKOFF_MS) {
      backoff = MAX_POD_FAILURE_BACKOFF_MS;
      break;
    }
  }
  const elapsed = now - lastFailureTime;
  return backoff < elapsed ? 0 : backoff - elapsed;
}

export const remainingTime = (record: BackoffRecord, now: number) => remainingTimeForFailures(now, record.failuresAfterLastSuccess, record.lastFailureTime);

/** The wait before an index whose last failed pod is lastFailedPod may get a replacement (backoffLimitPerIndex). */
export function remainingTimePerIndex(now: number, lastFailedPod: Pod | undefined): number {
  if (!lastFailedPod) return 0;
  return remainingTimeForFailures(now, indexAbsoluteFailureCount(lastFailedPod) + 1, finishedTime(lastFailedPod));
}
