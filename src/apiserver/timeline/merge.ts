// How recorded steps join a pod's kept steps: sorted by start, a series (a step with `count`)
// replacing its earlier self, a resent step (a batch retried after a lost answer) replacing its
// copy, and a per-pod cap that drops repeats before anything else.
import type { TimelineStep } from '../../api/timeline/types.js';
import { getOwn } from '../../util/own.js';

const probeOf = (s: TimelineStep): string => {
  const probe = s.attributes ? getOwn(s.attributes, 'probe') : undefined;
  return probe === undefined ? '' : String(probe);
};

/** Steps of one series share this: the step, its container and the probe kind. */
function seriesKey(s: TimelineStep): string {
  return `${s.step}\0${s.container ?? ''}\0${probeOf(s)}`;
}

function sameSeries(a: TimelineStep, b: TimelineStep): boolean {
  return a.step === b.step && (a.container ?? '') === (b.container ?? '') && probeOf(a) === probeOf(b);
}

/** Attributes are flat (strings, numbers, booleans): equal when they hold the same keys and values. */
function sameAttributes(a: TimelineStep['attributes'], b: TimelineStep['attributes']): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) if (!Object.hasOwn(b, k) || a[k] !== b[k]) return false;
  return true;
}

/** The same step sent twice: same series, recorder, start and facts (the cheap fields first). */
function sameStep(a: TimelineStep, b: TimelineStep): boolean {
  return a.start === b.start && a.component === b.component && sameSeries(a, b) && sameAttributes(a.attributes, b.attributes);
}

/** The latest of steps that `same` matches: a batch adds a few steps to a short list, so a scan from the end beats indexing every stored step. */
function lastMatch(steps: readonly TimelineStep[], step: TimelineStep, same: (a: TimelineStep, b: TimelineStep) => boolean): number | undefined {
  for (let i = steps.length - 1; i >= 0; i--) if (same(steps[i]!, step)) return i;
  return undefined;
}

/** Start times are normalized MicroTimes (same length, UTC), so they sort as strings. */
export const byStart = (a: TimelineStep, b: TimelineStep) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0);

export interface MergeResult {
  steps: TimelineStep[];
  /** The incoming steps that were kept (new or replacing a stored one). */
  added: TimelineStep[];
  /** An incoming step replaced a stored one (a series' later row, a resent step). */
  replaced: boolean;
  /** Steps were dropped to stay within the cap. */
  truncated: boolean;
}

/** A new array: `stored` is never changed (watchers and the history ring hold it). */
export function mergeSteps(stored: readonly TimelineStep[], incoming: readonly TimelineStep[], maxSteps: number): MergeResult {
  const steps = [...stored];
  const added: TimelineStep[] = [];
  let sorted = true;
  let replaced = false;
  for (const step of incoming) {
    const at = lastMatch(steps, step, step.count !== undefined ? sameSeries : sameStep);
    if (at !== undefined) {
      // A series keeps its first start; the incoming row carries the latest count and lastTime.
      if (steps[at]!.start !== step.start) sorted = false;
      steps[at] = step;
      replaced = true;
    } else {
      if (steps.length > 0 && byStart(steps[steps.length - 1]!, step) > 0) sorted = false;
      steps.push(step);
    }
    added.push(step);
  }
  if (!sorted) steps.sort(byStart);
  if (steps.length <= maxSteps) return { steps, added, replaced, truncated: false };
  return { steps: capSteps(steps, maxSteps), added, replaced, truncated: true };
}

/**
 * Drops the oldest repeats first (a step that occurs again later for the same container and probe,
 * e.g. one scheduling attempt of many), then the oldest steps, down to max.
 */
function capSteps(steps: TimelineStep[], max: number): TimelineStep[] {
  let excess = steps.length - max;
  const drop = new Set<number>();
  const seen = new Set<string>();
  // From the newest back: every earlier occurrence of a key already seen is a repeat.
  const repeats: number[] = [];
  for (let i = steps.length - 1; i >= 0; i--) {
    const key = seriesKey(steps[i]!);
    if (seen.has(key)) repeats.push(i);
    else seen.add(key);
  }
  for (let j = repeats.length - 1; j >= 0 && excess > 0; j--, excess--) drop.add(repeats[j]!);
  for (let i = 0; i < steps.length && excess > 0; i++) {
    if (drop.has(i)) continue;
    drop.add(i);
    excess--;
  }
  return steps.filter((_, i) => !drop.has(i));
}
