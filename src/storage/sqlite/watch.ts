// One SqliteStore watch: the consumer side of "subscribe first, replay history, dedupe by revision".
import type { WatchEvent, WatchSink } from '../store.js';

/** One watch: buffers live events while history is replayed, then passes them through. */
export class SqliteWatch {
  private buffer: WatchEvent[] | undefined = [];
  private done = false;

  constructor(
    readonly prefix: string,
    private cursor: number,
    private readonly sink: WatchSink,
    private readonly onEnd: (w: SqliteWatch) => void,
  ) {}

  get position(): number {
    return this.cursor;
  }

  /** A live event from a write; held back until replay has caught up. */
  offer(e: WatchEvent): void {
    if (this.buffer) this.buffer.push(e);
    else this.deliver(e);
  }

  /** A replayed event, or a live one once caught up. A throwing consumer ends its own watch, not the write. */
  deliver(e: WatchEvent): void {
    if (this.done || e.revision <= this.cursor) return;
    this.cursor = e.revision;
    try {
      this.sink.event(e);
    } catch (err) {
      this.end(err as Error);
    }
  }

  /** History is replayed: flush what arrived meanwhile, skipping what replay already delivered. */
  caughtUp(): void {
    const pending = this.buffer ?? [];
    this.buffer = undefined;
    for (const e of pending) this.deliver(e);
    if (!this.done) this.sink.synced?.();
  }

  end(err?: Error): void {
    if (this.done) return;
    this.done = true;
    this.onEnd(this);
    this.sink.end(err);
  }
}
