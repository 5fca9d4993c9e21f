// Upstream's slowStartBatch, which the ReplicaSet, DaemonSet and Job controllers create pods with.

/** Upstream's SlowStartInitialBatchSize. */
export const SLOW_START_INITIAL_BATCH_SIZE = 1;

/**
 * Upstream's slowStartBatch: calls fn count times in batches of 1, 2, 4, ... (all of a batch at
 * once); a batch with an error ends it. Returns how many succeeded and the first error.
 */
export async function slowStartBatch(count: number, initialBatchSize: number, fn: () => Promise<void>): Promise<{ successes: number; error?: Error }> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    successes += batch - failed.length;
    if (failed.length) return { successes, error: failed[0]!.reason as Error };
    remaining -= batch;
  }
  return { successes };
}
