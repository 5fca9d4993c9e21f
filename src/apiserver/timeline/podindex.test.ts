import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { StoredObject } from '../../api/meta.js';
import { FakeApi } from '../testing/fakeapi.js';
import { PodIndex } from './podindex.js';

const logger = pino({ level: 'silent' });
const spec = { containers: [{ name: 'app', image: 'nginx' }] };

describe('PodIndex', () => {
  it('starts from the pods there are, follows creates, changes and deletes, and names each pod that leaves', async () => {
    const api = await FakeApi.start();
    const pods = api.client().resource('pods').namespace('default');
    const before = await pods.create({ metadata: { name: 'before' }, spec });
    const index = new PodIndex();
    const gone: StoredObject[] = [];
    const stop = await index.watch(api.registries, logger, (pod) => gone.push(pod));
    try {
      assert.equal(index.get(before.metadata!.uid!)?.metadata?.name, 'before', 'filled from the initial state');
      const after = await pods.create({ metadata: { name: 'after' }, spec });
      await pods.update({ ...after, metadata: { ...after.metadata, labels: { app: 'web' } } });
      // The watch cache delivers after the write's commit: the next turns see it.
      for (let i = 0; i < 100 && index.get(after.metadata!.uid!)?.metadata?.labels?.app !== 'web'; i++) await new Promise((r) => setImmediate(r));
      assert.equal(index.get(after.metadata!.uid!)?.metadata?.labels?.app, 'web', 'follows a change');
      await pods.delete('before', { gracePeriodSeconds: 0 });
      for (let i = 0; i < 100 && gone.length === 0; i++) await new Promise((r) => setImmediate(r));
      assert.deepEqual(gone.map((p) => p.metadata.name), ['before']);
      assert.equal(index.get(before.metadata!.uid!), undefined);
      assert.equal(index.get('no-such-uid'), undefined);
    } finally {
      stop();
      await api.stop();
    }
  });
});
