// events.k8s.io/v1 events as client-go's tools/events recorder writes them (the scheduler's; core/v1
// events go through recorder.ts): the first occurrence is
// created; a repeat (same action, reason, reporting controller and regarding object) turns it into a
// series (count 2, patched at once); later repeats only bump the count in memory, which is patched
// every 30 minutes and once more when the series ends (6 minutes without a repeat).
import { microTime } from '../../api/time.js';
import os from 'node:os';
import type { EventsV1Event } from '../../api/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { every } from '../../util/periodic.js';
import type { InvolvedObject } from './recorder.js';

/** Upstream's validation.NoteLengthLimit. */
export const NOTE_LENGTH_LIMIT = 1024;
const refreshIntervalMs = 30 * 60_000;
const finishTimeMs = 6 * 60_000;

/** Upstream's truncateMessage: cut to the note limit with " ..." at the end. */
export function truncateNote(note: string): string {
  if (note.length <= NOTE_LENGTH_LIMIT) return note;
  return note.slice(0, NOTE_LENGTH_LIMIT - 4) + ' ...';
}



/** Where events.k8s.io/v1 events are written. */
export interface EventsV1Sink {
  createEvent(ev: EventsV1Event): Promise<void>;
  /** Merge patch (series updates). */
  patchEvent(namespace: string, name: string, patch: Partial<EventsV1Event>): Promise<void>;
}

export interface EventRecorderOptions {
  sink: EventsV1Sink;
  clock: Clock;
  logger: Logger;
  reportingController: string;
  reportingInstance?: string;
}

export class EventRecorder {
  private readonly cache = new Map<string, EventsV1Event>();
  private readonly timers: Timer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private seq = 0;

  constructor(private readonly opts: EventRecorderOptions) {}

  start(): void {
    this.timers.push(
      every(this.opts.clock, refreshIntervalMs, () => this.refreshSeries()),
      every(this.opts.clock, finishTimeMs, () => this.finishSeries()),
    );
  }

  /** Waits for the writes in progress. */
  async stop(): Promise<void> {
    for (const t of this.timers) t.cancel();
    await Promise.allSettled([...this.inFlight]);
  }

  /** An event about `regarding`; `related` is a second object involved (e.g. the preemptor of a victim). */
  eventf(regarding: InvolvedObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string, related?: InvolvedObject): void {
    const now = this.opts.clock.now();
    const ref = regarding;
    const rel = related;
    const key = JSON.stringify([action, reason, this.opts.reportingController, ref.kind, ref.namespace, ref.name, ref.uid, rel?.namespace, rel?.name, rel?.uid]);
    const existing = this.cache.get(key);
    if (existing) {
      if (existing.series) {
        existing.series.count++;
        existing.series.lastObservedTime = microTime(now);
        return;
      }
      existing.series = { count: 2, lastObservedTime: microTime(now) };
      this.patchSeries(existing);
      return;
    }
    // Nanosecond-like suffix as upstream (name.%x of UnixNano), kept unique within a millisecond.
    const suffix = (BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16);
    const ev: EventsV1Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${ref.name}.${suffix}`, namespace: ref.namespace || 'default' },
      eventTime: microTime(now),
      reportingController: this.opts.reportingController,
      reportingInstance: this.opts.reportingInstance ?? `${this.opts.reportingController}-${os.hostname()}`,
      action,
      reason,
      type,
      note: truncateNote(note),
      regarding: ref,
      ...(rel ? { related: rel } : {}),
    };
    this.cache.set(key, ev);
    this.track(this.opts.sink.createEvent(ev), ev);
  }

  private patchSeries(ev: EventsV1Event): void {
    this.track(this.opts.sink.patchEvent(ev.metadata!.namespace!, ev.metadata!.name!, { series: { ...ev.series! } }), ev);
  }

  private refreshSeries(): void {
    for (const ev of this.cache.values()) if (ev.series) this.patchSeries(ev);
  }

  private finishSeries(): void {
    const cutoff = this.opts.clock.now() - finishTimeMs;
    for (const [key, ev] of this.cache) {
      const last = Date.parse(ev.series ? ev.series.lastObservedTime : ev.eventTime);
      if (last >= cutoff) continue;
      if (ev.series) this.patchSeries(ev);
      this.cache.delete(key);
    }
  }

  private track(p: Promise<void>, ev: EventsV1Event): void {
    const tracked = p.then(
      () => undefined,
      (err: unknown) => this.opts.logger.warn({ err, event: ev.metadata?.name, reason: ev.reason }, 'event write failed'),
    );
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }
}
