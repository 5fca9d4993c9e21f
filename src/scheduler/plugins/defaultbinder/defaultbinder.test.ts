import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../../api/errors.js';
import { CycleState } from '../../framework/cycle-state.js';
import { Snapshot } from '../../cache/snapshot.js';
import { makePod } from '../../testing/builders.js';
import { handleFor } from '../../testing/plugins.js';
import type { FakeSchedulerClient } from '../../testing/fake-client.js';
import { DefaultBinder } from './defaultbinder.js';

describe('DefaultBinder', () => {
  it('binds through pods/binding', async () => {
    const handle = handleFor(new Snapshot());
    const client = handle.client as FakeSchedulerClient;
    const pod = client.pods.upsert(makePod().name('web').obj());
    assert.equal(await new DefaultBinder(handle).bind(new CycleState(), pod, 'node-1'), undefined);
    assert.deepEqual(client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    assert.equal(client.pods.get('default/web')?.spec?.nodeName, 'node-1');
  });

  it('returns an Error status when the API refuses', async () => {
    const handle = handleFor(new Snapshot());
    const client = handle.client as FakeSchedulerClient;
    client.bindError = () => new StatusError(409, 'Conflict', 'pod web is already assigned to node "node-2"');
    const s = await new DefaultBinder(handle).bind(new CycleState(), makePod().name('web').obj(), 'node-1');
    assert.deepEqual([s?.code, s?.message()], ['Error', 'pod web is already assigned to node "node-2"']);
  });
});
