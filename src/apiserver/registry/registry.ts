// The generic registry of one served resource: create, read, list, update, delete and watch over
// storage, with the resource's strategy, admission and validation, as upstream's genericregistry.Store.
import type { PodRequestTrace } from '../timeline/trace.js';
import { randomUUID } from 'node:crypto';
import type { KeyValue, Store } from '../../storage/store.js';
import { isStorageError } from '../../storage/store.js';
import type { KubeObject, StoredObject } from '../../api/meta.js';
import type { Clock } from '../../util/clock.js';
import { rfc3339 } from '../../api/time.js';
import type { UserInfo } from '../authn/user.js';
import type { AdmissionAttributes, AdmissionOperation } from '../admission/interface.js';
import {
  StatusError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  invalid,
  notFound,
  staleConflict,
} from '../../api/errors.js';
import { invalid as invalidField, Path } from '../../api/field.js';
import type { ResourceStrategy } from './strategy.js';
import { TooOldError, type CacheEvent, type WatchCache } from '../watchcache/cache.js';
import type { Selection } from './selection.js';
import { decodeContinue, encodeContinue } from './continue.js';
import { deepClone } from '../../api/patch/json.js';
import type { AddAuditAnnotation } from '../audit/policy.js';

/** Admission as the registry sees it: mutation before its own validation, validation after. */
export interface Admitter {
  mutate(op: AdmissionOperation, a: AdmitRequest): Promise<void>;
  validate(op: AdmissionOperation, a: AdmitRequest): Promise<void>;
}

/** The admission attributes of a request, but for its operation. */
export type AdmitRequest = Omit<AdmissionAttributes, 'operation'>;

export interface WriteOptions {
  dryRun: boolean;
  user: UserInfo;
  /** '' for the main resource; 'status' etc. for subresources that write the object. */
  subresource: string;
  /** Records who changed which fields (managedFields). */
  track?: (obj: KubeObject, old: StoredObject | undefined) => void;
  /** An update of a missing object creates it (server-side apply), whatever the strategy says. */
  allowCreate?: boolean;
  /** Collects admission's warnings for the response. */
  warnings?: string[];
  /** A pod write's timeline steps (only pod requests carry one). */
  timeline?: PodRequestTrace;
  /** Admission's audit annotations. */
  annotate?: AddAuditAnnotation;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

export interface ListOptions {
  selection: Selection;
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  selection: Selection;
  resourceVersion?: string;
  sendInitialEvents?: boolean;
}

export interface WatchSink {
  event(type: CacheEvent['type'], object: StoredObject): boolean;
  /** The watch ends with this error event (410 Expired and friends): the client must relist. */
  fail(err: StatusError): void;
  /** The watch ends without error (server shutdown); the client resumes from its last resourceVersion. */
  end(): void;
  /** The initial state has been sent (for sendInitialEvents bookmarks). */
  initialEventsEnd?(rv: number): void;
}

export interface RegistryDeps {
  store: Store;
  cache: WatchCache;
  strategy: ResourceStrategy;
  clock: Clock;
  admitter: Admitter;
  /** The store delivers watch events before a write resolves, so the cache is always current. */
  synchronousWatch: boolean;
}

const generateSuffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const maxUpdateRetries = 16;

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += generateSuffixAlphabet[Math.floor(Math.random() * generateSuffixAlphabet.length)];
  return s;
}

/**
 * Equality of what would be stored: key order and undefined fields do not count, as in upstream's
 * encoding. Walks both values and stops at the first difference, where encoding both (the obvious
 * way) costs two full serialisations on every write.
 */
export function stableEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    // JSON encodes an undefined array element as null.
    for (let i = 0; i < a.length; i++) if (!stableEqual(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    defined++;
    if (!stableEqual(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) defined--;
  return defined === 0;
}

export class Registry {
  readonly strategy: ResourceStrategy;
  private readonly rootPrefix: string;

  constructor(private readonly deps: RegistryDeps) {
    this.strategy = deps.strategy;
    this.rootPrefix = deps.strategy.storagePrefix;
  }

  get info() {
    return this.strategy.info;
  }

  private get qualified() {
    return { group: this.info.group, resource: this.info.resource };
  }

  /** The revision the watch cache has applied events up to (for bookmarks). */
  cacheRevision(): number {
    return this.deps.cache.resourceVersion;
  }

  keyFor(namespace: string, name: string): string {
    return this.info.namespaced ? `${this.rootPrefix}${namespace}/${name}` : `${this.rootPrefix}${name}`;
  }

  /** The key prefix of a list: one namespace, or all of them. */
  private listPrefix(namespace: string): string {
    return this.info.namespaced && namespace ? `${this.rootPrefix}${namespace}/` : this.rootPrefix;
  }

  /** Stored form → served object, with resourceVersion from the revision. */
  decode(kv: KeyValue): StoredObject {
    return this.serve(decodeStored(kv));
  }

  private serve(obj: StoredObject): StoredObject {
    return this.strategy.toServed ? this.strategy.toServed(obj) : obj;
  }

  /**
   * Stores obj through `write`. Where the stored form is the served one, the watch cache keeps obj
   * itself for the write's event instead of parsing it back: obj is the writer's own copy and is not
   * changed after this (but for its resourceVersion, set to the same revision).
   */
  private async persist(key: string, obj: StoredObject, write: (value: string) => Promise<KeyValue>): Promise<KeyValue> {
    const value = this.encode(obj);
    if (this.strategy.toStored || this.strategy.toServed) return write(value);
    const withdraw = this.deps.cache.expectWrite(key, value, obj);
    try {
      return await write(value);
    } finally {
      withdraw();
    }
  }

  private encode(obj: KubeObject): string {
    const stored = this.strategy.toStored ? this.strategy.toStored(obj) : obj;
    const { resourceVersion: _rv, ...meta } = stored.metadata ?? {};
    return JSON.stringify({ ...stored, metadata: meta });
  }

  async get(namespace: string, name: string): Promise<StoredObject> {
    const kv = await this.deps.store.get(this.keyFor(namespace, name));
    if (!kv) throw notFound(this.qualified, name);
    return this.decode(kv);
  }

  // ---- list ---------------------------------------------------------------------------------

  async list(namespace: string, opts: ListOptions): Promise<ListResult> {
    const prefix = this.listPrefix(namespace);
    const rv = opts.resourceVersion;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    if (opts.continueToken) {
      if (rv && rv !== '0') throw badRequest('specifying resource version is not allowed when using continue');
      return this.listFromStore(prefix, opts, limit);
    }
    if (rv === '0' || (rv && opts.resourceVersionMatch !== 'Exact')) {
      // "Any" or NotOlderThan: the cache serves it once it has seen rv.
      await this.awaitResourceVersion(rv);
      return this.listFromCache(prefix, opts, limit);
    }
    if (rv && opts.resourceVersionMatch === 'Exact') {
      // A revision the store has not reached yet is upstream's 504, not a storage error.
      await this.awaitResourceVersion(rv);
      return this.listFromStore(prefix, opts, limit, parseResourceVersion(rv));
    }
    // A consistent read: from the cache when it is provably current, else from the store.
    if (this.deps.synchronousWatch) {
      await this.deps.cache.start();
      this.deps.cache.advanceTo(await this.deps.store.currentRevision());
      return this.listFromCache(prefix, opts, limit);
    }
    return this.listFromStore(prefix, opts, limit);
  }

  /**
   * Waits up to 3 s (upstream's cacher, waitUntilFreshAndBlock) for the cache to reach rv; then
   * throws the 504 "Too large resource version". Empty and "0" ask for nothing.
   */
  async awaitResourceVersion(rv: string | undefined): Promise<void> {
    const min = !rv || rv === '0' ? 0 : parseResourceVersion(rv);
    if (!(await this.cacheAtLeast(min))) throw tooLargeResourceVersion(min, this.deps.cache.resourceVersion);
  }

  private async cacheAtLeast(rv: number): Promise<boolean> {
    if (this.deps.synchronousWatch) {
      await this.deps.cache.start();
      this.deps.cache.advanceTo(await this.deps.store.currentRevision());
    }
    return this.deps.cache.waitUntil(rv, 3000);
  }

  private listFromCache(prefix: string, opts: ListOptions, limit: number): ListResult {
    const snap = this.deps.cache.snapshot(prefix);
    const matching: { key: string; object: StoredObject }[] = [];
    for (const i of snap.items) {
      const object = this.serve(i.object);
      if (opts.selection.matches(object, this.strategy)) matching.push({ key: i.key, object });
    }
    if (limit && matching.length > limit) {
      // Later pages continue from the store at this revision, which keeps them consistent.
      const page = matching.slice(0, limit);
      const last = page[page.length - 1]!;
      return {
        items: page.map((i) => i.object),
        resourceVersion: String(snap.rv),
        continueToken: encodeContinue(snap.rv, last.key.slice(this.rootPrefix.length)),
        remainingItemCount: opts.selection.empty ? matching.length - limit : undefined,
      };
    }
    return { items: matching.map((i) => i.object), resourceVersion: String(snap.rv) };
  }

  private async listFromStore(prefix: string, opts: ListOptions, limit: number, exactRv?: number): Promise<ListResult> {
    let startAfter: string | undefined;
    let revision = exactRv;
    if (opts.continueToken) {
      const token = decodeContinue(opts.continueToken);
      revision = token.rv;
      startAfter = this.rootPrefix + token.start;
      if (!startAfter.startsWith(prefix)) throw badRequest('continue key is not valid for this list');
    }
    // A token is client data: a revision past any the store can have is the same 504 as an Exact list's.
    if (revision !== undefined && revision > Number.MAX_SAFE_INTEGER) throw tooLargeResourceVersion(revision, this.deps.cache.resourceVersion);
    const items: StoredObject[] = [];
    let lastKey: string | undefined;
    let more: boolean | undefined;
    let remaining: number | undefined;
    try {
      for (;;) {
        const page = await this.deps.store.list({ prefix, startAfter, limit: limit ? Math.max(limit - items.length, 1) : 0, revision });
        revision = page.revision;
        for (const kv of page.items) {
          lastKey = kv.key;
          const obj = this.decode(kv);
          if (opts.selection.matches(obj, this.strategy)) items.push(obj);
          if (limit && items.length >= limit) break;
        }
        more = page.more || (lastKey !== undefined && lastKey !== page.items[page.items.length - 1]?.key);
        remaining = page.remaining;
        if (!page.more || (limit && items.length >= limit) || page.items.length === 0) break;
        startAfter = page.items[page.items.length - 1]!.key;
      }
    } catch (err) {
      if (isStorageError(err, 'Compacted')) {
        if (opts.continueToken) throw continueExpired();
        throw expired(`The resourceVersion for the provided list is too old.`);
      }
      if (isStorageError(err, 'TooLarge')) throw tooLargeResourceVersion(revision ?? 0, this.deps.cache.resourceVersion);
      throw err;
    }
    const result: ListResult = { items, resourceVersion: String(revision ?? 0) };
    if (more && limit && lastKey) {
      result.continueToken = encodeContinue(revision!, lastKey.slice(this.rootPrefix.length));
      if (opts.selection.empty && remaining !== undefined) result.remainingItemCount = remaining;
    }
    return result;
  }

  // ---- watch --------------------------------------------------------------------------------

  /** Starts a watch; returns its cancel function. Errors before the first event are thrown. */
  async watch(namespace: string, opts: WatchOptions, sink: WatchSink): Promise<() => void> {
    const prefix = this.listPrefix(namespace);
    const cache = this.deps.cache;
    const rvText = opts.resourceVersion;
    const wantsInitial = opts.sendInitialEvents ?? (!rvText || rvText === '0');
    let afterRv: number;
    if (wantsInitial) {
      if (rvText && rvText !== '0') {
        const min = parseResourceVersion(rvText);
        if (!(await this.cacheAtLeast(min))) throw tooLargeResourceVersion(min, cache.resourceVersion);
      } else if (!rvText) {
        await this.cacheAtLeast(0);
      } else {
        await cache.start();
      }
      const snap = cache.snapshot(prefix);
      for (const item of snap.items) {
        const object = this.serve(item.object);
        if (opts.selection.matches(object, this.strategy) && !sink.event('ADDED', object)) return () => undefined;
      }
      sink.initialEventsEnd?.(snap.rv);
      afterRv = snap.rv;
    } else {
      afterRv = parseResourceVersion(rvText!);
      if (!(await this.cacheAtLeast(afterRv))) throw tooLargeResourceVersion(afterRv, cache.resourceVersion);
    }
    const deliver = (e: CacheEvent): boolean => {
      if (!e.key.startsWith(prefix)) return true;
      const served = { ...e, object: this.serve(e.object), prevObject: e.prevObject && this.serve(e.prevObject) };
      const type = this.transition(served, opts.selection);
      return type ? sink.event(type, served.object) : true;
    };
    try {
      return cache.watch(afterRv, { send: deliver, close: (err) => (err ? sink.fail(expired(err.message)) : sink.end()) });
    } catch (err) {
      if (err instanceof TooOldError) return this.watchFromStore(prefix, afterRv, opts.selection, sink, err);
      throw err;
    }
  }

  /** Which event a watcher with this selection sees: objects moving in or out of it appear added or deleted. */
  private transition(e: CacheEvent, sel: Selection): CacheEvent['type'] | undefined {
    if (sel.empty) return e.type;
    const now = e.type !== 'DELETED' && sel.matches(e.object, this.strategy);
    const before = e.prevObject !== undefined && sel.matches(e.prevObject, this.strategy);
    if (e.type === 'DELETED') return before || sel.matches(e.object, this.strategy) ? 'DELETED' : undefined;
    if (now && before) return 'MODIFIED';
    if (now) return 'ADDED';
    if (before) return 'DELETED';
    return undefined;
  }

  /** A resume from before the cache's window: replay from the store's history, when it still has it. */
  private watchFromStore(prefix: string, afterRv: number, sel: Selection, sink: WatchSink, tooOld: TooOldError): () => void {
    const abort = new AbortController();
    this.deps.store.watch(
      { prefix, afterRevision: afterRv, signal: abort.signal },
      {
        event: (e) => {
          const object = e.type === 'put' ? this.decode(e.kv) : this.decodeDeleted(e.prevKv ?? e.kv, e.revision);
          const prevObject = e.prevKv ? this.decode(e.prevKv) : undefined;
          const type = e.type === 'delete' ? 'DELETED' : prevObject ? 'MODIFIED' : 'ADDED';
          const t = this.transition({ type, key: e.kv.key, object, prevObject, rv: e.revision }, sel);
          if (t && !sink.event(t, object)) abort.abort();
        },
        end: (err) => {
          if (abort.signal.aborted) return;
          if (!err) sink.end();
          else sink.fail(isStorageError(err, 'Compacted') ? expired(tooOld.message) : expired(err.message));
        },
      },
    );
    return () => abort.abort();
  }

  private decodeDeleted(kv: KeyValue, revision: number): StoredObject {
    const obj = this.decode(kv);
    obj.metadata.resourceVersion = String(revision);
    return obj;
  }

  // ---- create -------------------------------------------------------------------------------

  /** Creates the object; input becomes the stored object (callers hand over a copy of their own, e.g. a decoded request body). */
  async create(namespace: string, input: KubeObject, opts: WriteOptions): Promise<StoredObject> {
    const obj = this.prepareNew(namespace, input);
    const now = this.deps.clock.now();
    this.strategy.prepareForCreate(obj, { now, user: opts.user });
    const admit = { resource: this.info, subresource: opts.subresource, namespace, name: obj.metadata.name ?? '', object: obj, user: opts.user, dryRun: opts.dryRun, warnings: opts.warnings, timeline: opts.timeline, annotate: opts.annotate };
    await this.deps.admitter.mutate('CREATE', admit);
    this.assertValid(obj, this.strategy.validate(obj));
    await this.strategy.authorizeWrite?.(obj, undefined, opts.user);
    await this.deps.admitter.validate('CREATE', admit);
    const allocation = await this.strategy.allocate?.(obj, undefined, opts.dryRun);
    opts.track?.(obj, undefined);
    if (opts.dryRun) {
      const existing = await this.deps.store.get(this.keyFor(namespace, obj.metadata.name!));
      if (existing) throw alreadyExists(this.qualified, obj.metadata.name!);
      return obj;
    }
    try {
      const key = this.keyFor(namespace, obj.metadata.name!);
      const kv = await this.persist(key, obj, (value) => this.deps.store.create(key, value));
      // What was written is obj itself: no need to parse it back.
      obj.metadata.resourceVersion = String(kv.modRevision);
    } catch (err) {
      await allocation?.revert();
      if (isStorageError(err, 'KeyExists')) throw alreadyExists(this.qualified, obj.metadata.name!);
      throw err;
    }
    await allocation?.commit();
    opts.timeline?.persisted(obj, opts.user);
    return obj;
  }

  /** Fills server-owned metadata of a new object. */
  private prepareNew(namespace: string, input: KubeObject): StoredObject {
    const obj = input as StoredObject;
    obj.metadata ??= {};
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    if (this.info.namespaced) meta.namespace = namespace;
    else delete meta.namespace;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.deps.clock.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete (meta as { selfLink?: string }).selfLink;
    if (this.strategy.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    return obj;
  }

  private assertValid(obj: StoredObject, errs: ReturnType<ResourceStrategy['validate']>): void {
    if (errs.length) throw invalid(this.info.kind, this.info.group, obj.metadata.name ?? '', errs);
  }

  // ---- update -------------------------------------------------------------------------------

  /**
   * Reads the object, lets `tryUpdate` compute the new one, and writes it with compare-and-swap,
   * retrying on conflicts unless the caller pinned a resourceVersion. `created` tells whether a
   * missing object was created (allowCreateOnUpdate).
   */
  async update(
    namespace: string,
    name: string,
    tryUpdate: (current: StoredObject | undefined) => Promise<KubeObject> | KubeObject,
    opts: WriteOptions,
  ): Promise<{ object: StoredObject; created: boolean }> {
    const key = this.keyFor(namespace, name);
    for (let attempt = 0; ; attempt++) {
      const kv = await this.deps.store.get(key);
      const current = kv ? this.decode(kv) : undefined;
      const proposed = await tryUpdate(current ? deepClone(current) : undefined);
      if (!current) {
        if (!(this.strategy.allowCreateOnUpdate || opts.allowCreate) || opts.subresource) throw notFound(this.qualified, name);
        if (proposed.metadata?.resourceVersion) throw notFound(this.qualified, name);
        // A copy: create fills in the object, and a lost race retries from proposed as an update.
        const obj = deepClone({ ...proposed, metadata: { ...proposed.metadata, name } });
        try {
          return { object: await this.create(namespace, obj, opts), created: true };
        } catch (err) {
          if (err instanceof StatusError && err.reason === 'AlreadyExists' && attempt < maxUpdateRetries) continue;
          throw err;
        }
      }
      const pinned = proposed.metadata?.resourceVersion;
      if (pinned && pinned !== current.metadata.resourceVersion) throw staleConflict(this.qualified, name);
      if (!pinned && !this.strategy.allowUnconditionalUpdate) {
        throw invalid(this.info.kind, this.info.group, name, [
          invalidField(Path.root('metadata').child('resourceVersion'), '0x0', 'must be specified for an update'),
        ]);
      }
      const obj = this.prepareUpdate(proposed, current, opts);
      const admit = { resource: this.info, subresource: opts.subresource, namespace, name, object: obj, oldObject: current, user: opts.user, dryRun: opts.dryRun, warnings: opts.warnings, annotate: opts.annotate };
      await this.deps.admitter.mutate('UPDATE', admit);
      const errs = opts.subresource ? this.strategy.validateSubresourceUpdate(opts.subresource, obj, current) : this.strategy.validateUpdate(obj, current);
      this.assertValid(obj, errs);
      if (!opts.subresource) await this.strategy.authorizeWrite?.(obj, current, opts.user);
      await this.deps.admitter.validate('UPDATE', admit);
      opts.track?.(obj, current);
      obj.metadata.resourceVersion = current.metadata.resourceVersion;
      // A value under an old encryption key is rewritten under the new one (kubectl replace rotates keys).
      if (stableEqual(obj, current) && !kv!.stale) return { object: current, created: false };
      const allocation = this.shouldDeleteAfterUpdate(obj) ? undefined : await this.strategy.allocate?.(obj, current, opts.dryRun);
      if (opts.dryRun) return { object: obj, created: false };
      try {
        if (this.shouldDeleteAfterUpdate(obj)) {
          const gone = await this.deleteNow(key, kv!, obj);
          opts.timeline?.updated(current, obj, opts.user);
          return { object: gone, created: false };
        }
        const written = await this.persist(key, obj, (value) => this.deps.store.update(key, value, kv!.modRevision));
        obj.metadata.resourceVersion = String(written.modRevision);
        opts.timeline?.updated(current, obj, opts.user);
      } catch (err) {
        await allocation?.revert();
        if (isStorageError(err, 'Conflict')) {
          if (pinned) throw staleConflict(this.qualified, name);
          if (attempt < maxUpdateRetries) continue;
        }
        if (isStorageError(err, 'NotFound')) {
          if (pinned) throw notFound(this.qualified, name);
          if (attempt < maxUpdateRetries) continue;
        }
        throw err;
      }
      await allocation?.commit();
      return { object: obj, created: false };
    }
  }

  private prepareUpdate(proposed: KubeObject, current: StoredObject, opts: WriteOptions): StoredObject {
    const subresource = opts.subresource;
    const obj = deepClone(proposed) as StoredObject;
    obj.metadata ??= {};
    const meta = obj.metadata;
    const cur = current.metadata;
    if (meta.uid && meta.uid !== cur.uid) {
      throw conflict(this.qualified, cur.name!, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${cur.uid}`);
    }
    meta.name = cur.name;
    if (this.info.namespaced) meta.namespace = cur.namespace;
    meta.uid = cur.uid;
    meta.creationTimestamp = cur.creationTimestamp;
    // deletionTimestamp and its grace are set only by DELETE; an update cannot add or move them.
    if (cur.deletionTimestamp) meta.deletionTimestamp = cur.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (cur.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = cur.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    const ctx = { now: this.deps.clock.now(), user: opts.user };
    if (subresource) this.strategy.prepareForSubresourceUpdate(subresource, obj, current, ctx);
    else this.strategy.prepareForUpdate(obj, current, ctx);
    if (this.strategy.tracksGeneration) {
      const gen = cur.generation ?? 1;
      meta.generation = subresource === '' && !stableEqual(specOf(obj), specOf(current)) ? gen + 1 : gen;
    } else if (cur.generation !== undefined) {
      meta.generation = cur.generation;
    } else {
      delete meta.generation;
    }
    return obj;
  }

  /** An object being deleted whose last finalizer went away goes now (its grace, if any, has been served). */
  private shouldDeleteAfterUpdate(obj: StoredObject): boolean {
    const m = obj.metadata;
    return (
      !!m.deletionTimestamp &&
      (m.finalizers?.length ?? 0) === 0 &&
      (m.deletionGracePeriodSeconds ?? 0) === 0 &&
      !this.strategy.holdsDeletion?.(obj)
    );
  }

  private async deleteNow(key: string, kv: KeyValue, obj: StoredObject): Promise<StoredObject> {
    const deleted = await this.deps.store.delete(key, kv.modRevision);
    const out = deepClone(obj);
    out.metadata.resourceVersion = String(deleted.modRevision);
    await this.strategy.afterDelete?.(out);
    return out;
  }

  // ---- delete -------------------------------------------------------------------------------

  /**
   * Deletes gracefully or at once, as upstream: finalizers hold an object with a deletionTimestamp;
   * a graceful resource (pods on a node) gets deletionTimestamp = now + grace and waits for its owner.
   * Returns the object and whether it is gone from storage.
   */
  async delete(namespace: string, name: string, options: DeleteOptions, opts: WriteOptions): Promise<{ object: StoredObject; deleted: boolean }> {
    const key = this.keyFor(namespace, name);
    for (let attempt = 0; ; attempt++) {
      const kv = await this.deps.store.get(key);
      if (!kv) throw notFound(this.qualified, name);
      const current = this.decode(kv);
      const pre = options.preconditions;
      if (pre?.uid && pre.uid !== current.metadata.uid) {
        throw conflict(this.qualified, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`);
      }
      if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
        throw conflict(
          this.qualified,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
        );
      }
      if (attempt === 0) {
        const admit = { resource: this.info, subresource: '', namespace, name, oldObject: current, user: opts.user, dryRun: opts.dryRun, warnings: opts.warnings, annotate: opts.annotate };
        await this.deps.admitter.mutate('DELETE', admit);
        await this.deps.admitter.validate('DELETE', admit);
        if (!opts.dryRun) opts.timeline?.deleteRequested(current, options.gracePeriodSeconds, opts.user);
      }
      const plan = this.planDelete(current, options);
      if (plan.kind === 'now') {
        if (opts.dryRun) return { object: current, deleted: true };
        try {
          return { object: await this.deleteNow(key, kv, current), deleted: true };
        } catch (err) {
          if (isStorageError(err, 'Conflict') && attempt < maxUpdateRetries) continue;
          if (isStorageError(err, 'NotFound')) throw notFound(this.qualified, name);
          throw err;
        }
      }
      if (plan.kind === 'unchanged' || opts.dryRun) return { object: plan.kind === 'unchanged' ? current : plan.object, deleted: false };
      try {
        const written = await this.deps.store.update(key, this.encode(plan.object), kv.modRevision);
        return { object: this.decode(written), deleted: false };
      } catch (err) {
        if (isStorageError(err, 'Conflict') && attempt < maxUpdateRetries) continue;
        if (isStorageError(err, 'NotFound')) throw notFound(this.qualified, name);
        throw err;
      }
    }
  }

  private planDelete(current: StoredObject, options: DeleteOptions): { kind: 'now' } | { kind: 'unchanged' } | { kind: 'mark'; object: StoredObject } {
    const now = this.deps.clock.now();
    const obj = deepClone(current);
    const meta = obj.metadata;
    const finalizers = new Set(meta.finalizers ?? []);
    // orphanDependents=false is a Background delete, as upstream reads it.
    const explicit = options.propagationPolicy ?? (options.orphanDependents === undefined ? undefined : options.orphanDependents ? 'Orphan' : 'Background');
    // With no policy named, a GC finalizer already set decides, else the kind's default.
    const gcFinalizer = finalizers.has('orphan') || finalizers.has('foregroundDeletion');
    const policy = explicit ?? (gcFinalizer ? undefined : this.strategy.defaultGarbageCollectionPolicy);
    // Orphan and Foreground hand the object to the garbage collector through its finalizers.
    if (policy === 'Orphan') finalizers.add('orphan');
    if (policy === 'Foreground') finalizers.add('foregroundDeletion');
    if (policy === 'Background') {
      finalizers.delete('orphan');
      finalizers.delete('foregroundDeletion');
    }
    const finalizerList = [...finalizers];

    const graceful = this.strategy.gracefulDelete?.(current, options.gracePeriodSeconds);
    let grace = graceful?.gracePeriodSeconds ?? 0;
    if (meta.deletionTimestamp) {
      // Already terminating: a delete may only shorten the remaining grace.
      const existing = meta.deletionGracePeriodSeconds ?? 0;
      if (graceful === undefined || grace >= existing) {
        if (stableEqual(finalizerList, meta.finalizers ?? [])) return { kind: 'unchanged' };
        grace = existing;
      }
    }
    if (grace === 0 && finalizerList.length === 0 && !this.strategy.holdsDeletion?.(current)) return { kind: 'now' };
    if (!meta.deletionTimestamp || grace < (meta.deletionGracePeriodSeconds ?? 0)) {
      meta.deletionTimestamp = rfc3339(now + grace * 1000);
      meta.deletionGracePeriodSeconds = grace;
      this.strategy.markDeleting?.(obj);
    }
    if (finalizerList.length) meta.finalizers = finalizerList;
    else delete meta.finalizers;
    if (this.strategy.tracksGeneration) meta.generation = (meta.generation ?? 1) + 1;
    return { kind: 'mark', object: obj };
  }
}

function specOf(obj: KubeObject): unknown {
  // Everything but metadata and status counts as spec for generation (ConfigMap data, Role rules, ...).
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

export function decodeStored(kv: KeyValue): StoredObject {
  const obj = JSON.parse(kv.value) as StoredObject;
  obj.metadata ??= {};
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}

/** Upstream's versioner: strconv.ParseUint, a failure being list's 400 (watch answers it as a 422). */
export function parseResourceVersion(rv: string): number {
  const why = resourceVersionSyntaxError(rv);
  if (why) throw badRequest(`invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: ${why}`);
  return Number(rv);
}

/** Go's strconv.ParseUint(rv, 10, 64) error text, or undefined for a valid resourceVersion. */
export function resourceVersionSyntaxError(rv: string): string | undefined {
  if (!/^\d+$/.test(rv)) return `strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`;
  if (BigInt(rv) >= 2n ** 64n) return `strconv.ParseUint: parsing ${JSON.stringify(rv)}: value out of range`;
  return undefined;
}

function tooLargeResourceVersion(requested: number, current: number): StatusError {
  return new StatusError(504, 'Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge' as never, message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

function continueExpired(): StatusError {
  return new StatusError(
    410,
    'Expired',
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
}

