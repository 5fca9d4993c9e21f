// The resource metrics the HPA reads, from metrics.k8s.io (kite's API server serves it; upstream
// reads metrics-server through aggregation), as upstream's metrics/client.go resourceMetricsClient.
import { parseDuration } from '../../api/duration.js';
import { Quantity } from '../../api/quantity.js';
import type { Client } from '../../client/client.js';
import type { PodMetricsInfo } from './replicas.js';

export interface ResourceMetrics {
  metrics: PodMetricsInfo;
  /** The first item's timestamp. */
  timestamp: number;
}

export interface ResourceMetricsClient {
  /** The pods' usage of resource (summed over containers, or container's only), in milli-units. Throws upstream's errors. */
  getResourceMetric(resource: string, namespace: string, selector: string, container: string): Promise<ResourceMetrics>;
}

/** A PodMetrics item as metrics.k8s.io/v1beta1 lists it. */
export interface PodMetricsItem {
  metadata: { name: string; namespace?: string };
  timestamp: string;
  window: string;
  containers: { name: string; usage: Record<string, string> }[];
}

const windowMs = (d: string): number => {
  try {
    return parseDuration(d);
  } catch {
    return 0;
  }
};
const milli = (q: string) => Number(Quantity.parse(q).milliValue());

/** getPodMetrics / getContainerMetrics: one value per pod; a pod missing the resource in any container is left out. */
export function podMetricsInfo(items: readonly PodMetricsItem[], resource: string, container: string): PodMetricsInfo {
  const out: PodMetricsInfo = new Map();
  for (const m of items) {
    const at = { timestamp: Date.parse(m.timestamp), windowMs: windowMs(m.window) };
    if (container !== '') {
      const c = m.containers.find((c) => c.name === container);
      if (!c) continue;
      const usage = c.usage[resource];
      if (usage === undefined) throw new Error(`missing resource metric ${resource} for container ${container} in pod ${m.metadata.namespace ?? ''}/${m.metadata.name}`);
      out.set(m.metadata.name, { ...at, value: milli(usage) });
      continue;
    }
    if (m.containers.length === 0 || m.containers.some((c) => c.usage[resource] === undefined)) continue;
    out.set(m.metadata.name, { ...at, value: m.containers.reduce((sum, c) => sum + milli(c.usage[resource]!), 0) });
  }
  return out;
}

export class RestResourceMetricsClient implements ResourceMetricsClient {
  constructor(private readonly client: Client) {}

  async getResourceMetric(resource: string, namespace: string, selector: string, container: string): Promise<ResourceMetrics> {
    let items: PodMetricsItem[];
    try {
      const path = `/apis/metrics.k8s.io/v1beta1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`;
      items = (await this.client.rest.request<{ items?: PodMetricsItem[] }>({ method: 'GET', path })).items ?? [];
    } catch (err) {
      throw new Error(`unable to fetch metrics from resource metrics API: ${(err as Error).message}`, { cause: err });
    }
    if (items.length === 0) throw new Error('no metrics returned from resource metrics API');
    let metrics: PodMetricsInfo;
    try {
      metrics = podMetricsInfo(items, resource, container);
    } catch (err) {
      throw new Error(`failed to get container metrics: ${(err as Error).message}`, { cause: err });
    }
    return { metrics, timestamp: Date.parse(items[0]!.timestamp) };
  }
}
