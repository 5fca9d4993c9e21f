// core/v1 events as client-go's tools/record writes them: one EventBroadcaster per process owns
// the queue and the writer; each component gets a recorder stamped with its source (the kubelet on
// its node, a controller). event() builds the event (name <object>.<hex nanos>) and queues it
// without blocking; a full queue drops it. The writer drains the queue in order through the
// correlator: new events are created, repeats patched (count, lastTimestamp), a patch that finds the
// event gone (expired) creates it again, and transport failures are retried every 10 s up to 12
// tries, as upstream.
import type { CoreEvent, ObjectReference } from '../../api/types.js';
import { rfc3339 } from '../../api/time.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { StatusError } from '../../api/errors.js';
import type { Client } from '../client.js';
import { EventCorrelator } from './correlator.js';

export type EventType = 'Normal' | 'Warning';

/** The object an event is about: a pod (fieldPath "spec.containers{nginx}" for one container), a node, a workload. */
export type InvolvedObject = Pick<ObjectReference, 'kind' | 'namespace' | 'name' | 'uid' | 'apiVersion' | 'resourceVersion' | 'fieldPath'> & {
  /** A reference, not the object itself (which would pass for one: every field is optional). */
  metadata?: never;
};

/** What components record events through (upstream's record.EventRecorder). */
export interface EventRecorder {
  /** Never blocks and never throws: events are best effort, as upstream's broadcaster. */
  event(object: InvolvedObject, type: EventType, reason: string, message: string): void;
}

/** Records into an array; for tests. */
export class FakeRecorder implements EventRecorder {
  readonly events: { object: InvolvedObject; type: EventType; reason: string; message: string }[] = [];
  event(object: InvolvedObject, type: EventType, reason: string, message: string): void {
    this.events.push({ object, type, reason, message });
  }
}

/** Who reports (upstream's EventSource): the component, and the node it runs on if any. */
export interface EventSource {
  component: string;
  host?: string;
}

/** Where events are written: the events API (or a fake). */
export interface EventSink {
  create(event: CoreEvent): Promise<CoreEvent>;
  /** A strategic merge patch of an existing event. */
  patch(event: CoreEvent, patch: object): Promise<CoreEvent>;
}

export function clientEventSink(client: Client): EventSink {
  const events = (ns: string | undefined) => client.resource('events').namespace(ns ?? 'default');
  return {
    create: (event) => events(event.metadata?.namespace).create(event),
    patch: (event, patch) => events(event.metadata?.namespace).patch(event.metadata?.name ?? '', 'strategic', patch),
  };
}

export const MAX_QUEUED_EVENTS = 1000;
export const MAX_TRIES_PER_EVENT = 12;
export const RETRY_SLEEP_MS = 10_000;

export interface EventBroadcasterOptions {
  sink: EventSink;
  clock: Clock;
  logger: Logger;
  /** Events queued beyond this are dropped (upstream's broadcaster: 1000). */
  maxQueued?: number;
  /**
   * Writers draining the queue at once (upstream: 1, which keeps one object's events in order).
   * A process recording for thousands of nodes (kite sim) needs more.
   */
  concurrency?: number;
  /** Jitter for the first retry, in [0, 1) (tests pin it). */
  random?: () => number;
}

export class EventBroadcaster {
  private readonly queue: CoreEvent[] = [];
  private readonly correlator: EventCorrelator;
  private readonly writers = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private seq = 0;
  private dropped = 0;

  constructor(private readonly opts: EventBroadcasterOptions) {
    this.correlator = new EventCorrelator({ clock: opts.clock, eventName: (n) => this.eventName(n), now: () => rfc3339(opts.clock.now()) });
  }

  /** A recorder whose events carry `source` (upstream's NewRecorder). */
  newRecorder(source: EventSource): EventRecorder {
    return { event: (object, type, reason, message) => this.record(source, object, type, reason, message) };
  }

  private record(source: EventSource, object: InvolvedObject, type: EventType, reason: string, message: string): void {
    if (this.abort.signal.aborted) return;
    if (type !== 'Normal' && type !== 'Warning') {
      this.opts.logger.error({ type }, 'Unsupported event type');
      return;
    }
    if (this.queue.length >= (this.opts.maxQueued ?? MAX_QUEUED_EVENTS)) {
      if (this.dropped++ % 1000 === 0) this.opts.logger.warn({ dropped: this.dropped }, 'event queue full; dropping events');
      return;
    }
    const now = rfc3339(this.opts.clock.now());
    this.queue.push({
      apiVersion: 'v1',
      kind: 'Event',
      // Events about cluster-scoped objects (a node) live in "default".
      metadata: { name: this.eventName(object.name ?? ''), namespace: object.namespace || 'default' },
      involvedObject: object,
      reason,
      message,
      type,
      source: source.host ? { component: source.component, host: source.host } : { component: source.component },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: source.component,
      reportingInstance: source.host ?? '',
    });
    while (this.writers.size < (this.opts.concurrency ?? 1) && this.writers.size < this.queue.length) {
      const writer: Promise<void> = this.drain().finally(() => this.writers.delete(writer));
      this.writers.add(writer);
    }
  }

  /** Resolves once every queued event has been written or given up. */
  async flush(): Promise<void> {
    while (this.writers.size) await Promise.all([...this.writers]);
  }

  /** Drops what is queued and ends retries in progress. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.queue.length = 0;
    await this.flush();
  }

  /** `<name>.<hex of UnixNano>`; the sequence keeps events of one millisecond apart. */
  private eventName(objectName: string): string {
    const nanos = BigInt(this.opts.clock.now()) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    return `${objectName}.${nanos.toString(16)}`;
  }

  private async drain(): Promise<void> {
    for (let e = this.queue.shift(); e; e = this.queue.shift()) await this.recordToSink(e);
  }

  private async recordToSink(input: CoreEvent): Promise<void> {
    const result = this.correlator.correlate(input);
    if (result.skip) return;
    for (let tries = 1; ; tries++) {
      if (await this.recordEvent(result.event, result.patch)) return;
      if (tries >= MAX_TRIES_PER_EVENT || this.abort.signal.aborted) {
        this.opts.logger.error({ reason: input.reason, object: input.involvedObject.name }, 'Unable to write event (retry limit exceeded!)');
        return;
      }
      // The first wait is randomized so clients do not retry in step after an outage.
      const wait = tries === 1 ? RETRY_SLEEP_MS * (this.opts.random ?? Math.random)() : RETRY_SLEEP_MS;
      try {
        await this.opts.clock.sleep(wait, this.abort.signal);
      } catch {
        return;
      }
    }
  }

  /** true when done (written, or refused for good); false to retry (the server was unreachable). */
  private async recordEvent(event: CoreEvent, patch: object | undefined): Promise<boolean> {
    try {
      let written: CoreEvent | undefined;
      if (patch) {
        try {
          written = await this.opts.sink.patch(event, patch);
        } catch (err) {
          // The event expired or was deleted: create it afresh.
          if (!(err instanceof StatusError && err.code === 404)) throw err;
        }
      }
      if (!written) {
        const { resourceVersion: _rv, ...metadata } = event.metadata ?? {};
        written = await this.opts.sink.create({ ...event, metadata });
      }
      this.correlator.updateState(written);
      return true;
    } catch (err) {
      if (err instanceof StatusError) {
        if (err.reason !== 'AlreadyExists') this.opts.logger.warn({ err, reason: event.reason }, 'Server rejected event (will not retry!)');
        return true;
      }
      this.opts.logger.warn({ err, reason: event.reason }, 'Unable to write event (may retry after sleeping)');
      return false;
    }
  }
}
