import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock.js';
import { Compactor } from './compactor.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

const MINUTE = 60_000;

/** Fails its first currentRevision() call. */
class FlakyStore extends SqliteStore {
  private failed = false;
  override async currentRevision(): Promise<number> {
    if (!this.failed) {
      this.failed = true;
      throw new Error('down');
    }
    return super.currentRevision();
  }
}

void describe('Compactor', () => {
  void it('compacts to the revision seen one interval earlier, every interval', async (t) => {
    const store = new SqliteStore(':memory:');
    t.after(() => store.close());
    const clock = new FakeClock();
    const compactor = new Compactor(store, clock, { onError: (err) => assert.fail(String(err)) });
    compactor.start();
    const first = await store.create('/a', '1');

    await clock.advance(5 * MINUTE);
    // The first round only observes.
    assert.equal(await store.compactedRevision(), 0);
    const second = await store.update('/a', '2', first.modRevision);

    await clock.advance(5 * MINUTE);
    assert.equal(await store.compactedRevision(), first.modRevision);
    await store.update('/a', '3', second.modRevision);

    await clock.advance(5 * MINUTE);
    assert.equal(await store.compactedRevision(), second.modRevision);

    await compactor.stop();
    assert.equal(clock.pending(), 0);
    await store.create('/b', '1');
    await clock.advance(20 * MINUTE);
    assert.equal(await store.compactedRevision(), second.modRevision);
  });

  void it('reports a failed round and keeps going', async (t) => {
    const store = new FlakyStore(':memory:');
    t.after(() => store.close());
    const clock = new FakeClock();
    const errors: unknown[] = [];
    const compactor = new Compactor(store, clock, { intervalMs: MINUTE, onError: (err) => errors.push(err) });
    compactor.start();
    t.after(() => compactor.stop());
    const kv = await store.create('/a', '1');
    await clock.advance(MINUTE);
    assert.deepEqual(
      errors.map((e) => (e as Error).message),
      ['down'],
    );
    await clock.advance(2 * MINUTE);
    assert.equal(await store.compactedRevision(), kv.modRevision);
  });
});
