// A Store whose values pass through a Transformer (encryption at rest): what is written is sealed,
// what is read (get, list, watch events, a conflict's current value) is opened, so the registry and
// the watch cache above it only ever see plain objects.
import { StorageError, type KeyValue, type ListOptions, type ListResult, type Store, type WatchOptions, type WatchSink } from '../store.js';
import type { Transformer } from './transformer.js';

export class TransformingStore implements Store {
  constructor(
    private readonly inner: Store,
    private readonly transformer: Transformer,
  ) {}

  get synchronousWatch(): boolean {
    return this.inner.synchronousWatch;
  }

  private open(kv: KeyValue): KeyValue {
    // A delete event from etcd carries an empty tombstone value.
    if (kv.value === '') return kv;
    const { plain, stale } = this.transformer.fromStorage(kv.value, kv.key);
    return stale ? { ...kv, value: plain, stale } : { ...kv, value: plain };
  }

  /** A conflict carries the current value: the caller compares it as plain JSON. */
  private async opened<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (err) {
      if (err instanceof StorageError && err.current) throw new StorageError(err.code, err.key, err.message, this.open(err.current));
      throw err;
    }
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const kv = await this.inner.get(key);
    return kv && this.open(kv);
  }

  async list(opts: ListOptions): Promise<ListResult> {
    const result = await this.inner.list(opts);
    return { ...result, items: result.items.map((kv) => this.open(kv)) };
  }

  async create(key: string, value: string): Promise<KeyValue> {
    const kv = await this.opened(this.inner.create(key, this.transformer.toStorage(value, key)));
    return { ...kv, value };
  }

  async update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    const kv = await this.opened(this.inner.update(key, this.transformer.toStorage(value, key), expectedModRevision));
    return { ...kv, value };
  }

  async delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.open(await this.opened(this.inner.delete(key, expectedModRevision)));
  }

  watch(opts: WatchOptions, sink: WatchSink): void {
    let ended = false;
    this.inner.watch(opts, {
      event: (e) => {
        if (ended) return;
        let opened;
        try {
          opened = { ...e, kv: this.open(e.kv), prevKv: e.prevKv && this.open(e.prevKv) };
        } catch (err) {
          // A value no provider can read ends the watch, as a decode failure does upstream.
          ended = true;
          sink.end(err as Error);
          return;
        }
        sink.event(opened);
      },
      end: (err) => {
        if (!ended) sink.end(err);
        ended = true;
      },
      synced: sink.synced && (() => sink.synced!()),
    });
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  compactedRevision(): Promise<number> {
    return this.inner.compactedRevision();
  }

  /** The inner store is shared by every resource: its owner closes it. */
  async close(): Promise<void> {}
}
