// One clock timer for many deadlines: a min-heap of (time, key) that arms a single timer for the
// earliest one. Thousands of simulated nodes and pods wait on it instead of holding a timer each.
import type { Clock, Timer } from '../util/clock.js';

interface Entry<K> {
  at: number;
  seq: number;
  key: K;
}

export class DueQueue<K> {
  private heap: Entry<K>[] = [];
  // The live entry per key; heap entries that are no longer live are skipped when popped.
  private live = new Map<K, Entry<K>>();
  private seq = 0;
  private timer?: Timer;
  private armedAt = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (key: K) => void,
  ) {}

  /** Calls onDue(key) at `at` (ms since the epoch), replacing the key's earlier deadline. */
  schedule(key: K, at: number): void {
    if (this.stopped) return;
    const entry = { at, seq: this.seq++, key };
    this.live.set(key, entry);
    this.push(entry);
    if (at < this.armedAt) this.arm();
  }

  cancel(key: K): void {
    this.live.delete(key);
  }

  /** The key's pending deadline, if any. */
  dueAt(key: K): number | undefined {
    return this.live.get(key)?.at;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.heap = [];
    this.live.clear();
  }

  private arm(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.armedAt = Infinity;
    while (this.heap.length > 0 && this.live.get(this.heap[0]!.key) !== this.heap[0]) this.pop();
    const next = this.heap[0];
    if (!next || this.stopped) return;
    this.armedAt = next.at;
    this.timer = this.clock.setTimer(next.at - this.clock.now(), () => this.fire());
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.clock.now();
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      const e = this.pop();
      if (this.live.get(e.key) !== e) continue;
      this.live.delete(e.key);
      this.onDue(e.key);
    }
    this.arm();
  }

  private push(e: Entry<K>): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): Entry<K> {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before<K>(a: Entry<K>, b: Entry<K>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
