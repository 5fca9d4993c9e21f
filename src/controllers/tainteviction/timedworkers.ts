// Upstream's TimedWorkerQueue (pkg/controller/tainteviction/timed_workers.go) on the injected clock:
// one piece of work per key, run no earlier than its fire time. Work due at once starts without a
// timer and holds its key until it finishes, so it is neither added twice nor cancelled; a worker
// leaves the queue when its work ends.
import type { Clock, Timer } from '../../util/clock.js';

export interface TimedWorker {
  /** When the work was scheduled (ms since the epoch). */
  createdAt: number;
  fireAt: number;
  /** Absent for work that started at once. */
  timer?: Timer;
}

export type WorkFunc = (key: string, fireAt: number) => Promise<void>;

export class TimedWorkerQueue {
  private readonly workers = new Map<string, TimedWorker>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly clock: Clock,
    private readonly work: WorkFunc,
    private readonly onError: (err: unknown, key: string) => void,
  ) {}

  /** Schedules work for key at fireAt unless the key already has some (which is kept). */
  addWork(key: string, createdAt: number, fireAt: number): void {
    if (this.workers.has(key)) return;
    const worker: TimedWorker = { createdAt, fireAt };
    this.workers.set(key, worker);
    const delay = fireAt - createdAt;
    if (delay <= 0) this.fire(key, worker);
    else worker.timer = this.clock.setTimer(delay, () => this.fire(key, worker));
  }

  /** Removes the key's work; true when it had a timer (work started at once is not cancelled). */
  cancelWork(key: string): boolean {
    const worker = this.workers.get(key);
    if (!worker) return false;
    this.workers.delete(key);
    worker.timer?.cancel();
    return worker.timer !== undefined;
  }

  /** The key's work if it was scheduled with a timer (upstream's GetWorkerUnsafe). */
  getWorker(key: string): TimedWorker | undefined {
    const worker = this.workers.get(key);
    return worker?.timer ? worker : undefined;
  }

  /** Cancels every scheduled work and waits for the running ones. */
  async cancelAndWait(): Promise<void> {
    for (const worker of this.workers.values()) worker.timer?.cancel();
    this.workers.clear();
    await Promise.all(this.running);
  }

  private fire(key: string, worker: TimedWorker): void {
    const done = this.work(key, worker.fireAt)
      .catch((err: unknown) => this.onError(err, key))
      .finally(() => {
        // Work added for the key since this one was cancelled stays.
        if (this.workers.get(key) === worker) this.workers.delete(key);
        this.running.delete(done);
      });
    this.running.add(done);
  }
}
