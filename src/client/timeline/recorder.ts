// How a component records pod timeline steps: record() never blocks and never throws; steps are
// buffered and sent in one PodTimelineStepBatch per flush, off the pod's own write path. When the
// API server is unreachable the buffer keeps the newest steps up to its cap and counts the rest
// as dropped: a timeline is an explanation, never a reason to slow or fail the work it explains.
import { microTime } from '../../api/time.js';
import { StatusError } from '../../api/errors.js';
import {
  maxBatchRecords,
  maxBatchSteps,
  timelineAPIVersion,
  timelineGroup,
  timelineVersion,
  type PodTimelineStepBatch,
  type TimelinePodRef,
  type TimelineStep,
} from '../../api/timeline/types.js';
import { within, type Clock, type Timer } from '../../util/clock.js';
import type { Service } from '../../util/lifecycle.js';
import type { Logger } from '../../util/log.js';
import type { RestClient } from '../rest.js';

export interface TimelineRecorder {
  record(pod: TimelinePodRef, step: TimelineStep): void;
}

/** For components run without a timeline (benchmarks' "off" side, tests that do not look). */
export const noTimeline: TimelineRecorder = { record: () => {} };

/** A step's time in the wire form, from a clock's milliseconds. */
export const stepTime = microTime;

/** Keeps what was recorded, for unit tests. */
export class FakeTimelineRecorder implements TimelineRecorder {
  readonly records: { pod: TimelinePodRef; step: TimelineStep }[] = [];
  record(pod: TimelinePodRef, step: TimelineStep): void {
    this.records.push({ pod, step: structuredClone(step) });
  }
  /** The steps recorded for a pod UID, in recording order. */
  steps(uid: string): TimelineStep[] {
    return this.records.filter((r) => r.pod.uid === uid).map((r) => r.step);
  }
}

/** The longest stop() waits for its last batches to be answered. */
const stopWaitMs = 2_000;

export const stepBatchPath = `/apis/${timelineGroup}/${timelineVersion}/podtimelinestepbatches`;

export interface BatchingTimelineRecorderOptions {
  rest: RestClient;
  clock: Clock;
  logger: Logger;
  /** How long a step may wait for its batch (default 100 ms). */
  flushIntervalMs?: number;
  /** Steps kept while the server does not take them, or holds a batch through a burst (default 100,000). */
  maxBuffered?: number;
}

/** Sends steps to the API server in batches. */
export class BatchingTimelineRecorder implements TimelineRecorder, Service {
  readonly name = 'timeline-recorder';
  private buffer: { pod: TimelinePodRef; step: TimelineStep }[] = [];
  private timer?: Timer;
  private sending?: Promise<void>;
  private stopped = false;
  /** Steps given up because the buffer was full. */
  dropped = 0;
  private readonly flushIntervalMs: number;
  private readonly maxBuffered: number;

  constructor(private readonly opts: BatchingTimelineRecorderOptions) {
    this.flushIntervalMs = opts.flushIntervalMs ?? 100;
    this.maxBuffered = opts.maxBuffered ?? 100_000;
  }

  async start(): Promise<void> {}

  record(pod: TimelinePodRef, step: TimelineStep): void {
    if (this.stopped || !pod.uid) return;
    this.buffer.push({ pod, step });
    if (this.buffer.length > this.maxBuffered) {
      this.dropped += this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, this.buffer.length - this.maxBuffered);
    }
    this.timer ??= this.opts.clock.setTimer(this.flushIntervalMs, () => {
      this.timer = undefined;
      void this.flush();
    });
  }

  /** Sends what is buffered (one flush at a time); failures keep the steps for the next flush. */
  async flush(): Promise<void> {
    while (this.sending) await this.sending;
    if (this.buffer.length === 0) return;
    const taken = this.buffer;
    this.buffer = [];
    this.sending = this.send(taken).finally(() => (this.sending = undefined));
    await this.sending;
  }

  /**
   * Sends what was taken in batches within the server's bounds (a burst buffers more pods than one
   * batch may carry). A batch the server refuses as such (4xx other than 429) is dropped: sent
   * again it would be refused again, and it would hold back every step behind it.
   */
  private async send(taken: { pod: TimelinePodRef; step: TimelineStep }[]): Promise<void> {
    let start = 0;
    while (start < taken.length) {
      const byPod = new Map<string, { pod: TimelinePodRef; steps: TimelineStep[] }>();
      let end = start;
      for (; end < taken.length && end - start < maxBatchSteps; end++) {
        const { pod, step } = taken[end]!;
        let rec = byPod.get(pod.uid);
        if (!rec) {
          if (byPod.size === maxBatchRecords) break;
          byPod.set(pod.uid, (rec = { pod, steps: [] }));
        }
        rec.steps.push(step);
      }
      const batch: PodTimelineStepBatch = { apiVersion: timelineAPIVersion, kind: 'PodTimelineStepBatch', records: [...byPod.values()] };
      try {
        await this.opts.rest.request({ method: 'POST', path: stepBatchPath, body: batch });
      } catch (err) {
        if (err instanceof StatusError && err.code >= 400 && err.code < 500 && err.code !== 429) {
          this.dropped += end - start;
          this.opts.logger.warn({ err: String(err), steps: end - start }, 'timeline steps refused by the server; dropped');
        } else {
          this.keep(taken.slice(start), err);
          return;
        }
      }
      start = end;
    }
  }

  /** Steps not sent (server unreachable, busy): retried after at least a second. */
  private keep(unsent: { pod: TimelinePodRef; step: TimelineStep }[], err: unknown): void {
    this.opts.logger.debug({ err: String(err), steps: unsent.length }, 'timeline steps not sent; kept for the next flush');
    if (this.stopped) return;
    this.buffer = unsent.concat(this.buffer).slice(-this.maxBuffered);
    this.timer ??= this.opts.clock.setTimer(Math.max(this.flushIntervalMs, 1000), () => {
      this.timer = undefined;
      void this.flush();
    });
  }

  /**
   * Sends what is buffered, waiting at most stopWaitMs: the API server may hold a batch's answer
   * for up to 30 s while the machine is busy, keeping the batch; a component's stop must not wait
   * for that. Batches still queued behind it go if the process lives long enough.
   */
  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = undefined;
    if (!(await within(this.opts.clock, stopWaitMs, this.flush().catch(() => {})))) this.opts.logger.debug('timeline batch not answered by stop; not waiting for it');
    this.stopped = true;
  }
}
