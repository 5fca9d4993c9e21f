// The scheduler's Prometheus metrics, named as upstream's kube-scheduler names them.
import { exponentialBuckets, Histogram, Registry } from 'prom-client';
import type { QueuedPodInfo } from './framework/interface.js';

export class SchedulerMetrics {
  readonly registry = new Registry();
  /** From the pod's first entry into activeQ (gated time excluded) to its binding. */
  readonly podSchedulingSLIDuration = new Histogram({
    name: 'scheduler_pod_scheduling_sli_duration_seconds',
    help: 'E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.',
    labelNames: ['attempts'],
    buckets: exponentialBuckets(0.01, 2, 20),
    registers: [this.registry],
  });

  /** A bound pod: its SLI duration under the attempts it took ("15+" from 15 on, as upstream). */
  podBound(pInfo: QueuedPodInfo, nowMs: number): void {
    if (pInfo.initialAttemptTimestamp === undefined) return;
    const attempts = pInfo.attempts >= 15 ? '15+' : String(pInfo.attempts);
    this.podSchedulingSLIDuration.observe({ attempts }, (nowMs - pInfo.initialAttemptTimestamp) / 1000);
  }
}
