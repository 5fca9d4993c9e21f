// EtcdStore: the Store contract on a real etcd v3 cluster, the way upstream's etcd3 storage uses it.
// Every Store key lives at `prefix + key`; writes are transactions comparing the key's create or
// mod revision, so etcd's global revision is the resourceVersion unchanged.
import { castGrpcError, Etcd3, GRPCDeadlineExceededError, GRPCUnavailableError, Range, type IKeyValue, type IRequestOp, type IWatchResponse } from 'etcd3';
import { pageLimit, StorageError, valueFromBytes, valueToBytes, type KeyValue, type ListOptions, type ListResult, type Store, type WatchEvent, type WatchOptions, type WatchSink } from '../store.js';

export interface EtcdStoreOptions {
  /** host:port of each member. */
  endpoints: string[];
  /**
   * Prepended to every key in etcd, so several users can share one cluster. Store keys start with
   * '/', so prefixes '/a' and '/a-b' only overlap for a list of the empty prefix.
   */
  prefix?: string;
}

/** Translates etcd and transport failures into StorageErrors; anything else is a bug and passes through. */
function storageError(err: unknown, key: string): unknown {
  if (err instanceof StorageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (message.includes('required revision has been compacted')) return new StorageError('Compacted', key, message);
  if (message.includes('required revision is a future revision')) return new StorageError('TooLarge', key, message);
  // etcd refuses requests above --max-request-bytes; gRPC refuses larger messages before etcd sees them.
  if (message.includes('request is too large') || message.includes('larger than max')) return new StorageError('TooLarge', key, message);
  // The client's circuit breaker (cockatiel's BrokenCircuitError) refuses calls to a host that keeps failing.
  const transport = err instanceof GRPCUnavailableError || err instanceof GRPCDeadlineExceededError || (err instanceof Error && 'isBrokenCircuitError' in err);
  if (transport) return new StorageError('Unavailable', key, `etcd unavailable: ${message}`);
  return err;
}

/** A one-key range: cheap anywhere, for reading the revision in a response header. */
const PROBE = Buffer.from([0]);

export class EtcdStore implements Store {
  readonly synchronousWatch = false;
  private readonly client: Etcd3;
  private readonly prefix: string;
  private readonly watches = new Set<(err?: Error) => void>();

  constructor(opts: EtcdStoreOptions) {
    this.client = new Etcd3({
      hosts: opts.endpoints.map((e) => `http://${e}`),
      // A full list easily exceeds gRPC's 4 MiB default; etcd itself bounds what it sends.
      grpcOptions: { 'grpc.max_receive_message_length': -1 },
    });
    this.prefix = opts.prefix ?? '';
  }

  get(key: string): Promise<KeyValue | undefined> {
    return this.call(key, async () => {
      const res = await this.client.kv.range({ key: this.full(key) });
      return res.kvs.length ? this.toKeyValue(res.kvs[0]) : undefined;
    });
  }

  list(opts: ListOptions): Promise<ListResult> {
    return this.call(opts.prefix, async () => {
      const range = Range.prefix(this.full(opts.prefix));
      const after = opts.startAfter === undefined ? undefined : this.full(opts.startAfter + '\0');
      const start = after && Buffer.compare(after, range.start) > 0 ? after : range.start;
      const limit = pageLimit(opts.limit);
      const res = await this.client.kv.range({ key: start, range_end: range.end, limit, revision: opts.revision || 0 });
      const items = res.kvs.map((kv) => this.toKeyValue(kv));
      return { items, revision: opts.revision || Number(res.header.revision), more: res.more, remaining: Number(res.count) - items.length };
    });
  }

  create(key: string, value: string): Promise<KeyValue> {
    return this.call(key, async () => {
      const res = await this.txn(key, { target: 'Create', create_revision: 0 }, { request_put: { key: this.full(key), value: valueToBytes(value) } });
      if (!res.succeeded) throw new StorageError('KeyExists', key, undefined, res.found && this.toKeyValue(res.found));
      const rev = Number(res.revision);
      return { key, value, createRevision: rev, modRevision: rev };
    });
  }

  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    return this.call(key, async () => {
      const put = { request_put: { key: this.full(key), value: valueToBytes(value), prev_kv: true } };
      const res = await this.txn(key, { target: 'Mod', mod_revision: expectedModRevision }, put);
      if (!res.succeeded) throw this.casFailure(key, res.found, expectedModRevision);
      const prev = res.responses[0].response_put.prev_kv;
      return { key, value, createRevision: Number(prev.create_revision), modRevision: res.revision };
    });
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.call(key, async () => {
      const del = { request_delete_range: { key: this.full(key), prev_kv: true } };
      // Without a precondition, "the key exists" is the comparison, so a missing key reads NotFound.
      const cmp = expectedModRevision === undefined ? { target: 'Create' as const, result: 'Greater' as const, create_revision: 0 } : { target: 'Mod' as const, mod_revision: expectedModRevision };
      const res = await this.txn(key, cmp, del);
      if (!res.succeeded) throw this.casFailure(key, res.found, expectedModRevision);
      const prev = res.responses[0].response_delete_range.prev_kvs[0];
      return { key, value: valueFromBytes(prev.value), createRevision: Number(prev.create_revision), modRevision: res.revision };
    });
  }

  watch(opts: WatchOptions, sink: WatchSink): void {
    let done = false;
    let cancel = () => {};
    const end = (err?: Error) => {
      if (done) return;
      done = true;
      this.watches.delete(end);
      opts.signal.removeEventListener('abort', onAbort);
      cancel();
      sink.end(err);
    };
    const onAbort = () => end();
    if (opts.signal.aborted) {
      queueMicrotask(onAbort);
      return;
    }
    opts.signal.addEventListener('abort', onAbort, { once: true });
    this.watches.add(end);
    const range = Range.prefix(this.full(opts.prefix));
    let last = opts.afterRevision;
    this.client.watchClient.watch().then(
      (stream) => {
        cancel = () => stream.cancel();
        if (done) return cancel();
        stream.on('data', (res: IWatchResponse) => {
          if (done) return;
          if (res.created) sink.synced?.();
          if (res.canceled) {
            const compacted = Number(res.compact_revision) > 0;
            const reason = compacted ? `revision ${opts.afterRevision} is compacted (below ${res.compact_revision})` : `watch canceled: ${res.cancel_reason}`;
            return end(new StorageError(compacted ? 'Compacted' : 'Unavailable', opts.prefix, reason));
          }
          for (const ev of res.events) {
            const e = this.toEvent(ev.type, ev.kv, ev.prev_kv);
            if (e.revision <= last) continue;
            last = e.revision;
            try {
              sink.event(e);
            } catch (err) {
              return end(err as Error);
            }
          }
        });
        // Stream errors arrive as raw gRPC errors; unary calls get them typed by the client.
        stream.on('error', (err) => {
          const mapped = storageError(castGrpcError(err), opts.prefix);
          // A broken stream is one to re-watch, whatever gRPC calls it (UNAVAILABLE, or INTERNAL for a reset).
          end(mapped instanceof StorageError ? mapped : new StorageError('Unavailable', opts.prefix, `etcd watch stream broke: ${err.message}`));
        });
        stream.on('end', () => end(new StorageError('Unavailable', opts.prefix, 'etcd ended the watch stream')));
        // Starting at afterRevision itself (not +1) makes etcd refuse exactly when afterRevision is
        // compacted, as the SQLite store does; the event at afterRevision is skipped above.
        stream.write({ create_request: { key: range.start, range_end: range.end, start_revision: Math.max(opts.afterRevision, 1), prev_kv: true } });
      },
      (err) => end(storageError(err, opts.prefix) as Error),
    );
  }

  currentRevision(): Promise<number> {
    return this.call('', async () => {
      const res = await this.client.kv.range({ key: PROBE, count_only: true });
      return Number(res.header.revision);
    });
  }

  compact(revision: number): Promise<void> {
    return this.call('', async () => {
      try {
        await this.client.kv.compact({ revision });
      } catch (err) {
        // Compacting to a revision that is already compacted changes nothing, as in the SQLite store.
        if (!String((err as Error).message).includes('required revision has been compacted')) throw err;
      }
    });
  }

  /** etcd does not report its compacted revision, so find the lowest readable one by bisection. */
  compactedRevision(): Promise<number> {
    return this.call('', async () => {
      const readable = (revision: number) =>
        this.client.kv.range({ key: PROBE, count_only: true, revision }).then(
          () => true,
          (err) => {
            if (String(err.message).includes('required revision has been compacted')) return false;
            throw err;
          },
        );
      if (await readable(1)) return 0;
      let lo = 1; // unreadable
      let hi = await this.currentRevision(); // readable
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (await readable(mid)) hi = mid;
        else lo = mid;
      }
      return hi;
    });
  }

  async close(): Promise<void> {
    for (const end of [...this.watches]) end(new StorageError('Unavailable', '', 'store closed'));
    this.client.close();
  }

  private full(key: string): Buffer {
    return Buffer.from(this.prefix + key);
  }

  private toKeyValue(kv: IKeyValue): KeyValue {
    return {
      key: kv.key.toString().slice(this.prefix.length),
      value: valueFromBytes(kv.value),
      createRevision: Number(kv.create_revision),
      modRevision: Number(kv.mod_revision),
    };
  }

  private toEvent(type: 'Put' | 'Delete', kv: IKeyValue, prev: IKeyValue | undefined): WatchEvent {
    const prevKv = prev ? this.toKeyValue(prev) : undefined;
    const revision = Number(kv.mod_revision);
    if (type === 'Put') return { type: 'put', kv: this.toKeyValue(kv), prevKv, revision };
    // etcd's delete event carries an empty tombstone; the contract wants the last value in kv.
    const key = kv.key.toString().slice(this.prefix.length);
    return { type: 'delete', kv: { key, value: prevKv?.value ?? '', createRevision: prevKv?.createRevision ?? 0, modRevision: revision }, prevKv, revision };
  }

  /** If `compare` holds for key: `then`; otherwise read the key, so the caller can say what it found. */
  private async txn(key: string, compare: { target: 'Create' | 'Mod'; result?: 'Equal' | 'Greater'; create_revision?: number; mod_revision?: number }, then: IRequestOp) {
    const res = await this.client.kv.txn({
      compare: [{ result: 'Equal', ...compare, key: this.full(key) }],
      success: [then],
      failure: [{ request_range: { key: this.full(key) } }],
    });
    return {
      succeeded: res.succeeded,
      revision: Number(res.header.revision),
      responses: res.responses,
      found: res.succeeded ? undefined : res.responses[0].response_range.kvs[0],
    };
  }

  private casFailure(key: string, found: IKeyValue | undefined, expected: number | undefined): StorageError {
    if (!found) return new StorageError('NotFound', key);
    const current = this.toKeyValue(found);
    return new StorageError('Conflict', key, `modRevision is ${current.modRevision}, not ${expected}`, current);
  }

  private async call<T>(key: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw storageError(err, key);
    }
  }
}
