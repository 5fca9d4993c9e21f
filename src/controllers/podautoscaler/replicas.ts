// The replica computation of upstream's pkg/controller/podautoscaler/replica_calculator.go, pure:
// pods and their metrics in, a proposed replica count out. Pods without metrics, unready pods and
// pods still starting are handled as upstream does, so a scale never overshoots on partial data.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { Quantity } from '../../api/quantity.js';

/** Upstream's --horizontal-pod-autoscaler-tolerance. */
export const DEFAULT_TOLERANCE = 0.1;
/** --horizontal-pod-autoscaler-cpu-initialization-period. */
export const CPU_INITIALIZATION_PERIOD_MS = 5 * 60_000;
/** --horizontal-pod-autoscaler-initial-readiness-delay. */
export const DELAY_OF_INITIAL_READINESS_STATUS_MS = 30_000;

/** One pod's metric: a milli-value (millicores, milli-bytes) measured at timestamp over window. */
export interface PodMetric {
  timestamp: number;
  windowMs: number;
  value: number;
}
export type PodMetricsInfo = Map<string, PodMetric>;

export interface ReplicaCalculatorOptions {
  now: number;
  tolerance?: number;
  cpuInitializationPeriodMs?: number;
  delayOfInitialReadinessStatusMs?: number;
}

/** A proposal, or the error upstream reports (its message becomes the condition's). */
export type Proposal<T> = ({ ok: true } & T) | { ok: false; error: string };

const milli = (q: unknown): number | undefined => {
  if (typeof q !== 'string' && typeof q !== 'number') return undefined;
  try {
    return Number(Quantity.parse(String(q)).milliValue());
  } catch {
    return undefined;
  }
};

/** groupPods: ready pods counted; unready, missing and ignored pods by name. */
export function groupPods(pods: readonly Pod[], metrics: PodMetricsInfo, resource: string, opts: ReplicaCalculatorOptions) {
  const initPeriod = opts.cpuInitializationPeriodMs ?? CPU_INITIALIZATION_PERIOD_MS;
  const readinessDelay = opts.delayOfInitialReadinessStatusMs ?? DELAY_OF_INITIAL_READINESS_STATUS_MS;
  const unready = new Set<string>();
  const missing = new Set<string>();
  const ignored = new Set<string>();
  let ready = 0;
  for (const pod of pods) {
    const name = pod.metadata?.name ?? '';
    if (pod.metadata?.deletionTimestamp || pod.status?.phase === 'Failed') {
      ignored.add(name);
      continue;
    }
    if (pod.status?.phase === 'Pending') {
      unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const condition = pod.status?.conditions?.find((c) => c.type === 'Ready');
      const start = Date.parse(pod.status?.startTime ?? '');
      let isUnready: boolean;
      if (!condition || Number.isNaN(start)) isUnready = true;
      else {
        const transition = Date.parse(condition.lastTransitionTime ?? '') || 0;
        // Still initializing: ignore an unready pod, or a sample not a full window after the last transition.
        if (start + initPeriod > opts.now) isUnready = condition.status === 'False' || metric.timestamp < transition + metric.windowMs;
        // Past it: ignore only a pod that is unready and has never been ready.
        else isUnready = condition.status === 'False' && start + readinessDelay > transition;
      }
      if (isUnready) {
        unready.add(name);
        continue;
      }
    }
    ready++;
  }
  return { ready, unready, missing, ignored };
}

/** calculatePodRequests: each pod's requests of resource (regular and restartable init containers). */
export function calculatePodRequests(pods: readonly Pod[], container: string, resource: string): Map<string, number> | string {
  const requests = new Map<string, number>();
  for (const pod of pods) {
    const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
    let sum = 0;
    for (const c of containers) {
      if (container !== '' && container !== c.name) continue;
      const request = milli(c.resources?.requests?.[resource]);
      if (request === undefined) return `missing request for ${resource} in container ${c.name} of Pod ${pod.metadata?.name ?? ''}`;
      sum += request;
    }
    requests.set(pod.metadata?.name ?? '', sum);
  }
  return requests;
}

/** GetResourceUtilizationRatio: usage over requests, as a ratio to the target utilization. */
export function resourceUtilizationRatio(metrics: PodMetricsInfo, requests: Map<string, number>, targetUtilization: number) {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let entries = 0;
  for (const [name, m] of metrics) {
    const request = requests.get(name);
    // Metrics of pods without requests are extraneous (missing requests are caught before).
    if (request === undefined) continue;
    metricsTotal += m.value;
    requestsTotal += request;
    entries++;
  }
  if (requestsTotal === 0) return { error: 'no metrics returned matched known pods' } as const;
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / entries) } as const;
}

function metricUsageRatio(metrics: PodMetricsInfo, targetUsage: number) {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
}

/** The decision both calculators share once the first ratio is known. */
function adjust(
  currentReplicas: number,
  usageRatio: number,
  ready: number,
  groups: { unready: Set<string>; missing: Set<string> },
  metrics: PodMetricsInfo,
  tolerance: number,
  fill: (missingOnScaleDown: boolean) => void,
  rerun: () => number | string,
): number | string {
  const scaleUpWithUnready = groups.unready.size > 0 && usageRatio > 1;
  if (!scaleUpWithUnready && groups.missing.size === 0) {
    if (Math.abs(1 - usageRatio) <= tolerance) return currentReplicas;
    return Math.ceil(usageRatio * ready);
  }
  if (groups.missing.size > 0) {
    if (usageRatio < 1) fill(true);
    else if (usageRatio > 1) for (const name of groups.missing) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });
  }
  // On a scale-up, unready pods count as using nothing.
  if (scaleUpWithUnready) for (const name of groups.unready) metrics.set(name, { timestamp: 0, windowMs: 0, value: 0 });
  const newRatio = rerun();
  if (typeof newRatio === 'string') return newRatio;
  // Too small a change, or one that would reverse the direction: keep the current count.
  if (Math.abs(1 - newRatio) <= tolerance || (usageRatio < 1 && newRatio > 1) || (usageRatio > 1 && newRatio < 1)) return currentReplicas;
  const replicas = Math.ceil(newRatio * metrics.size);
  if ((newRatio < 1 && replicas > currentReplicas) || (newRatio > 1 && replicas < currentReplicas)) return currentReplicas;
  return replicas;
}

/** The pods that count: none deleted or failed or unready, and at least one with a metric. */
function prepare(pods: readonly Pod[], metrics: PodMetricsInfo, resource: string, opts: ReplicaCalculatorOptions) {
  if (pods.length === 0) return 'no pods returned by selector while calculating replica count';
  const groups = groupPods(pods, metrics, resource, opts);
  for (const name of [...groups.ignored, ...groups.unready]) metrics.delete(name);
  if (metrics.size === 0) return 'did not receive metrics for targeted pods (pods might be unready)';
  return groups;
}

/** GetResourceReplicas (after the metrics fetch): a utilization target. metrics is consumed. */
export function resourceReplicas(
  currentReplicas: number,
  targetUtilization: number,
  resource: string,
  container: string,
  pods: readonly Pod[],
  metrics: PodMetricsInfo,
  opts: ReplicaCalculatorOptions,
): Proposal<{ replicas: number; utilization: number; rawUtilization: number }> {
  const groups = prepare(pods, metrics, resource, opts);
  if (typeof groups === 'string') return { ok: false, error: groups };
  const requests = calculatePodRequests(pods, container, resource);
  if (typeof requests === 'string') return { ok: false, error: requests };
  const first = resourceUtilizationRatio(metrics, requests, targetUtilization);
  if ('error' in first) return { ok: false, error: first.error! };
  const replicas = adjust(
    currentReplicas,
    first.ratio,
    groups.ready,
    groups,
    metrics,
    opts.tolerance ?? DEFAULT_TOLERANCE,
    () => {
      // On a scale-down, a pod without metrics counts as using all of its request (or the target, if higher).
      const fallback = Math.max(100, targetUtilization);
      for (const name of groups.missing) metrics.set(name, { timestamp: 0, windowMs: 0, value: Math.trunc(((requests.get(name) ?? 0) * fallback) / 100) });
    },
    () => {
      const again = resourceUtilizationRatio(metrics, requests, targetUtilization);
      return 'error' in again ? again.error! : again.ratio;
    },
  );
  if (typeof replicas === 'string') return { ok: false, error: replicas };
  return { ok: true, replicas, utilization: first.utilization, rawUtilization: first.rawAverage };
}

/** GetRawResourceReplicas / calcPlainMetricReplicas: an average-value target (milli-units). metrics is consumed. */
export function plainMetricReplicas(
  currentReplicas: number,
  targetUsage: number,
  resource: string,
  pods: readonly Pod[],
  metrics: PodMetricsInfo,
  opts: ReplicaCalculatorOptions,
): Proposal<{ replicas: number; usage: number }> {
  const groups = prepare(pods, metrics, resource, opts);
  if (typeof groups === 'string') return { ok: false, error: groups };
  const first = metricUsageRatio(metrics, targetUsage);
  const replicas = adjust(
    currentReplicas,
    first.ratio,
    groups.ready,
    groups,
    metrics,
    opts.tolerance ?? DEFAULT_TOLERANCE,
    // On a scale-down, a pod without metrics counts as using exactly the target.
    () => {
      for (const name of groups.missing) metrics.set(name, { timestamp: 0, windowMs: 0, value: targetUsage });
    },
    () => metricUsageRatio(metrics, targetUsage).ratio,
  );
  if (typeof replicas === 'string') return { ok: false, error: replicas };
  return { ok: true, replicas, usage: first.usage };
}
