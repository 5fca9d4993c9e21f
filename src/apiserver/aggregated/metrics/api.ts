// The metrics.k8s.io/v1beta1 API inside `kite server`. Upstream, metrics-server is a separate
// process behind API aggregation (an APIService for v1beta1.metrics.k8s.io); kite serves the same
// group and the same JSON from within the API server instead: NodeMetrics and PodMetrics built from
// the scraper's storage for the nodes and Running pods the API knows, get and list with label and
// field selectors, NotFound when there are no metrics (yet).
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { parseLabelSelector, type Selector } from '../../../api/labels.js';
import { parseFieldSelector, type FieldSelector } from '../../../api/fields.js';
import { rfc3339 } from '../../../api/time.js';
import { Quantity } from '../../../api/quantity.js';
import { goDuration } from '../../../api/duration.js';
import type { RequestInfo } from '../../http/requestinfo.js';
import type { ResourceInfo } from '../../../api/resources.js';
import type { APIGroupVersion } from '../../router.js';
import { negotiateOutput, tableOptions } from '../../http/negotiation.js';
import { writeObject } from '../../http/respond.js';
import { badRequest, methodNotAllowed, notFound, notFoundPath } from '../../../api/errors.js';
import type { Clock } from '../../../util/clock.js';
import type { Logger } from '../../../util/log.js';
import { Scraper, type ScrapeFn } from './scraper.js';
import type { MetricsStorage, Usage } from './storage.js';
import type { IncludeObject } from '../../printers/table.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
const apiVersion = `${METRICS_GROUP}/${METRICS_VERSION}`;

/** What discovery lists for the group: get and list, as metrics-server declares them. */
export const metricsResources: readonly ResourceInfo[] = [
  { group: METRICS_GROUP, version: METRICS_VERSION, resource: 'nodes', singular: '', kind: 'NodeMetrics', listKind: 'NodeMetricsList', namespaced: false, verbs: ['get', 'list'], subresources: [] },
  { group: METRICS_GROUP, version: METRICS_VERSION, resource: 'pods', singular: '', kind: 'PodMetrics', listKind: 'PodMetricsList', namespaced: true, verbs: ['get', 'list'], subresources: [] },
];

export interface NodeMetrics {
  kind: 'NodeMetrics';
  apiVersion: string;
  metadata: { name: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  usage: Usage;
}

export interface PodMetrics {
  kind: 'PodMetrics';
  apiVersion: string;
  metadata: { name: string; namespace: string; creationTimestamp: string; labels?: Record<string, string> };
  timestamp: string;
  window: string;
  containers: { name: string; usage: Usage }[];
}

export interface MetricsList<T> {
  kind: 'NodeMetricsList' | 'PodMetricsList';
  apiVersion: string;
  metadata: Record<string, never>;
  items: T[];
}

/** metav1.Duration's JSON: Go's Duration.String() (windows are whole milliseconds). */
const windowString = (ms: number) => (ms === 0 ? '0s' : goDuration(ms));

const byName = <T extends { metadata?: { name?: string; namespace?: string } }>(a: T, b: T) => {
  const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
  const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** NodeMetrics of the given nodes that have usage, ordered by name. */
export function nodeMetricsOf(storage: MetricsStorage, nodes: readonly Node[], now: number): NodeMetrics[] {
  const out: NodeMetrics[] = [];
  for (const node of [...nodes].sort(byName)) {
    const name = node.metadata?.name ?? '';
    const u = storage.nodeUsage(name);
    if (!u) continue;
    out.push({
      kind: 'NodeMetrics',
      apiVersion,
      metadata: { name, creationTimestamp: rfc3339(now), ...(node.metadata?.labels ? { labels: node.metadata.labels } : {}) },
      timestamp: rfc3339(u.timestamp),
      window: windowString(u.window),
      usage: u.usage,
    });
  }
  return out;
}

/** PodMetrics of the given pods that are Running and have usage for every container, ordered by namespace and name. */
export function podMetricsOf(storage: MetricsStorage, pods: readonly Pod[], now: number): PodMetrics[] {
  const out: PodMetrics[] = [];
  for (const pod of [...pods].sort(byName)) {
    if (pod.status?.phase !== 'Running') continue;
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const u = storage.podUsage(namespace, name);
    if (!u) continue;
    out.push({
      kind: 'PodMetrics',
      apiVersion,
      metadata: { name, namespace, creationTimestamp: rfc3339(now), ...(pod.metadata?.labels ? { labels: pod.metadata.labels } : {}) },
      timestamp: rfc3339(u.timestamp),
      window: windowString(u.window),
      containers: u.containers,
    });
  }
  return out;
}

export interface MetricsApiOptions {
  /** Nodes and pods as the API server has them (its watch caches). */
  listNodes: () => Node[];
  listPods: () => Pod[];
  scrape: ScrapeFn;
  clock: Clock;
  logger: Logger;
  /** How often kubelets are scraped (metrics-server's --metric-resolution); default 15 s. */
  resolutionMs?: number;
}

export class MetricsApi {
  private readonly scraper: Scraper;

  constructor(private readonly opts: MetricsApiOptions) {
    this.scraper = new Scraper({ listNodes: opts.listNodes, scrape: opts.scrape, clock: opts.clock, logger: opts.logger, resolutionMs: opts.resolutionMs });
  }

  start(): void {
    this.scraper.start();
  }

  stop(): Promise<void> {
    return this.scraper.stop();
  }

  /** The response body for a request to metrics.k8s.io; throws a StatusError otherwise. */
  serve(info: RequestInfo, query: URLSearchParams): NodeMetrics | PodMetrics | MetricsList<NodeMetrics> | MetricsList<PodMetrics> {
    if (info.apiVersion !== METRICS_VERSION || info.subresource) throw notFoundPath();
    if (info.verb !== 'get' && info.verb !== 'list') throw methodNotAllowed('the server does not allow this method on the requested resource');
    const now = this.opts.clock.now();
    const storage = this.scraper.storage;
    if (info.resource === 'nodes' && !info.namespace) {
      if (info.name) {
        const node = this.opts.listNodes().find((n) => n.metadata?.name === info.name);
        if (!node) throw notFound({ group: '', resource: 'node' }, info.name);
        const m = nodeMetricsOf(storage, [node], now)[0];
        if (!m) throw notFound({ group: METRICS_GROUP, resource: 'nodemetrics' }, info.name);
        return m;
      }
      const { labels, fields } = selectors(query);
      const nodes = this.opts.listNodes().filter((n) => labels.matches(n.metadata?.labels ?? {}) && fields.matches(metaFields(n, false)));
      return { kind: 'NodeMetricsList', apiVersion, metadata: {}, items: nodeMetricsOf(storage, nodes, now) };
    }
    if (info.resource === 'pods') {
      if (info.name) {
        const pod = this.opts.listPods().find((p) => p.metadata?.namespace === info.namespace && p.metadata?.name === info.name);
        if (!pod) throw notFound({ group: '', resource: 'pod' }, info.name);
        const m = podMetricsOf(storage, [pod], now)[0];
        // metrics-server names the pod namespace/name in this message.
        if (!m) throw notFound({ group: METRICS_GROUP, resource: 'podmetrics' }, `${info.namespace}/${info.name}`);
        return m;
      }
      const { labels, fields } = selectors(query);
      const pods = this.opts
        .listPods()
        .filter((p) => (!info.namespace || p.metadata?.namespace === info.namespace) && labels.matches(p.metadata?.labels ?? {}) && fields.matches(metaFields(p, true)));
      return { kind: 'PodMetricsList', apiVersion, metadata: {}, items: podMetricsOf(storage, pods, now) };
    }
    throw notFoundPath();
  }
}

function selectors(query: URLSearchParams): { labels: Selector; fields: FieldSelector } {
  try {
    return { labels: parseLabelSelector(query.get('labelSelector') ?? ''), fields: parseFieldSelector(query.get('fieldSelector') ?? '') };
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

/** generic.AddObjectMetaFieldsSet: what a field selector on metrics can name. */
function metaFields(obj: Node | Pod, namespaced: boolean): Record<string, string> {
  return { 'metadata.name': obj.metadata?.name ?? '', ...(namespaced ? { 'metadata.namespace': obj.metadata?.namespace ?? '' } : {}) };
}

type MetricsBody = ReturnType<MetricsApi['serve']>;

/**
 * metrics-server's ConvertToTable: Name, one column per usage (sorted: cpu, memory; a pod's summed
 * over its containers) and Window. Rows carry the object per includeObject (default Metadata).
 */
export function metricsTable(body: MetricsBody, includeObject: IncludeObject): unknown {
  const items: (NodeMetrics | PodMetrics)[] = 'items' in body ? body.items : [body];
  const usageOf = (m: NodeMetrics | PodMetrics): Usage =>
    'usage' in m
      ? m.usage
      : {
          cpu: m.containers.reduce((q, c) => q.add(Quantity.parse(c.usage.cpu)), Quantity.parse('0')).toString(),
          memory: m.containers.reduce((q, c) => q.add(Quantity.parse(c.usage.memory)), Quantity.parse('0')).toString(),
        };
  const column = (name: string, format: string, description = '') => ({ name, type: 'string', format, description, priority: 0 });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {},
    columnDefinitions: items.length ? [column('Name', 'name', 'Name of the resource'), column('cpu', 'quantity'), column('memory', 'quantity'), column('Window', 'duration')] : [],
    rows: items.map((m) => {
      const usage = usageOf(m);
      const object = includeObject === 'None' ? undefined : includeObject === 'Object' ? m : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: m.metadata };
      return { cells: [m.metadata.name, usage.cpu, usage.memory, m.window], ...(object ? { object } : {}) };
    }),
  };
}

/** The group version the router serves, as upstream serves an aggregated APIService's group. */
export function metricsGroupVersion(api: MetricsApi): APIGroupVersion {
  return {
    group: METRICS_GROUP,
    version: METRICS_VERSION,
    resources: metricsResources,
    serve: async ({ req, res, url, info }) => {
      const output = tableOptions(negotiateOutput(req.headers.accept, true), url.searchParams);
      const body = api.serve(info, url.searchParams);
      writeObject(res, 200, output.includeObject ? metricsTable(body, output.includeObject) : body, output.yaml);
    },
  };
}
