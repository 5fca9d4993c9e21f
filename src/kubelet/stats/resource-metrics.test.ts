import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderResourceMetrics } from './resource-metrics.js';
import type { ResourceStats } from './types.js';

const stats: ResourceStats = {
  node: { nodeName: 'n1', cpu: { time: 1767225600000, usageCoreNanoSeconds: 14351352610280 }, memory: { time: 1767225600000, workingSetBytes: 1821724672 } },
  pods: [
    {
      podRef: { name: 'web', namespace: 'default', uid: 'u1' },
      containers: [
        { name: 'nginx', startTime: 1767225500.5, cpu: { time: 1767225599000, usageCoreNanoSeconds: 250_000_000 }, memory: { time: 1767225599000, workingSetBytes: 4_194_304 } },
        { name: 'busy', startTime: 1767225510, cpu: { time: 1767225599001, usageCoreNanoSeconds: 1_500_000_000 }, memory: { time: 1767225599001, workingSetBytes: 1_052_672 } },
      ],
      cpu: { time: 1767225599001, usageCoreNanoSeconds: 1_750_000_000 },
      memory: { time: 1767225599001, workingSetBytes: 5_246_976 },
    },
  ],
};

test('the exposition reads like a Go kubelet\'s /metrics/resource', () => {
  assert.equal(
    renderResourceMetrics(stats),
    `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="busy",namespace="default",pod="web"} 1.5 1767225599001
container_cpu_usage_seconds_total{container="nginx",namespace="default",pod="web"} 0.25 1767225599000
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="busy",namespace="default",pod="web"} 1.052672e+06 1767225599001
container_memory_working_set_bytes{container="nginx",namespace="default",pod="web"} 4.194304e+06 1767225599000
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="busy",namespace="default",pod="web"} 1.76722551e+09
container_start_time_seconds{container="nginx",namespace="default",pod="web"} 1.7672255005e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 14351.35261028 1767225600000
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1.821724672e+09 1767225600000
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="default",pod="web"} 1.75 1767225599001
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="default",pod="web"} 5.246976e+06 1767225599001
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
`,
  );
});

test('a failure to get stats leaves resource_scrape_error 1 alone', () => {
  assert.equal(
    renderResourceMetrics(new Error('runtime down')),
    '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE resource_scrape_error gauge\nresource_scrape_error 1\n',
  );
});

test('containers without CPU or memory stats have only their start time', () => {
  const text = renderResourceMetrics({ node: { nodeName: 'n1' }, pods: [{ podRef: { name: 'p', namespace: 'ns', uid: 'u' }, containers: [{ name: 'c', startTime: 10 }] }] });
  assert.match(text, /^container_start_time_seconds\{container="c",namespace="ns",pod="p"\} 10$/m);
  assert.doesNotMatch(text, /cpu_usage|working_set/);
});
