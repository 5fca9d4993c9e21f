import { beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { guaranteedUpdate } from './guaranteed-update.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { isStorageError, type KeyValue } from './store.js';

void describe('guaranteedUpdate', () => {
  let store: SqliteStore;
  beforeEach(() => {
    store = new SqliteStore(':memory:');
  });

  void it('writes the value computed from the current one', async () => {
    const v1 = await store.create('/k', '1');
    const seen: (KeyValue | undefined)[] = [];
    const out = await guaranteedUpdate(store, '/k', (cur) => {
      seen.push(cur);
      return String(Number(cur!.value) + 1);
    });
    assert.deepEqual(seen, [v1]);
    assert.equal(out.value, '2');
    assert.deepEqual(await store.get('/k'), out);
  });

  void it('fails with NotFound for an absent key unless told to create it', async () => {
    await assert.rejects(
      guaranteedUpdate(store, '/k', () => 'x'),
      (err) => isStorageError(err, 'NotFound'),
    );
    const created = await guaranteedUpdate(store, '/k', (cur) => (cur ? 'wrong' : 'new'), { ignoreNotFound: true });
    assert.equal(created.value, 'new');
    assert.equal(created.createRevision, created.modRevision);
  });

  void it('retries on a conflict with the value that won, without losing it', async () => {
    await store.create('/k', 'a');
    const inputs: string[] = [];
    const out = await guaranteedUpdate(store, '/k', async (cur) => {
      inputs.push(cur!.value);
      // Another writer gets in between our read and our write, once.
      if (inputs.length === 1) await store.update('/k', cur!.value + 'b', cur!.modRevision);
      return cur!.value + 'c';
    });
    assert.deepEqual(inputs, ['a', 'ab']);
    assert.equal(out.value, 'abc');
  });

  void it('retries a create that lost the race against another create', async () => {
    const inputs: (string | undefined)[] = [];
    const out = await guaranteedUpdate(
      store,
      '/k',
      async (cur) => {
        inputs.push(cur?.value);
        if (!cur) await store.create('/k', 'theirs');
        return (cur?.value ?? '') + '+mine';
      },
      { ignoreNotFound: true },
    );
    assert.deepEqual(inputs, [undefined, 'theirs']);
    assert.equal(out.value, 'theirs+mine');
  });

  void it('writes nothing when the value does not change', async () => {
    const v1 = await store.create('/k', 'same');
    const out = await guaranteedUpdate(store, '/k', (cur) => cur!.value);
    assert.deepEqual(out, v1);
    assert.equal(await store.currentRevision(), v1.modRevision);
  });

  void it('checks a stale cached copy against storage before deciding nothing changed', async () => {
    const stale = await store.create('/k', 'old');
    await store.update('/k', 'new', stale.modRevision);
    const inputs: string[] = [];
    const out = await guaranteedUpdate(
      store,
      '/k',
      (cur) => {
        inputs.push(cur!.value);
        return 'old';
      },
      { cached: stale },
    );
    assert.deepEqual(inputs, ['old', 'new']);
    assert.equal(out.value, 'old');
    assert.ok(out.modRevision > stale.modRevision + 1);
  });

  void it('aborts with the error tryUpdate throws, writing nothing', async () => {
    const v1 = await store.create('/k', '1');
    await assert.rejects(
      guaranteedUpdate(store, '/k', () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(await store.get('/k'), v1);
  });

  void it('gives up with the last Conflict after maxAttempts', async () => {
    await store.create('/k', '0');
    let calls = 0;
    await assert.rejects(
      guaranteedUpdate(
        store,
        '/k',
        async (cur) => {
          calls++;
          await store.update('/k', cur!.value + '!', cur!.modRevision);
          return 'mine';
        },
        { maxAttempts: 3 },
      ),
      (err) => isStorageError(err, 'Conflict') && err.current?.value === '0!!!',
    );
    assert.equal(calls, 3);
  });
});
