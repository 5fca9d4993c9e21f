// When the pod timelines' intake waits: step batches and the API server's own steps are the least
// urgent work its event loop has, and on a busy machine even the timeline process's idle-priority
// CPU slows the loop down. So while the loop is saturated (a burst of pods), the intake is held off:
// batches that ask first (`Expect: 100-continue`) are turned away before their bodies are sent, with
// a 429 and Retry-After as API Priority and Fairness answers for a saturated priority level, and the
// recorders keep their steps and send them a second later; the server's own steps wait in its queue.
// Nothing waits longer than `maxDeferMs` in a row, nor while someone watches timelines.
import type { Clock } from '../../util/clock.js';

/** How soon what was held asks again (the Retry-After of a batch turned away). */
export const heldRetryMs = 1000;

export interface IntakeThrottleOptions {
  clock: Clock;
  /** The event loop's busy share (0–1) since the previous call (eventLoopBusySampler). */
  loopBusy: () => number;
  /** Whether a client watches pod timelines now: then nothing waits. */
  watching: () => boolean;
  /** The busy share at which the intake waits (default 0.8). */
  threshold?: number;
  /** How long one look at the loop spans at least (default 500 ms). */
  sampleMs?: number;
  /** The longest the intake waits in a row (default 30 s): a load that lasts gets its timelines all the same. */
  maxDeferMs?: number;
}

export class IntakeThrottle {
  private busyShare = 0;
  private sampledAt: number;
  /** Since when the intake has been held off, without a break. */
  private deferringSince?: number;
  private readonly threshold: number;
  private readonly sampleMs: number;
  private readonly maxDeferMs: number;

  constructor(private readonly opts: IntakeThrottleOptions) {
    this.threshold = opts.threshold ?? 0.8;
    this.sampleMs = opts.sampleMs ?? 500;
    this.maxDeferMs = opts.maxDeferMs ?? 30_000;
    this.sampledAt = opts.clock.now();
  }

  /** Whether the intake should wait now. */
  defer(): boolean {
    const now = this.opts.clock.now();
    if (now - this.sampledAt >= this.sampleMs) {
      this.busyShare = this.opts.loopBusy();
      this.sampledAt = now;
    }
    if (this.busyShare < this.threshold || this.opts.watching()) {
      this.deferringSince = undefined;
      return false;
    }
    this.deferringSince ??= now;
    return now - this.deferringSince < this.maxDeferMs;
  }
}
