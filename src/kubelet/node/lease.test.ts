import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { NodeLeaseController } from './lease.js';
import { FakeLeaseClient } from './testing.js';

function setup(uid?: string) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const client = new FakeLeaseClient();
  const errors: unknown[] = [];
  const ctl = new NodeLeaseController({ client, nodeName: 'n1', leaseDurationSeconds: 40, clock, nodeUID: () => uid, onError: (e) => errors.push(e) });
  return { clock, client, ctl, errors };
}

test('creates the lease owned by the node and renews it every 10 s', async () => {
  const { clock, client, ctl } = setup('node-uid');
  ctl.start();
  await clock.advance(0);
  assert.equal(client.writes.length, 1);
  assert.deepEqual(client.lease!.spec, { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' });
  assert.deepEqual(client.lease!.metadata!.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' }]);
  assert.equal(client.lease!.metadata!.namespace, 'kube-node-lease');
  await clock.advance(9_999);
  assert.equal(client.writes.length, 1);
  await clock.advance(1);
  assert.equal(client.writes.length, 2);
  assert.equal(client.lease!.spec!.renewTime, '2026-01-01T00:00:10.000000Z');
  await clock.advance(30_000);
  assert.equal(client.writes.length, 5);
  await ctl.stop();
});

test('the owner reference is added once the node is known', async () => {
  const node: { uid?: string } = {};
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const client = new FakeLeaseClient();
  const ctl = new NodeLeaseController({ client, nodeName: 'n1', leaseDurationSeconds: 40, clock, nodeUID: () => node.uid });
  ctl.start();
  await clock.advance(0);
  assert.equal(client.lease!.metadata!.ownerReferences, undefined);
  node.uid = 'u1';
  await clock.advance(10_000);
  assert.equal(client.lease!.metadata!.ownerReferences![0]!.uid, 'u1');
  await ctl.stop();
});

test('failures back off from 200 ms, conflicts re-read the lease', async () => {
  const { clock, client, ctl, errors } = setup('u');
  client.failures = [500, 500];
  ctl.start();
  await clock.advance(0);
  assert.equal(client.writes.length, 0);
  await clock.advance(200);
  assert.equal(client.writes.length, 0);
  await clock.advance(400);
  assert.equal(client.writes.length, 1);
  assert.equal(errors.length, 2);
  // Someone else wrote the lease: the update conflicts, is re-read and retried within the same round.
  client.lease = { ...client.lease!, metadata: { ...client.lease!.metadata, resourceVersion: '99' } };
  await clock.advance(10_000);
  assert.equal(client.writes.length, 2);
  assert.equal(errors.length, 2);
  await ctl.stop();
});
