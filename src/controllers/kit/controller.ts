// The skeleton every queue-driven controller shares (upstream's controllers each spell it out: Run,
// WaitForNamedCacheSync, N × worker → processNextWorkItem → sync(key)): informers feed keys into a
// rate-limited work queue; once the informers have synced, N workers take one key at a time
// through sync. An error requeues the key with the rate limiter's backoff, success forgets its
// failures; sync may ask to look again after a delay. stop() ends the workers after the key in hand.
import type { Client } from '../../client/client.js';
import { waitForCacheSync, type EventSource, type SharedInformerFactory } from '../../client/factory.js';
import type { EventRecorder } from '../../client/record/recorder.js';
import { RateLimitingQueue, type RateLimiter } from '../../client/workqueue.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';

/** What a controller is built from; each controller's options extend it with its own knobs. */
export interface ControllerOptions {
  /** This controller's own client (its user agent names its identity). */
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** Concurrent workers (upstream's --concurrent-*-syncs). */
  workers?: number;
  /** Events; default this controller's own recorder on the events API. */
  recorder?: EventRecorder;
}

export interface QueueControllerOptions<K> {
  /** For logs (upstream's controller name, e.g. "namespace"). */
  name: string;
  clock: Clock;
  logger: Logger;
  /** The informers sync waits for before the first worker starts. */
  sources: readonly EventSource<never>[];
  /** Level-triggered and idempotent; a number asks for another sync of the key after that many ms. */
  sync: (key: K) => Promise<number | void>;
  /** Concurrent workers (upstream's --concurrent-*-syncs); default 1. A key is never in two at once. */
  workers?: number;
  rateLimiter?: RateLimiter<K>;
  /** 'drop' forgets a key whose failure retrying cannot fix; default: log and retry. */
  onError?: (err: unknown, key: K) => 'retry' | 'drop';
}

export class QueueController<K = string> {
  readonly queue: RateLimitingQueue<K>;
  private readonly abort = new AbortController();
  private running?: Promise<void>;

  constructor(private readonly opts: QueueControllerOptions<K>) {
    this.queue = new RateLimitingQueue<K>({ clock: opts.clock, rateLimiter: opts.rateLimiter });
  }

  enqueue(key: K): void {
    this.queue.add(key);
  }

  enqueueAfter(key: K, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.queue.shutDown();
    await this.running;
  }

  private async run(): Promise<void> {
    const { logger, name } = this.opts;
    if (!(await waitForCacheSync(this.abort.signal, ...this.opts.sources))) return;
    logger.info({ controller: name }, 'caches are synced');
    const workers = Math.max(1, this.opts.workers ?? 1);
    await Promise.all(Array.from({ length: workers }, () => this.worker()));
  }

  private worker(): Promise<void> {
    return this.queue.runWorker(
      // After stop() the queue drains without doing the work.
      (key) => (this.abort.signal.aborted ? Promise.resolve() : this.opts.sync(key)),
      (err, key) => {
        const verdict = this.opts.onError?.(err, key) ?? 'retry';
        if (verdict === 'retry') this.opts.logger.warn({ err, controller: this.opts.name, key }, 'sync failed, requeued');
        return verdict;
      },
    );
  }
}

