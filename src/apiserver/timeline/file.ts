// The pod timeline's side file (DATA/timeline.db): a record's head (all but its steps) in
// `timeline_records`, its steps in `timeline_record_steps`, one row per commit holding the steps that
// commit appended (a JSON array; rows of one step object from older files still load). Records are
// numbered in creation order and step rows name their record by number, so a commit's inserts land
// at or near the end of both tables and their index instead of at random places keyed by UID.
// A head is written when it changes beyond its resourceVersion; the store's resourceVersion is kept
// once per commit in `timeline_meta`, so a restart goes on counting from the last one committed.
// `timeline_intake` holds batches answered but not merged yet (the store merges when the machine
// has time): one row per batch, removed by the commit that writes their merge.
// Written off the API server's event loop: the store runs in the pod timelines' process (process.ts).
import Database from 'better-sqlite3';
import type { PodTimeline, TimelineStep } from '../../api/timeline/types.js';
import { byStart } from './merge.js';
import type { TimelineRecord } from './store.js';

/**
 * One record's change: `removed` removes it; else `head` replaces its head (absent: unchanged but for
 * its resourceVersion; a record new to the file always has one), and `steps` (a JSON array, stored as
 * it is: one row) are appended, or replace its rows with `rewrite`.
 */
export interface TimelineWrite {
  uid: string;
  removed?: boolean;
  head?: Omit<PodTimeline, 'steps'>;
  steps?: string;
  rewrite?: boolean;
}

/**
 * One transaction: `clearIntake` removes the intake's rows first; then the records' changes, the
 * store's resourceVersion after them, and the batches taken but not merged (`intake`, each a JSON
 * array of records).
 */
export interface TimelineCommit {
  resourceVersion: number;
  writes: readonly TimelineWrite[];
  clearIntake?: boolean;
  intake?: readonly string[];
}

/** Where the store's commits go: one transaction per `write`, applied in call order. */
export interface TimelineFileWriter {
  write(commit: TimelineCommit): Promise<void>;
  close(): Promise<void>;
}

/** A loaded record; `legacy`: its steps came from its head (a file from before steps had rows). */
export interface LoadedTimeline {
  timeline: PodTimeline;
  legacy: boolean;
}

/** What a file holds: its records, the store's resourceVersion as of the last commit (0: none), the batches not merged. */
export interface LoadedTimelineFile {
  timelines: LoadedTimeline[];
  resourceVersion: number;
  intake: TimelineRecord[][];
}

function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS timeline_records (rec INTEGER PRIMARY KEY, uid TEXT NOT NULL, body TEXT NOT NULL)');
  db.exec('CREATE TABLE IF NOT EXISTS timeline_record_steps (rec INTEGER NOT NULL, body TEXT NOT NULL)');
  db.exec('CREATE INDEX IF NOT EXISTS timeline_record_steps_rec ON timeline_record_steps (rec)');
  db.exec('CREATE TABLE IF NOT EXISTS timeline_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)');
  db.exec('CREATE TABLE IF NOT EXISTS timeline_intake (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  moveUidKeyedTables(db);
  return db;
}

/** A file from before records were numbered (tables keyed by UID) is moved to the numbered tables, in order, once. */
function moveUidKeyedTables(db: Database.Database): void {
  const has = (table: string) => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
  if (!has('timelines') && !has('timeline_steps')) return;
  db.transaction(() => {
    if (has('timelines')) {
      db.exec('INSERT INTO timeline_records (uid, body) SELECT uid, body FROM timelines ORDER BY rowid');
      db.exec('DROP TABLE timelines');
    }
    if (has('timeline_steps')) {
      db.exec('INSERT INTO timeline_record_steps (rec, body) SELECT r.rec, s.body FROM timeline_steps s JOIN timeline_records r ON r.uid = s.uid ORDER BY s.rowid');
      db.exec('DROP TABLE timeline_steps');
    }
  })();
}

/** Every record in the file, in the order they were first written (the file is created when missing). */
export function loadTimelineFile(file: string): LoadedTimelineFile {
  const db = open(file);
  try {
    const steps = new Map<number, TimelineStep[]>();
    for (const row of db.prepare('SELECT rec, body FROM timeline_record_steps ORDER BY rowid').iterate() as IterableIterator<{ rec: number; body: string }>) {
      let list = steps.get(row.rec);
      if (!list) steps.set(row.rec, (list = []));
      const body = JSON.parse(row.body) as TimelineStep | TimelineStep[];
      if (Array.isArray(body)) list.push(...body);
      else list.push(body);
    }
    const timelines: LoadedTimeline[] = [];
    for (const row of db.prepare('SELECT rec, body FROM timeline_records ORDER BY rec').iterate() as IterableIterator<{ rec: number; body: string }>) {
      const head = JSON.parse(row.body) as Omit<PodTimeline, 'steps'> & { steps?: TimelineStep[] };
      // Rows hold steps in the order they arrived: sorted by start as the store keeps them.
      const all = [...(head.steps ?? []), ...(steps.get(row.rec) ?? [])].sort(byStart);
      timelines.push({ timeline: { ...head, steps: all }, legacy: head.steps !== undefined });
    }
    const rv = db.prepare("SELECT value FROM timeline_meta WHERE name = 'resourceVersion'").get() as { value: string } | undefined;
    // Written by this store from records it had checked: read back as they were.
    const intake = (db.prepare('SELECT body FROM timeline_intake ORDER BY id').all() as { body: string }[]).map((row) => JSON.parse(row.body) as TimelineRecord[]);
    return { timelines, resourceVersion: Number(rv?.value ?? 0) || 0, intake };
  } finally {
    db.close();
  }
}

/** Writes in the calling thread (the pod timelines' own process in `kite server`). */
export class SqliteTimelineWriter implements TimelineFileWriter {
  private readonly db: Database.Database;
  /** Each stored record's number, by UID. */
  private recs = new Map<string, number>();
  private readonly transaction: (commit: TimelineCommit) => void;

  constructor(file: string) {
    const db = (this.db = open(file));
    this.loadRecs();
    const addHead = db.prepare<[string, string]>('INSERT INTO timeline_records (uid, body) VALUES (?, ?)');
    const updateHead = db.prepare<[string, number]>('UPDATE timeline_records SET body = ? WHERE rec = ?');
    const removeHead = db.prepare<[number]>('DELETE FROM timeline_records WHERE rec = ?');
    const addSteps = db.prepare<[number, string]>('INSERT INTO timeline_record_steps (rec, body) VALUES (?, ?)');
    const removeSteps = db.prepare<[number]>('DELETE FROM timeline_record_steps WHERE rec = ?');
    const setResourceVersion = db.prepare<[string]>("INSERT INTO timeline_meta (name, value) VALUES ('resourceVersion', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value");
    const clearIntake = db.prepare('DELETE FROM timeline_intake');
    const addIntake = db.prepare<[string]>('INSERT INTO timeline_intake (body) VALUES (?)');
    this.transaction = db.transaction((commit: TimelineCommit) => {
      if (commit.clearIntake) clearIntake.run();
      for (const w of commit.writes) {
        let rec = this.recs.get(w.uid);
        if (w.removed) {
          if (rec === undefined) continue;
          removeHead.run(rec);
          removeSteps.run(rec);
          this.recs.delete(w.uid);
          continue;
        }
        if (rec === undefined) {
          // Rolls the commit back: the store then writes its records whole, heads included.
          if (!w.head) throw new Error(`pod timeline ${w.uid} is not in the file and came without its head`);
          this.recs.set(w.uid, (rec = Number(addHead.run(w.uid, JSON.stringify(w.head)).lastInsertRowid)));
        } else {
          if (w.head) updateHead.run(JSON.stringify(w.head), rec);
          if (w.rewrite) removeSteps.run(rec);
        }
        if (w.steps) addSteps.run(rec, w.steps);
      }
      setResourceVersion.run(String(commit.resourceVersion));
      for (const batch of commit.intake ?? []) addIntake.run(batch);
    });
  }

  /** Stores a commit in one transaction. */
  commit(commit: TimelineCommit): void {
    try {
      this.transaction(commit);
    } catch (err) {
      // Rolled back: the numbers given or taken inside it are read again.
      this.loadRecs();
      throw err;
    }
  }

  private loadRecs(): void {
    const rows = this.db.prepare('SELECT rec, uid FROM timeline_records').all() as { rec: number; uid: string }[];
    this.recs = new Map(rows.map((r) => [r.uid, r.rec]));
  }

  async write(commit: TimelineCommit): Promise<void> {
    this.commit(commit);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
