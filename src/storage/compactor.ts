// Periodic compaction, as the API server runs it: every interval, compact to the revision observed
// one interval earlier, so watchers and paged lists always have at least one interval of history.
import type { Clock, Timer } from '../util/clock.js';
import type { Store } from './store.js';

export interface CompactorOptions {
  /** Default 5 minutes, upstream's --etcd-compaction-interval. */
  intervalMs?: number;
  /** A failed round is reported here; the next round tries again. */
  onError: (err: unknown) => void;
}

export class Compactor {
  private readonly intervalMs: number;
  private timer: Timer | undefined;
  private round: Promise<void> = Promise.resolve();
  private observed = 0;
  private stopped = true;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly opts: CompactorOptions,
  ) {
    this.intervalMs = opts.intervalMs ?? 5 * 60_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Cancels the next round and waits for a running one to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.round;
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(this.intervalMs, () => {
      this.round = this.compactOnce().then(() => {
        if (!this.stopped) this.schedule();
      });
    });
  }

  private async compactOnce(): Promise<void> {
    try {
      const now = await this.store.currentRevision();
      if (this.observed > 0) await this.store.compact(this.observed);
      this.observed = now;
    } catch (err) {
      this.opts.onError(err);
    }
  }
}
