// The storage contract: an etcd-shaped key-value store with one global revision.
// Only the API server uses it; the revision of an object's last write is its resourceVersion.

/** The mark of an encrypted value (storage/value): what follows its provider's prefix is raw bytes. */
export const encryptedValueMarker = 'k8s:enc:';

/**
 * A value's bytes as a backend stores them. Values are JSON text (UTF-8), but an encrypted one is
 * bytes carried one char per byte (latin1), so etcd holds upstream's very bytes and each side reads the other's.
 */
export function valueToBytes(value: string): Buffer {
  return Buffer.from(value, value.startsWith(encryptedValueMarker) ? 'latin1' : 'utf8');
}

/** valueToBytes's inverse. */
export function valueFromBytes(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const encrypted = buf.subarray(0, encryptedValueMarker.length).toString('latin1') === encryptedValueMarker;
  return buf.toString(encrypted ? 'latin1' : 'utf8');
}

/** One stored key at one revision. `value` is the serialized object (JSON text). */
export interface KeyValue {
  key: string;
  value: string;
  /** Revision of the write that created this key (the start of its current life). */
  createRevision: number;
  /** Revision of the last write to this key: the object's resourceVersion. */
  modRevision: number;
  /** Encrypted with a key that no longer writes (storage/value): an update writes it even when unchanged. */
  stale?: boolean;
}

export interface ListOptions {
  /** Keys starting with this prefix. */
  prefix: string;
  /** Only keys strictly greater than this one (continue tokens resume here). */
  startAfter?: string;
  /** At most this many items; `more` tells whether some were left. 0 or absent: all. */
  limit?: number;
  /** Read as of this revision (consistent paging); absent: the current revision. */
  revision?: number;
}

export interface ListResult {
  items: KeyValue[];
  /** The revision the list was read at. */
  revision: number;
  /** True when items past the last returned one exist. */
  more: boolean;
  /** How many items are left after this page when known (for remainingItemCount). */
  remaining?: number;
}

export type WatchEventType = 'put' | 'delete';

export interface WatchEvent {
  type: WatchEventType;
  /** For put: the new value. For delete: the key with the revision of the deletion and the last value. */
  kv: KeyValue;
  /** The value before this event, if the key existed. */
  prevKv?: KeyValue;
  /** The revision of this event (kv.modRevision for puts, the deletion's revision for deletes). */
  revision: number;
}

export interface WatchOptions {
  prefix: string;
  /** Deliver every event with revision > afterRevision, replaying history first. */
  afterRevision: number;
  signal: AbortSignal;
}

/** Handed to a watch consumer: events in revision order, then `end(err)` exactly once. */
export interface WatchSink {
  event(e: WatchEvent): void;
  /** The watch ended; `err` is a StorageError (e.g. Compacted) or undefined when aborted. */
  end(err?: Error): void;
  /** History up to the start is delivered; from now on events are live. */
  synced?(): void;
}

export interface Store {
  /**
   * Live watch events are delivered before the write that caused them resolves (an in-process store),
   * so a synced watcher is current with every revision the store has reported.
   */
  readonly synchronousWatch: boolean;
  /** Current value of key, or undefined. */
  get(key: string): Promise<KeyValue | undefined>;
  list(opts: ListOptions): Promise<ListResult>;
  /** Fails with StorageError 'KeyExists' if the key is present. */
  create(key: string, value: string): Promise<KeyValue>;
  /**
   * Compare-and-swap: writes only if the key's modRevision is still `expectedModRevision`.
   * Fails with 'Conflict' (carrying the current value) or 'NotFound'.
   */
  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue>;
  /**
   * Deletes the key, only if its modRevision is `expectedModRevision` when given.
   * Returns the deleted value with modRevision set to the deletion's revision.
   */
  delete(key: string, expectedModRevision?: number): Promise<KeyValue>;
  /** Starts a watch; events arrive on sink in revision order. Fails fast (sink.end) if afterRevision is compacted. */
  watch(opts: WatchOptions, sink: WatchSink): void;
  /** The newest revision (of any write, anywhere). */
  currentRevision(): Promise<number>;
  /** Drops history at and below `revision` (keeps current values). */
  compact(revision: number): Promise<void>;
  /** The revision below which reads and watches answer Compacted. */
  compactedRevision(): Promise<number>;
  close(): Promise<void>;
}

export type StorageErrorCode = 'KeyExists' | 'NotFound' | 'Conflict' | 'Compacted' | 'Unavailable' | 'TooLarge';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message?: string,
    /** For Conflict: the value found instead. */
    readonly current?: KeyValue,
  ) {
    super(message ?? `${code}: ${key}`);
    this.name = 'StorageError';
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}

/**
 * ListOptions.limit as a backend can pass it on: 0 for none; else a whole number no larger than a
 * double holds exactly (the API allows any int64, and a page that large is "everything" anyway).
 */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !(limit >= 1)) return 0;
  return Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER - 1);
}
