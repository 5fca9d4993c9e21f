import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from './open.js';
import { isStorageError } from './store.js';
import { startEtcd } from './testing/etcd-server.js';

void describe('openStore', () => {
  void it('opens sqlite in DATA/state.db, creating the directory, and finds the data again', async (t) => {
    const root = mkdtempSync(join(tmpdir(), 'kite-open-'));
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const dataDir = join(root, 'data');
    const first = await openStore('sqlite', dataDir);
    await first.create('/a', '1');
    await first.close();
    assert.ok(existsSync(join(dataDir, 'state.db')));
    const again = await openStore('sqlite', dataDir);
    t.after(() => again.close());
    assert.equal((await again.get('/a'))?.value, '1');
  });

  void it('opens etcd with several endpoints and a key prefix', async (t) => {
    const etcd = await startEtcd();
    t.after(() => etcd.stop());
    const store = await openStore(`etcd://${etcd.endpoint},${etcd.endpoint}/kite`, 'unused');
    t.after(() => store.close());
    await store.create('/a', '1');
    const plain = await openStore(`etcd://${etcd.endpoint}`, 'unused');
    t.after(() => plain.close());
    assert.equal((await plain.get('/kite/a'))?.value, '1');
    assert.equal(await plain.get('/a'), undefined);
  });

  void it('fails with Unavailable when etcd does not answer', async () => {
    await assert.rejects(openStore('etcd://127.0.0.1:1', 'unused'), (err) => isStorageError(err, 'Unavailable'));
  });

  for (const spec of ['postgres://db', 'etcd://', 'etcd://host', 'etcd://h:1,', 'sqlite:x']) {
    void it(`rejects ${JSON.stringify(spec)} with the accepted forms`, async () => {
      await assert.rejects(openStore(spec, 'unused'), /expected "sqlite" or "etcd:\/\/HOST:PORT/);
    });
  }
});
