// The scrape loop of metrics-server (pkg/scraper + pkg/server): every resolution, GET each Ready
// node's /metrics/resource at once, decode, and replace the storage with the combined batch. A
// node that fails is left out of that batch (its metrics disappear until it answers again).
// Simulated nodes (kwok's annotation) have no kubelet and are never dialled.
import type { Node } from 'kubernetes-types/core/v1.js';
import type { Clock, Timer } from '../../../util/clock.js';
import type { Logger } from '../../../util/log.js';
import { kubeletEndpoint } from '../../kubeletclient/client.js';
import { decodeBatch, type MetricsBatch } from './decode.js';
import { MetricsStorage } from './storage.js';

/** metrics-server's --metric-resolution default. */
export const DEFAULT_METRIC_RESOLUTION_MS = 15_000;

/** Fetches a node's /metrics/resource text; rejects on any failure. */
export type ScrapeFn = (node: Node, signal: AbortSignal) => Promise<string>;

export interface ScraperOptions {
  /** The nodes to consider (the API server's cache). */
  listNodes: () => Node[];
  scrape: ScrapeFn;
  clock: Clock;
  logger: Logger;
  resolutionMs?: number;
}

/** Ready, and served by a real kubelet (not simulated, a port and an address reported). */
export function isScrapable(node: Node): boolean {
  if (!node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
  try {
    return kubeletEndpoint(node) !== undefined;
  } catch {
    return false;
  }
}

export class Scraper {
  readonly storage: MetricsStorage;
  readonly resolutionMs: number;
  private timer?: Timer;
  private inFlight?: Promise<void>;
  private readonly abort = new AbortController();
  private stopped = false;

  constructor(private readonly opts: ScraperOptions) {
    this.resolutionMs = opts.resolutionMs ?? DEFAULT_METRIC_RESOLUTION_MS;
    this.storage = new MetricsStorage(this.resolutionMs);
  }

  /** Scrapes now and then every resolution. */
  start(): void {
    this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.abort.abort();
    await this.inFlight;
  }

  private tick(): void {
    if (this.stopped) return;
    this.inFlight = this.scrapeAll().finally(() => {
      if (!this.stopped) this.timer = this.opts.clock.setTimer(this.resolutionMs, () => this.tick());
    });
  }

  /** One round over every scrapable node, stored as one batch. */
  async scrapeAll(): Promise<void> {
    const { clock, logger } = this.opts;
    const nodes = this.opts.listNodes().filter(isScrapable);
    // Each request may take at most most of a resolution, so rounds never pile up.
    const deadline = new AbortController();
    const onStop = () => deadline.abort();
    this.abort.signal.addEventListener('abort', onStop, { once: true });
    const timeout = clock.setTimer(Math.max(1, Math.trunc(this.resolutionMs * 0.9)), () => deadline.abort(new Error('scrape timed out')));
    const combined: MetricsBatch = { nodes: new Map(), pods: new Map() };
    try {
      await Promise.all(
        nodes.map(async (node) => {
          const name = node.metadata?.name ?? '';
          try {
            const text = await this.opts.scrape(node, deadline.signal);
            const batch = decodeBatch(text, clock.now(), name);
            for (const [k, v] of batch.nodes) combined.nodes.set(k, v);
            for (const [k, v] of batch.pods) combined.pods.set(k, v);
          } catch (err) {
            if (!this.stopped) logger.warn({ err, node: name }, 'Failed to scrape node');
          }
        }),
      );
    } finally {
      timeout.cancel();
      this.abort.signal.removeEventListener('abort', onStop);
    }
    if (!this.stopped) this.storage.store(combined);
  }
}
