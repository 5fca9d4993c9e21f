// guaranteedUpdate: read-modify-write with optimistic concurrency, as upstream's storage.Interface
// builds every update on. A Conflict hands back the value that won, so a retry needs no extra read.
import { isStorageError, StorageError, type KeyValue, type Store } from './store.js';

/**
 * Computes the new value from the current one (undefined: the key is absent). Throwing aborts the
 * update with that error; returning the current value unchanged writes nothing.
 */
export type TryUpdate = (current: KeyValue | undefined) => string | Promise<string>;

export interface GuaranteedUpdateOptions {
  /** Create the key when it is absent; otherwise an absent key fails with NotFound. */
  ignoreNotFound?: boolean;
  /** A possibly stale copy (e.g. from the watch cache) to try first instead of reading. */
  cached?: KeyValue;
  /** Attempts before the last Conflict is thrown (default 10). */
  maxAttempts?: number;
}

export async function guaranteedUpdate(store: Store, key: string, tryUpdate: TryUpdate, opts: GuaranteedUpdateOptions = {}): Promise<KeyValue> {
  const maxAttempts = opts.maxAttempts ?? 10;
  let current = opts.cached ?? (await store.get(key));
  let fresh = opts.cached === undefined;
  let lastConflict: StorageError | undefined;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (!current && !opts.ignoreNotFound) throw new StorageError('NotFound', key);
    const next = await tryUpdate(current);
    if (current && next === current.value && !current.stale) {
      if (fresh) return current;
      // "No change" judged against a stale copy proves nothing: judge again against storage.
      current = await store.get(key);
      fresh = true;
      continue;
    }
    try {
      return current ? await store.update(key, next, current.modRevision) : await store.create(key, next);
    } catch (err) {
      if (isStorageError(err, 'Conflict') || isStorageError(err, 'KeyExists')) {
        lastConflict = err;
        current = err.current ?? (await store.get(key));
      } else if (isStorageError(err, 'NotFound')) {
        current = undefined;
      } else {
        throw err;
      }
      fresh = true;
    }
  }
  throw lastConflict ?? new StorageError('Conflict', key, `no stable value after ${maxAttempts} attempts`);
}
