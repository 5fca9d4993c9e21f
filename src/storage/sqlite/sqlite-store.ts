// SqliteStore: etcd semantics on one log-structured SQLite table, in the spirit of kine.
//
// Schema (one process owns the file):
//   kv(id INTEGER PRIMARY KEY AUTOINCREMENT  -- the global revision of the write that appended the row
//      name TEXT, deleted INTEGER            -- 1 for a tombstone, which keeps the last value
//      create_revision INTEGER               -- id of the row that started this life of the key
//      prev_revision INTEGER                 -- id of the key's previous row, 0 if none
//      value TEXT)
//   UNIQUE (name, prev_revision): two writers that read the same predecessor cannot both append,
//     which is the compare-and-swap; since prev_revision grows with id per name, the same index
//     finds a key's newest row and a row's successor.
//   meta(name TEXT PRIMARY KEY, value INTEGER): 'compact_rev' (reads below it answer Compacted) and
//     'compact_done' (how far compaction has scanned, so a crash mid-compaction resumes there).
//
// Durability: WAL with synchronous=NORMAL. A commit is in the WAL file before COMMIT returns, so it
// survives kill -9 of the process (the kernel holds the pages); only an OS crash or power loss can
// drop the newest commits, and the database stays consistent. FULL would fsync every commit.
//
// Group commit: a commit writes several WAL frames, too costly per write at thousands of writes a
// second. The first write of an event-loop turn opens a transaction, the turn's other writes join
// it, and a setImmediate commits it; a write resolves (is acknowledged) only after that COMMIT.
// Checks run against the open transaction, so compare-and-swap within a batch stays exact. Nothing
// uncommitted reaches a caller: watch events, currentRevision and failed checks follow the COMMIT,
// and reads wait for an open batch to end.
import Database from 'better-sqlite3';
import { pageLimit, StorageError, valueToBytes, type KeyValue, type ListOptions, type ListResult, type Store, type WatchEvent, type WatchOptions, type WatchSink } from '../store.js';
import { SqliteWatch } from './watch.js';

interface Row {
  id: number;
  name: string;
  deleted: number;
  create_revision: number;
  value: string;
}

interface HistoryRow extends Row {
  prev_id: number | null;
  prev_deleted: number | null;
  prev_create: number | null;
  prev_value: string | null;
}

/** etcd's default --max-request-bytes: the same values fit in either backend. */
const MAX_VALUE_BYTES = 1.5 * 1024 * 1024;

/** Rows read per step when replaying history to a watch or compacting. */
const ROWS_PER_STEP = 1000;

/** Bound for an empty prefix: SQLite sorts every BLOB after every TEXT, so `name < x''` always holds. */
const NO_UPPER_BOUND = Buffer.alloc(0);

/** The smallest string above every key with this prefix (keys are ASCII in practice). */
function prefixEnd(prefix: string): string | Buffer {
  let end = prefix;
  while (end.length > 0) {
    const last = end.charCodeAt(end.length - 1);
    if (last < 0xffff) return end.slice(0, -1) + String.fromCharCode(last + 1);
    end = end.slice(0, -1);
  }
  return NO_UPPER_BOUND;
}

const toKeyValue = (r: Row): KeyValue => ({ key: r.name, value: r.value, createRevision: r.create_revision, modRevision: r.id });

function toEvent(r: HistoryRow): WatchEvent {
  const prevKv =
    r.prev_id !== null && !r.prev_deleted
      ? { key: r.name, value: r.prev_value!, createRevision: r.prev_create!, modRevision: r.prev_id }
      : undefined;
  return { type: r.deleted ? 'delete' : 'put', kv: toKeyValue(r), prevKv, revision: r.id };
}

/** The writes of one event-loop turn: one transaction, acknowledged together once it commits. */
class Batch {
  readonly writes: { event: WatchEvent; resolve: (kv: KeyValue) => void; reject: (err: Error) => void }[] = [];
  /** Resolves (never rejects) once the batch committed or failed. */
  readonly settled: Promise<void>;
  private markSettled!: () => void;

  constructor() {
    this.settled = new Promise((resolve) => (this.markSettled = resolve));
  }

  add(event: WatchEvent): Promise<KeyValue> {
    return new Promise((resolve, reject) => this.writes.push({ event, resolve, reject }));
  }

  /** Readers are released before writers, so a reader's continuation runs before a writer can open the next batch. */
  commit(): void {
    this.markSettled();
    for (const w of this.writes) w.resolve(w.event.kv);
  }

  fail(cause: unknown): void {
    this.markSettled();
    const reason = cause instanceof Error ? cause.message : String(cause);
    for (const w of this.writes) w.reject(new StorageError('Unavailable', w.event.kv.key, `commit failed: ${reason}`));
  }
}

export class SqliteStore implements Store {
  readonly synchronousWatch = true;
  private readonly db: Database.Database;
  /** The last committed revision: what reads, watches and currentRevision() see. */
  private rev: number;
  /** The last revision handed to a write, committed or in the open batch. */
  private allocated: number;
  private batch: Batch | undefined;
  private compactRev: number;
  private readonly watches = new Set<SqliteWatch>();
  private compaction: Promise<void> = Promise.resolve();
  private readonly q;

  /** Opens (creating if needed) the database at `path`; `:memory:` for tests. */
  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS kv (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        deleted INTEGER NOT NULL,
        create_revision INTEGER NOT NULL,
        prev_revision INTEGER NOT NULL,
        value TEXT NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS kv_name_prev ON kv (name, prev_revision);
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
    const db = this.db;
    const cols = 'id, name, deleted, create_revision, value';
    // The newest row of `name` at or below revision `rev` is the one without a successor at or below it.
    const visible = 'k.id <= @rev AND k.deleted = 0 AND NOT EXISTS (SELECT 1 FROM kv n WHERE n.name = k.name AND n.prev_revision = k.id AND n.id <= @rev)';
    this.q = {
      latest: db.prepare<[string], Row>(`SELECT ${cols} FROM kv WHERE name = ? ORDER BY prev_revision DESC LIMIT 1`),
      insert: db.prepare<[number, string, number, number, number, string]>(
        'INSERT INTO kv (id, name, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      page: db.prepare<{ lo: string; hi: string | Buffer; rev: number; limit: number }, Row>(
        `SELECT ${cols} FROM kv k WHERE name >= @lo AND name < @hi AND ${visible} ORDER BY name LIMIT @limit`,
      ),
      count: db
        .prepare<{ lo: string; hi: string | Buffer; rev: number }, number>(`SELECT COUNT(*) FROM kv k WHERE name >= @lo AND name < @hi AND ${visible}`)
        .pluck(),
      // Unary + keeps SQLite off the name index: history is read in revision order from a recent id.
      history: db.prepare<{ after: number; lo: string; hi: string | Buffer; limit: number }, HistoryRow>(
        `SELECT k.id, k.name, k.deleted, k.create_revision, k.value,
                p.id AS prev_id, p.deleted AS prev_deleted, p.create_revision AS prev_create, p.value AS prev_value
         FROM kv k LEFT JOIN kv p ON p.id = k.prev_revision
         WHERE k.id > @after AND +k.name >= @lo AND +k.name < @hi ORDER BY k.id LIMIT @limit`,
      ),
      compactScan: db.prepare<[number, number, number], { id: number; prev_revision: number; deleted: number }>(
        'SELECT id, prev_revision, deleted FROM kv WHERE id > ? AND id <= ? ORDER BY id LIMIT ?',
      ),
      deleteRow: db.prepare<[number]>('DELETE FROM kv WHERE id = ?'),
      getMeta: db.prepare<[string], number>('SELECT value FROM meta WHERE name = ?').pluck(),
      setMeta: db.prepare<[string, number]>('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      sequence: db.prepare<[], number>("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").pluck(),
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    };
    this.rev = this.q.sequence.get() ?? 0;
    this.allocated = this.rev;
    this.compactRev = this.q.getMeta.get('compact_rev') ?? 0;
  }

  get(key: string): Promise<KeyValue | undefined> {
    return this.whenCommitted(() => {
      const row = this.q.latest.get(key);
      return row && !row.deleted ? toKeyValue(row) : undefined;
    });
  }

  list(opts: ListOptions): Promise<ListResult> {
    return this.whenCommitted(() => this.listCommitted(opts));
  }

  private listCommitted(opts: ListOptions): ListResult {
    const rev = this.readRevision(opts.revision, opts.prefix);
    const hi = prefixEnd(opts.prefix);
    const after = opts.startAfter === undefined ? undefined : opts.startAfter + '\0';
    const lo = after !== undefined && after > opts.prefix ? after : opts.prefix;
    const limit = pageLimit(opts.limit);
    // One row past the limit tells whether there are more; -1 is SQLite's "no limit".
    const rows = this.q.page.all({ lo, hi, rev, limit: limit ? limit + 1 : -1 });
    if (!limit || rows.length <= limit) return { items: rows.map(toKeyValue), revision: rev, more: false, remaining: 0 };
    rows.length = limit;
    const remaining = this.q.count.get({ lo: rows[limit - 1].name + '\0', hi, rev })!;
    return { items: rows.map(toKeyValue), revision: rev, more: true, remaining };
  }

  create(key: string, value: string): Promise<KeyValue> {
    return this.write(() => {
      const latest = this.q.latest.get(key);
      if (latest && !latest.deleted) throw new StorageError('KeyExists', key, undefined, toKeyValue(latest));
      return this.append('put', key, value, undefined, latest?.id ?? 0);
    });
  }

  update(key: string, value: string, expectedModRevision: number): Promise<KeyValue> {
    return this.write(() => {
      const latest = this.liveLatest(key, expectedModRevision);
      return this.append('put', key, value, latest, latest.id);
    });
  }

  delete(key: string, expectedModRevision?: number): Promise<KeyValue> {
    return this.write(() => {
      const latest = this.liveLatest(key, expectedModRevision);
      // A tombstone repeats the last value, which was accepted before.
      return this.append('delete', key, latest.value, latest, latest.id);
    });
  }

  watch(opts: WatchOptions, sink: WatchSink): void {
    const w = new SqliteWatch(opts.prefix, opts.afterRevision, sink, (done) => {
      this.watches.delete(done);
      opts.signal.removeEventListener('abort', onAbort);
    });
    const onAbort = () => w.end();
    if (opts.signal.aborted) {
      queueMicrotask(onAbort);
      return;
    }
    opts.signal.addEventListener('abort', onAbort, { once: true });
    // Subscribe before replaying, so no write can fall between history and live events.
    this.watches.add(w);
    setImmediate(() => this.replay(w));
  }

  /** The last committed revision: every event up to it has been offered to the watches. */
  async currentRevision(): Promise<number> {
    return this.rev;
  }

  compact(revision: number): Promise<void> {
    // One compaction at a time; a failed one was reported to its caller and must not block the next.
    const run = this.compaction.catch(() => undefined).then(() => this.compactTo(revision));
    this.compaction = run;
    return run;
  }

  async compactedRevision(): Promise<number> {
    return this.compactRev;
  }

  async close(): Promise<void> {
    for (const w of [...this.watches]) w.end(new StorageError('Unavailable', w.prefix, 'store closed'));
    await this.compaction.catch(() => undefined);
    await this.whenCommitted(() => this.db.close());
  }

  /** The key's current row, checked against an expected modRevision. */
  private liveLatest(key: string, expectedModRevision: number | undefined): Row {
    const latest = this.q.latest.get(key);
    if (!latest || latest.deleted) throw new StorageError('NotFound', key);
    if (expectedModRevision !== undefined && latest.id !== expectedModRevision) {
      throw new StorageError('Conflict', key, `modRevision is ${latest.id}, not ${expectedModRevision}`, toKeyValue(latest));
    }
    return latest;
  }

  /** Runs `read` once no batch is open (checked in the same synchronous step), so it sees committed rows only. */
  private async whenCommitted<T>(read: () => T): Promise<T> {
    while (this.batch) await this.batch.settled;
    return read();
  }

  /**
   * Runs one write's checks and append synchronously (so compare-and-swap sees the open batch), and
   * acknowledges it when its batch commits. A failed check answers after the batch it looked at,
   * so the value it carries (Conflict, KeyExists) is never an uncommitted one.
   */
  private async write(op: () => WatchEvent): Promise<KeyValue> {
    let event: WatchEvent;
    try {
      event = op();
    } catch (err) {
      const batch = this.batch;
      // Some errors (a full disk, RAISE(ROLLBACK)) roll back the whole transaction, taking the batch's rows with it.
      if (batch && !this.db.inTransaction) this.abort(batch, err);
      else if (batch) await batch.settled;
      throw err;
    }
    return this.batch!.add(event);
  }

  /** Appends the row of one write to the turn's batch, opening it if needed. `prev` is the live value replaced. */
  private append(type: WatchEvent['type'], key: string, value: string, prev: Row | undefined, prevRevision: number): WatchEvent {
    if (type === 'put' && valueToBytes(value).length > MAX_VALUE_BYTES) throw new StorageError('TooLarge', key, `value of ${key} exceeds ${MAX_VALUE_BYTES} bytes`);
    if (!this.batch) {
      this.q.begin.run();
      const batch = new Batch();
      this.batch = batch;
      setImmediate(() => this.commit(batch));
    }
    const id = this.allocated + 1;
    const createRevision = prev?.create_revision ?? id;
    this.q.insert.run(id, key, type === 'delete' ? 1 : 0, createRevision, prevRevision, value);
    // Only a row that is in: a throwing insert leaves no gap in the revisions.
    this.allocated = id;
    return { type, kv: { key, value, createRevision, modRevision: id }, prevKv: prev && toKeyValue(prev), revision: id };
  }

  private commit(batch: Batch): void {
    if (this.batch !== batch) return;
    try {
      this.q.commit.run();
    } catch (err) {
      this.abort(batch, err);
      return;
    }
    this.batch = undefined;
    for (const { event } of batch.writes) {
      this.rev = event.revision;
      for (const w of this.watches) if (event.kv.key.startsWith(w.prefix)) w.offer(event);
    }
    batch.commit();
  }

  /** Drops the batch: nothing of it was committed, so no events, and its revisions are handed out again. */
  private abort(batch: Batch, cause: unknown): void {
    this.batch = undefined;
    try {
      if (this.db.inTransaction) this.q.rollback.run();
    } catch {
      // Then the connection itself is failing: the next BEGIN reports it to its writer.
    }
    this.allocated = this.rev;
    batch.fail(cause);
  }

  private readRevision(revision: number | undefined, key: string): number {
    if (revision === undefined || revision === 0) return this.rev;
    if (revision < this.compactRev) throw new StorageError('Compacted', key, `revision ${revision} is compacted (below ${this.compactRev})`);
    if (revision > this.rev) throw new StorageError('TooLarge', key, `revision ${revision} is in the future (current ${this.rev})`);
    return revision;
  }

  /** Replays one step of history, then yields so a long replay does not hold the event loop. */
  private replay(w: SqliteWatch): void {
    if (!this.watches.has(w)) return;
    if (this.batch) {
      void this.batch.settled.then(() => this.replay(w));
      return;
    }
    if (w.position < this.compactRev) {
      w.end(new StorageError('Compacted', w.prefix, `revision ${w.position} is compacted (below ${this.compactRev})`));
      return;
    }
    const rows = this.q.history.all({ after: w.position, lo: w.prefix, hi: prefixEnd(w.prefix), limit: ROWS_PER_STEP });
    for (const r of rows) w.deliver(toEvent(r));
    if (rows.length === ROWS_PER_STEP) setImmediate(() => this.replay(w));
    else w.caughtUp();
  }

  private async compactTo(revision: number): Promise<void> {
    // Compaction's own transactions must not nest into a batch (they would commit or fail with it).
    while (this.batch) await this.batch.settled;
    if (revision <= this.compactRev) return;
    if (revision > this.rev) throw new StorageError('TooLarge', '', `cannot compact to future revision ${revision} (current ${this.rev})`);
    // Publish the new bound before deleting anything, so no reader sees a half-compacted past.
    this.compactRev = revision;
    this.q.setMeta.run('compact_rev', revision);
    let done = this.q.getMeta.get('compact_done') ?? 0;
    // A row's predecessor is superseded, and a tombstone is dead, once they are at or below `revision`.
    const step = this.db.transaction((from: number) => {
      const rows = this.q.compactScan.all(from, revision, ROWS_PER_STEP);
      for (const r of rows) {
        if (r.prev_revision) this.q.deleteRow.run(r.prev_revision);
        if (r.deleted) this.q.deleteRow.run(r.id);
      }
      const next = rows.length === ROWS_PER_STEP ? rows[rows.length - 1].id : revision;
      this.q.setMeta.run('compact_done', next);
      return next;
    });
    while (done < revision) {
      done = await this.whenCommitted(() => step(done));
      if (done < revision) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}
