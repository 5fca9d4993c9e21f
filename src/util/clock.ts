// An injected clock: everything that waits (backoffs, leases, probes, grace periods) takes one,
// so tests run in virtual time with FakeClock.

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once after ms; cancel() prevents it. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after ms, or rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      timer.cancel();
      reject(signal!.reason);
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Waits for work, at most ms on the clock: true when it ended in time (its rejection is thrown), false when the wait gave up; the timer goes either way. */
export async function within(clock: Clock, ms: number, work: Promise<unknown>): Promise<boolean> {
  const done = new AbortController();
  const expired = clock.sleep(ms, done.signal).then(
    () => false,
    () => true,
  );
  try {
    return await Promise.race([work.then(() => true), expired]);
  } finally {
    done.abort();
  }
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms, signal) {
    return sleepOn(realClock, ms, signal);
  },
};

/** Virtual time: nothing fires until advance() moves the clock past it. */
export class FakeClock implements Clock {
  private timers: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const entry = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(entry);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== entry)) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Number of timers waiting to fire. */
  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by ms, firing due timers in order and letting promise callbacks run between them. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.current = next.at;
      next.fn();
    }
    this.current = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}
