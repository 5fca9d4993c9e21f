// The arithmetic of a rollout as pure planners (upstream's rolling.go reconcile functions and the
// proportional scaling of sync.go's scale): each returns the ReplicaSet resizes to make, in order;
// the controller writes them and records one ScalingReplicaSet event per resize.
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import {
  byCreationTimestamp,
  bySizeNewer,
  bySizeOlder,
  deploymentReplicas,
  filterActiveReplicaSets,
  findActiveOrLatest,
  isRollingUpdate,
  isSaturated,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  proportion,
  replicaCount,
} from './util.js';

/** Set ReplicaSet `name` to `replicas`. */
export interface Resize {
  name: string;
  replicas: number;
}

const replicasOf = (rs: ReplicaSet | undefined): number => rs?.spec?.replicas ?? 0;
const nameOf = (rs: ReplicaSet): string => rs.metadata?.name ?? '';
const resized = (rs: ReplicaSet, replicas: number): ReplicaSet => ({ ...rs, spec: { ...rs.spec!, replicas } });

/** Upstream's reconcileNewReplicaSet: scale the new ReplicaSet toward the Deployment's size within maxSurge. */
export function planNewReplicaSet(allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet, d: Deployment): Resize[] {
  const want = deploymentReplicas(d);
  if (replicasOf(newRS) === want) return [];
  const next = replicasOf(newRS) > want ? want : newRSNewReplicas(d, allRSs, newRS);
  return next === replicasOf(newRS) ? [] : [{ name: nameOf(newRS), replicas: next }];
}

/**
 * Upstream's reconcileOldReplicaSets: how far the old ReplicaSets may shrink without going below
 * replicas − maxUnavailable available pods (counting the new ReplicaSet's unavailable ones as
 * already missing); their unhealthy replicas go first (cleanupUnhealthyReplicas), then available
 * ones, oldest ReplicaSet first (scaleDownOldReplicaSetsForRollingUpdate).
 */
export function planOldReplicaSets(allRSs: readonly (ReplicaSet | undefined)[], oldRSs: readonly ReplicaSet[], newRS: ReplicaSet | undefined, d: Deployment): Resize[] {
  if (replicaCount(oldRSs) === 0) return [];
  const minAvailable = deploymentReplicas(d) - maxUnavailable(d);
  const newUnavailable = replicasOf(newRS) - (newRS?.status?.availableReplicas ?? 0);
  const maxScaledDown = replicaCount(allRSs) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];
  const steps: Resize[] = [];

  // cleanupUnhealthyReplicas: replicas that are not available cost no availability.
  const olds = [...oldRSs].sort(byCreationTimestamp);
  let cleaned = 0;
  for (let i = 0; i < olds.length && cleaned < maxScaledDown; i++) {
    const rs = olds[i]!;
    const unhealthy = replicasOf(rs) - (rs.status?.availableReplicas ?? 0);
    if (replicasOf(rs) === 0 || unhealthy <= 0) continue;
    const down = Math.min(maxScaledDown - cleaned, unhealthy);
    steps.push({ name: nameOf(rs), replicas: replicasOf(rs) - down });
    olds[i] = resized(rs, replicasOf(rs) - down);
    cleaned += down;
  }

  // scaleDownOldReplicaSetsForRollingUpdate: available replicas above minAvailable. A ReplicaSet
  // just scaled down still reports the pods it is deleting as available until its controller
  // syncs again; counting at most spec.replicas of each keeps that moment from breaking
  // maxUnavailable (upstream sums status alone and can overshoot when both controllers are fast).
  const available = [...olds, newRS].reduce((n, rs) => n + Math.min(rs?.status?.availableReplicas ?? 0, replicasOf(rs)), 0);
  if (available <= minAvailable) return steps;
  const total = available - minAvailable;
  let scaled = 0;
  for (const rs of olds) {
    if (scaled >= total) break;
    if (replicasOf(rs) === 0) continue;
    const down = Math.min(replicasOf(rs), total - scaled);
    steps.push({ name: nameOf(rs), replicas: replicasOf(rs) - down });
    scaled += down;
  }
  return steps;
}

/**
 * Upstream's scale (sync.go), for a resize of the Deployment or adoption: one active ReplicaSet
 * takes the new size; a saturated new ReplicaSet leaves the old at 0; otherwise a rolling
 * Deployment's active ReplicaSets grow or shrink in proportion to their size, the leftover going
 * to the first (largest) of them.
 */
export function planScale(d: Deployment, newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): Resize[] {
  const want = deploymentReplicas(d);
  const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
  if (activeOrLatest) return replicasOf(activeOrLatest) === want ? [] : [{ name: nameOf(activeOrLatest), replicas: want }];
  if (isSaturated(d, newRS)) return filterActiveReplicaSets(oldRSs).map((rs) => ({ name: nameOf(rs), replicas: 0 }));
  if (!isRollingUpdate(d)) return [];
  const all = filterActiveReplicaSets([...oldRSs, newRS]);
  const allowed = want > 0 ? want + maxSurge(d) : 0;
  const toAdd = allowed - replicaCount(all);
  if (toAdd > 0) all.sort(bySizeNewer);
  else if (toAdd < 0) all.sort(bySizeOlder);
  const size = new Map<string, number>();
  let added = 0;
  for (const rs of all) {
    if (toAdd === 0) {
      size.set(nameOf(rs), replicasOf(rs));
      continue;
    }
    const p = proportion(rs, d, toAdd, added);
    size.set(nameOf(rs), replicasOf(rs) + p);
    added += p;
  }
  if (all.length && toAdd !== 0) {
    const first = nameOf(all[0]!);
    size.set(first, Math.max(0, size.get(first)! + toAdd - added));
  }
  // Every active ReplicaSet is written (its replicas annotations may need the new size too).
  return all.map((rs) => ({ name: nameOf(rs), replicas: size.get(nameOf(rs))! }));
}
