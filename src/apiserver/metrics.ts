// Prometheus metrics of the API server, named as upstream's so the same dashboards read them.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestInfo } from './http/requestinfo.js';

export class ApiMetrics {
  private readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'apiserver_request_total',
    help: 'Counter of apiserver requests broken out for each verb, group, version, resource, subresource and HTTP response code.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'code'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'apiserver_request_duration_seconds',
    help: 'Response latency distribution in seconds for each verb, group, version, resource and subresource.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  private readonly longRunning = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    registers: [this.registry],
  });

  get contentType(): string {
    return this.registry.contentType;
  }

  observe(info: RequestInfo | undefined, code: number, elapsedMs: number): void {
    const labels = {
      verb: (info?.verb ?? 'unknown').toUpperCase(),
      group: info?.apiGroup ?? '',
      version: info?.apiVersion ?? '',
      resource: info?.resource ?? '',
      subresource: info?.subresource ?? '',
    };
    this.requests.inc({ ...labels, code: String(code) });
    // Watches last for minutes; their duration says nothing about latency.
    if (labels.verb !== 'WATCH') this.latency.observe(labels, elapsedMs / 1000);
  }

  /** Counts a watch as open until its response closes (the handler returns once the watch is set up). */
  trackWatch(info: RequestInfo, res: { once(event: 'close', listener: () => void): unknown }): void {
    if (!info.isResourceRequest || info.verb !== 'watch') return;
    const labels = {
      verb: 'WATCH',
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      // Upstream's CleanScope.
      scope: info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
      component: 'apiserver',
    };
    this.longRunning.inc(labels);
    res.once('close', () => this.longRunning.dec(labels));
  }

  /** Another component's Prometheus text served on the same /metrics (kite server's scheduler thread). */
  private readonly sources: (() => Promise<string>)[] = [];

  addSource(source: () => Promise<string>): void {
    this.sources.push(source);
  }

  async render(): Promise<string> {
    const parts = await Promise.all([this.registry.metrics(), ...this.sources.map((s) => s())]);
    return parts.filter((p) => p !== '').join('\n');
  }
}
