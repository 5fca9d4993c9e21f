import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreConformance } from '../conformance.js';
import { isStorageError, StorageError, type WatchEvent } from '../store.js';
import { SqliteStore } from './sqlite-store.js';

describeStoreConformance('sqlite', async () => new SqliteStore(':memory:'));

// Creates keys forever, printing each revision once create() has resolved.
const writer = `
const { SqliteStore } = await import(process.env.STORE_MODULE);
const store = new SqliteStore(process.env.DB_PATH);
for (let i = 0; ; i++) {
  const kv = await store.create('/k/' + i, 'v' + i);
  process.stdout.write(kv.modRevision + '\\n');
}
`;

void describe('SqliteStore on disk', () => {
  void it('keeps every acknowledged write when the process is killed with SIGKILL', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kite-sqlite-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'state.db');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writer], {
      env: { ...process.env, STORE_MODULE: new URL('./sqlite-store.ts', import.meta.url).href, DB_PATH: dbPath },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acked: number[] = [];
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      acked.push(...lines.map(Number));
      if (acked.length >= 300) child.kill('SIGKILL');
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    assert.equal(signal, 'SIGKILL', `writer exited with code ${code}`);

    const store = new SqliteStore(dbPath);
    t.after(() => store.close());
    const last = acked[acked.length - 1];
    assert.ok((await store.currentRevision()) >= last);
    const { items } = await store.list({ prefix: '/k/' });
    const present = new Set(items.map((kv) => kv.modRevision));
    assert.deepEqual(
      acked.filter((rev) => !present.has(rev)),
      [],
    );
    const next = await store.create('/after', 'x');
    assert.ok(next.modRevision > last);
  });

  void it('keeps the revision and the compacted revision across reopening', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kite-sqlite-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const dbPath = join(dir, 'state.db');
    let store = new SqliteStore(dbPath);
    const a = await store.create('/a', '1');
    const gone = await store.delete('/a');
    await store.compact(gone.modRevision);
    await store.close();

    store = new SqliteStore(dbPath);
    t.after(() => store.close());
    // The newest row was a compacted tombstone: the revision must still not go back.
    assert.equal(await store.currentRevision(), gone.modRevision);
    assert.equal(await store.compactedRevision(), gone.modRevision);
    await assert.rejects(store.list({ prefix: '/', revision: a.modRevision }), /compacted/);
    const again = await store.create('/a', '2');
    assert.equal(again.modRevision, gone.modRevision + 1);
  });
});

/** A store on a file in a temp dir, and a second connection to the same file that sees only what is committed. */
function openPair(t: { after: (fn: () => unknown) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'kite-sqlite-'));
  const path = join(dir, 'state.db');
  const store = new SqliteStore(path);
  const observer = new Database(path);
  t.after(async () => {
    observer.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const committedRows = () => observer.prepare<[], { id: number; name: string }>('SELECT id, name FROM kv ORDER BY id').all();
  return { store, observer, committedRows };
}

const fulfilled = <T>(r: PromiseSettledResult<T>): T => (r.status === 'fulfilled' ? r.value : assert.fail(`rejected: ${String(r.reason)}`));
const rejected = (r: PromiseSettledResult<unknown>): unknown => (r.status === 'rejected' ? r.reason : assert.fail('fulfilled'));

void describe('SqliteStore group commit', () => {
  void it('commits the writes of one event-loop turn in one transaction, acknowledging them after it', async (t) => {
    const { store, committedRows } = openPair(t);
    const seed = await store.create('/g/seed', '0');
    const before = committedRows();
    assert.deepEqual(before.map((r) => r.name), ['/g/seed']);

    const writes = [store.create('/g/a', '1'), store.update('/g/seed', '1', seed.modRevision), store.create('/g/b', '1'), store.delete('/g/a')];
    // The batch is open: nothing of it is visible to another connection, now or later in this turn.
    assert.deepEqual(committedRows(), before);
    await Promise.resolve();
    assert.deepEqual(committedRows(), before);

    // Whichever write is acknowledged first, the other connection already sees every row of the batch.
    const seenAtFirstAck = await Promise.race(writes.map((p) => p.then(() => committedRows())));
    const results = await Promise.all(writes);
    const revs = results.map((kv) => kv.modRevision);
    assert.deepEqual(revs, [1, 2, 3, 4].map((i) => seed.modRevision + i));
    assert.deepEqual(
      seenAtFirstAck.map((r) => r.id),
      [seed.modRevision, ...revs],
    );
    assert.equal(results[3].value, '1');
    assert.deepEqual((await store.list({ prefix: '/g/' })).items.map((kv) => [kv.key, kv.value]), [
      ['/g/b', '1'],
      ['/g/seed', '1'],
    ]);
  });

  void it('delivers a batch to a watch only after its commit, in revision order', async (t) => {
    const { store, observer } = openPair(t);
    const start = await store.create('/w/0', '0');
    const events: WatchEvent[] = [];
    const committedAtDelivery: boolean[] = [];
    const rowById = observer.prepare<[number], { id: number }>('SELECT id FROM kv WHERE id = ?');
    await new Promise<void>((synced) =>
      store.watch(
        { prefix: '/w/', afterRevision: start.modRevision, signal: new AbortController().signal },
        {
          event: (e) => {
            events.push(e);
            committedAtDelivery.push(rowById.get(e.revision) !== undefined);
          },
          end: () => {},
          synced,
        },
      ),
    );

    const writes = [store.create('/w/a', 'a'), store.update('/w/0', '1', start.modRevision), store.create('/w/b', 'b')];
    await Promise.resolve();
    assert.equal(events.length, 0);
    const eventsAtFirstAck = await Promise.race(writes.map((p) => p.then(() => events.length)));
    const results = await Promise.all(writes);
    assert.equal(eventsAtFirstAck, 3);
    assert.deepEqual(
      events.map((e) => e.kv),
      results,
    );
    assert.deepEqual(
      events.map((e) => e.revision),
      results.map((kv) => kv.modRevision),
    );
    assert.deepEqual(events[1].prevKv, start);
    assert.deepEqual(committedAtDelivery, [true, true, true]);
  });

  void it('keeps the other writes of a batch when one fails a check, with no gap in the revisions', async (t) => {
    const { store, committedRows } = openPair(t);
    const k = await store.create('/f/k', 'v0');
    const taken = await store.create('/f/taken', 'x');
    const first = store.update('/f/k', 'v1', k.modRevision);
    const loser = store.update('/f/k', 'v1-loser', k.modRevision);
    const committedWhenLoserHears = loser.then(
      () => [] as number[],
      () => committedRows().map((r) => r.id),
    );
    const settled = await Promise.allSettled([
      first,
      loser,
      store.create('/f/taken', 'again'),
      store.create('/f/new', 'n'),
      store.create('/f/big', 'x'.repeat(2 << 20)),
      store.delete('/f/missing'),
      store.delete('/f/taken', taken.modRevision),
    ]);
    const winner = fulfilled(settled[0]);
    assert.equal(winner.modRevision, taken.modRevision + 1);
    assert.ok(isStorageError(rejected(settled[1]), 'Conflict'));
    // The loser learns the winner's value, which was committed by the time it hears of it.
    assert.deepEqual((rejected(settled[1]) as StorageError).current, winner);
    assert.ok(isStorageError(rejected(settled[2]), 'KeyExists'));
    assert.equal(fulfilled(settled[3]).modRevision, taken.modRevision + 2);
    assert.ok(isStorageError(rejected(settled[4]), 'TooLarge'));
    assert.ok(isStorageError(rejected(settled[5]), 'NotFound'));
    assert.equal(fulfilled(settled[6]).modRevision, taken.modRevision + 3);
    // A failed check answers only once the batch it saw is committed.
    assert.ok((await committedWhenLoserHears).includes(winner.modRevision));
    assert.equal(await store.currentRevision(), taken.modRevision + 3);
    assert.deepEqual(
      committedRows().map((r) => r.id),
      [1, 2, 3, 4, 5].map((i) => k.modRevision + i - 1),
    );
    assert.equal((await store.create('/f/next', 'n')).modRevision, taken.modRevision + 4);
  });

  void it('fails the whole batch when SQLite rolls its transaction back, and hands its revisions out again', async (t) => {
    const { store, observer, committedRows } = openPair(t);
    const seed = await store.create('/r/seed', '0');
    const events: WatchEvent[] = [];
    store.watch({ prefix: '/r/', afterRevision: seed.modRevision, signal: new AbortController().signal }, { event: (e) => events.push(e), end: () => {} });
    // Another writer's trigger aborts the transaction that inserts /r/boom.
    observer.exec("CREATE TRIGGER boom AFTER INSERT ON kv WHEN NEW.name = '/r/boom' BEGIN SELECT RAISE(ROLLBACK, 'boom'); END");
    const settled = await Promise.allSettled([store.create('/r/a', 'a'), store.create('/r/boom', 'x'), store.create('/r/c', 'c')]);
    assert.ok(isStorageError(rejected(settled[0]), 'Unavailable'), String(rejected(settled[0])));
    assert.match(String(rejected(settled[0])), /boom/);
    assert.match(String(rejected(settled[1])), /boom/);
    // A write after the failure starts a batch of its own.
    assert.equal(fulfilled(settled[2]).modRevision, seed.modRevision + 1);
    assert.deepEqual(
      committedRows().map((r) => r.name),
      ['/r/seed', '/r/c'],
    );
    assert.equal(await store.currentRevision(), seed.modRevision + 1);
    assert.equal(await store.get('/r/a'), undefined);
    await store.create('/r/d', 'd');
    assert.deepEqual(
      events.map((e) => e.kv.key),
      ['/r/c', '/r/d'],
    );
  });

  void it('answers a read issued while a batch is open with the state after the whole batch', async (t) => {
    const { store } = openPair(t);
    const a = await store.create('/s/a', 'a0');
    const b = await store.create('/s/b', 'b0');
    const writeA = store.update('/s/a', 'a1', a.modRevision);
    const reads = [store.get('/s/b'), store.list({ prefix: '/s/' })] as const;
    const writeB = store.update('/s/b', 'b1', b.modRevision);
    const [gotB, listed] = await Promise.all(reads);
    const [a1, b1] = await Promise.all([writeA, writeB]);
    assert.deepEqual(gotB, b1);
    assert.deepEqual(listed.items, [a1, b1]);
    assert.equal(listed.revision, b1.modRevision);
  });

  void it('reports a batch in currentRevision only once it is committed', async (t) => {
    const { store } = openPair(t);
    const first = await store.create('/c/a', '1');
    const write = store.create('/c/b', '1');
    assert.equal(await store.currentRevision(), first.modRevision);
    const kv = await write;
    assert.equal(await store.currentRevision(), kv.modRevision);
  });

  void it('compacts and closes only after an open batch is committed', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kite-sqlite-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.db');
    let store = new SqliteStore(path);
    const a = await store.create('/x/a', '1');
    const update = store.update('/x/a', '2', a.modRevision);
    await store.compact(a.modRevision);
    const a2 = await update;
    assert.equal(await store.compactedRevision(), a.modRevision);
    assert.deepEqual(await store.get('/x/a'), a2);
    const last = store.create('/x/b', '1');
    await store.close();
    const b = await last;

    store = new SqliteStore(path);
    t.after(() => store.close());
    assert.deepEqual(await store.get('/x/b'), b);
    assert.equal(await store.currentRevision(), b.modRevision);
  });
});
