// The watch cache: one per storage prefix. It mirrors the prefix in memory from one list plus one
// store watch, keeps a window of recent events, and fans them out to API watchers, so LIST at
// resourceVersion 0 / fresh reads and every WATCH are served from memory.
import type { KeyValue, Store, WatchEvent } from '../../storage/store.js';
import type { StoredObject } from '../../api/meta.js';
import type { Clock } from '../../util/clock.js';

export type CacheEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CachedObject {
  key: string;
  object: StoredObject;
  rv: number;
}

export interface CacheEvent {
  type: CacheEventType;
  key: string;
  /** The object after the event (for DELETED: the last state, with the deletion's resourceVersion). */
  object: StoredObject;
  /** The object before the event, for filter transitions. */
  prevObject?: StoredObject;
  rv: number;
}

export interface CacheWatcher {
  /** Delivers one event; returns false when the consumer is gone. */
  send(e: CacheEvent): boolean;
  /** The cache stopped (or fell behind): the watch must end; err explains why. */
  close(err?: Error): void;
}

export interface WatchCacheOptions {
  store: Store;
  prefix: string;
  /** Turns a stored value into the object with resourceVersion set. */
  decode: (kv: KeyValue) => StoredObject;
  clock: Clock;
  /** How many past events to keep for watches that resume from a resourceVersion. */
  capacity?: number;
}

/** The pause before relisting a broken store watch, doubling up to the maximum while the store fails. */
const RELOAD_FIRST_DELAY_MS = 200;
const RELOAD_MAX_DELAY_MS = 5_000;

/** A watch asked for history the window no longer holds. */
export class TooOldError extends Error {
  constructor(
    readonly requested: number,
    readonly oldest: number,
  ) {
    super(`too old resource version: ${requested} (${oldest})`);
  }
}

export class WatchCache {
  private readonly items = new Map<string, CachedObject>();
  /** The window is events[head..]; the slots before head are dropped in bulk, so trimming is amortised O(1). */
  private events: CacheEvent[] = [];
  private head = 0;
  /** Events with rv > windowStart are all in the window. */
  private windowStart = 0;
  private revision = 0;
  /** Counts the changes to items (events applied, reloads). */
  private changeCount = 0;
  private readonly watchers = new Set<CacheWatcher>();
  private readonly waiters: { rv: number; resolve: () => void }[] = [];
  private readonly abort = new AbortController();
  private readyPromise: Promise<void> | undefined;
  private readonly capacity: number;
  /** Objects of writes in flight by key, with the exact value written: see expectWrite. */
  private readonly expected = new Map<string, { value: string; object: StoredObject }>();

  constructor(private readonly opts: WatchCacheOptions) {
    this.capacity = opts.capacity ?? 20_000;
  }

  /** Lists the prefix and starts following it; resolves once the cache holds a full snapshot. */
  start(): Promise<void> {
    // A first load that fails is tried again by the next caller.
    this.readyPromise ??= this.load().catch((err: unknown) => {
      this.readyPromise = undefined;
      throw err;
    });
    return this.readyPromise;
  }

  /**
   * Loads again after the store watch broke, until it works: an etcd member that died (or an
   * election in progress) fails the list too, and a cache left failed would answer nothing again.
   */
  private async reload(): Promise<void> {
    for (let delay = RELOAD_FIRST_DELAY_MS; ; delay = Math.min(2 * delay, RELOAD_MAX_DELAY_MS)) {
      await this.opts.clock.sleep(delay, this.abort.signal);
      try {
        return await this.load();
      } catch {
        // A partial list: start over on the next try.
        this.items.clear();
      }
    }
  }

  private async load(): Promise<void> {
    const { store, prefix } = this.opts;
    let startAfter: string | undefined;
    let revision: number | undefined;
    for (;;) {
      const page = await store.list({ prefix, startAfter, limit: 10_000, revision });
      revision = page.revision;
      for (const kv of page.items) this.items.set(kv.key, { key: kv.key, object: this.opts.decode(kv), rv: kv.modRevision });
      if (!page.more || page.items.length === 0) break;
      startAfter = page.items[page.items.length - 1]!.key;
    }
    this.revision = revision ?? 0;
    this.windowStart = this.revision;
    this.changeCount++;
    // Ready once the store watch is live, so nothing between the list and the watch is missed.
    await new Promise<void>((resolve) => {
      store.watch(
        { prefix, afterRevision: this.revision, signal: this.abort.signal },
        {
          event: (e) => this.apply(e),
          end: (err) => {
            resolve();
            this.failed(err);
          },
          synced: resolve,
        },
      );
    });
  }

  /** Grows with every change to the cached objects. */
  get changes(): number {
    return this.changeCount;
  }

  /** The revision the cache has applied every event up to. */
  get resourceVersion(): number {
    return this.revision;
  }

  /** Marks the cache current through rv: for stores that deliver watch events before a write resolves. */
  advanceTo(rv: number): void {
    if (rv > this.revision) {
      this.revision = rv;
      this.wake();
    }
  }

  /**
   * A writer's promise that `object` is what `value` decodes to: when the write's event arrives
   * (before the write resolves, for stores with a synchronous watch) the cache keeps that instance
   * instead of parsing the value again, and the writer's response can share its serialization with
   * the watchers'. The object must not change afterwards (its resourceVersion is set to the event's).
   * The returned function withdraws the promise once the write has settled.
   */
  expectWrite(key: string, value: string, object: StoredObject): () => void {
    const entry = { value, object };
    this.expected.set(key, entry);
    return () => {
      if (this.expected.get(key) === entry) this.expected.delete(key);
    };
  }

  private decodePut(kv: KeyValue): StoredObject {
    const expected = this.expected.get(kv.key);
    if (expected?.value !== kv.value) return this.opts.decode(kv);
    this.expected.delete(kv.key);
    expected.object.metadata.resourceVersion = String(kv.modRevision);
    return expected.object;
  }

  private apply(e: WatchEvent): void {
    this.changeCount++;
    const key = e.kv.key;
    let ev: CacheEvent;
    if (e.type === 'put') {
      const object = this.decodePut(e.kv);
      const prev = this.items.get(key);
      this.items.set(key, { key, object, rv: e.revision });
      ev = { type: prev ? 'MODIFIED' : 'ADDED', key, object, prevObject: prev?.object, rv: e.revision };
    } else {
      const prev = this.items.get(key);
      this.items.delete(key);
      const last = prev?.object ?? this.opts.decode(e.prevKv ?? e.kv);
      const object = { ...last, metadata: { ...last.metadata, resourceVersion: String(e.revision) } };
      ev = { type: 'DELETED', key, object, prevObject: prev?.object, rv: e.revision };
    }
    this.events.push(ev);
    if (this.events.length - this.head > this.capacity) {
      this.windowStart = this.events[this.head]!.rv;
      this.head++;
      // Copying the window on every event would cost O(capacity) per write once it is full.
      if (this.head >= this.capacity) {
        this.events = this.events.slice(this.head);
        this.head = 0;
      }
    }
    if (e.revision > this.revision) this.revision = e.revision;
    for (const w of this.watchers) if (!w.send(ev)) this.watchers.delete(w);
    this.wake();
  }

  private failed(err?: Error): void {
    if (this.abort.signal.aborted) return;
    // The store watch broke (e.g. etcd compacted past us): rebuild from a fresh list.
    const watchers = [...this.watchers];
    this.watchers.clear();
    for (const w of watchers) w.close(err ?? new Error('watch cache restarted'));
    this.items.clear();
    this.events = [];
    this.head = 0;
    this.readyPromise = this.reload();
    this.readyPromise.catch(() => undefined);
  }

  private wake(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.rv <= this.revision) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  /** Resolves once the cache has applied rv, or false after timeoutMs. */
  async waitUntil(rv: number, timeoutMs: number): Promise<boolean> {
    await this.start();
    if (this.revision >= rv) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = {
        rv,
        resolve: () => {
          timer.cancel();
          resolve(true);
        },
      };
      const timer = this.opts.clock.setTimer(timeoutMs, () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      });
      this.waiters.push(waiter);
    });
  }

  /** Every cached object under keyPrefix, sorted by key, and the revision they are current at. */
  snapshot(keyPrefix: string): { items: CachedObject[]; rv: number } {
    const items: CachedObject[] = [];
    for (const item of this.items.values()) if (item.key.startsWith(keyPrefix)) items.push(item);
    items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return { items, rv: this.revision };
  }

  get(key: string): CachedObject | undefined {
    return this.items.get(key);
  }

  /**
   * Registers a watcher that receives every event with rv > afterRv, history first.
   * Throws TooOldError when the window no longer reaches back to afterRv.
   */
  watch(afterRv: number, w: CacheWatcher): () => void {
    if (afterRv < this.windowStart) throw new TooOldError(afterRv, this.windowStart + 1);
    // Binary search for the first event past afterRv; history is delivered synchronously, then live.
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.events[mid]!.rv <= afterRv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.events.length; i++) if (!w.send(this.events[i]!)) return () => undefined;
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  stop(): void {
    this.abort.abort();
    for (const w of this.watchers) w.close();
    this.watchers.clear();
  }
}
