// A shared informer as client-go's reflector + informer: LIST (paged) then WATCH from the list's
// resourceVersion with bookmarks, keep a local indexed cache, and tell handlers what changed.
// A watch that closes resumes from the last seen resourceVersion; 410 Expired/Gone relists at
// once (a repeat before any progress backs off); other failures relist after an exponential backoff
// on the injected Clock, reset by the next event received. A relist swaps the
// cache in one step and reports the difference (adds, updates, and tombstoned deletes).
import type { Status } from '../api/meta.js';
import { hasStatusCode, StatusError } from '../api/errors.js';
import { realClock, type Clock, type Timer } from '../util/clock.js';
import type { ListOptions, ObjectList, WatchOptions } from './client.js';
import { DeletedFinalStateUnknown, Indexer, namespaceIndex, metaNamespaceIndexFunc, type IndexFunc, type MetaObject } from './indexer.js';
import { errorFromStatus, type WatchEvent } from './rest.js';

/** The list/watch source; ResourceClient satisfies it, tests use a fake. */
export interface ListerWatcher<T> {
  list(opts: ListOptions, signal?: AbortSignal): Promise<ObjectList<T>>;
  watch(opts: WatchOptions, signal?: AbortSignal): AsyncIterable<WatchEvent<T>>;
}

export interface ResourceEventHandler<T> {
  /** isInInitialList: the object came with the informer's first list. */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** Also called with old === new on resync and for unchanged objects on a relist. */
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

export interface InformerOptions<T> {
  clock?: Clock;
  /** Redeliver every cached object to onUpdate this often; 0 (default) never. */
  resyncPeriodMs?: number;
  /** Extra indexes besides the namespace index. */
  indexers?: Record<string, IndexFunc<T>>;
  /** LIST page size (client-go's default 500). */
  pageSize?: number;
  labelSelector?: string;
  fieldSelector?: string;
  /** Failures the informer recovers from by itself (for logs); also handler exceptions. */
  onError?: (err: unknown) => void;
}

const minBackoffMs = 800;
const maxBackoffMs = 30_000;
// Upstream asks the server to end each watch after 5–10 minutes, spreading reconnects out.
const minWatchTimeoutSeconds = 300;

export const isExpired = (err: unknown): boolean => hasStatusCode(err, 410);

// A watch that ended by itself this quickly with nothing in it means a server problem: relist.
class ShortWatchError extends Error {}

export class SharedInformer<T extends MetaObject> {
  readonly indexer: Indexer<T>;
  private readonly clock: Clock;
  private readonly handlers = new Set<ResourceEventHandler<T>>();
  private lastSyncRV = '';
  private rvUnavailable = false;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private backoffMs = minBackoffMs;
  private abort?: AbortController;
  private loop?: Promise<void>;
  private resyncTimer?: Timer;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly opts: InformerOptions<T> = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.indexer = new Indexer<T>({ [namespaceIndex]: metaNamespaceIndexFunc, ...opts.indexers });
  }

  /** Registers handlers; once synced, they first receive the current objects as adds. Returns the unregister function. */
  addEventHandler(h: ResourceEventHandler<T>): () => void {
    this.handlers.add(h);
    if (this.synced) for (const obj of this.indexer.list()) this.call(() => h.onAdd?.(obj, false));
    return () => this.handlers.delete(h);
  }

  start(): void {
    if (this.abort) return;
    this.abort = new AbortController();
    this.loop = this.run(this.abort.signal);
    if (this.opts.resyncPeriodMs) this.scheduleResync(this.opts.resyncPeriodMs);
  }

  async stop(): Promise<void> {
    this.abort?.abort();
    this.resyncTimer?.cancel();
    await this.loop;
  }

  /** True once the first list has been delivered to the cache and the handlers. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves when synced; rejects if the signal aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  lastSyncResourceVersion(): string {
    return this.lastSyncRV;
  }

  private async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.list(signal);
          needList = false;
        }
        await this.watch(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.opts.onError?.(err);
        if (isExpired(err) && this.backoffMs === minBackoffMs) {
          // Our resourceVersion is compacted away: only a fresh list can catch up. A second 410
          // before any event arrives backs off like other failures.
          needList = true;
          this.backoffMs *= 2;
          continue;
        }
        // An API error or a suspiciously short watch relists; a dropped connection resumes the watch.
        if (err instanceof StatusError || err instanceof ShortWatchError) needList = true;
        try {
          await this.clock.sleep(this.backoffMs, signal);
        } catch {
          return;
        }
        this.backoffMs = Math.min(this.backoffMs * 2, maxBackoffMs);
      }
    }
  }

  /** Lists every page, then swaps the cache. "0" lets the server answer from its watch cache. */
  private async list(signal: AbortSignal): Promise<void> {
    const rv = this.rvUnavailable ? '' : this.lastSyncRV || '0';
    let result: { items: T[]; resourceVersion: string };
    try {
      result = await this.listPages(rv, signal);
    } catch (err) {
      if (!isExpired(err) || rv === '') throw err;
      // The server no longer has that version: fall back to a consistent read.
      this.rvUnavailable = true;
      result = await this.listPages('', signal);
    }
    this.rvUnavailable = false;
    this.replace(result.items, result.resourceVersion);
  }

  private async listPages(resourceVersion: string, signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }> {
    const base = { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
    const limit = this.opts.pageSize ?? 500;
    const first = await this.lw.list({ ...base, resourceVersion, limit }, signal);
    const items = [...first.items];
    let cont = first.metadata?.continue;
    while (cont) {
      let page: ObjectList<T>;
      try {
        // A continuation carries its own snapshot; resourceVersion must not be set.
        page = await this.lw.list({ ...base, limit, continue: cont }, signal);
      } catch (err) {
        if (!isExpired(err)) throw err;
        // The continue token expired mid-way: take everything in one unpaged list instead.
        return this.unpaged(resourceVersion, signal);
      }
      items.push(...page.items);
      cont = page.metadata?.continue;
    }
    return { items, resourceVersion: first.metadata?.resourceVersion ?? '' };
  }

  private async unpaged(resourceVersion: string, signal: AbortSignal): Promise<{ items: T[]; resourceVersion: string }> {
    const all = await this.lw.list({ labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector, resourceVersion }, signal);
    return { items: all.items, resourceVersion: all.metadata?.resourceVersion ?? '' };
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const started = this.clock.now();
    let events = 0;
    const stream = this.lw.watch(
      {
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
        resourceVersion: this.lastSyncRV,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(minWatchTimeoutSeconds * (1 + Math.random())),
      },
      signal,
    );
    for await (const ev of stream) {
      if (signal.aborted) return;
      events++;
      this.handleEvent(ev);
      this.backoffMs = minBackoffMs;
    }
    if (!signal.aborted && events === 0 && this.clock.now() - started < 1000)
      throw new ShortWatchError('very short watch: Unexpected watch close - watch lasted less than a second and no items received');
  }

  private handleEvent(ev: WatchEvent<T>): void {
    if (ev.type === 'ERROR') throw errorFromStatus(ev.object as Status);
    const obj = ev.object;
    const rv = obj.metadata?.resourceVersion;
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const old = this.indexer.get(obj);
        this.indexer.update(obj);
        for (const h of this.handlers) this.call(() => (old ? h.onUpdate?.(old, obj) : h.onAdd?.(obj, false)));
        break;
      }
      case 'DELETED':
        this.indexer.delete(obj);
        for (const h of this.handlers) this.call(() => h.onDelete?.(obj));
        break;
      case 'BOOKMARK':
        break;
      default:
        throw new Error(`unable to understand watch event ${JSON.stringify(ev.type)}`);
    }
    if (rv) this.lastSyncRV = rv;
  }

  /** Swaps the cache for a list's content, then reports adds, updates and missed deletes. */
  private replace(items: T[], resourceVersion: string): void {
    const initial = !this.synced;
    const before = new Map(this.indexer.listKeys().map((k) => [k, this.indexer.getByKey(k)!]));
    this.indexer.replace(items);
    this.lastSyncRV = resourceVersion;
    for (const obj of items) {
      const key = this.indexer.keyFunc(obj);
      const old = before.get(key);
      before.delete(key);
      for (const h of this.handlers) this.call(() => (old ? h.onUpdate?.(old, obj) : h.onAdd?.(obj, initial)));
    }
    for (const [key, old] of before) {
      const tombstone = new DeletedFinalStateUnknown(key, old);
      for (const h of this.handlers) this.call(() => h.onDelete?.(tombstone));
    }
    if (initial) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private scheduleResync(periodMs: number): void {
    this.resyncTimer = this.clock.setTimer(periodMs, () => {
      if (this.abort?.signal.aborted) return;
      if (this.synced) for (const obj of this.indexer.list()) for (const h of this.handlers) this.call(() => h.onUpdate?.(obj, obj));
      this.scheduleResync(periodMs);
    });
  }

  // One failing handler must not stop the others or the informer.
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.onError?.(err);
    }
  }
}
