// The node lifecycle controller's decisions, pure (upstream's node_lifecycle_controller.go and
// controller/util/node): how a node's health is judged from its status and Lease as this controller
// observed them, the conditions a silent node gets, the taints its conditions call for, and the
// state of a zone.
import type { NodeCondition, Taint } from 'kubernetes-types/core/v1.js';
import type { Lease, Node } from '../../api/types.js';
import { rfc3339 } from '../../api/time.js';

export const taintNodeNotReady = 'node.kubernetes.io/not-ready';
export const taintNodeUnreachable = 'node.kubernetes.io/unreachable';
export const taintNodeUnschedulable = 'node.kubernetes.io/unschedulable';
export const taintNodeMemoryPressure = 'node.kubernetes.io/memory-pressure';
export const taintNodeDiskPressure = 'node.kubernetes.io/disk-pressure';
export const taintNodePIDPressure = 'node.kubernetes.io/pid-pressure';
export const taintNodeNetworkUnavailable = 'node.kubernetes.io/network-unavailable';

export const unreachableTaintTemplate: Taint = { key: taintNodeUnreachable, effect: 'NoExecute' };
export const notReadyTaintTemplate: Taint = { key: taintNodeNotReady, effect: 'NoExecute' };

/** nodeConditionToTaintKeyStatusMap: the NoSchedule taint each condition status calls for. */
const conditionTaints: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  Ready: { False: taintNodeNotReady, Unknown: taintNodeUnreachable },
  MemoryPressure: { True: taintNodeMemoryPressure },
  DiskPressure: { True: taintNodeDiskPressure },
  NetworkUnavailable: { True: taintNodeNetworkUnavailable },
  PIDPressure: { True: taintNodePIDPressure },
};
const conditionTaintKeys = new Set(Object.values(conditionTaints).flatMap((m) => Object.values(m)));

/** The conditions a silent node's are set Unknown on (NetworkUnavailable is the control plane's). */
const kubeletConditionTypes = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

export function nodeCondition(node: Node, type: string): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

/** What the controller remembers of a node between passes (upstream's nodeHealthData). */
export interface NodeHealthData {
  /** The node's Ready condition as last observed (undefined: it had none). */
  ready?: NodeCondition;
  /** When this controller last saw the node alive (a new heartbeat or Lease renewal), ms. */
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  /** The renewTime of the Lease last observed. */
  leaseRenewTime?: string;
}

export interface HealthTimeouts {
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
}

export interface HealthAssessment {
  health: NodeHealthData;
  /** The Ready condition the node had when observed (a synthetic Unknown one if it had none). */
  observedReady: NodeCondition;
  /** The Ready condition after this pass's changes (undefined: the node never posted one). */
  currentReady?: NodeCondition;
  /** The node's conditions to write when the node went silent and its Ready condition changes. */
  conditions?: NodeCondition[];
  /** The health to keep once those conditions are written. */
  healthAfterWrite?: NodeHealthData;
}

const creationTime = (node: Node, now: number) => Date.parse(node.metadata?.creationTimestamp ?? '') || now;
const sameTime = (a: string | undefined, b: string | undefined) => (a ?? '') === (b ?? '');

/** tryUpdateNodeHealth's judgement: the timestamps are this controller's own observation times. */
export function assessNodeHealth(node: Node, lease: Lease | undefined, saved: NodeHealthData | undefined, now: number, t: HealthTimeouts): HealthAssessment {
  const current = nodeCondition(node, 'Ready');
  const created = creationTime(node, now);
  let health = saved;
  let observedReady: NodeCondition;
  let gracePeriodMs: number;
  if (!current) {
    // Never posted: a synthetic Unknown condition dated at creation, and the startup grace period.
    observedReady = { type: 'Ready', status: 'Unknown', lastHeartbeatTime: node.metadata?.creationTimestamp, lastTransitionTime: node.metadata?.creationTimestamp };
    gracePeriodMs = t.nodeStartupGracePeriodMs;
    health = health ? { ...health, ready: undefined } : { probeTimestamp: created, readyTransitionTimestamp: created };
  } else {
    observedReady = { ...current };
    gracePeriodMs = t.nodeMonitorGracePeriodMs;
  }
  const savedReady = saved?.ready;
  const savedLease = saved?.leaseRenewTime;
  if (!health || (current && !savedReady)) {
    // First sight of the node (or of its Ready condition): alive as of now.
    health = { ready: current, probeTimestamp: now, readyTransitionTimestamp: now };
  } else if (savedReady && current && !sameTime(savedReady.lastHeartbeatTime, current.lastHeartbeatTime)) {
    const transition = sameTime(savedReady.lastTransitionTime, current.lastTransitionTime) ? health.readyTransitionTimestamp : now;
    health = { ready: current, probeTimestamp: now, readyTransitionTimestamp: transition };
  }
  // A renewed Lease is a heartbeat too: a kubelet renewing it but never posting status counts as healthy.
  const renewTime = lease?.spec?.renewTime;
  if (renewTime && (savedLease === undefined || Date.parse(savedLease) < Date.parse(renewTime))) {
    health = { ...health, leaseRenewTime: renewTime, probeTimestamp: now };
  } else {
    health = { ...health, leaseRenewTime: savedLease };
  }
  const assessment: HealthAssessment = { health, observedReady, currentReady: current };
  if (now <= health.probeTimestamp + gracePeriodMs) return assessment;

  const nowTime = rfc3339(now);
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  for (const type of kubeletConditionTypes) {
    const c = conditions.find((x) => x.type === type);
    if (!c) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: 'NodeStatusNeverUpdated',
        message: 'Kubelet never posted node status.',
        lastHeartbeatTime: node.metadata?.creationTimestamp,
        lastTransitionTime: nowTime,
      });
    } else if (c.status !== 'Unknown') {
      Object.assign(c, { status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: nowTime });
    }
  }
  const newReady = conditions.find((c) => c.type === 'Ready')!;
  if (sameCondition(newReady, observedReady)) return assessment;
  return {
    ...assessment,
    currentReady: newReady,
    conditions,
    healthAfterWrite: { ready: newReady, probeTimestamp: health.probeTimestamp, readyTransitionTimestamp: now, leaseRenewTime: renewTime },
  };
}

function sameCondition(a: NodeCondition, b: NodeCondition): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '') &&
    sameTime(a.lastHeartbeatTime, b.lastHeartbeatTime) &&
    sameTime(a.lastTransitionTime, b.lastTransitionTime)
  );
}

/** taintutils.TaintExists: a taint of the same key and effect. */
export function taintExists(taints: readonly Taint[] | undefined, template: Taint): boolean {
  return (taints ?? []).some((t) => t.key === template.key && t.effect === template.effect);
}

/**
 * SwapNodeControllerTaint's result on a taint list: `add` put in (replacing the same key and effect,
 * timeAdded now), `remove` taken out by key and effect. undefined when nothing changes.
 */
export function swapTaints(taints: readonly Taint[] | undefined, add: readonly Taint[], remove: readonly Taint[], now: number): Taint[] | undefined {
  let next = [...(taints ?? [])];
  let changed = false;
  const timeAdded = rfc3339(now);
  for (const t of add) {
    const taint = { ...t, timeAdded };
    const i = next.findIndex((x) => x.key === t.key && x.effect === t.effect);
    if (i < 0) {
      next.push(taint);
      changed = true;
    } else if ((next[i]!.value ?? '') !== (t.value ?? '') || next[i]!.timeAdded !== timeAdded) {
      next[i] = taint;
      changed = true;
    }
  }
  for (const t of remove) {
    const kept = next.filter((x) => !(x.key === t.key && x.effect === t.effect));
    if (kept.length !== next.length) changed = true;
    next = kept;
  }
  return changed ? next : undefined;
}

/** doNoScheduleTaintingPass's diff: the NoSchedule taints the conditions and spec.unschedulable call for. */
export function noScheduleTaintDiff(node: Node): { add: Taint[]; remove: Taint[] } {
  const wanted: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = conditionTaints[c.type]?.[c.status];
    if (key) wanted.push({ key, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) wanted.push({ key: taintNodeUnschedulable, effect: 'NoSchedule' });
  const have = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && (t.key === taintNodeUnschedulable || conditionTaintKeys.has(t.key)));
  const same = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;
  return { add: wanted.filter((w) => !have.some((h) => same(h, w))), remove: have.filter((h) => !wanted.some((w) => same(h, w))) };
}

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/** ComputeZoneState: no Ready node is full disruption; more than 2 and at least the threshold not Ready is partial. */
export function computeZoneState(ready: readonly (NodeCondition | undefined)[], unhealthyZoneThreshold: number): { unhealthy: number; state: ZoneState } {
  const readyNodes = ready.filter((c) => c?.status === 'True').length;
  const notReady = ready.length - readyNodes;
  if (readyNodes === 0 && notReady > 0) return { unhealthy: notReady, state: 'FullDisruption' };
  if (notReady > 2 && notReady / ready.length >= unhealthyZoneThreshold) return { unhealthy: notReady, state: 'PartialDisruption' };
  return { unhealthy: notReady, state: 'Normal' };
}

export interface EvictionRates {
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
}

/** setLimiterInZone: a partially disrupted zone slows to the secondary rate if large, else stops; full disruption keeps the normal rate. */
export function zoneTaintingRate(state: ZoneState, zoneSize: number, r: EvictionRates): number {
  if (state === 'PartialDisruption') return zoneSize > r.largeClusterSizeThreshold ? r.secondaryNodeEvictionRate : 0;
  return r.nodeEvictionRate;
}
