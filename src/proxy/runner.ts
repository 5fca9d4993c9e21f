// Upstream's BoundedFrequencyRunner (pkg/util/async): run() asks for a run; runs are at least
// minIntervalMs apart (requests in between coalesce into one), at most maxIntervalMs apart (a
// periodic run even with no requests), never overlapping; retryAfter() asks for one no later than
// that. The first request after a quiet period runs at once.
import type { Clock, Timer } from '../util/clock.js';

export interface BoundedFrequencyRunnerOptions {
  clock: Clock;
  minIntervalMs: number;
  maxIntervalMs: number;
  fn: () => Promise<void>;
  onError: (err: unknown) => void;
}

export class BoundedFrequencyRunner {
  private lastStart = -Infinity;
  private timer?: Timer;
  private timerAt = Infinity;
  private inFlight?: Promise<void>;
  private pending = false;
  private stopped = true;

  constructor(private readonly opts: BoundedFrequencyRunnerOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.opts.maxIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.inFlight;
  }

  /** A run as soon as minIntervalMs allows. */
  run(): void {
    this.schedule(Math.max(0, this.lastStart + this.opts.minIntervalMs - this.opts.clock.now()));
  }

  /** A run within ms (sooner if one is already due). */
  retryAfter(ms: number): void {
    this.schedule(Math.max(ms, this.lastStart + this.opts.minIntervalMs - this.opts.clock.now()));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.inFlight) {
      this.pending = true;
      return;
    }
    const at = this.opts.clock.now() + delayMs;
    if (at >= this.timerAt) return;
    this.timer?.cancel();
    this.timerAt = at;
    this.timer = this.opts.clock.setTimer(delayMs, () => this.fire());
  }

  private fire(): void {
    this.timerAt = Infinity;
    this.timer = undefined;
    if (this.stopped) return;
    this.lastStart = this.opts.clock.now();
    this.inFlight = this.opts
      .fn()
      .catch(this.opts.onError)
      .finally(() => {
        this.inFlight = undefined;
        const again = this.pending;
        this.pending = false;
        this.schedule(this.opts.maxIntervalMs);
        if (again) this.run();
      });
  }
}
