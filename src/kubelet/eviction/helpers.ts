// The pure half of the eviction manager, as upstream's pkg/kubelet/eviction/helpers.go: signal
// observations from a summary, which thresholds are met (with min-reclaim), when they were first
// met (soft grace periods), the node conditions they raise and how long those stay (the pressure
// transition period), the pod ranking per starved resource, and the eviction message.
import type { Pod } from '../../api/types.js';
import { Quantity } from '../../api/quantity.js';
import { podRequests } from '../../scheduler/framework/resource.js';
import { SIGNAL_TO_CONDITION, SIGNAL_TO_RESOURCE, thresholdKey, thresholdQuantity, type NodePressure, type Signal, type Threshold } from './thresholds.js';
import type { EvictionSummary, FsStats, PodUsage } from './types.js';

/** Reason of an evicted pod and of its event. */
export const EVICTED_REASON = 'Evicted';

export interface Observation {
  available: number;
  capacity: number;
}
export type Observations = Map<Signal, Observation>;

function fsObservations(fs: FsStats | undefined, bytes: Signal, inodes: Signal, out: Observations): void {
  if (!fs) return;
  out.set(bytes, { available: fs.availableBytes, capacity: fs.capacityBytes });
  if (fs.inodesFree !== undefined && fs.inodes !== undefined) out.set(inodes, { available: fs.inodesFree, capacity: fs.inodes });
}

/** makeSignalObservations: each signal's available amount and capacity. */
export function makeSignalObservations(summary: EvictionSummary): Observations {
  const out: Observations = new Map();
  const memory = (m: EvictionSummary['memory']): Observation | undefined => m && { available: Math.max(0, m.capacityBytes - m.workingSetBytes), capacity: m.capacityBytes };
  const node = memory(summary.memory);
  if (node) out.set('memory.available', node);
  const allocatable = memory(summary.allocatableMemory);
  if (allocatable) out.set('allocatableMemory.available', allocatable);
  fsObservations(summary.nodeFs, 'nodefs.available', 'nodefs.inodesFree', out);
  fsObservations(summary.imageFs, 'imagefs.available', 'imagefs.inodesFree', out);
  if (summary.pids) out.set('pid.available', { available: summary.pids.maxPID - summary.pids.running, capacity: summary.pids.maxPID });
  return out;
}

/** thresholdsMet: with enforceMinReclaim, a threshold stays met until the minimum reclaim is also available. */
export function thresholdsMet(thresholds: readonly Threshold[], observations: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter((t) => {
    const observed = observations.get(t.signal);
    if (!observed) return false;
    let quantity = thresholdQuantity(t.value, observed.capacity);
    if (enforceMinReclaim && t.minReclaim) quantity = quantity.add(thresholdQuantity(t.minReclaim, observed.capacity));
    return quantity.cmp(Quantity.fromValue(observed.available)) > 0;
  });
}

/** mergeThresholds: a then the ones of b not already in a. */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const keys = new Set(a.map(thresholdKey));
  return [...a, ...b.filter((t) => !keys.has(thresholdKey(t)))];
}

/** When each met threshold was first met: kept from before, now for the new ones. */
export function thresholdsFirstObservedAt(thresholds: readonly Threshold[], last: ReadonlyMap<string, number>, now: number): Map<string, { threshold: Threshold; at: number }> {
  return new Map(thresholds.map((t) => [thresholdKey(t), { threshold: t, at: last.get(thresholdKey(t)) ?? now }]));
}

/** The thresholds met for at least their grace period. */
export function thresholdsMetGracePeriod(observedAt: ReadonlyMap<string, { threshold: Threshold; at: number }>, now: number): Threshold[] {
  return [...observedAt.values()].filter(({ threshold, at }) => now - at >= threshold.gracePeriodMs).map(({ threshold }) => threshold);
}

/** The node conditions the thresholds raise, each once. */
export function nodeConditionsOf(thresholds: readonly Threshold[]): NodePressure[] {
  return [...new Set(thresholds.map((t) => SIGNAL_TO_CONDITION[t.signal]))];
}

/** nodeConditionsLastObservedAt: the conditions seen now are stamped now; the others keep their time. */
export function nodeConditionsLastObservedAt(conditions: readonly NodePressure[], last: ReadonlyMap<NodePressure, number>, now: number): Map<NodePressure, number> {
  const out = new Map(last);
  for (const c of conditions) out.set(c, now);
  return out;
}

/** The conditions observed within the transition period: a condition clears only after it. */
export function nodeConditionsObservedSince(observedAt: ReadonlyMap<NodePressure, number>, periodMs: number, now: number): NodePressure[] {
  return [...observedAt].filter(([, at]) => now - at < periodMs).map(([c]) => c);
}

/** byEvictionPriority: memory first; otherwise the order is kept (a stable sort). */
export function byEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  const memory = (t: Threshold) => (SIGNAL_TO_RESOURCE[t.signal] === 'memory' ? 0 : 1);
  return [...thresholds].sort((a, b) => memory(a) - memory(b));
}

type Cmp = (a: Pod, b: Pod) => number;
type StatsFunc = (pod: Pod) => PodUsage | undefined;

/** cmpBool: true first. */
const cmpBool = (a: boolean, b: boolean): number => (a === b ? 0 : a ? -1 : 1);

function orderedBy(...cmps: Cmp[]): (pods: Pod[]) => Pod[] {
  return (pods) =>
    [...pods].sort((a, b) => {
      for (const cmp of cmps) {
        const r = cmp(a, b);
        if (r !== 0) return r;
      }
      return 0;
    });
}

/** Pods without stats go first, as upstream: nothing is known of what they use. */
function withStats(stats: StatsFunc, cmp: (a: PodUsage, b: PodUsage, pa: Pod, pb: Pod) => number): Cmp {
  return (a, b) => {
    const sa = stats(a);
    const sb = stats(b);
    if (!sa || !sb) return cmpBool(!sa, !sb);
    return cmp(sa, sb, a, b);
  };
}

/** Lower priority is evicted first. */
const priority: Cmp = (a, b) => Math.sign((a.spec?.priority ?? 0) - (b.spec?.priority ?? 0));

const memoryRequest = (pod: Pod) => podRequests(pod).memory;
const diskRequest = (pod: Pod) => podRequests(pod).ephemeralStorage;

/** rankMemoryPressure: usage above requests first, then lower priority, then the most memory above requests. */
export function rankMemoryPressure(pods: readonly Pod[], stats: StatsFunc): Pod[] {
  return orderedBy(
    withStats(stats, (sa, sb, a, b) => cmpBool((sa.memory ?? 0) > memoryRequest(a), (sb.memory ?? 0) > memoryRequest(b))),
    priority,
    withStats(stats, (sa, sb, a, b) => Math.sign((sb.memory ?? 0) - memoryRequest(b) - ((sa.memory ?? 0) - memoryRequest(a)))),
  )([...pods]);
}

/** rankDiskPressure for bytes or inodes: usage above the ephemeral-storage request first, then priority, then usage. */
export function rankDiskPressure(pods: readonly Pod[], stats: StatsFunc, resource: 'ephemeral-storage' | 'inodes'): Pod[] {
  const usage = (s: PodUsage) => (resource === 'inodes' ? (s.inodes ?? 0) : (s.disk ?? 0));
  // Inodes have no request: upstream compares with a zero quantity.
  const request = (p: Pod) => (resource === 'inodes' ? 0 : diskRequest(p));
  return orderedBy(
    withStats(stats, (sa, sb, a, b) => cmpBool(usage(sa) > request(a), usage(sb) > request(b))),
    priority,
    withStats(stats, (sa, sb, a, b) => Math.sign(usage(sb) - diskRequest(b) - (usage(sa) - diskRequest(a)))),
  )([...pods]);
}

/** rankPIDPressure: lower priority, then the most processes. */
export function rankPIDPressure(pods: readonly Pod[], stats: StatsFunc): Pod[] {
  return orderedBy(
    priority,
    withStats(stats, (sa, sb) => Math.sign((sb.processes ?? 0) - (sa.processes ?? 0))),
  )([...pods]);
}

export function rankFor(signal: Signal): (pods: readonly Pod[], stats: StatsFunc) => Pod[] {
  const resource = SIGNAL_TO_RESOURCE[signal];
  if (resource === 'memory') return rankMemoryPressure;
  if (resource === 'pids') return rankPIDPressure;
  return (pods, stats) => rankDiskPressure(pods, stats, resource);
}

const bytes = (n: number) => Quantity.fromValue(Math.trunc(n), 'BinarySI').toString();

/**
 * evictionMessage: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 12Ki. "
 * then, for memory and ephemeral-storage, each container using more than it requested.
 */
export function evictionMessage(resource: string, pod: Pod, stats: PodUsage | undefined, thresholds: readonly Threshold[], observations: Observations): string {
  let message = `The node was low on resource: ${resource}. `;
  const met = thresholds.find((t) => SIGNAL_TO_RESOURCE[t.signal] === resource && observations.has(t.signal));
  if (met) {
    const observed = observations.get(met.signal)!;
    const quantity = thresholdQuantity(met.value, observed.capacity);
    // The available figure keeps the observation's format: bytes BinarySI, inodes and pids DecimalSI.
    const available = Quantity.fromValue(Math.trunc(observed.available), resource === 'memory' || resource === 'ephemeral-storage' ? 'BinarySI' : 'DecimalSI');
    message += `Threshold quantity: ${quantity.toString()}, available: ${available.toString()}. `;
  }
  if (!stats) return message;
  const specs = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  for (const cs of stats.containers) {
    const spec = specs.find((c) => c.name === cs.name);
    if (!spec) continue;
    const request = spec.resources?.requests?.[resource];
    const requested = request !== undefined ? Quantity.from(request) : Quantity.fromValue(0);
    const usage = resource === 'memory' ? cs.memory : resource === 'ephemeral-storage' ? cs.disk : undefined;
    if (usage === undefined || Quantity.fromValue(Math.trunc(usage)).cmp(requested) <= 0) continue;
    message += `Container ${cs.name} was using ${bytes(usage)}, request is ${requested.toString()}, has larger consumption of ${resource}. `;
  }
  return message;
}
