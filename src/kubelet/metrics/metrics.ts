// The kubelet's own Prometheus metrics on /metrics, named and bucketed as upstream's so the same
// dashboards and SLO queries read them.
import { Histogram, Registry } from 'prom-client';
import type { PodStartMetrics } from '../timeline/timeline.js';

/** Upstream's podStartupDurationBuckets: round numbers, roughly exponential, up to an hour. */
const POD_STARTUP_BUCKETS = [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600];

export class KubeletMetrics implements PodStartMetrics {
  private readonly registry = new Registry();
  private readonly podStartSLI = new Histogram({
    name: 'kubelet_pod_start_sli_duration_seconds',
    help: 'Duration in seconds to start a pod, excluding time to pull images, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    buckets: POD_STARTUP_BUCKETS,
    registers: [this.registry],
  });
  private readonly podStartTotal = new Histogram({
    name: 'kubelet_pod_start_total_duration_seconds',
    help: 'Duration in seconds to start a pod since creation, including time to pull images, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
    buckets: POD_STARTUP_BUCKETS,
    registers: [this.registry],
  });

  get contentType(): string {
    return this.registry.contentType;
  }

  observePodStart(sliSeconds: number, totalSeconds: number): void {
    this.podStartSLI.observe(sliSeconds);
    this.podStartTotal.observe(totalSeconds);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
