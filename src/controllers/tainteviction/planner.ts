// What the taint eviction controller does with one pod on one node, as upstream's processPodOnNode:
// a NoExecute taint the pod does not tolerate deletes it at once; otherwise the smallest
// tolerationSeconds of the tolerations used decides when, counted from the moment the controller
// looks at the pod (not the taint's timeAdded), and no tolerationSeconds at all means never.
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { toleratesTaint } from '../../api/scheduling/taints.js';

export type EvictionPlan =
  /** Cancel the pod's scheduled deletion, if any (with the "Cancelling deletion" event). */
  | { action: 'cancel' }
  /** Cancel a scheduled deletion and delete now. */
  | { action: 'deleteNow' }
  /** Schedule the deletion at fireAt (ms since the epoch). */
  | { action: 'schedule'; fireAt: number }
  /** A deletion is already scheduled: it stands. */
  | { action: 'keep' };

export function getNoExecuteTaints(taints: readonly Taint[] | undefined): Taint[] {
  return (taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/**
 * Whether every taint is tolerated, and the toleration used for each (the first that matches it),
 * as upstream's v1helper.GetMatchingTolerations.
 */
export function getMatchingTolerations(taints: readonly Taint[], tolerations: readonly Toleration[] | undefined): { allTolerated: boolean; used: Toleration[] } {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const match = (tolerations ?? []).find((t) => toleratesTaint(t, taint));
    if (!match) return { allTolerated: false, used: [] };
    used.push(match);
  }
  return { allTolerated: true, used };
}

/** The smallest tolerationSeconds in ms (0 for none used or one ≤ 0), or -1 when all tolerate forever. */
export function getMinTolerationTime(tolerations: readonly Toleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Infinity;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min === Infinity ? -1 : min * 1000;
}

/**
 * The plan for a pod with these tolerations on a node with these NoExecute taints at `now`;
 * `scheduled` says whether its deletion is already on a timer.
 */
export function planPodOnNode(taints: readonly Taint[], tolerations: readonly Toleration[] | undefined, now: number, scheduled: boolean): EvictionPlan {
  if (taints.length === 0) return { action: 'cancel' };
  const { allTolerated, used } = getMatchingTolerations(taints, tolerations);
  if (!allTolerated) return { action: 'deleteNow' };
  const min = getMinTolerationTime(used);
  if (min < 0) return { action: 'cancel' };
  // Upstream replaces a scheduled deletion only if it started after now; the clock does not go
  // back, so one scheduled earlier stands, even when the pod's tolerationSeconds changed since.
  if (scheduled) return { action: 'keep' };
  return { action: 'schedule', fireAt: now + min };
}
