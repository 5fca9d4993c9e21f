// Keeps containerd up for the kubelet: checks it every interval and restarts it when it is gone,
// backing off exponentially while restarts keep failing or containerd keeps dying soon after.
import type { Clock } from '../../util/clock.js';

/** What the supervisor needs from containerd (Containerd implements it; tests use a fake). */
export interface SupervisedDaemon {
  healthy(): Promise<boolean>;
  /** Starts (or adopts) the daemon; resolves when it is ready. */
  start(): Promise<unknown>;
}

export type SupervisorEvent =
  | { type: 'unhealthy' }
  | { type: 'restarted'; attempt: number }
  | { type: 'restartFailed'; attempt: number; error: unknown; retryInMs: number };

export interface SupervisorOptions {
  clock: Clock;
  checkIntervalMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Healthy this long after a restart, the backoff starts over. */
  backoffResetMs?: number;
  onEvent?: (e: SupervisorEvent) => void;
}

type State = 'stopped' | 'watching' | 'restarting';

export class Supervisor {
  private state: State = 'stopped';
  private abort: AbortController | undefined;
  private loop: Promise<void> | undefined;
  /** Restarts since containerd was last healthy for backoffResetMs. */
  private attempts = 0;
  private healthySince: number | undefined;

  constructor(
    private readonly target: SupervisedDaemon,
    private readonly opts: SupervisorOptions,
  ) {}

  get current(): State {
    return this.state;
  }

  start(): void {
    if (this.loop) return;
    this.abort = new AbortController();
    this.state = 'watching';
    this.loop = this.run(this.abort.signal).catch((err: unknown) => {
      if (!this.abort?.signal.aborted) throw err;
    });
  }

  async stop(): Promise<void> {
    this.abort?.abort(new Error('supervisor stopped'));
    await this.loop;
    this.loop = undefined;
    this.state = 'stopped';
  }

  private backoff(): number {
    const init = this.opts.backoffInitialMs ?? 1_000;
    return Math.min(init * 2 ** Math.max(0, this.attempts - 1), this.opts.backoffMaxMs ?? 30_000);
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { clock } = this.opts;
    const interval = this.opts.checkIntervalMs ?? 1_000;
    while (!signal.aborted) {
      await clock.sleep(interval, signal);
      if (await this.target.healthy()) {
        this.healthySince ??= clock.now();
        if (clock.now() - this.healthySince >= (this.opts.backoffResetMs ?? 60_000)) this.attempts = 0;
        continue;
      }
      if (signal.aborted) return;
      this.healthySince = undefined;
      this.opts.onEvent?.({ type: 'unhealthy' });
      // Died again soon after the last restart: wait before the next one.
      if (this.attempts > 0) await clock.sleep(this.backoff(), signal);
      this.attempts++;
      this.state = 'restarting';
      try {
        await this.target.start();
        this.opts.onEvent?.({ type: 'restarted', attempt: this.attempts });
      } catch (error) {
        if (signal.aborted) return;
        this.opts.onEvent?.({ type: 'restartFailed', attempt: this.attempts, error, retryInMs: interval + this.backoff() });
      }
      this.state = 'watching';
    }
  }
}
