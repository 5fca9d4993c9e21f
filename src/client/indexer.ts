// The informer's local cache, as client-go's thread_safe_store + index: objects by key
// (`namespace/name`, or `name` for cluster-scoped objects) plus secondary indexes kept in step with
// every write, so listers answer "pods on node X" or "pods in namespace Y" without a scan.
import type { ObjectMeta } from '../api/meta.js';

/** Any API object, kubernetes-types' interfaces included (MetaObject's index signature would exclude them). */
export interface MetaObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** The values an object is indexed under (e.g. its namespace, its node name). */
export type IndexFunc<T> = (obj: T) => string[];
export type KeyFunc<T> = (obj: T) => string;

export const namespaceIndex = 'namespace';

/**
 * What a delete handler receives when the informer missed the delete (it saw the object vanish
 * on a relist): the last known state, which may be stale.
 */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

/** The deleted object a delete handler was given, or the last known state of one the informer missed. */
export const unwrapDeleted = <T>(obj: T | DeletedFinalStateUnknown<T>): T => (obj instanceof DeletedFinalStateUnknown ? obj.obj : obj);

export function metaNamespaceKeyFunc(obj: MetaObject | DeletedFinalStateUnknown<unknown>): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const parts = key.split('/');
  if (parts.length === 1) return { namespace: '', name: key };
  if (parts.length === 2) return { namespace: parts[0]!, name: parts[1]! };
  throw new Error(`unexpected key format: "${key}"`);
}

export const metaNamespaceIndexFunc: IndexFunc<MetaObject> = (obj) => [obj.metadata?.namespace ?? ''];

export class Indexer<T extends MetaObject = MetaObject> {
  private items = new Map<string, T>();
  // index name → indexed value → keys
  private indices = new Map<string, Map<string, Set<string>>>();
  private indexers = new Map<string, IndexFunc<T>>();

  constructor(
    indexers: Record<string, IndexFunc<T>> = { [namespaceIndex]: metaNamespaceIndexFunc },
    readonly keyFunc: KeyFunc<T> = metaNamespaceKeyFunc,
  ) {
    this.addIndexers(indexers);
  }

  /** Adds indexes, built over the current contents; an existing name is an error, as upstream. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexers.has(name)) throw new Error(`indexer conflict: ${name}`);
      this.indexers.set(name, fn);
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) addToIndex(index, fn(obj), key);
    }
  }

  hasIndex(indexName: string): boolean {
    return this.indexers.has(indexName);
  }

  /** Adds or replaces the object under its key. */
  add(obj: T): void {
    const key = this.keyFunc(obj);
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.reindex(key, old, obj);
  }

  update(obj: T): void {
    this.add(obj);
  }

  delete(obj: T): void {
    this.deleteKey(this.keyFunc(obj));
  }

  deleteKey(key: string): void {
    const old = this.items.get(key);
    if (!old) return;
    this.items.delete(key);
    this.reindex(key, old, undefined);
  }

  /** Swaps the whole content at once (a relist). */
  replace(objs: readonly T[]): void {
    this.items = new Map(objs.map((o) => [this.keyFunc(o), o]));
    for (const [name, fn] of this.indexers) {
      const index = new Map<string, Set<string>>();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) addToIndex(index, fn(obj), key);
    }
  }

  get(obj: T): T | undefined {
    return this.items.get(this.keyFunc(obj));
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  /** Objects whose index function yields `value`. */
  byIndex(indexName: string, value: string): T[] {
    return this.indexKeys(indexName, value).map((k) => this.items.get(k)!);
  }

  indexKeys(indexName: string, value: string): string[] {
    return [...(this.index(indexName).get(value) ?? [])];
  }

  /** Every value the index currently holds. */
  listIndexFuncValues(indexName: string): string[] {
    return [...this.index(indexName).keys()];
  }

  private index(indexName: string): Map<string, Set<string>> {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`Index with name ${indexName} does not exist`);
    return index;
  }

  private reindex(key: string, old: T | undefined, cur: T | undefined): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      const oldValues = old ? fn(old) : [];
      const newValues = cur ? fn(cur) : [];
      // The common update leaves the indexed value alone: skip the churn.
      if (oldValues.length === 1 && newValues.length === 1 && oldValues[0] === newValues[0]) continue;
      for (const v of oldValues) {
        const set = index.get(v);
        set?.delete(key);
        if (set?.size === 0) index.delete(v);
      }
      addToIndex(index, newValues, key);
    }
  }
}

function addToIndex(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const v of values) {
    let set = index.get(v);
    if (!set) index.set(v, (set = new Set()));
    set.add(key);
  }
}
