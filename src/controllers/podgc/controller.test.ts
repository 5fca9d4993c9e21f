import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { pino } from 'pino';
import { StatusError, hasStatusCode } from '../../api/errors.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import type { Client } from '../../client/client.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { PodGCController, gcCheckPeriodMs, quarantineTimeMs } from './controller.js';

// A finalizer keeps a pod readable after PodGC's delete, so the test can see how it was left.
const hold = 'example.com/hold';

async function withController(
  opts: { terminatedPodGCThreshold?: number },
  body: (env: { api: FakeApi; admin: Client; clock: FakeClock; run: () => Promise<void> }) => Promise<void>,
): Promise<void> {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = await FakeApi.start({ clock });
  const admin = api.client();
  const client = api.client({ name: 'system:serviceaccount:kube-system:pod-garbage-collector', groups: ['system:masters', 'system:authenticated'] });
  const informers = new SharedInformerFactory({ client, clock });
  const controller = new PodGCController({ client, informers, clock, logger: pino({ level: 'silent' }), ...opts });
  let started = false;
  const run = async () => {
    if (!started) {
      started = true;
      controller.start();
      informers.start();
    }
    await clock.advance(1);
  };
  try {
    await body({ api, admin, clock, run });
  } finally {
    await controller.stop();
    await informers.shutdown();
    await api.stop();
  }
}

async function createPod(admin: Client, name: string, opts: { nodeName?: string; phase?: string; finalizers?: string[] } = {}): Promise<Pod> {
  const pods = admin.resource('pods').namespace('default');
  await pods.create({
    metadata: { name, finalizers: opts.finalizers },
    spec: { nodeName: opts.nodeName, containers: [{ name: 'c', image: 'busybox' }] },
  });
  if (opts.phase) await pods.patch(name, 'merge', { status: { phase: opts.phase } }, { subresource: 'status' });
  return pods.get(name);
}

const createNode = (admin: Client, node: Node) => admin.resource('nodes').create(node);
const gone = (p: Promise<unknown>) => assert.rejects(p, (e) => hasStatusCode(e, 404));
const deletes = (api: FakeApi, name: string) => api.actions.filter((a) => a.verb === 'delete' && a.resource === 'pods' && a.name === name);

test('terminated pods beyond the threshold go, oldest first; running pods and those within it stay', async () => {
  await withController({ terminatedPodGCThreshold: 2 }, async ({ api, admin, clock, run }) => {
    await createNode(admin, { metadata: { name: 'n1' } });
    // Creation timestamps are whole seconds: a second between pods orders them.
    for (const [name, phase] of [
      ['old-succeeded', 'Succeeded'],
      ['running', 'Running'],
      ['old-failed', 'Failed'],
      ['new-succeeded', 'Succeeded'],
      ['new-failed', 'Failed'],
    ] as const) {
      await createPod(admin, name, { nodeName: 'n1', phase });
      await clock.advance(1000);
    }
    await run();
    const pods = admin.resource('pods').namespace('default');
    await gone(pods.get('old-succeeded'));
    await gone(pods.get('old-failed'));
    for (const name of ['running', 'new-succeeded', 'new-failed']) assert.equal((await pods.get(name)).metadata?.name, name);
    assert.deepEqual((deletes(api, 'old-failed')[0]?.body as { gracePeriodSeconds?: number }).gracePeriodSeconds, 0);
    assert.equal(api.actions.filter((a) => a.subresource === 'status' && a.verb === 'patch' && a.user !== 'kubernetes-admin').length, 0, 'terminated pods are not patched');
  });
});

test('a pod bound to a node that is gone is marked Failed with DisruptionTarget and force-deleted after the quarantine', async () => {
  await withController({}, async ({ api, admin, clock, run }) => {
    await createNode(admin, { metadata: { name: 'n1' } });
    await createPod(admin, 'orphan', { nodeName: 'gone', phase: 'Running', finalizers: [hold] });
    await createPod(admin, 'placed', { nodeName: 'n1', phase: 'Running' });
    await run();
    await clock.advance(gcCheckPeriodMs);
    assert.equal(deletes(api, 'orphan').length, 0, 'quarantined, not yet deleted');
    await clock.advance(2 * gcCheckPeriodMs);
    const pods = admin.resource('pods').namespace('default');
    const orphan = await pods.get('orphan');
    assert.ok(orphan.metadata?.deletionTimestamp);
    assert.equal(orphan.status?.phase, 'Failed');
    const c = orphan.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'DeletionByPodGC', 'PodGC: node no longer exists']);
    assert.equal((deletes(api, 'orphan')[0]?.body as { gracePeriodSeconds?: number }).gracePeriodSeconds, 0);
    assert.ok(api.actions.some((a) => a.verb === 'get' && a.resource === 'nodes' && a.name === 'gone'), 'a live GET confirms the node is gone');
    assert.equal(deletes(api, 'placed').length, 0);
    assert.equal((await pods.get('placed')).status?.phase, 'Running');
  });
});

test('a failed GET of a missing node spares its pods until a later pass finds it gone', async () => {
  await withController({}, async ({ api, admin, clock, run }) => {
    await createPod(admin, 'orphan', { nodeName: 'gone', phase: 'Running', finalizers: [hold] });
    api.failNext('get', 'gone', new StatusError(500, 'InternalError', 'etcd is sad'));
    await run();
    await clock.advance(2 * gcCheckPeriodMs);
    assert.equal(deletes(api, 'orphan').length, 0, 'an error is not a NotFound');
    await clock.advance(gcCheckPeriodMs + quarantineTimeMs);
    assert.equal(deletes(api, 'orphan').length, 1);
  });
});

test('a terminating pod never scheduled is marked Failed and force-deleted', async () => {
  await withController({}, async ({ api, admin, run }) => {
    const pods = admin.resource('pods').namespace('default');
    await createPod(admin, 'unscheduled', { finalizers: [hold] });
    await pods.delete('unscheduled');
    await createPod(admin, 'pending');
    await run();
    const pod = await pods.get('unscheduled');
    assert.equal(pod.status?.phase, 'Failed');
    assert.equal(pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget'), undefined, 'no condition for this rule');
    const gcDeletes = deletes(api, 'unscheduled').filter((a) => a.user !== 'kubernetes-admin');
    assert.equal((gcDeletes[0]?.body as { gracePeriodSeconds?: number }).gracePeriodSeconds, 0);
    assert.equal(deletes(api, 'pending').length, 0, 'a pod not terminating stays');
  });
});

test('terminating pods on a NotReady node with the out-of-service taint are force-deleted', async () => {
  await withController({}, async ({ api, admin, run }) => {
    const taints = [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }];
    await createNode(admin, { metadata: { name: 'down' }, spec: { taints } });
    await createNode(admin, { metadata: { name: 'up' }, spec: { taints: [{ key: 'example.com/other', effect: 'NoSchedule' }] } });
    const pods = admin.resource('pods').namespace('default');
    for (const [name, nodeName] of [
      ['on-down', 'down'],
      ['on-up', 'up'],
    ]) {
      await createPod(admin, name!, { nodeName, phase: 'Running' });
      await pods.delete(name!);
    }
    await createPod(admin, 'alive-on-down', { nodeName: 'down', phase: 'Running' });
    await run();
    await gone(pods.get('on-down'));
    const gcDeletes = deletes(api, 'on-down').filter((a) => a.user !== 'kubernetes-admin');
    assert.equal((gcDeletes[0]?.body as { gracePeriodSeconds?: number }).gracePeriodSeconds, 0);
    assert.ok((await pods.get('on-up')).metadata?.deletionTimestamp, 'no out-of-service taint: left to its kubelet');
    assert.equal((await pods.get('alive-on-down')).metadata?.deletionTimestamp, undefined, 'only terminating pods');
  });
});
