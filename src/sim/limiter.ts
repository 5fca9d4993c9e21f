// A bound on requests in flight, shared by everything one simulator process sends (registration,
// leases, status patches, events), so thousands of simulated kubelets queue here instead of
// opening thousands of concurrent requests against the API server.
//
// Freed slots go to waiting work by priority: object writes (registration, status, deletion) first,
// so a burst of pods is not held up behind 500 lease renewals a second; then leases (a renewal
// waiting longer is simply late, and the next one is skipped while it waits); events last.
export type Priority = 'write' | 'lease' | 'event';
const priorities: readonly Priority[] = ['write', 'lease', 'event'];

export class Limiter {
  private active = 0;
  private waiting: Record<Priority, (() => void)[]> = { write: [], lease: [], event: [] };

  constructor(private readonly max: number) {}

  async run<T>(fn: () => Promise<T>, priority: Priority = 'write'): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((resolve) => this.waiting[priority].push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      // Hand the slot straight to the next waiter, or free it.
      const next = this.nextWaiter();
      if (next) next();
      else this.active--;
    }
  }

  /** Callers waiting for a slot. */
  queued(): number {
    return priorities.reduce((n, p) => n + this.waiting[p].length, 0);
  }

  private nextWaiter(): (() => void) | undefined {
    for (const p of priorities) if (this.waiting[p].length > 0) return this.waiting[p].shift();
    return undefined;
  }
}
