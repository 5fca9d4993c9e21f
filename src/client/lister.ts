// Listers as client-go's tools/cache listers: reads from an informer's cache, by namespace and by
// label selector, never from the API server. The objects are the cache's own: callers must not
// mutate them (clone before changing one, as upstream's DeepCopy).
import { everything, type Selector } from '../api/labels.js';
import { namespaceIndex, type Indexer, type MetaObject } from './indexer.js';

export class Lister<T extends MetaObject> {
  constructor(private readonly indexer: Indexer<T>) {}

  /** Every cached object the selector matches (all namespaces). */
  list(selector: Selector = everything()): T[] {
    const all = this.indexer.list();
    return selector.empty() ? all : all.filter((o) => selector.matches(o.metadata?.labels));
  }

  /** A cluster-scoped object by name. */
  get(name: string): T | undefined {
    return this.indexer.getByKey(name);
  }

  /** Objects whose index function yields value (e.g. pods by node name). */
  byIndex(indexName: string, value: string): T[] {
    return this.indexer.byIndex(indexName, value);
  }

  namespace(namespace: string): NamespaceLister<T> {
    return new NamespaceLister(this.indexer, namespace);
  }
}

export class NamespaceLister<T extends MetaObject> {
  constructor(
    private readonly indexer: Indexer<T>,
    readonly namespace: string,
  ) {}

  list(selector: Selector = everything()): T[] {
    const inNamespace = this.indexer.byIndex(namespaceIndex, this.namespace);
    return selector.empty() ? inNamespace : inNamespace.filter((o) => selector.matches(o.metadata?.labels));
  }

  get(name: string): T | undefined {
    return this.indexer.getByKey(`${this.namespace}/${name}`);
  }
}
