// Which pods count and which go first, as upstream's controller_utils.go: active pods (not
// finished, not being deleted), and the orders controllers delete by when they scale down — the
// pods that matter least first.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { podConditionTrue } from '../../api/pod/status.js';
import { findResource } from '../../api/resources.js';
import type { SharedInformerFactory } from '../../client/factory.js';

/** Upstream's PodDeletionCost annotation: lower cost goes first. */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

/** The shared pod informer's index by spec.nodeName (upstream's PodNodeNameKeyIndex). */
export const POD_NODE_NAME_INDEX = 'spec.nodeName';

/** Adds the pods-by-node index unless another controller of the process already did (upstream's AddPodNodeNameIndexer). */
export function addPodNodeNameIndexer(informers: SharedInformerFactory): void {
  const podsInfo = findResource('', 'v1', 'pods')!;
  if (informers.informerFor<Pod>(podsInfo).indexer.hasIndex(POD_NODE_NAME_INDEX)) return;
  informers.addIndexers<Pod>(podsInfo, { [POD_NODE_NAME_INDEX]: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []) });
}

export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata?.deletionTimestamp;
}

export function filterActivePods(pods: readonly Pod[]): Pod[] {
  return pods.filter(isPodActive);
}

export const isPodReady = (pod: Pod) => podConditionTrue(pod, 'Ready');

const phaseOrdinal = (pod: Pod): number => ({ Pending: 0, Unknown: 1, Running: 2 })[pod.status?.phase ?? ''] ?? 0;

/** The Ready condition's lastTransitionTime when ready; 0 stands for Go's zero time. */
function podReadyTime(pod: Pod): number {
  if (!isPodReady(pod)) return 0;
  const c = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  return timeOf(c?.lastTransitionTime);
}

const timeOf = (t: string | undefined): number => (t ? Date.parse(t) || 0 : 0);

function maxContainerRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

/** t1 after t2, where a zero time counts as after any other. */
function afterOrZero(t1: number, t2: number): boolean {
  if (t1 === 0 || t2 === 0) return t1 === 0;
  return t1 > t2;
}

/** Compares by steps that end in a decision or undefined (a tie so far). */
type Step = (a: Pod, b: Pod) => boolean | undefined;

const unassignedFirst: Step = (a, b) => {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  return na !== nb && (na === '' || nb === '') ? na === '' : undefined;
};
const byPhase: Step = (a, b) => (phaseOrdinal(a) !== phaseOrdinal(b) ? phaseOrdinal(a) < phaseOrdinal(b) : undefined);
const notReadyFirst: Step = (a, b) => (isPodReady(a) !== isPodReady(b) ? !isPodReady(a) : undefined);
const moreRestartsFirst: Step = (a, b) => (maxContainerRestarts(a) !== maxContainerRestarts(b) ? maxContainerRestarts(a) > maxContainerRestarts(b) : undefined);

function less(steps: Step[], a: Pod, b: Pod): boolean {
  for (const step of steps) {
    const decided = step(a, b);
    if (decided !== undefined) return decided;
  }
  return false;
}

const toComparator = (lessFn: (a: Pod, b: Pod) => boolean) => (a: Pod, b: Pod) => (lessFn(a, b) ? -1 : lessFn(b, a) ? 1 : 0);

/**
 * Upstream's ActivePods order (the first should be deleted first): unassigned < assigned;
 * Pending < Unknown < Running; not ready < ready; ready for less time < more; more restarts < fewer;
 * newer < older (a missing time counts as newest).
 */
export function activePodsLess(a: Pod, b: Pod): boolean {
  return less(
    [
      unassignedFirst,
      byPhase,
      notReadyFirst,
      (a, b) => {
        if (!isPodReady(a) || !isPodReady(b)) return undefined;
        const ra = podReadyTime(a);
        const rb = podReadyTime(b);
        return ra !== rb ? afterOrZero(ra, rb) : undefined;
      },
      moreRestartsFirst,
      (a, b) => {
        const ca = timeOf(a.metadata?.creationTimestamp);
        const cb = timeOf(b.metadata?.creationTimestamp);
        return ca !== cb ? afterOrZero(ca, cb) : undefined;
      },
    ],
    a,
    b,
  );
}

/** Sorts a copy in ActivePods order. */
export function sortActivePods(pods: readonly Pod[]): Pod[] {
  return [...pods].sort(toComparator(activePodsLess));
}

/** The pod-deletion-cost annotation as an int32; absent or invalid ("+1", "007", out of range) is 0. */
export function podDeletionCost(pod: Pod): number {
  const v = pod.metadata?.annotations?.[POD_DELETION_COST];
  if (v === undefined || !/^(0|[1-9][0-9]*|-[0-9]+)$/.test(v)) return 0;
  const n = Number(v);
  return n >= -(2 ** 31) && n < 2 ** 31 ? n : 0;
}

/** floor(log2) of the age in nanoseconds, as upstream compares ages (LogarithmicScaleDown, GA in 1.31); -1 for none. */
function logarithmicRank(t: number, now: number): number {
  const d = (now - t) * 1e6;
  return d > 0 ? Math.floor(Math.log2(d)) : -1;
}

/**
 * Upstream's ActivePodsWithRanks: `rank[i]` is how many other active pods of the same controller
 * share pods[i]'s node (doubled-up pods go first). Order: unassigned < assigned; Pending < Unknown
 * < Running; not ready < ready; lower pod-deletion-cost < higher; higher rank < lower; ready for
 * less time < more and newer < older, both compared on a log2 scale of their age at `now`
 * (same bucket: lower UID first); more restarts < fewer.
 */
export function activePodsWithRanksLess(a: Pod, b: Pod, rankA: number, rankB: number, now: number): boolean {
  const logScaleTie = (ta: number, tb: number, a: Pod, b: Pod) => {
    if (now === 0 || ta === 0 || tb === 0) return afterOrZero(ta, tb);
    const diff = logarithmicRank(ta, now) - logarithmicRank(tb, now);
    return diff === 0 ? (a.metadata?.uid ?? '') < (b.metadata?.uid ?? '') : diff < 0;
  };
  return less(
    [
      unassignedFirst,
      byPhase,
      notReadyFirst,
      (a, b) => (podDeletionCost(a) !== podDeletionCost(b) ? podDeletionCost(a) < podDeletionCost(b) : undefined),
      () => (rankA !== rankB ? rankA > rankB : undefined),
      (a, b) => {
        if (!isPodReady(a) || !isPodReady(b)) return undefined;
        const ra = podReadyTime(a);
        const rb = podReadyTime(b);
        return ra !== rb ? logScaleTie(ra, rb, a, b) : undefined;
      },
      moreRestartsFirst,
      (a, b) => {
        const ca = timeOf(a.metadata?.creationTimestamp);
        const cb = timeOf(b.metadata?.creationTimestamp);
        return ca !== cb ? logScaleTie(ca, cb, a, b) : undefined;
      },
    ],
    a,
    b,
  );
}

/** Sorts pods (with their ranks) in ActivePodsWithRanks order; returns the pods. */
export function sortActivePodsWithRanks(pods: readonly Pod[], ranks: readonly number[], now: number): Pod[] {
  const indexed = pods.map((pod, i) => ({ pod, rank: ranks[i] ?? 0 }));
  indexed.sort((x, y) => (activePodsWithRanksLess(x.pod, y.pod, x.rank, y.rank, now) ? -1 : activePodsWithRanksLess(y.pod, x.pod, y.rank, x.rank, now) ? 1 : 0));
  return indexed.map((x) => x.pod);
}

/** Upstream's IsPodAvailable: ready, and for at least minReadySeconds. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds === 0) return true;
  const since = Date.parse(pod.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 < now;
}
