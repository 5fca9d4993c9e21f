// Events as a kubelet records them (source kubelet on its node, one name per occurrence), sent in
// the background through a bounded queue: like upstream's event broadcaster, a full queue drops
// events rather than slowing the pods down, which keeps 10,000 pod starts from waiting on 30,000
// event writes.
import type { CoreEvent } from '../api/types.js';
import type { MetaObject } from '../client/indexer.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { rfc3339 } from '../api/time.js';

/** The fields an event step renders. */
export interface EventFields {
  type?: unknown;
  reason?: unknown;
  message?: unknown;
  fieldPath?: unknown;
}

export interface EventSinkOptions {
  create(event: CoreEvent): Promise<unknown>;
  clock: Clock;
  logger: Logger;
  /** Events waiting beyond this are dropped (upstream's broadcaster queues 1000). */
  maxQueued?: number;
  /** Concurrent writes. */
  concurrency?: number;
}

export class EventSink {
  private queue: CoreEvent[] = [];
  private active = 0;
  private seq = 0;
  private dropped = 0;
  private idle: (() => void)[] = [];

  constructor(private readonly opts: EventSinkOptions) {}

  /** Records an event about obj (a pod or a node) as the kubelet of `host` would. */
  record(obj: MetaObject, kind: 'Pod' | 'Node', host: string, fields: EventFields): void {
    const now = this.opts.clock.now();
    const name = obj.metadata?.name ?? '';
    // Node events live in "default" and name the node by its name as UID, as upstream's kubelet does.
    const namespace = kind === 'Node' ? 'default' : (obj.metadata?.namespace ?? 'default');
    const time = rfc3339(now);
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      // Upstream names an event <object>.<hex nanoseconds>; the sequence keeps same-millisecond events apart.
      metadata: { name: `${name}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`, namespace },
      involvedObject: {
        apiVersion: 'v1',
        kind,
        name,
        namespace: kind === 'Node' ? undefined : namespace,
        uid: kind === 'Node' ? name : obj.metadata?.uid,
        fieldPath: fields.fieldPath ? String(fields.fieldPath) : undefined,
      },
      reason: String(fields.reason ?? ''),
      message: String(fields.message ?? ''),
      type: String(fields.type ?? 'Normal'),
      source: { component: 'kubelet', host },
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
      reportingComponent: 'kubelet',
      reportingInstance: host,
    };
    if (this.queue.length >= (this.opts.maxQueued ?? 1000)) {
      if (this.dropped++ % 1000 === 0) this.opts.logger.warn({ dropped: this.dropped }, 'event queue full; dropping events');
      return;
    }
    this.queue.push(event);
    this.pump();
  }

  /** Resolves once every queued event has been sent (or failed). */
  flush(): Promise<void> {
    if (this.active === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.active < (this.opts.concurrency ?? 4) && this.queue.length > 0) {
      const event = this.queue.shift()!;
      this.active++;
      this.opts
        .create(event)
        .catch((err: unknown) => this.opts.logger.debug({ err, reason: event.reason }, 'event not recorded'))
        .finally(() => {
          this.active--;
          this.pump();
          if (this.active === 0 && this.queue.length === 0) for (const w of this.idle.splice(0)) w();
        });
    }
  }
}
