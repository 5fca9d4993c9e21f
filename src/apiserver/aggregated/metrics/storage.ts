// metrics-server's storage (pkg/storage): the last two points of every node and container, and
// usage computed from them. CPU is a rate: the growth of cumulative CPU between the two points over
// the time between them (the window); memory is the last working set. A restart (a later start
// time, or cumulative CPU going down) starts over.
import { Quantity } from '../../../api/quantity.js';
import { podKey, type MetricsBatch, type MetricsPoint } from './decode.js';

/** A container younger than this at its first point has too little history for a rate from its start. */
const FRESH_CONTAINER_MIN_RESOLUTION_MS = 10_000;

export interface Usage {
  /** Canonical quantities as metrics-server emits them: cpu in nano-cores ("12345n", "5m"), memory BinarySI ("1234Ki"). */
  cpu: string;
  memory: string;
}

export interface TimeInfo {
  /** When the later of the two points was measured (ms). */
  timestamp: number;
  /** The time between the two points (ms). */
  window: number;
}

export interface NodeUsage extends TimeInfo {
  usage: Usage;
}

export interface PodUsage extends TimeInfo {
  containers: { name: string; usage: Usage }[];
}

/** resourceUsage: usage between prev and last, or undefined when the pair cannot give a rate. */
export function resourceUsage(last: MetricsPoint, prev: MetricsPoint): (TimeInfo & { usage: Usage }) | undefined {
  if (last.startTime < prev.startTime || last.cumulativeCpuUsed < prev.cumulativeCpuUsed) return undefined;
  const window = last.timestamp - prev.timestamp;
  if (window <= 0) return undefined;
  const nanoCores = Math.trunc((last.cumulativeCpuUsed - prev.cumulativeCpuUsed) / (window / 1000));
  return {
    timestamp: last.timestamp,
    window,
    usage: { cpu: Quantity.parse(`${nanoCores}n`).toString(), memory: Quantity.fromValue(Math.trunc(last.memoryUsage), 'BinarySI').toString() },
  };
}

/** The stored point to keep as "previous" when `next` arrives after `last` (or undefined). */
function previousFor(next: MetricsPoint, last: MetricsPoint | undefined, prev: MetricsPoint | undefined): MetricsPoint | undefined {
  // A start time at or after the last point's time means a restart: the old points say nothing.
  if (!last || next.startTime >= last.timestamp) return undefined;
  if (next.timestamp > last.timestamp) return last;
  if (prev && prev.timestamp < next.timestamp) return prev;
  return undefined;
}

export class MetricsStorage {
  private lastNodes = new Map<string, MetricsPoint>();
  private prevNodes = new Map<string, MetricsPoint>();
  private lastPods = new Map<string, Map<string, MetricsPoint>>();
  private prevPods = new Map<string, Map<string, MetricsPoint>>();

  /** resolutionMs: the scrape interval (a container younger than that gets a rate from its start). */
  constructor(private readonly resolutionMs: number) {}

  /** Replaces what is known with one scrape of every node: nodes and pods absent from it are forgotten. */
  store(batch: MetricsBatch): void {
    const lastNodes = new Map<string, MetricsPoint>();
    const prevNodes = new Map<string, MetricsPoint>();
    for (const [name, point] of batch.nodes) {
      lastNodes.set(name, point);
      const prev = previousFor(point, this.lastNodes.get(name), this.prevNodes.get(name));
      if (prev) prevNodes.set(name, prev);
    }
    this.lastNodes = lastNodes;
    this.prevNodes = prevNodes;

    const lastPods = new Map<string, Map<string, MetricsPoint>>();
    const prevPods = new Map<string, Map<string, MetricsPoint>>();
    for (const [key, containers] of batch.pods) {
      const lastContainers = new Map<string, MetricsPoint>();
      const prevContainers = new Map<string, MetricsPoint>();
      for (const [name, point] of containers) {
        lastContainers.set(name, point);
        const age = point.timestamp - point.startTime;
        if (point.startTime > 0 && age > 0 && age < this.resolutionMs && age >= FRESH_CONTAINER_MIN_RESOLUTION_MS) {
          // A container started since the last scrape: its start is a point with no CPU used yet.
          prevContainers.set(name, { ...point, timestamp: point.startTime, cumulativeCpuUsed: 0 });
          continue;
        }
        const prev = previousFor(point, this.lastPods.get(key)?.get(name), this.prevPods.get(key)?.get(name));
        if (prev) prevContainers.set(name, prev);
      }
      lastPods.set(key, lastContainers);
      if (prevContainers.size > 0) prevPods.set(key, prevContainers);
    }
    this.lastPods = lastPods;
    this.prevPods = prevPods;
  }

  nodeUsage(name: string): NodeUsage | undefined {
    const last = this.lastNodes.get(name);
    const prev = this.prevNodes.get(name);
    return last && prev ? resourceUsage(last, prev) : undefined;
  }

  /** Usage of every container of the pod, or undefined unless all of them have two points. */
  podUsage(namespace: string, name: string): PodUsage | undefined {
    const key = podKey(namespace, name);
    const last = this.lastPods.get(key);
    const prev = this.prevPods.get(key);
    if (!last || !prev) return undefined;
    const containers: PodUsage['containers'] = [];
    let earliest: { timestamp: number; window: number } | undefined;
    for (const [container, point] of last) {
      const before = prev.get(container);
      if (!before) return undefined;
      const u = resourceUsage(point, before);
      if (!u) continue;
      containers.push({ name: container, usage: u.usage });
      if (!earliest || u.timestamp < earliest.timestamp) earliest = { timestamp: u.timestamp, window: u.window };
    }
    if (!earliest) return undefined;
    containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { ...earliest, containers };
  }
}
