// /metrics/resource (upstream's collectors/resource_metrics.go): the node's, pods' and containers'
// CPU and memory in the Prometheus text format, which metrics-server scrapes. A failure to gather
// stats leaves only resource_scrape_error 1, as upstream's collector does.
import { renderText, type MetricDesc, type Sample } from './prometheus.js';
import type { CPUStats, MemoryStats, ResourceStats } from './types.js';

const containerLabels = ['container', 'pod', 'namespace'];
const podLabels = ['pod', 'namespace'];

export const nodeCPUUsage: MetricDesc = { name: 'node_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed by the node in core-seconds', type: 'counter', stability: 'STABLE' };
export const nodeMemoryUsage: MetricDesc = { name: 'node_memory_working_set_bytes', help: 'Current working set of the node in bytes', type: 'gauge', stability: 'STABLE' };
export const containerCPUUsage: MetricDesc = { name: 'container_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed by the container in core-seconds', type: 'counter', stability: 'STABLE', labels: containerLabels };
export const containerMemoryUsage: MetricDesc = { name: 'container_memory_working_set_bytes', help: 'Current working set of the container in bytes', type: 'gauge', stability: 'STABLE', labels: containerLabels };
export const containerStartTime: MetricDesc = { name: 'container_start_time_seconds', help: 'Start time of the container since unix epoch in seconds', type: 'gauge', stability: 'STABLE', labels: containerLabels };
export const podCPUUsage: MetricDesc = { name: 'pod_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed by the pod in core-seconds', type: 'counter', stability: 'STABLE', labels: podLabels };
export const podMemoryUsage: MetricDesc = { name: 'pod_memory_working_set_bytes', help: 'Current working set of the pod in bytes', type: 'gauge', stability: 'STABLE', labels: podLabels };
// scrape_error was deprecated in 1.29 and is hidden since 1.30: only resource_scrape_error remains.
export const resourceScrapeError: MetricDesc = { name: 'resource_scrape_error', help: '1 if there was an error while getting container metrics, 0 otherwise', type: 'gauge', stability: 'STABLE' };

const cpuSample = (desc: MetricDesc, cpu: CPUStats, labelValues?: string[]): Sample => ({ desc, labelValues, value: cpu.usageCoreNanoSeconds / 1e9, timestampMs: cpu.time });
const memorySample = (desc: MetricDesc, memory: MemoryStats, labelValues?: string[]): Sample => ({ desc, labelValues, value: memory.workingSetBytes, timestampMs: memory.time });

/** The exposition for stats, or for a failure to get them (an Error). */
export function renderResourceMetrics(stats: ResourceStats | Error): string {
  const samples: Sample[] = [];
  if (!(stats instanceof Error)) {
    const { node, pods } = stats;
    if (node.cpu) samples.push(cpuSample(nodeCPUUsage, node.cpu));
    if (node.memory) samples.push(memorySample(nodeMemoryUsage, node.memory));
    for (const pod of pods) {
      const { name, namespace } = pod.podRef;
      for (const c of pod.containers) {
        const labels = [c.name, name, namespace];
        if (c.startTime > 0) samples.push({ desc: containerStartTime, labelValues: labels, value: c.startTime });
        if (c.cpu) samples.push(cpuSample(containerCPUUsage, c.cpu, labels));
        if (c.memory) samples.push(memorySample(containerMemoryUsage, c.memory, labels));
      }
      if (pod.cpu) samples.push(cpuSample(podCPUUsage, pod.cpu, [name, namespace]));
      if (pod.memory) samples.push(memorySample(podMemoryUsage, pod.memory, [name, namespace]));
    }
  }
  samples.push({ desc: resourceScrapeError, value: stats instanceof Error ? 1 : 0 });
  return renderText(samples);
}
