// The arithmetic and bookkeeping of upstream's pkg/controller/deployment/util/deployment_util.go:
// fenceposts (maxSurge / maxUnavailable), the revision and replicas annotations, conditions, the
// ReplicaSet orders, the pod-template-hash, and the status a Deployment reports. Pure functions
// over plain objects; the controller does the writes.
import { isDeepStrictEqual } from 'node:util';
import type { Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet, ReplicaSetCondition } from 'kubernetes-types/apps/v1.js';
import type { PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { rfc3339 } from '../../api/time.js';
import { scaledValueFromIntOrPercent } from '../kit/intstr.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
/** extensions/v1beta1's rollback request; never copied to a ReplicaSet. */
const DEPRECATED_ROLLBACK_TO = 'deprecated.deployment.rollback.to';
const LAST_APPLIED_CONFIG = 'kubectl.kubernetes.io/last-applied-configuration';
export const DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = 'pod-template-hash';
/** Upstream's maxRevHistoryLengthInChars. */
export const MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000;
const MAX_INT32 = 2 ** 31 - 1;

// Reasons of the Progressing and Available conditions (upstream's util constants).
export const NEW_RS_REASON = 'NewReplicaSetCreated';
export const FOUND_NEW_RS_REASON = 'FoundNewReplicaSet';
export const RS_UPDATED_REASON = 'ReplicaSetUpdated';
export const NEW_RS_AVAILABLE_REASON = 'NewReplicaSetAvailable';
export const TIMED_OUT_REASON = 'ProgressDeadlineExceeded';
export const PAUSED_DEPLOY_REASON = 'DeploymentPaused';
export const RESUMED_DEPLOY_REASON = 'DeploymentResumed';
export const FAILED_RS_CREATE_REASON = 'ReplicaSetCreateError';
export const MINIMUM_REPLICAS_AVAILABLE = 'MinimumReplicasAvailable';
export const MINIMUM_REPLICAS_UNAVAILABLE = 'MinimumReplicasUnavailable';

type IntOrString = number | string | undefined;

const replicasOf = (rs: ReplicaSet | undefined): number => rs?.spec?.replicas ?? 0;
export const deploymentReplicas = (d: Deployment): number => d.spec?.replicas ?? 0;
export const isRollingUpdate = (d: Deployment): boolean => d.spec?.strategy?.type === 'RollingUpdate';

/** Upstream's ResolveFenceposts: surge rounds up, unavailable down; both zero makes unavailable 1. */
export function resolveFenceposts(maxSurge: IntOrString, maxUnavailable: IntOrString, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  let unavailable = scaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxSurge(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec?.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, deploymentReplicas(d)).surge;
}

export function maxUnavailable(d: Deployment): number {
  const replicas = deploymentReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec?.strategy?.rollingUpdate;
  return Math.min(resolveFenceposts(ru?.maxSurge, ru?.maxUnavailable, replicas).unavailable, replicas);
}

export const hasProgressDeadline = (d: Deployment): boolean => d.spec?.progressDeadlineSeconds !== undefined && d.spec.progressDeadlineSeconds !== MAX_INT32;
export const hasRevisionHistoryLimit = (d: Deployment): boolean => d.spec?.revisionHistoryLimit !== undefined && d.spec.revisionHistoryLimit !== MAX_INT32;

// ---- sums over ReplicaSets

export const replicaCount = (rss: readonly (ReplicaSet | undefined)[]): number => rss.reduce((n, rs) => n + replicasOf(rs), 0);
export const actualReplicaCount = (rss: readonly (ReplicaSet | undefined)[]): number => rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
export const readyReplicaCount = (rss: readonly (ReplicaSet | undefined)[]): number => rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
export const availableReplicaCount = (rss: readonly (ReplicaSet | undefined)[]): number => rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
export const filterActiveReplicaSets = (rss: readonly (ReplicaSet | undefined)[]): ReplicaSet[] => rss.filter((rs): rs is ReplicaSet => !!rs && replicasOf(rs) > 0);

// ---- orders

const created = (rs: ReplicaSet) => Date.parse(rs.metadata?.creationTimestamp ?? '') || 0;

/** Upstream's ReplicaSetsByCreationTimestamp: older first, then by name. */
export function byCreationTimestamp(a: ReplicaSet, b: ReplicaSet): number {
  const d = created(a) - created(b);
  if (d !== 0) return d;
  const na = a.metadata?.name ?? '';
  const nb = b.metadata?.name ?? '';
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** Upstream's ReplicaSetsBySizeOlder: larger first, then older. */
export const bySizeOlder = (a: ReplicaSet, b: ReplicaSet): number => replicasOf(b) - replicasOf(a) || byCreationTimestamp(a, b);
/** Upstream's ReplicaSetsBySizeNewer: larger first, then newer. */
export const bySizeNewer = (a: ReplicaSet, b: ReplicaSet): number => replicasOf(b) - replicasOf(a) || byCreationTimestamp(b, a);

/** The revision annotation as a number; undefined when absent or not an integer. */
export function revisionOf(obj: { metadata?: { annotations?: Record<string, string> } }): number | undefined {
  const v = obj.metadata?.annotations?.[REVISION_ANNOTATION];
  return v !== undefined && /^-?[0-9]+$/.test(v) ? Number(v) : undefined;
}

/** Upstream's ReplicaSetsByRevision: by revision, falling back to creation order. */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  const ra = revisionOf(a);
  const rb = revisionOf(b);
  if (ra === undefined || rb === undefined || ra === rb) return byCreationTimestamp(a, b);
  return ra - rb;
}

export const maxRevision = (rss: readonly ReplicaSet[]): number => rss.reduce((m, rs) => Math.max(m, revisionOf(rs) ?? 0), 0);

// ---- templates and the pod-template-hash

/**
 * The value without what omitempty JSON leaves out in Go: null, "", [] and {} (and with
 * `zeroScalars` also 0 and false, which only non-pointer fields omit). Templates keep 0 and false:
 * for pointer fields (`automountServiceAccountToken: false`) they differ from absent.
 */
function dropEmpty(v: unknown, zeroScalars: boolean, depth = 0): unknown {
  if (depth > 64) return v;
  if (Array.isArray(v)) return v.length ? v.map((x) => dropEmpty(x, zeroScalars, depth + 1) ?? null) : undefined;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const z = dropEmpty(x, zeroScalars, depth + 1);
      if (z !== undefined) out[k] = z;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (v === null || v === '') return undefined;
  return zeroScalars && (v === 0 || v === false) ? undefined : v;
}

function withoutHashLabel(t: PodTemplateSpec | undefined): unknown {
  const copy = structuredClone(t ?? {});
  if (copy.metadata?.labels) delete copy.metadata.labels[DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY];
  return dropEmpty(copy, false);
}

/** Upstream's EqualIgnoreHash: the templates are equal but for the pod-template-hash label. */
export const equalIgnoreHash = (a: PodTemplateSpec | undefined, b: PodTemplateSpec | undefined): boolean => isDeepStrictEqual(withoutHashLabel(a), withoutHashLabel(b));

/** A JSON text with object keys sorted, so the hash does not depend on key order. */
function canonicalJSON(v: unknown, depth = 0): string {
  if (depth > 64) throw new Error('template too deep to hash');
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJSON(x ?? null, depth + 1)).join(',')}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJSON((v as Record<string, unknown>)[k], depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** apimachinery's rand.SafeEncodeString alphabet: no vowels, no 0/1/3 (no bad words, no look-alikes). */
const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHANUMS[s.charCodeAt(i) % SAFE_ALPHANUMS.length];
  return out;
}

function fnv32a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/**
 * Upstream's ComputeHash: FNV-32a of the template, then of collisionCount as 4 little-endian
 * bytes, printed in decimal and safe-encoded. Upstream feeds the hasher spew's dump of the Go
 * struct, which only Go's type layout reproduces; kite hashes the canonical JSON of the
 * template without empty values instead, so its hashes are stable and well spread but differ
 * from a real cluster's for the same template.
 */
export function computeHash(template: PodTemplateSpec | undefined, collisionCount?: number): string {
  let h = fnv32a(new TextEncoder().encode(canonicalJSON(dropEmpty(template ?? {}, false) ?? {})));
  if (collisionCount !== undefined) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv32a(b, h);
  }
  return safeEncodeString(String(h));
}

// ---- annotations

const SKIP_COPY = new Set([LAST_APPLIED_CONFIG, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, DEPRECATED_ROLLBACK_TO]);

/** Upstream's copyDeploymentAnnotationsToReplicaSet (mutates rs); true when something changed. */
function copyDeploymentAnnotations(d: Deployment, rs: ReplicaSet): boolean {
  let changed = false;
  const anns = (rs.metadata!.annotations ??= {});
  for (const [k, v] of Object.entries(d.metadata?.annotations ?? {})) {
    if (SKIP_COPY.has(k) || anns[k] === v) continue;
    anns[k] = v;
    changed = true;
  }
  return changed;
}

/** Upstream's SetReplicasAnnotations (mutates rs); true when something changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  const anns = ((rs.metadata ??= {}).annotations ??= {});
  let changed = false;
  if (anns[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    anns[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    changed = true;
  }
  if (anns[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    anns[MAX_REPLICAS_ANNOTATION] = String(max);
    changed = true;
  }
  return changed;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const anns = rs.metadata?.annotations ?? {};
  return anns[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || anns[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/**
 * Upstream's SetNewReplicaSetAnnotations (mutates newRS): the Deployment's annotations, the new
 * revision (the old one moves into revision-history, bounded to limitChars), and for a ReplicaSet
 * about to be created the replicas annotations. True when something changed.
 */
export function setNewReplicaSetAnnotations(d: Deployment, newRS: ReplicaSet, newRevision: string, exists: boolean, limitChars = MAX_REV_HISTORY_LENGTH_IN_CHARS): boolean {
  newRS.metadata ??= {};
  let changed = copyDeploymentAnnotations(d, newRS);
  const anns = (newRS.metadata.annotations ??= {});
  const oldRevision = anns[REVISION_ANNOTATION] ?? '';
  const oldRevisionInt = oldRevision === '' ? 0 : /^-?[0-9]+$/.test(oldRevision) ? Number(oldRevision) : undefined;
  if (oldRevisionInt === undefined) return false; // upstream gives up on an unparsable revision
  const newRevisionInt = Number(newRevision);
  if (oldRevisionInt < newRevisionInt) {
    anns[REVISION_ANNOTATION] = newRevision;
    changed = true;
  }
  if (oldRevision !== '' && oldRevisionInt < newRevisionInt) {
    const history = anns[REVISION_HISTORY_ANNOTATION] ?? '';
    const old = history.split(',');
    if (old[0] === '') anns[REVISION_HISTORY_ANNOTATION] = oldRevision;
    else {
      let total = history.length + oldRevision.length + 1;
      let start = 0;
      while (total > limitChars && start < old.length) total -= old[start++]!.length + 1;
      if (total <= limitChars) anns[REVISION_HISTORY_ANNOTATION] = [...old.slice(start), oldRevision].join(',');
    }
  }
  if (!exists && setReplicasAnnotations(newRS, deploymentReplicas(d), deploymentReplicas(d) + maxSurge(d))) changed = true;
  return changed;
}

/** Upstream's SetDeploymentRevision (mutates d); true when it changed. */
export function setDeploymentRevision(d: Deployment, revision: string): boolean {
  const anns = ((d.metadata ??= {}).annotations ??= {});
  if (anns[REVISION_ANNOTATION] === revision) return false;
  anns[REVISION_ANNOTATION] = revision;
  return true;
}

function intAnnotation(rs: ReplicaSet, key: string): number | undefined {
  const v = rs.metadata?.annotations?.[key];
  return v !== undefined && /^-?[0-9]+$/.test(v) ? Number(v) : undefined;
}

export const desiredReplicasAnnotation = (rs: ReplicaSet) => intAnnotation(rs, DESIRED_REPLICAS_ANNOTATION);

// ---- finding the new and old ReplicaSets

/** Upstream's FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's. */
export function findNewReplicaSet(d: Deployment, rsList: readonly ReplicaSet[]): ReplicaSet | undefined {
  return [...rsList].sort(byCreationTimestamp).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

/** Upstream's FindOldReplicaSets (the all of it, which is what the controller uses): every ReplicaSet but the new one. */
export function findOldReplicaSets(d: Deployment, rsList: readonly ReplicaSet[]): ReplicaSet[] {
  const newRS = findNewReplicaSet(d, rsList);
  return rsList.filter((rs) => !newRS || rs.metadata?.uid !== newRS.metadata?.uid);
}

/** Upstream's FindActiveOrLatest: the one active ReplicaSet, the newest when none is, none when several are. */
export function findActiveOrLatest(newRS: ReplicaSet | undefined, oldRSs: readonly ReplicaSet[]): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = [...oldRSs].sort((a, b) => byCreationTimestamp(b, a));
  const active = filterActiveReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  return active.length === 1 ? active[0] : undefined;
}

/** Upstream's IsSaturated: the new ReplicaSet runs the Deployment's full size, all available. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = desiredReplicasAnnotation(rs);
  const n = deploymentReplicas(d);
  return desired !== undefined && replicasOf(rs) === n && desired === n && (rs.status?.availableReplicas ?? 0) === n;
}

/** Upstream's NewRSNewReplicas: how large the new ReplicaSet may be now. */
export function newRSNewReplicas(d: Deployment, allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet): number {
  if (!isRollingUpdate(d)) return deploymentReplicas(d);
  const current = replicaCount(allRSs);
  const maxTotal = deploymentReplicas(d) + maxSurge(d);
  if (current >= maxTotal) return replicasOf(newRS);
  const scaleUp = Math.min(maxTotal - current, deploymentReplicas(d) - replicasOf(newRS));
  return replicasOf(newRS) + scaleUp;
}

// ---- proportional scaling

/** Go's math.Round: half away from zero. */
const roundHalfAway = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

/** Upstream's getReplicaSetFraction: rs's share of a resize, by the max-replicas it was last sized for. */
function replicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  if (deploymentReplicas(d) === 0) return -replicasOf(rs);
  const dMax = deploymentReplicas(d) + maxSurge(d);
  let annotated = intAnnotation(rs, MAX_REPLICAS_ANNOTATION);
  if (!annotated) annotated = d.status?.replicas ?? 0;
  return roundHalfAway((replicasOf(rs) * dMax) / annotated) - replicasOf(rs);
}

/** Upstream's GetProportion. */
export function proportion(rs: ReplicaSet | undefined, d: Deployment, toAdd: number, added: number): number {
  if (!rs || replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

// ---- conditions

export function newDeploymentCondition(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string, now: number): DeploymentCondition {
  const t = rfc3339(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export const getDeploymentCondition = (status: DeploymentStatus | undefined, type: string): DeploymentCondition | undefined => status?.conditions?.find((c) => c.type === type);

/** Upstream's SetDeploymentCondition (mutates status): same status and reason is a no-op; same status keeps lastTransitionTime. */
export function setDeploymentCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getDeploymentCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
}

const replicaSetToDeploymentCondition = (c: ReplicaSetCondition): DeploymentCondition => ({
  type: c.type,
  status: c.status,
  lastUpdateTime: c.lastTransitionTime,
  lastTransitionTime: c.lastTransitionTime,
  reason: c.reason,
  message: c.message,
});

/** Upstream's getReplicaFailures: the new ReplicaSet's ReplicaFailure conditions, else any ReplicaSet's. */
export function replicaFailures(allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): DeploymentCondition[] {
  const of = (rs: ReplicaSet | undefined) => (rs?.status?.conditions ?? []).filter((c) => c.type === 'ReplicaFailure').map(replicaSetToDeploymentCondition);
  const fromNew = of(newRS);
  return fromNew.length ? fromNew : allRSs.flatMap(of);
}

// ---- progress

/** Upstream's DeploymentComplete. */
export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const n = deploymentReplicas(d);
  return (s.updatedReplicas ?? 0) === n && (s.replicas ?? 0) === n && (s.availableReplicas ?? 0) === n && (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
}

/** Upstream's DeploymentProgressing: more updated, fewer old, more ready or more available pods. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (s.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) || newOld < oldOld || (s.readyReplicas ?? 0) > (old.readyReplicas ?? 0) || (s.availableReplicas ?? 0) > (old.availableReplicas ?? 0);
}

/** Upstream's DeploymentTimedOut: no progress for progressDeadlineSeconds since the Progressing condition's lastUpdateTime. */
export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getDeploymentCondition(s, 'Progressing');
  if (!c || c.reason === NEW_RS_AVAILABLE_REASON) return false;
  if (c.reason === TIMED_OUT_REASON) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  return Number.isFinite(from) && from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 < now;
}

/** Upstream's calculateStatus: the counts over the ReplicaSets and the Available condition. */
export function calculateStatus(allRSs: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment, now: number): DeploymentStatus {
  const available = availableReplicaCount(allRSs);
  const total = replicaCount(allRSs);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata?.generation ?? 0,
    replicas: actualReplicaCount(allRSs),
    updatedReplicas: actualReplicaCount([newRS]),
    readyReplicas: readyReplicaCount(allRSs),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
    ...(d.status?.conditions ? { conditions: d.status.conditions.map((c) => ({ ...c })) } : {}),
  };
  // Every count is omitempty in DeploymentStatus: a real cluster never shows a zero.
  for (const k of ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas'] as const) if (status[k] === 0) delete status[k];
  if (available >= deploymentReplicas(d) - maxUnavailable(d)) {
    setDeploymentCondition(status, newDeploymentCondition('Available', 'True', MINIMUM_REPLICAS_AVAILABLE, 'Deployment has minimum availability.', now));
  } else {
    setDeploymentCondition(status, newDeploymentCondition('Available', 'False', MINIMUM_REPLICAS_UNAVAILABLE, 'Deployment does not have minimum availability.', now));
  }
  return status;
}

/** Status as the API returns it (zero counts omitted), so a fresh status compares equal to the stored one. */
export function sameDeploymentStatus(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  return isDeepStrictEqual(dropEmpty(a ?? {}, true) ?? {}, dropEmpty(b, true) ?? {});
}
