// Upstream's nodelifecycle/scheduler/rate_limited_queue.go: a queue of node names ordered by when
// each is due, drained by Try through a token bucket, so a zone's nodes are tainted at most at its
// eviction rate. A name stays in the queue's set after it is processed (until remove()), so a
// node already tainted is not queued again.
import type { Clock } from '../../util/clock.js';
import { TokenBucket } from '../../util/flowcontrol.js';

/** Upstream's EvictionRateLimiterBurst. */
export const evictionRateLimiterBurst = 1;

export interface TimedValue {
  value: string;
  uid: string;
  /** When it was added; when it may be processed (both ms since the epoch). */
  addedAt: number;
  processAt: number;
}

/** What Try does with a value: done, or try again after retryAfterMs. */
export type TryResult = { done: true } | { done: false; retryAfterMs: number };

export class RateLimitedTimedQueue {
  // The queue is small (one zone's unhealthy nodes): a sorted array serves as the heap.
  private queue: TimedValue[] = [];
  private readonly set = new Set<string>();
  private limiter: TokenBucket;

  constructor(
    private readonly clock: Clock,
    qps: number,
  ) {
    this.limiter = new TokenBucket(qps, evictionRateLimiterBurst, clock);
  }

  /** Queues value unless it is already in the set; true if added. */
  add(value: string, uid: string): boolean {
    if (this.set.has(value)) return false;
    const now = this.clock.now();
    this.set.add(value);
    this.push({ value, uid, addedAt: now, processAt: now });
    return true;
  }

  /** Takes value out of the queue and the set; true if it was in the set. */
  remove(value: string): boolean {
    this.queue = this.queue.filter((v) => v.value !== value);
    return this.set.delete(value);
  }

  /** Values waiting, in processing order. */
  pending(): readonly TimedValue[] {
    return this.queue;
  }

  /**
   * Processes due values in order while the limiter lets them through (a token is spent even on a
   * value not yet due, as upstream). A failed value goes back with processAt moved on.
   */
  async try(fn: (value: TimedValue) => Promise<TryResult>): Promise<void> {
    for (let head = this.queue[0]; head; head = this.queue[0]) {
      if (!this.limiter.tryAccept()) break;
      const now = this.clock.now();
      if (now < head.processAt) break;
      const result = await fn(head);
      // The value may have been removed while fn ran.
      if (!this.queue.includes(head)) continue;
      this.queue = this.queue.filter((v) => v !== head);
      if (!result.done) this.push({ ...head, processAt: now + result.retryAfterMs + 1 });
    }
  }

  /** A new rate; while the old bucket is empty the new one starts empty too (burst 1). */
  swapLimiter(qps: number): void {
    if (this.limiter.qps === qps) return;
    const next = new TokenBucket(qps, evictionRateLimiterBurst, this.clock);
    if (qps > 0 && !this.limiter.tryAccept()) next.tryAccept();
    this.limiter = next;
  }

  get qps(): number {
    return this.limiter.qps;
  }

  private push(v: TimedValue): void {
    const i = this.queue.findIndex((q) => q.processAt > v.processAt);
    if (i < 0) this.queue.push(v);
    else this.queue.splice(i, 0, v);
  }
}
