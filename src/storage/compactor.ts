// Periodic compaction, as the API server runs it: every interval, compact to the revision observed
// one interval earlier, so watchers and paged lists always have at least one interval of history.
import type { Clock } from '../util/clock.js';
import { Periodic } from '../util/periodic.js';
import type { Store } from './store.js';

export interface CompactorOptions {
  /** Default 5 minutes, upstream's --etcd-compaction-interval. */
  intervalMs?: number;
  /** A failed round is reported here; the next round tries again. */
  onError: (err: unknown) => void;
}

export class Compactor {
  private readonly rounds: Periodic;
  private observed = 0;

  constructor(
    private readonly store: Store,
    clock: Clock,
    opts: CompactorOptions,
  ) {
    this.rounds = new Periodic({ clock, periodMs: opts.intervalMs ?? 5 * 60_000, run: () => this.compactOnce(), onError: opts.onError });
  }

  start(): void {
    this.rounds.start();
  }

  /** Cancels the next round and waits for a running one to finish. */
  stop(): Promise<void> {
    return this.rounds.stop();
  }

  private async compactOnce(): Promise<void> {
    const now = await this.store.currentRevision();
    if (this.observed > 0) await this.store.compact(this.observed);
    this.observed = now;
  }
}
