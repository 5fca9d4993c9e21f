// The timeline process's intake, held in the API server while the machine is busy. The child runs
// at the idle CPU policy, yet what it does during a burst (reading the channel, decoding batches,
// writing their rows, asking for pod facts) still slows the burst: an idle-class thread on the
// other core is not free here (docs/performance.md). So the API server's notes and the recorders'
// batches wait in the API server, as they came (a batch's answer, and so its recorder, waits with
// it), and go over in one go once the machine is less busy, after at most `maxHoldMs`, or before
// any read, watch or stop, which see everything sent before them. While a timeline is watched
// nothing is held: a watch follows steps as they arrive.
import type { Clock, Timer } from '../../util/clock.js';

export interface IntakeHoldOptions {
  clock: Clock;
  /** Whether the machine is busy now (called at most once per `sampleMs`). */
  busy: () => boolean;
  /** Sends a message to the child. */
  post: (message: unknown) => void;
  /** Whether a timeline is watched now: nothing is held then (its caller releases when a watch opens). */
  watched: () => boolean;
  /** How often to look at the machine while holding (default 250 ms). */
  sampleMs?: number;
  /** The longest a message waits (default 30 s). */
  maxHoldMs?: number;
  /** The most bytes held (batch bodies, and a rough 200 bytes a note; default 64 MiB). */
  maxHeldBytes?: number;
}

/** What goes into the child's store: held while the machine is busy. */
export type Intake = { bytes: number; message: unknown };

export class IntakeHold {
  private held?: unknown[];
  private heldBytes = 0;
  private heldSince = 0;
  private lastSample = -Infinity;
  private busy = false;
  private timer?: Timer;
  private readonly sampleMs: number;
  private readonly maxHoldMs: number;
  private readonly maxHeldBytes: number;

  constructor(private readonly opts: IntakeHoldOptions) {
    this.sampleMs = opts.sampleMs ?? 250;
    this.maxHoldMs = opts.maxHoldMs ?? 30_000;
    this.maxHeldBytes = opts.maxHeldBytes ?? 64 * 1024 * 1024;
  }

  /** Whether messages are being held now. */
  get holding(): boolean {
    return this.held !== undefined;
  }

  /** A note or batch: held while the machine is busy, else sent. */
  intake({ bytes, message }: Intake): void {
    if (!this.held) {
      if (this.opts.watched() || !this.sample()) return this.opts.post(message);
      this.held = [];
      this.heldBytes = 0;
      this.heldSince = this.opts.clock.now();
      this.schedule();
    }
    this.held.push(message);
    this.heldBytes += bytes;
    if (this.heldBytes >= this.maxHeldBytes) this.release();
  }

  /** Sends everything held, in order: before a read, a watch or a stop, so the child answers with it. */
  release(): void {
    this.timer?.cancel();
    this.timer = undefined;
    const held = this.held;
    this.held = undefined;
    for (const m of held ?? []) this.opts.post(m);
  }

  /** Whether the machine is busy, looked at again once `sampleMs` passed (the first look after a quiet spell averages over it). */
  private sample(): boolean {
    const now = this.opts.clock.now();
    if (now - this.lastSample >= this.sampleMs) {
      this.lastSample = now;
      this.busy = this.opts.busy();
    }
    return this.busy;
  }

  private schedule(): void {
    this.timer = this.opts.clock.setTimer(this.sampleMs, () => {
      this.timer = undefined;
      if (this.opts.clock.now() - this.heldSince >= this.maxHoldMs || !this.sample()) this.release();
      else this.schedule();
    });
  }
}
