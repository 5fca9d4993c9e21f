// Tasks repeated on the injected clock (the clock only has one-shot timers): `every` for a quick
// synchronous call, Periodic for async work, each run a period after the previous one ended, as
// upstream's wait.Until: a slow run never overlaps the next.
import type { Clock, Timer } from './clock.js';

/** Calls fn every ms until the returned timer is cancelled. */
export function every(clock: Clock, ms: number, fn: () => void): Timer {
  let timer: Timer;
  let cancelled = false;
  const tick = () => {
    if (cancelled) return;
    fn();
    if (!cancelled) timer = clock.setTimer(ms, tick);
  };
  timer = clock.setTimer(ms, tick);
  return {
    cancel: () => {
      cancelled = true;
      timer.cancel();
    },
  };
}

export interface PeriodicOptions {
  clock: Clock;
  periodMs: number;
  run: () => Promise<unknown>;
  /** A failed run is reported here; the loop goes on. */
  onError: (err: unknown) => void;
}

export class Periodic {
  private timer?: Timer;
  private inFlight?: Promise<void>;
  private stopped = true;

  constructor(private readonly opts: PeriodicOptions) {}

  /** True until start() and again from stop(): a long run can check it to end early. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** The first run is a period from now. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Cancels the next run and waits for the one in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.inFlight;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.opts.clock.setTimer(this.opts.periodMs, () => {
      this.inFlight = Promise.resolve()
        .then(() => this.opts.run())
        .then(() => undefined, this.opts.onError)
        .finally(() => this.schedule());
    });
  }
}
