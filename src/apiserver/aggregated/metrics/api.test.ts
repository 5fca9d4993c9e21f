import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { pino } from 'pino';
import { FakeClock } from '../../../util/clock.js';
import { parseRequestInfo } from '../../http/requestinfo.js';
import { isStatusError } from '../../../api/errors.js';
import { renderResourceMetrics } from '../../../kubelet/stats/resource-metrics.js';
import { MetricsApi, metricsTable } from './api.js';
import { isScrapable } from './scraper.js';

const ready = [{ type: 'Ready', status: 'True' }];
const node = (name: string, extra: Partial<Node> = {}): Node => ({
  metadata: { name, labels: { role: name === 'n1' ? 'a' : 'b' } },
  status: { conditions: ready, addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } },
  ...extra,
});
const pod = (name: string, phase = 'Running', labels: Record<string, string> = { app: name }): Pod => ({
  metadata: { name, namespace: 'default', labels },
  spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
  status: { phase },
});

const simulated = node('sim-0', { metadata: { name: 'sim-0', annotations: { 'kwok.x-k8s.io/node': 'fake' } } });
const notReady = node('n3', { status: { conditions: [{ type: 'Ready', status: 'False' }], addresses: [{ type: 'InternalIP', address: '10.0.0.3' }], daemonEndpoints: { kubeletEndpoint: { Port: 10250 } } } });

test('only Ready nodes with a real kubelet are scraped', () => {
  assert.equal(isScrapable(node('n1')), true);
  assert.equal(isScrapable(simulated), false);
  assert.equal(isScrapable(notReady), false);
  assert.equal(isScrapable(node('n4', { status: { conditions: ready } })), false, 'no kubelet port');
});

/** A cluster of n1 (real), sim-0 and n3; the kubelet's counters grow by 0.25 s of CPU per second. */
function setup() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const start = clock.now();
  const scraped: string[] = [];
  const pods = [pod('web'), pod('done', 'Succeeded'), pod('other', 'Running', { app: 'x' })];
  const api = new MetricsApi({
    listNodes: () => [node('n1'), simulated, notReady],
    listPods: () => pods,
    clock,
    logger: pino({ level: 'silent' }),
    resolutionMs: 15_000,
    scrape: async (n) => {
      scraped.push(n.metadata!.name!);
      const t = clock.now();
      const cpu = { time: t, usageCoreNanoSeconds: 1e9 + (t - start) * 250_000 };
      const memory = { time: t, workingSetBytes: 12 * 1024 * 1024 };
      const containers = [{ name: 'c', startTime: (start - 60_000) / 1000, cpu, memory }];
      return renderResourceMetrics({
        node: { nodeName: 'n1', cpu: { time: t, usageCoreNanoSeconds: 5e12 + (t - start) * 1_500_000 }, memory: { time: t, workingSetBytes: 2 * 1024 ** 3 } },
        pods: ['web', 'done', 'other'].map((name) => ({ podRef: { name, namespace: 'default', uid: name }, containers })),
      });
    },
  });
  return { clock, api, scraped };
}

const get = (api: MetricsApi, path: string) => {
  const url = new URL(path, 'https://kite');
  return api.serve(parseRequestInfo('GET', url.pathname, url.searchParams), url.searchParams);
};

function statusOf(fn: () => unknown): { code: number; message: string } {
  try {
    fn();
  } catch (err) {
    if (isStatusError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('no error');
}

test('NotFound until two scrapes; then NodeMetrics and PodMetrics in metrics-server\'s shape', async () => {
  const { clock, api, scraped } = setup();
  api.start();
  await clock.advance(0);
  assert.deepEqual(scraped, ['n1'], 'simulated and NotReady nodes are never dialled');
  assert.deepEqual(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/nodes/n1')), { code: 404, message: 'nodemetrics.metrics.k8s.io "n1" not found' });
  assert.deepEqual(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web')), { code: 404, message: 'podmetrics.metrics.k8s.io "default/web" not found' });
  assert.deepEqual(get(api, '/apis/metrics.k8s.io/v1beta1/nodes'), { kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items: [] });

  await clock.advance(15_000);
  assert.deepEqual(scraped, ['n1', 'n1']);
  const now = '2026-01-01T00:00:15Z';
  assert.deepEqual(get(api, '/apis/metrics.k8s.io/v1beta1/nodes/n1'), {
    kind: 'NodeMetrics',
    apiVersion: 'metrics.k8s.io/v1beta1',
    metadata: { name: 'n1', creationTimestamp: now, labels: { role: 'a' } },
    timestamp: now,
    window: '15s',
    usage: { cpu: '1500m', memory: '2Gi' },
  });
  assert.deepEqual(get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web'), {
    kind: 'PodMetrics',
    apiVersion: 'metrics.k8s.io/v1beta1',
    metadata: { name: 'web', namespace: 'default', creationTimestamp: now, labels: { app: 'web' } },
    timestamp: now,
    window: '15s',
    containers: [{ name: 'c', usage: { cpu: '250m', memory: '12Mi' } }],
  });
  await api.stop();
  assert.equal(clock.pending(), 0, 'stop cancels the next scrape');
});

test('lists: Running pods only, label and field selectors, all namespaces', async () => {
  const { clock, api } = setup();
  api.start();
  await clock.advance(15_000);
  const names = (body: unknown) => (body as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods')), ['other', 'web']);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/pods')), ['other', 'web']);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb')), ['web']);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?fieldSelector=metadata.name%3Dother')), ['other']);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods')), []);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=role%3Db')), []);
  assert.deepEqual(names(get(api, '/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=role%3Da')), ['n1']);
  assert.deepEqual(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/done')), { code: 404, message: 'podmetrics.metrics.k8s.io "default/done" not found' });
  assert.deepEqual(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope')), { code: 404, message: 'pod "nope" not found' });
  assert.deepEqual(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/nodes/nope')), { code: 404, message: 'node "nope" not found' });
  assert.equal(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=%3D%3D')).code, 400);
  assert.equal(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/nodes?watch=true')).code, 405);
  assert.equal(statusOf(() => get(api, '/apis/metrics.k8s.io/v1beta1/deployments')).code, 404);
  await api.stop();
});

test('Tables as metrics-server converts them: usage summed over containers, then the window', async () => {
  const { clock, api } = setup();
  api.start();
  await clock.advance(15_000);
  const table = metricsTable(get(api, '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dweb'), 'Metadata') as { columnDefinitions: { name: string }[]; rows: { cells: unknown[]; object: { kind: string } }[] };
  assert.deepEqual(table.columnDefinitions.map((c) => c.name), ['Name', 'cpu', 'memory', 'Window']);
  assert.deepEqual(table.rows.map((r) => r.cells), [['web', '250m', '12Mi', '15s']]);
  assert.equal(table.rows[0]!.object.kind, 'PartialObjectMetadata');
  const nodes = metricsTable(get(api, '/apis/metrics.k8s.io/v1beta1/nodes/n1'), 'None') as { rows: { cells: unknown[]; object?: unknown }[] };
  assert.deepEqual(nodes.rows, [{ cells: ['n1', '1500m', '2Gi', '15s'] }]);
  await api.stop();
});
