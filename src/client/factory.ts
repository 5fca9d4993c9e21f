// Shared informers as client-go's informers/factory.go: one informer per (resource, selectors) per
// process, however many controllers ask for it, so each resource is listed and watched once.
// Components register handlers on the informer they are given (a late handler is replayed the
// cache as adds), then the owner calls start() and waitForCacheSync().
//
// Owner-graph users (the garbage collector) ask for ownerGraphInformer(): metadata only
// (PartialObjectMetadata over the wire), unless the process already watches the whole objects of
// that resource, whose informer then serves both — as upstream's GC prefers the typed informers.
import type { ResourceInfo } from '../api/resources.js';
import { realClock, type Clock } from '../util/clock.js';
import type { ListOptions, ObjectList, PartialObjectMetadata, WatchOptions } from './client.js';
import type { IndexFunc, MetaObject } from './indexer.js';
import { SharedInformer, type ListerWatcher, type ResourceEventHandler } from './informer.js';
import { Lister } from './lister.js';
import type { WatchEvent } from './rest.js';

/** What the factory lists and watches through: the Client's ResourceClient (or a test's fake). */
export interface InformerSource<T> extends ListerWatcher<T> {
  listMetadata(opts: ListOptions, signal?: AbortSignal): Promise<ObjectList<PartialObjectMetadata>>;
  watchMetadata(opts: WatchOptions, signal?: AbortSignal): AsyncIterable<WatchEvent<PartialObjectMetadata>>;
}

export interface InformerClient {
  resource(info: ResourceInfo): InformerSource<MetaObject>;
}

export interface InformerSelectors {
  labelSelector?: string;
  fieldSelector?: string;
}

/** What a controller needs of an informer to be fed by it: handlers and the first list. */
export interface EventSource<T> {
  addEventHandler(h: ResourceEventHandler<T>): () => void;
  hasSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
}

export interface SharedInformerFactoryOptions {
  client: InformerClient;
  clock?: Clock;
  /** Redeliver every cached object to onUpdate this often (client-go's defaultResync); 0 never. */
  resyncPeriodMs?: number;
  /** Failures the informers recover from by themselves, and handler exceptions. */
  onError?: (err: unknown, resource: string) => void;
}

const resourceName = (info: ResourceInfo) => (info.group ? `${info.resource}.${info.group}` : info.resource);

export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedInformer<MetaObject>>();
  private readonly started = new Set<SharedInformer<MetaObject>>();
  private readonly ownerGraph = new Map<string, DeferredInformer>();
  private readonly clock: Clock;

  constructor(private readonly opts: SharedInformerFactoryOptions) {
    this.clock = opts.clock ?? realClock;
  }

  /** The process's informer on whole objects of the resource with these selectors. */
  informerFor<T extends MetaObject>(info: ResourceInfo, selectors: InformerSelectors = {}): SharedInformer<T> {
    const rc = this.opts.client.resource(info) as InformerSource<T>;
    return this.shared(`${resourceName(info)}?${selectors.labelSelector ?? ''}?${selectors.fieldSelector ?? ''}`, info, rc, selectors) as unknown as SharedInformer<T>;
  }

  /** The process's metadata-only informer on the resource (PartialObjectMetadata lists and watch events). */
  metadataInformerFor(info: ResourceInfo, selectors: InformerSelectors = {}): SharedInformer<PartialObjectMetadata> {
    const rc = this.opts.client.resource(info);
    const lw: ListerWatcher<PartialObjectMetadata> = { list: (o, s) => rc.listMetadata(o, s), watch: (o, s) => rc.watchMetadata(o, s) };
    const key = `metadata:${resourceName(info)}?${selectors.labelSelector ?? ''}?${selectors.fieldSelector ?? ''}`;
    return this.shared(key, info, lw, selectors) as unknown as SharedInformer<PartialObjectMetadata>;
  }

  /**
   * Every object of the resource with at least its metadata; resolved at start(): the whole-object
   * informer when someone asked for one, else a metadata-only informer.
   */
  ownerGraphInformer(info: ResourceInfo): EventSource<MetaObject> {
    const key = resourceName(info);
    let deferred = this.ownerGraph.get(key);
    if (!deferred) this.ownerGraph.set(key, (deferred = new DeferredInformer(info)));
    return deferred;
  }

  /** A lister over the whole-object informer of the resource. */
  lister<T extends MetaObject>(info: ResourceInfo, selectors?: InformerSelectors): Lister<T> {
    return new Lister(this.informerFor<T>(info, selectors).indexer);
  }

  /** Adds indexes to the resource's informer (before or after start; the cache is indexed at once). */
  addIndexers<T extends MetaObject>(info: ResourceInfo, indexers: Record<string, IndexFunc<T>>, selectors?: InformerSelectors): void {
    this.informerFor<T>(info, selectors).indexer.addIndexers(indexers);
  }

  /** Starts every informer not yet started; informers asked for later need another start(). */
  start(): void {
    for (const deferred of this.ownerGraph.values()) {
      if (deferred.resolved()) continue;
      const full = this.informers.get(`${resourceName(deferred.info)}??`);
      deferred.resolve(full ?? this.metadataInformerFor(deferred.info));
    }
    for (const informer of this.informers.values()) {
      if (this.started.has(informer)) continue;
      this.started.add(informer);
      informer.start();
    }
  }

  /** Resolves true once every started informer has synced, false if the signal aborts first. */
  waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    return waitForCacheSync(signal, ...this.started);
  }

  /** Stops every informer (client-go's Shutdown). */
  async shutdown(): Promise<void> {
    await Promise.all([...this.started].map((i) => i.stop()));
    this.started.clear();
  }

  private shared<T extends MetaObject>(key: string, info: ResourceInfo, lw: ListerWatcher<T>, selectors: InformerSelectors): SharedInformer<MetaObject> {
    let informer = this.informers.get(key);
    if (!informer) {
      informer = new SharedInformer<T>(lw, {
        clock: this.clock,
        resyncPeriodMs: this.opts.resyncPeriodMs,
        ...selectors,
        onError: (err) => this.opts.onError?.(err, resourceName(info)),
      }) as unknown as SharedInformer<MetaObject>;
      this.informers.set(key, informer);
    }
    return informer;
  }
}

/** An owner-graph informer whose source is chosen at the factory's start; handlers wait for it. */
class DeferredInformer implements EventSource<MetaObject> {
  private target?: EventSource<MetaObject>;
  private readonly pending = new Set<ResourceEventHandler<MetaObject>>();
  private readonly unregister = new Map<ResourceEventHandler<MetaObject>, () => void>();
  private readonly onResolve: (() => void)[] = [];

  constructor(readonly info: ResourceInfo) {}

  resolved(): boolean {
    return this.target !== undefined;
  }

  resolve(target: EventSource<MetaObject>): void {
    this.target = target;
    for (const h of this.pending) this.unregister.set(h, target.addEventHandler(h));
    this.pending.clear();
    for (const f of this.onResolve.splice(0)) f();
  }

  addEventHandler(h: ResourceEventHandler<MetaObject>): () => void {
    if (this.target) return this.target.addEventHandler(h);
    this.pending.add(h);
    return () => {
      this.pending.delete(h);
      this.unregister.get(h)?.();
    };
  }

  hasSynced(): boolean {
    return this.target?.hasSynced() ?? false;
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    if (!this.target) await new Promise<void>((resolve) => this.onResolve.push(resolve));
    await this.target!.waitForSync(signal);
  }
}

/**
 * client-go's cache.WaitForCacheSync: true once every source has synced, false if the signal
 * aborts first (one abort listener for all of them: one each would trip Node's leak warning).
 */
export async function waitForCacheSync(signal: AbortSignal | undefined, ...sources: EventSource<unknown>[]): Promise<boolean> {
  if (signal?.aborted) return false;
  const synced = Promise.all(sources.map((s) => s.waitForSync())).then(() => true);
  if (!signal) return synced;
  let onAbort!: () => void;
  const aborted = new Promise<boolean>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([synced, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
