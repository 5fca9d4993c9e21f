// Completion indexes of Indexed Jobs, as upstream's indexed_job_utils.go: sets of indexes kept as
// ordered, merged intervals and written as "1,3-5,7"; the index a pod carries; the first indexes
// still to run; which duplicated or out-of-range pods go.
import type { Container, Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { JOB_COMPLETION_INDEX_ANNOTATION, JOB_INDEX_FAILURE_COUNT_ANNOTATION, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION } from '../../api/batch.js';

export const COMPLETION_INDEX_ENV_NAME = 'JOB_COMPLETION_INDEX';
/** Upstream's unknownCompletionIndex. */
export const UNKNOWN_INDEX = -1;
/** The longest generateName the API server accepts before adding its 5 random characters. */
const MAX_GENERATED_NAME_LENGTH = 63 - 5;
const MAX_INT32 = 2 ** 31 - 1;

export interface Interval {
  first: number;
  last: number;
}

/** A set of indexes as disjoint intervals in increasing order, adjacent ones merged. */
export class OrderedIntervals {
  constructor(readonly intervals: readonly Interval[] = []) {}

  /** Upstream's parseIndexesFromString: indexes at or above completions are dropped; corrupt parts skipped. */
  static parse(text: string | undefined, completions: number): OrderedIntervals {
    const result: Interval[] = [];
    if (!text) return new OrderedIntervals(result);
    for (const part of text.split(',')) {
      const limits = part.split('-');
      const first = parseDecimal(limits[0]!);
      if (first === undefined) continue;
      if (first >= completions) break;
      let last = first;
      if (limits.length > 1) {
        const parsed = parseDecimal(limits[1]!);
        if (parsed === undefined) continue;
        last = Math.min(parsed, completions - 1);
      }
      const prev = result[result.length - 1];
      if (prev && prev.last === first - 1) prev.last = last;
      else result.push({ first, last });
    }
    return new OrderedIntervals(result);
  }

  /** These and the given indexes (in increasing order). */
  withOrderedIndexes(indexes: readonly number[]): OrderedIntervals {
    return this.merge(new OrderedIntervals(indexes.map((i) => ({ first: i, last: i }))));
  }

  merge(other: OrderedIntervals): OrderedIntervals {
    const result: Interval[] = [];
    const add = (iv: Interval) => {
      const prev = result[result.length - 1];
      if (!prev || iv.first > prev.last + 1) result.push({ ...iv });
      else if (prev.last < iv.last) prev.last = iv.last;
    };
    const a = this.intervals;
    const b = other.intervals;
    let i = 0;
    let j = 0;
    while (i < a.length && j < b.length) add(a[i]!.first < b[j]!.first ? a[i++]! : b[j++]!);
    while (i < a.length) add(a[i++]!);
    while (j < b.length) add(b[j++]!);
    return new OrderedIntervals(result);
  }

  total(): number {
    return this.intervals.reduce((n, iv) => n + iv.last - iv.first + 1, 0);
  }

  has(ix: number): boolean {
    return this.intervals.some((iv) => iv.first <= ix && ix <= iv.last);
  }

  /** "0-2,4,6,7": two adjacent indexes are listed, three or more are a range. */
  toString(): string {
    return this.intervals.map((iv) => (iv.last === iv.first ? `${iv.first}` : `${iv.first}${iv.last === iv.first + 1 ? ',' : '-'}${iv.last}`)).join(',');
  }
}

/** strconv.Atoi as upstream uses it: optional sign, decimal digits, within int range. */
function parseDecimal(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The pod's completion index annotation; UNKNOWN_INDEX when absent, invalid or negative. */
export function completionIndex(pod: Pod): number {
  const v = pod.metadata?.annotations?.[JOB_COMPLETION_INDEX_ANNOTATION];
  if (v === undefined) return UNKNOWN_INDEX;
  const n = parseDecimal(v);
  return n === undefined || n < 0 ? UNKNOWN_INDEX : n;
}

/** The distinct valid indexes of these pods, in increasing order. */
export function indexesOf(pods: readonly Pod[]): number[] {
  return [...new Set(pods.map(completionIndex).filter((ix) => ix !== UNKNOWN_INDEX))].sort((a, b) => a - b);
}

/** Sorts a copy by completion index (unknown first), stable otherwise. */
export function byCompletionIndex(pods: readonly Pod[]): Pod[] {
  return [...pods].sort((a, b) => completionIndex(a) - completionIndex(b));
}

/**
 * Upstream's firstPendingIndexes: up to count indexes below completions not in nonPending (the
 * succeeded, active, failed — and with onlyReplaceFailedPods, terminating — indexes).
 */
export function firstPendingIndexes(nonPending: OrderedIntervals, count: number, completions: number): number[] {
  const result: number[] = [];
  let candidate = 0;
  for (const iv of nonPending.intervals) {
    for (; candidate < completions && result.length < count && candidate < iv.first; candidate++) result.push(candidate);
    if (candidate < iv.last + 1) candidate = iv.last + 1;
  }
  for (; candidate < completions && result.length < count; candidate++) result.push(candidate);
  return result;
}

/** `<job>-<index>-`, the job name cut so that the API server's random suffix still fits. */
export function podGenerateNameWithIndex(jobName: string, index: number): string {
  const suffix = `-${index}-`;
  const prefix = `${jobName}${suffix}`;
  return prefix.length > MAX_GENERATED_NAME_LENGTH ? `${prefix.slice(0, MAX_GENERATED_NAME_LENGTH - suffix.length)}${suffix}` : prefix;
}

function addIndexEnv(container: Container): void {
  if (container.env?.some((e) => e.name === COMPLETION_INDEX_ENV_NAME)) return;
  container.env = [
    ...(container.env ?? []),
    { name: COMPLETION_INDEX_ENV_NAME, valueFrom: { fieldRef: { fieldPath: `metadata.labels['${JOB_COMPLETION_INDEX_ANNOTATION}']` } } },
  ];
}

/** JOB_COMPLETION_INDEX in every container and init container, from the pod's index label (PodIndexLabel, GA). */
export function addCompletionIndexEnv(template: PodTemplateSpec): void {
  for (const c of template.spec?.initContainers ?? []) addIndexEnv(c);
  for (const c of template.spec?.containers ?? []) addIndexEnv(c);
}

/** A failure-count annotation as an int32; missing, invalid or out of range is 0. */
function annotationCount(pod: Pod, key: string): number {
  const v = pod.metadata?.annotations?.[key];
  const n = v === undefined ? undefined : parseDecimal(v);
  return n === undefined || n < 0 || n > MAX_INT32 ? 0 : n;
}

export const indexFailureCount = (pod: Pod) => annotationCount(pod, JOB_INDEX_FAILURE_COUNT_ANNOTATION);
export const indexIgnoredFailureCount = (pod: Pod) => annotationCount(pod, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION);
/** Counted and ignored failures of the pod's index before it. */
export const indexAbsoluteFailureCount = (pod: Pod) => indexFailureCount(pod) + indexIgnoredFailureCount(pod);
