import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasStatusCode } from '../../api/errors.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { pino } from 'pino';
import { NamespaceController } from './controller.js';

test('a deleted namespace is emptied, reports what holds it up, and goes once its content is gone', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = await FakeApi.start({ clock });
  const client = api.client({ name: 'system:kube-controller-manager', groups: ['system:authenticated'] });
  const admin = api.client();
  const namespaces = admin.resource('namespaces');
  const cms = admin.resource('configmaps').namespace('doomed');
  await namespaces.create({ metadata: { name: 'doomed' } });
  await cms.create({ metadata: { name: 'plain' } });
  await cms.create({ metadata: { name: 'held', finalizers: ['example.com/hold'] } });
  const informers = new SharedInformerFactory({ client, clock });
  const controller = new NamespaceController({ client, informers, clock, logger: pino({ level: 'silent' }) });
  controller.start();
  informers.start();
  try {
    await clock.advance(1000);
    await namespaces.delete('doomed');
    await clock.advance(5000);
    await assert.rejects(cms.get('plain'), (e) => hasStatusCode(e, 404));
    const terminating = await namespaces.get('doomed');
    assert.equal(terminating.status?.phase, 'Terminating');
    assert.deepEqual(terminating.spec?.finalizers, ['kubernetes'], 'held content keeps the namespace');
    const byType = Object.fromEntries((terminating.status?.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(byType.NamespaceFinalizersRemaining?.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    assert.equal(byType.NamespaceContentRemaining?.message, 'Some resources are remaining: configmaps. has 1 resource instances');

    await cms.patch('held', 'merge', { metadata: { finalizers: null } });
    await clock.advance(5000);
    await assert.rejects(namespaces.get('doomed'), (e) => hasStatusCode(e, 404));
  } finally {
    await controller.stop();
    await informers.shutdown();
    await api.stop();
  }
});
