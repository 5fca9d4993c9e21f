// client-go's tools/record EventCorrelator, for core/v1 events:
// - aggregation: events alike but for their message (same source, object, type, reason) seen with
//   10 different messages within 10 minutes become one "(combined from similar events): <msg>" event;
// - deduplication: an event identical to one already written (message included) is not created
//   again, the existing one is patched with count+1 and the new lastTimestamp ("x3 over 2m");
// - spam filter: a token bucket per source and object (burst 25, one token per 5 minutes).
// Pure and clock-driven; the recorder does the writing.
import type { CoreEvent } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { TokenBucket } from '../../util/flowcontrol.js';

export const MAX_LRU_CACHE_ENTRIES = 4096;
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
export const DEFAULT_AGGREGATE_INTERVAL_MS = 600_000;
export const DEFAULT_SPAM_BURST = 25;
/** One token per 300 s (upstream's defaultSpamQPS). */
export const DEFAULT_SPAM_QPS = 1 / 300;
export const COMBINED_PREFIX = '(combined from similar events): ';

/** A Map used as an LRU: reads and writes move a key to the end; the oldest is evicted past capacity. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly capacity: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }
}

// Keys join their parts without a separator, as upstream's strings.Join(parts, "").
const involved = (e: CoreEvent) => {
  const o = e.involvedObject;
  return [o.kind, o.namespace, o.name, o.uid, o.apiVersion];
};
const source = (e: CoreEvent) => [e.source?.component, e.source?.host];
const join = (parts: (string | undefined)[]) => parts.map((p) => p ?? '').join('');

export function eventKey(e: CoreEvent): string {
  const o = e.involvedObject;
  return join([...source(e), o.kind, o.namespace, o.name, o.fieldPath, o.uid, o.apiVersion, e.type, e.reason, e.message]);
}
function aggregateKey(e: CoreEvent): string {
  return join([...source(e), ...involved(e), e.type, e.reason, e.reportingComponent, e.reportingInstance]);
}
function spamKey(e: CoreEvent): string {
  return join([...source(e), ...involved(e)]);
}

interface AggregateRecord {
  messages: Set<string>;
  lastMs: number;
}

interface Observation {
  count: number;
  firstTimestamp?: string;
  name: string;
  resourceVersion?: string;
}


export interface CorrelateResult {
  /** The event to write (created, or patched when patch is set). */
  event: CoreEvent;
  /** For a repeat: the strategic merge patch of count, lastTimestamp and message. */
  patch?: { count: number; lastTimestamp: string; message: string };
  /** The spam filter refused it: write nothing. */
  skip: boolean;
}

export interface CorrelatorOptions {
  clock: Clock;
  /** Names a new aggregate event (the recorder's `<object>.<hex nanos>`). */
  eventName(objectName: string): string;
  /** metav1.Time for now. */
  now(): string;
}

export class EventCorrelator {
  private readonly aggregates = new Lru<AggregateRecord>(MAX_LRU_CACHE_ENTRIES);
  private readonly observations = new Lru<Observation>(MAX_LRU_CACHE_ENTRIES);
  private readonly buckets = new Lru<TokenBucket>(MAX_LRU_CACHE_ENTRIES);

  constructor(private readonly opts: CorrelatorOptions) {}

  correlate(input: CoreEvent): CorrelateResult {
    const [aggregated, key] = this.aggregate(input);
    const [event, patch] = this.observe(aggregated, key);
    return { event, patch, skip: !this.allow(event) };
  }

  /** After a successful write: remember the server's name and resourceVersion for the next patch. */
  updateState(written: CoreEvent): void {
    // Keyed by the full event, as upstream (a combined event's own observation keeps its name anyway).
    this.observations.set(eventKey(written), {
      count: written.count ?? 1,
      firstTimestamp: written.firstTimestamp,
      name: written.metadata?.name ?? '',
      resourceVersion: written.metadata?.resourceVersion,
    });
  }

  private aggregate(e: CoreEvent): [CoreEvent, string] {
    const now = this.opts.clock.now();
    const akey = aggregateKey(e);
    let record = this.aggregates.get(akey);
    if (!record || now - record.lastMs > DEFAULT_AGGREGATE_INTERVAL_MS) record = { messages: new Set(), lastMs: now };
    record.messages.add(e.message ?? '');
    record.lastMs = now;
    this.aggregates.set(akey, record);
    if (record.messages.size < DEFAULT_AGGREGATE_MAX_EVENTS) return [e, eventKey(e)];
    // Do not let the set grow past the threshold.
    record.messages.delete(record.messages.values().next().value!);
    const time = this.opts.now();
    const combined: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: this.opts.eventName(e.involvedObject.name ?? ''), namespace: e.metadata?.namespace },
      involvedObject: e.involvedObject,
      reason: e.reason,
      message: COMBINED_PREFIX + (e.message ?? ''),
      type: e.type,
      source: e.source,
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
      reportingComponent: e.reportingComponent,
      reportingInstance: e.reportingInstance,
    };
    return [combined, akey];
  }

  private observe(e: CoreEvent, key: string): [CoreEvent, CorrelateResult['patch']] {
    const last = this.observations.get(key);
    let event = e;
    let patch: CorrelateResult['patch'];
    if (last && last.count > 0) {
      event = {
        ...e,
        metadata: { ...e.metadata, name: last.name, resourceVersion: last.resourceVersion },
        firstTimestamp: last.firstTimestamp,
        count: last.count + 1,
      };
      patch = { count: event.count!, lastTimestamp: event.lastTimestamp!, message: event.message ?? '' };
    }
    this.observations.set(key, {
      count: event.count ?? 1,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata?.name ?? '',
      resourceVersion: event.metadata?.resourceVersion,
    });
    return [event, patch];
  }

  /** The token bucket of the event's source and object. */
  private allow(e: CoreEvent): boolean {
    const key = spamKey(e);
    const b = this.buckets.get(key) ?? new TokenBucket(DEFAULT_SPAM_QPS, DEFAULT_SPAM_BURST, this.opts.clock);
    this.buckets.set(key, b);
    return b.tryAccept();
  }
}
