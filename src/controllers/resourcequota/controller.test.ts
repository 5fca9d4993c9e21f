import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceQuota } from 'kubernetes-types/core/v1.js';
import { pino } from 'pino';
import { StatusError } from '../../api/errors.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import type { Client } from '../../client/client.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { ResourceQuotaController, defaultResourceQuotaSyncPeriodMs } from './controller.js';

async function withController(body: (env: { api: FakeApi; admin: Client; clock: FakeClock; settle: () => Promise<void> }) => Promise<void>): Promise<void> {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = await FakeApi.start({ clock });
  const admin = api.client();
  const client = api.client({ name: 'system:serviceaccount:kube-system:resourcequota-controller', groups: ['system:masters', 'system:authenticated'] });
  const informers = new SharedInformerFactory({ client, clock });
  const controller = new ResourceQuotaController({ client, informers, clock, logger: pino({ level: 'silent' }) });
  controller.start();
  informers.start();
  // Lets watches deliver and the workers drain, without moving the clock far.
  const settle = async () => {
    for (let i = 0; i < 20; i++) await clock.advance(1);
  };
  try {
    await admin.resource('namespaces').create({ metadata: { name: 'ns' } });
    await body({ api, admin, clock, settle });
  } finally {
    await controller.stop();
    await informers.shutdown();
    await api.stop();
  }
}

const quotas = (admin: Client) => admin.resource('resourcequotas').namespace('ns');
const pods = (admin: Client) => admin.resource('pods').namespace('ns');
const pod = (name: string, requests?: Record<string, string>, limits?: Record<string, string>) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests, limits } }] },
});
const statusOf = async (admin: Client, name: string): Promise<ResourceQuota['status']> => (await quotas(admin).get(name)).status;

test('a new quota gets status.hard and status.used; admission then charges and refuses against it', async () => {
  await withController(async ({ admin, settle }) => {
    await pods(admin).create(pod('before'));
    await quotas(admin).create({ metadata: { name: 'q' }, spec: { hard: { pods: '2', 'count/configmaps': '5' } } });
    await settle();
    assert.deepEqual(await statusOf(admin, 'q'), { hard: { pods: '2', 'count/configmaps': '5' }, used: { pods: '1', 'count/configmaps': '0' } });
    await pods(admin).create(pod('p2'));
    assert.deepEqual((await statusOf(admin, 'q'))?.used, { 'count/configmaps': '0', pods: '2' });
    await assert.rejects(pods(admin).create(pod('p3')), (err: unknown) => {
      assert.ok(err instanceof StatusError);
      assert.equal(err.code, 403);
      assert.equal(err.message, 'pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
      return true;
    });
  });
});

test('deleting a pod, or a pod finishing, frees its quota', async () => {
  await withController(async ({ admin, settle }) => {
    await quotas(admin).create({ metadata: { name: 'q' }, spec: { hard: { pods: '2', 'requests.cpu': '1' } } });
    await settle();
    await pods(admin).create(pod('a', { cpu: '500m' }));
    await pods(admin).create(pod('b', { cpu: '500m' }));
    assert.deepEqual((await statusOf(admin, 'q'))?.used, { pods: '2', 'requests.cpu': '1' });
    await pods(admin).delete('a', { gracePeriodSeconds: 0 });
    await settle();
    assert.deepEqual((await statusOf(admin, 'q'))?.used, { pods: '1', 'requests.cpu': '500m' });
    await pods(admin).patch('b', 'merge', { status: { phase: 'Succeeded' } }, { subresource: 'status' });
    await settle();
    assert.deepEqual((await statusOf(admin, 'q'))?.used, { pods: '0', 'requests.cpu': '0' });
    await pods(admin).create(pod('c', { cpu: '1' }));
  });
});

test('a changed spec.hard is taken into status; the full resync corrects usage charged for writes that never happened', async () => {
  await withController(async ({ admin, clock, settle }) => {
    await quotas(admin).create({ metadata: { name: 'q' }, spec: { hard: { configmaps: '3' } } });
    await settle();
    const q = await quotas(admin).get('q');
    await quotas(admin).update({ ...q, spec: { hard: { configmaps: '4', secrets: '2' } } });
    await settle();
    assert.deepEqual(await statusOf(admin, 'q'), { hard: { configmaps: '4', secrets: '2' }, used: { configmaps: '0', secrets: '0' } });
    // An admission charge whose object was never stored (as when a later step refused the write).
    const cur = await quotas(admin).get('q');
    await quotas(admin).updateStatus({ ...cur, status: { ...cur.status, used: { configmaps: '3', secrets: '0' } } });
    await settle();
    assert.equal((await statusOf(admin, 'q'))?.used?.configmaps, '3');
    await clock.advance(defaultResourceQuotaSyncPeriodMs);
    await settle();
    assert.equal((await statusOf(admin, 'q'))?.used?.configmaps, '0');
  });
});

test('count/<resource>.<group> of a resource the controller does not watch is listed at sync', async () => {
  await withController(async ({ admin, settle }) => {
    await admin.resource('deployments.apps').namespace('ns').create({
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    });
    await quotas(admin).create({ metadata: { name: 'q' }, spec: { hard: { 'count/deployments.apps': '1' } } });
    await settle();
    assert.deepEqual((await statusOf(admin, 'q'))?.used, { 'count/deployments.apps': '1' });
    await assert.rejects(
      admin.resource('deployments.apps').namespace('ns').create({
        metadata: { name: 'd2' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
      }),
      /deployments.apps "d2" is forbidden: exceeded quota: q, requested: count\/deployments.apps=1, used: count\/deployments.apps=1, limited: count\/deployments.apps=1/,
    );
  });
});
