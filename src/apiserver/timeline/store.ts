// The pod timeline store: one PodTimeline per pod UID, in memory, written behind to a SQLite side
// file (DATA/timeline.db, file.ts; in `kite server` all of it runs in the pod timelines' own process,
// process.ts): the records changed within `commitDelayMs` go in one transaction, a record that only
// gained steps appends them beside its small head. Durable means committed: the batch API answers
// 201 only after `committed()`, so an answered batch survives a crash (SQLite WAL,
// synchronous=NORMAL: an OS crash may lose the last commits, a process crash does not). A head is
// written only when more than its resourceVersion changed. It is this API server's own file even
// with etcd storage: each API server keeps the steps it received. Watchers get
// ADDED/MODIFIED/DELETED under the store's own resourceVersion counter, with a bounded history for
// resuming (older: 410 Expired). A loop on the injected clock removes records past the retention
// after their pod's deletion; a global cap evicts deleted pods' records first, then the oldest.
// With `busy` (the timelines' process), a batch is not merged while the machine is busy: it is kept
// as it came (in the file, one intake row per batch, so still answered once durable) and merged
// when the CPUs have time, after `maxMergeDelayMs` at the latest, or before any read; while a watch
// is open nothing waits. A burst of pods then pays for its timelines after it, not during it.
import type { Pod } from 'kubernetes-types/core/v1.js';
import { expired, internalError } from '../../api/errors.js';
import { microTime, rfc3339 } from '../../api/time.js';
import { timelineAPIVersion, type PodTimeline, type TimelinePodRef, type TimelineStep } from '../../api/timeline/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Service } from '../../util/lifecycle.js';
import type { Logger } from '../../util/log.js';
import { every } from '../../util/periodic.js';
import { loadTimelineFile, SqliteTimelineWriter, type TimelineFileWriter, type TimelineWrite } from './file.js';
import { mergeSteps } from './merge.js';
import type { TimelineSink } from './sink.js';

export type TimelinePod = PodTimeline['pod'];

/** Steps for one pod; the pod's nodeName and owner, when known, fill the timeline's pod. */
export interface TimelineRecord {
  pod: TimelinePodRef & Partial<Pick<TimelinePod, 'nodeName' | 'owner'>>;
  steps: readonly TimelineStep[];
}

/**
 * What the API server's own pod says beside the steps, its node and its controller, set on `into`
 * (field by field: the API server does this for every pod write, and spreads cost it more).
 */
export function withPodFacts<T extends object>(into: T, pod: Pod | undefined): T & Pick<TimelineRecord['pod'], 'nodeName' | 'owner'> {
  const facts: T & Pick<TimelineRecord['pod'], 'nodeName' | 'owner'> = into;
  if (pod?.spec?.nodeName) facts.nodeName = pod.spec.nodeName;
  const owner = pod?.metadata?.ownerReferences?.find((r) => r.controller);
  if (owner) facts.owner = { kind: owner.kind, name: owner.name };
  return facts;
}

export type TimelineEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface TimelineEvent {
  type: TimelineEventType;
  object: PodTimeline;
  resourceVersion: number;
}

export interface TimelineStoreOptions {
  clock: Clock;
  logger: Logger;
  /** The SQLite side file; absent: memory only. */
  file?: string;
  /** What writes the file (default: SqliteTimelineWriter, in the calling thread). */
  writer?: (file: string) => TimelineFileWriter;
  /** --pod-timeline=false: nothing is kept (default true). */
  enabled?: boolean;
  /** --pod-timeline-retention: how long a record outlives its pod (default 24 h). */
  retentionMs?: number;
  /** --pod-timeline-max-pods: records kept at most (default 20,000). */
  maxPods?: number;
  /** Steps kept per pod before the oldest repeats go (default 1,000). */
  maxStepsPerPod?: number;
  /** Watch events kept for resuming: at least this many, at most twice (default 1,000). */
  historySize?: number;
  /** How long changes gather before one transaction writes them (default 10 ms). */
  commitDelayMs?: number;
  /** How often retention runs (default 60 s). */
  sweepIntervalMs?: number;
  /**
   * Whether the machine's CPUs were busy since the previous call: while they are, merging waits
   * (absent: every batch is merged as it comes).
   */
  busy?: () => boolean;
  /** How often a waiting merge asks `busy` (default 250 ms). */
  mergeCheckMs?: number;
  /** How long a batch waits at most for its merge while the machine stays busy (default 30 s; a read or an open watch never waits). */
  maxMergeDelayMs?: number;
  /** Told about every merge (the OTLP exporter is one; server.ts fills this). */
  sinks?: readonly TimelineSink[];
  /**
   * Which of these pods still exist (the API server's watch cache): a record of a pod gone without a
   * Deleted step (removed while this server was down, or through another server) is then taken as
   * deleted by the sweep, once quiet for `orphanAfterMs`, so the retention applies to it too. Asked
   * once per sweep, of the quiet records only (the store may run in its own process).
   */
  podsExisting?: (uids: readonly string[]) => Promise<ReadonlySet<string>>;
}

/** A record this long without a new step whose pod is gone counts as deleted. */
const orphanAfterMs = 10 * 60_000;

export const defaultRetentionMs = 24 * 60 * 60 * 1000;
export const defaultMaxPods = 20_000;

export interface TimelineFilter {
  /** '' for every namespace. */
  namespace: string;
  matches?: (t: PodTimeline) => boolean;
}

type Watcher = { filter: TimelineFilter; send: (e: TimelineEvent) => void };

export class TimelineStore implements Service {
  readonly name = 'pod-timeline-store';
  /** By pod UID, in the order records were created (the cap evicts from the front). */
  private readonly timelines = new Map<string, PodTimeline>();
  private rv = 0;
  private readonly history: TimelineEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private writer?: TimelineFileWriter;
  /** The last write handed to the writer, settled (committed() waits for it when nothing else is due). */
  private inFlight: Promise<void> = Promise.resolve();
  /**
   * What each record's rows lack since the last commit: the steps merged in since (appended, in any
   * order), or true when its rows must be written again (a stored step was replaced or dropped, the
   * record was removed, a write failed). Noted as batches merge, so a commit scans nothing.
   */
  private readonly unwritten = new Map<string, TimelineStep[] | true>();
  /** Records whose head changed beyond its resourceVersion since the last commit (new ones too). */
  private readonly headChanged = new Set<string>();
  private sweeper?: Timer;
  /** Changed since the last commit, by pod UID: true to write the record as it is then, false to remove it. */
  private readonly dirty = new Map<string, boolean>();
  private commitTimer?: Timer;
  private waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** Batches taken but not merged yet (only with `busy`), in arrival order, and since when the first waits. */
  private intake: TimelineRecord[] = [];
  private intakeSince = 0;
  private mergeTimer?: Timer;
  /** The intake's batches not in the file yet, as their rows (JSON). */
  private intakeRows: string[] = [];
  /** The file holds intake rows that are merged now: the next commit removes them. */
  private clearIntake = false;
  private readonly retentionMs: number;
  private readonly maxPods: number;
  private readonly maxSteps: number;
  private readonly historySize: number;

  constructor(private readonly opts: TimelineStoreOptions) {
    this.retentionMs = opts.retentionMs ?? defaultRetentionMs;
    this.maxPods = opts.maxPods ?? defaultMaxPods;
    this.maxSteps = opts.maxStepsPerPod ?? 1000;
    this.historySize = opts.historySize ?? 1000;
  }

  get enabled(): boolean {
    return this.opts.enabled ?? true;
  }

  async start(): Promise<void> {
    if (!this.enabled) return;
    if (this.opts.file) {
      const { timelines: loaded, resourceVersion, intake } = loadTimelineFile(this.opts.file);
      // Heads keep the resourceVersion of their last change of substance; the file keeps the store's
      // (a file from before it did: its highest head's).
      this.rv = resourceVersion;
      for (const { timeline: t, legacy } of loaded) {
        this.timelines.set(t.metadata.name!, t);
        // A head that carried its steps is written again, its steps as rows.
        if (legacy) this.unwritten.set(t.metadata.name!, true);
        this.rv = Math.max(this.rv, Number(t.metadata.resourceVersion ?? 0));
      }
      this.writer = this.opts.writer ? this.opts.writer(this.opts.file) : new SqliteTimelineWriter(this.opts.file);
      if (loaded.length) this.opts.logger.info({ pods: loaded.length, file: this.opts.file }, 'pod timelines loaded');
      // Batches answered but not merged when the last process ended: merged now, their rows removed with that commit.
      if (intake.length) {
        this.clearIntake = true;
        this.merge(intake.flat());
      }
    }
    this.sweeper = every(this.opts.clock, this.opts.sweepIntervalMs ?? 60_000, () => this.sweep());
  }

  async stop(): Promise<void> {
    this.sweeper?.cancel();
    for (const w of this.watchers) this.watchers.delete(w);
    this.mergeIntake();
    this.commit();
    await this.inFlight;
    await this.writer?.close();
    this.writer = undefined;
  }

  /** The store's resourceVersion: the last change's (reads merge what waits first, as they all do). */
  get resourceVersion(): number {
    this.mergeIntake();
    return this.rv;
  }

  get size(): number {
    this.mergeIntake();
    return this.timelines.size;
  }

  get(namespace: string, uid: string): PodTimeline | undefined {
    this.mergeIntake();
    const t = this.timelines.get(uid);
    return t && t.metadata.namespace === namespace ? t : undefined;
  }

  /** Sorted by namespace, then name (the pod UID), as a stored list is. */
  list(filter: TimelineFilter): PodTimeline[] {
    this.mergeIntake();
    const out = [...this.timelines.values()].filter((t) => selected(filter, t));
    return out.sort((a, b) => compareKeys(a, b));
  }

  /** The pod's node as the kept record names it (a node may record for pods it ran after they are gone). */
  nodeOf(uid: string): string | undefined {
    this.mergeIntake();
    return this.timelines.get(uid)?.pod.nodeName;
  }

  /**
   * Takes one batch's records: merged now, or, with `busy`, kept (and written) as they came until
   * the machine has time; committed() covers them either way.
   */
  record(records: readonly TimelineRecord[]): void {
    if (!this.enabled || records.length === 0) return;
    // A watcher sees steps as they come: nothing waits while one is open.
    if (!this.opts.busy || this.watchers.size) return this.merge(records);
    if (this.intake.length === 0) {
      this.intakeSince = this.opts.clock.now();
      // A fresh window: what the machine did before this batch came says nothing about now.
      this.opts.busy();
      this.mergeTimer ??= every(this.opts.clock, this.opts.mergeCheckMs ?? 250, () => this.mergeWhenIdle());
    }
    this.intake.push(...records);
    if (this.writer) {
      this.intakeRows.push(JSON.stringify(records));
      this.scheduleCommit();
    }
  }

  /** Merges the intake once the machine is not busy, or once its first batch waited long enough. */
  private mergeWhenIdle(): void {
    if (this.opts.clock.now() - this.intakeSince >= (this.opts.maxMergeDelayMs ?? 30_000) || !this.opts.busy!()) this.mergeIntake();
  }

  /** Merges every batch waiting, in the order they came. */
  private mergeIntake(): void {
    this.mergeTimer?.cancel();
    this.mergeTimer = undefined;
    if (this.intake.length === 0) return;
    const records = this.intake;
    this.intake = [];
    // Rows not written yet are not needed any more; rows written go with the merge's commit.
    this.intakeRows = [];
    if (this.writer) this.clearIntake = true;
    this.merge(records);
  }

  /** Merges records: one transaction, then the watchers and sinks. */
  private merge(records: readonly TimelineRecord[]): void {
    const now = this.opts.clock.now();
    const changed: { event: TimelineEvent; added: TimelineStep[] }[] = [];
    for (const rec of records) {
      if (!rec.pod.uid || rec.steps.length === 0) continue;
      const before = this.timelines.get(rec.pod.uid);
      const merged = mergeSteps(before?.steps ?? [], rec.steps, this.maxSteps);
      this.noteUnwritten(rec.pod.uid, merged.added, merged.replaced || merged.truncated);
      const deleted = rec.steps.find((s) => s.step === 'Deleted');
      const timeline: PodTimeline = {
        apiVersion: timelineAPIVersion,
        kind: 'PodTimeline',
        metadata: {
          name: rec.pod.uid,
          namespace: before?.metadata.namespace ?? rec.pod.namespace,
          creationTimestamp: before?.metadata.creationTimestamp ?? rfc3339(now),
          resourceVersion: String(++this.rv),
        },
        pod: podOf(before?.pod, rec, merged.steps),
        steps: merged.steps,
      };
      const deletedAt = deleted?.start ?? before?.deletedAt;
      if (deletedAt) timeline.deletedAt = deletedAt;
      if (merged.truncated || before?.truncated) timeline.truncated = true;
      if (this.writer && (!before || !sameHead(before, timeline))) this.headChanged.add(rec.pod.uid);
      // A replaced key keeps its place: the map stays in creation order.
      this.timelines.set(rec.pod.uid, timeline);
      changed.push({ event: { type: before ? 'MODIFIED' : 'ADDED', object: timeline, resourceVersion: this.rv }, added: merged.added });
    }
    const evicted = this.overCap();
    this.persist(
      changed.map((c) => c.event.object),
      evicted,
    );
    for (const { event, added } of changed) {
      // A record evicted by this same batch's cap is only announced as gone.
      if (!this.timelines.has(event.object.metadata.name!)) continue;
      this.publish(event);
      for (const sink of this.opts.sinks ?? []) {
        try {
          sink.stepsRecorded(event.object, added);
        } catch (err) {
          this.opts.logger.warn({ err }, 'a pod timeline sink failed');
        }
      }
    }
    this.announceEvicted(evicted);
  }

  /**
   * Events after `resourceVersion` (undefined or 0: every matching record as ADDED first), then live
   * ones; throws 410 Expired when the history no longer reaches back that far.
   */
  watch(filter: TimelineFilter, resourceVersion: number | undefined, send: (e: TimelineEvent) => void): () => void {
    this.mergeIntake();
    if (resourceVersion) {
      const oldest = this.history[0]?.resourceVersion ?? this.rv + 1;
      if (resourceVersion < oldest - 1 && resourceVersion < this.rv) throw expired(`too old resource version: ${resourceVersion} (${oldest - 1})`);
      for (const e of this.history) if (e.resourceVersion > resourceVersion && selected(filter, e.object)) send(e);
    } else {
      for (const t of this.list(filter)) send({ type: 'ADDED', object: t, resourceVersion: Number(t.metadata.resourceVersion) });
    }
    const watcher: Watcher = { filter, send };
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Removes records past the retention after their pod's deletion; then asks which quiet records' pods are gone (the intake waits). */
  sweep(): void {
    const now = this.opts.clock.now();
    const cutoff = now - this.retentionMs;
    const expiredRecords: PodTimeline[] = [];
    const quiet: PodTimeline[] = [];
    for (const t of this.timelines.values()) {
      if (t.deletedAt && Date.parse(t.deletedAt) <= cutoff) expiredRecords.push(t);
      else if (!t.deletedAt && this.opts.podsExisting && Date.parse(t.steps.at(-1)?.lastTime ?? t.steps.at(-1)?.start ?? '') <= now - orphanAfterMs) quiet.push(t);
    }
    if (quiet.length) {
      void this.opts.podsExisting!(quiet.map((t) => t.metadata.name!)).then(
        (existing) => this.markDeleted(quiet.filter((t) => !existing.has(t.metadata.name!))),
        (err: unknown) => this.opts.logger.warn({ err }, 'asking which pods of quiet timelines exist failed'),
      );
    }
    if (expiredRecords.length === 0) return;
    for (const t of expiredRecords) this.timelines.delete(t.metadata.name!);
    this.persist([], expiredRecords);
    this.announceEvicted(expiredRecords);
  }

  /** Records whose pod went unseen: deleted as of now (announced as MODIFIED, written through); one changed meanwhile is left. */
  private markDeleted(orphans: readonly PodTimeline[]): void {
    const current = orphans.filter((t) => this.timelines.get(t.metadata.name!) === t);
    if (current.length === 0) return;
    const deletedAt = microTime(this.opts.clock.now());
    const marked = current.map((t) => ({ ...t, metadata: { ...t.metadata, resourceVersion: String(++this.rv) }, deletedAt }));
    for (const t of marked) this.timelines.set(t.metadata.name!, t);
    if (this.writer) for (const t of marked) this.headChanged.add(t.metadata.name!);
    this.persist(marked, []);
    for (const t of marked) this.publish({ type: 'MODIFIED', object: t, resourceVersion: Number(t.metadata.resourceVersion) });
  }

  /** Over the global cap: deleted pods' records go first (earliest deletion first), then the oldest. */
  private overCap(): PodTimeline[] {
    let excess = this.timelines.size - this.maxPods;
    if (excess <= 0) return [];
    const evicted: PodTimeline[] = [];
    const deleted = [...this.timelines.values()].filter((t) => t.deletedAt).sort((a, b) => Date.parse(a.deletedAt!) - Date.parse(b.deletedAt!));
    for (const t of deleted) {
      if (excess-- <= 0) break;
      evicted.push(t);
      this.timelines.delete(t.metadata.name!);
    }
    for (const t of this.timelines.values()) {
      if (excess-- <= 0) break;
      evicted.push(t);
      this.timelines.delete(t.metadata.name!);
    }
    return evicted;
  }

  /** Resolves once everything recorded so far is in the file (at once without one). */
  committed(): Promise<void> {
    if (!this.commitTimer) return this.inFlight;
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** Marks records to write behind. */
  private persist(written: readonly PodTimeline[], removed: readonly PodTimeline[]): void {
    if (!this.writer) return;
    for (const t of written) this.dirty.set(t.metadata.name!, true);
    for (const t of removed) {
      this.dirty.set(t.metadata.name!, false);
      // Recorded again before the commit, it starts over from no rows.
      this.unwritten.set(t.metadata.name!, true);
    }
    this.scheduleCommit();
  }

  /** The first change after a commit (or a failed one) schedules the next. */
  private scheduleCommit(): void {
    this.commitTimer ??= this.opts.clock.setTimer(this.opts.commitDelayMs ?? 10, () => this.commit());
  }

  /**
   * Hands every changed record to the writer as one transaction, then answers who waited for it. A
   * failed write marks its records again, to be written whole by the next commit.
   */
  private commit(): void {
    this.commitTimer?.cancel();
    this.commitTimer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    const writer = this.writer;
    if (!writer || (this.dirty.size === 0 && this.intakeRows.length === 0 && !this.clearIntake)) {
      void this.inFlight.then(() => waiters.forEach((w) => w.resolve()));
      return;
    }
    const writes: TimelineWrite[] = [];
    for (const [uid, keep] of this.dirty) {
      const t = keep ? this.timelines.get(uid) : undefined;
      const unwritten = this.unwritten.get(uid);
      const headChanged = this.headChanged.delete(uid);
      this.unwritten.delete(uid);
      if (!t) {
        writes.push({ uid, removed: true });
        continue;
      }
      // Steps arrive out of start order (each component batches its own), so rows are appended as
      // they come and sorted on load.
      const { steps, ...head } = t;
      const write: TimelineWrite = { uid };
      if (headChanged || unwritten === true) write.head = head;
      if (unwritten === true) {
        write.rewrite = true;
        if (steps.length) write.steps = JSON.stringify(steps);
      } else if (unwritten?.length) {
        write.steps = JSON.stringify(unwritten);
      }
      writes.push(write);
    }
    this.dirty.clear();
    const intake = this.intakeRows;
    const clearIntake = this.clearIntake;
    this.intakeRows = [];
    this.clearIntake = false;
    this.inFlight = writer.write({ resourceVersion: this.rv, writes, ...(clearIntake ? { clearIntake } : {}), ...(intake.length ? { intake } : {}) }).then(
      () => waiters.forEach((w) => w.resolve()),
      (err: unknown) => {
        this.opts.logger.error({ err }, 'writing pod timelines failed');
        // Rows of batches still waiting are written again; a merge since (it sets clearIntake) made them unneeded.
        if (!this.clearIntake) this.intakeRows.unshift(...intake);
        if (clearIntake) this.clearIntake = true;
        for (const w of writes) {
          this.unwritten.set(w.uid, true);
          if (!this.dirty.has(w.uid)) this.dirty.set(w.uid, !w.removed);
        }
        if (this.writer) this.scheduleCommit();
        for (const w of waiters) w.reject(internalError('the pod timeline store could not write its file'));
      },
    );
  }

  /** Steps a merge kept, for the next commit; `rewrite` when it replaced or dropped a stored one. */
  private noteUnwritten(uid: string, added: readonly TimelineStep[], rewrite: boolean): void {
    if (!this.writer) return;
    const pending = this.unwritten.get(uid);
    if (rewrite || pending === true) this.unwritten.set(uid, true);
    else if (pending) pending.push(...added);
    else this.unwritten.set(uid, [...added]);
  }

  private announceEvicted(evicted: readonly PodTimeline[]): void {
    for (const t of evicted) {
      const object = { ...t, metadata: { ...t.metadata, resourceVersion: String(++this.rv) } };
      this.publish({ type: 'DELETED', object, resourceVersion: this.rv });
    }
  }

  private publish(event: TimelineEvent): void {
    this.history.push(event);
    // Trimmed in chunks: one splice per historySize events instead of a shift of the whole ring each.
    if (this.history.length >= 2 * this.historySize) this.history.splice(0, this.history.length - this.historySize);
    for (const w of this.watchers) if (selected(w.filter, event.object)) w.send(event);
  }
}

function selected(filter: TimelineFilter, t: PodTimeline): boolean {
  return (!filter.namespace || t.metadata.namespace === filter.namespace) && (!filter.matches || filter.matches(t));
}

/** Whether two versions of a record have the same head but for the resourceVersion (what is written of it). */
function sameHead(a: PodTimeline, b: PodTimeline): boolean {
  return (
    a.metadata.namespace === b.metadata.namespace &&
    a.pod.namespace === b.pod.namespace &&
    a.pod.name === b.pod.name &&
    a.pod.nodeName === b.pod.nodeName &&
    a.pod.owner?.kind === b.pod.owner?.kind &&
    a.pod.owner?.name === b.pod.owner?.name &&
    a.deletedAt === b.deletedAt &&
    a.truncated === b.truncated
  );
}

function compareKeys(a: PodTimeline, b: PodTimeline): number {
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** The timeline's pod: what the record says, else what was known, else what the steps tell. */
function podOf(before: TimelinePod | undefined, rec: TimelineRecord, steps: readonly TimelineStep[]): TimelinePod {
  const pod: TimelinePod = { namespace: before?.namespace || rec.pod.namespace, name: before?.name || rec.pod.name, uid: rec.pod.uid };
  const bound = steps.findLast((s) => s.step === 'Bound')?.attributes?.node;
  const nodeName = rec.pod.nodeName || before?.nodeName || (typeof bound === 'string' ? bound : undefined);
  if (nodeName) pod.nodeName = nodeName;
  const created = steps.find((s) => s.step === 'CreatedByController')?.attributes;
  const owner =
    rec.pod.owner ?? before?.owner ?? (typeof created?.ownerKind === 'string' && typeof created.ownerName === 'string' ? { kind: created.ownerKind, name: created.ownerName } : undefined);
  if (owner) pod.owner = owner;
  return pod;
}
