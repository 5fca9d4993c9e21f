import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreConformance } from '../conformance.js';
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
