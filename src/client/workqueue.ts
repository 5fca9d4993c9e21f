// Work queues as client-go's util/workqueue: a FIFO that dedupes keys while they wait and never
// hands one key to two workers; a delaying layer (addAfter); a rate-limiting layer with the default
// controller rate limiter. Waiting goes through the injected Clock.
import { realClock, type Clock, type Timer } from '../util/clock.js';

/**
 * A key re-added while a worker processes it is marked dirty and queued again only when the worker
 * calls done(key), so a controller never syncs one key concurrently yet never misses a change.
 */
export class WorkQueue<T> {
  private queue: T[] = [];
  private dirty = new Set<T>();
  private processing = new Set<T>();
  private waiters: ((item: T | undefined) => void)[] = [];
  private shutdown = false;

  add(item: T): void {
    if (this.shutdown || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.push(item);
  }

  private push(item: T): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      // Hand the item straight to a waiting worker.
      this.dirty.delete(item);
      this.processing.add(item);
      waiter(item);
    } else {
      this.queue.push(item);
    }
  }

  /** Items waiting (not those being processed). */
  len(): number {
    return this.queue.length;
  }

  /** The next item, marked as processing until done(item); undefined once shut down and drained. */
  get(): Promise<T | undefined> {
    if (this.queue.length > 0) {
      const item = this.queue.shift()!;
      this.dirty.delete(item);
      this.processing.add(item);
      return Promise.resolve(item);
    }
    if (this.shutdown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(item: T): void {
    this.processing.delete(item);
    if (this.dirty.has(item)) this.push(item);
  }

  /** New adds are ignored; workers drain what is queued, then get() yields undefined. */
  shutDown(): void {
    this.shutdown = true;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  shuttingDown(): boolean {
    return this.shutdown;
  }
}

export interface DelayingQueueOptions {
  clock?: Clock;
}

export class DelayingQueue<T> extends WorkQueue<T> {
  protected readonly clock: Clock;
  private waiting = new Map<T, { readyAt: number; timer: Timer }>();

  constructor(opts: DelayingQueueOptions = {}) {
    super();
    this.clock = opts.clock ?? realClock;
  }

  /** Adds the item after ms; a pending earlier deadline wins over a later one. */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (ms <= 0) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.waiting.get(item);
    if (existing && existing.readyAt <= readyAt) return;
    existing?.timer.cancel();
    const timer = this.clock.setTimer(ms, () => {
      this.waiting.delete(item);
      this.add(item);
    });
    this.waiting.set(item, { readyAt, timer });
  }

  override shutDown(): void {
    for (const w of this.waiting.values()) w.timer.cancel();
    this.waiting.clear();
    super.shutDown();
  }
}

export interface RateLimiter<T> {
  /** How long to wait before the item's next attempt (ms); counts the attempt. */
  when(item: T): number;
  /** Stops tracking the item (it succeeded). */
  forget(item: T): void;
  numRequeues(item: T): number;
}

/** baseDelay * 2^failures, capped at maxDelay. */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private failures = new Map<T, number>();
  constructor(
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    return Math.min(this.baseDelayMs * 2 ** exp, this.maxDelayMs);
  }
  forget(item: T): void {
    this.failures.delete(item);
  }
  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** An overall token bucket (golang.org/x/time/rate reservations): starts full, refills at qps. */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_item: T): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
  forget(_item: T): void {}
  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay of several limiters. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];
  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }
  when(item: T): number {
    return Math.max(...this.limiters.map((l) => l.when(item)));
  }
  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }
  numRequeues(item: T): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(item)));
  }
}

/** client-go's DefaultControllerRateLimiter: per-item 5 ms → 1000 s, overall 10 qps with burst 100. */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(new ItemExponentialFailureRateLimiter<T>(5, 1000_000), new BucketRateLimiter<T>(10, 100, clock));
}

export interface RateLimitingQueueOptions<T> extends DelayingQueueOptions {
  rateLimiter?: RateLimiter<T>;
}

export class RateLimitingQueue<T> extends DelayingQueue<T> {
  private readonly limiter: RateLimiter<T>;

  constructor(opts: RateLimitingQueueOptions<T> = {}) {
    super(opts);
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
  }

  /** Re-adds the item once the rate limiter allows it (after a failed sync). */
  addRateLimited(item: T): void {
    this.addAfter(item, this.limiter.when(item));
  }

  /** Resets the item's failure count (after a successful sync). */
  forget(item: T): void {
    this.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  /**
   * A controller's worker (client-go's processNextWorkItem, in a loop until shutDown): one item at a
   * time through sync. Success forgets the item's failures, and re-adds it after the delay sync
   * returns, if any; a throw goes to onError, which re-adds it rate-limited unless it says 'drop'.
   */
  async runWorker(sync: (item: T) => Promise<number | void>, onError: (err: unknown, item: T) => 'retry' | 'drop'): Promise<void> {
    for (;;) {
      const item = await this.get();
      if (item === undefined) return;
      try {
        const againMs = await sync(item);
        this.forget(item);
        if (typeof againMs === 'number') this.addAfter(item, againMs);
      } catch (err) {
        if (onError(err, item) === 'drop') this.forget(item);
        else this.addRateLimited(item);
      } finally {
        this.done(item);
      }
    }
  }
}
