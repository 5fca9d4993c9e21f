import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from 'kubernetes-types/policy/v1.js';
import type { Pod } from '../../api/types.js';
import { StatusError } from '../../api/errors.js';
import { FakeClock } from '../../util/clock.js';
import { FakeApi } from '../testing/fakeapi.js';
import type { Client } from '../../client/client.js';

interface Env {
  api: FakeApi;
  client: Client;
}

async function env(): Promise<Env> {
  const api = await FakeApi.start({ clock: new FakeClock(Date.parse('2026-01-01T00:00:00Z')) });
  return { api, client: api.client() };
}

/** A pod bound to a node (so deletion is graceful), with the phase and readiness asked for. */
async function pod(e: Env, name: string, phase: string, ready: boolean, labels: Record<string, string> = { app: 'web' }): Promise<Pod> {
  const pods = e.client.resource('pods').namespace('default');
  const created = await pods.create({ metadata: { name, namespace: 'default', labels }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } });
  const conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
  return pods.updateStatus({ ...created, status: { ...created.status, phase, conditions } });
}

async function pdb(e: Env, name: string, spec: PodDisruptionBudget['spec'], status?: Partial<PodDisruptionBudgetStatus>): Promise<PodDisruptionBudget> {
  const pdbs = e.client.resource('poddisruptionbudgets.policy').namespace('default');
  const created = await pdbs.create({ metadata: { name, namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } });
  if (!status) return created;
  return pdbs.updateStatus({
    ...created,
    status: { observedGeneration: created.metadata!.generation, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, disruptionsAllowed: 0, ...status },
  });
}

const getPod = (e: Env, name: string) => e.client.resource('pods').namespace('default').get(name);
const getPdb = (e: Env, name: string) => e.client.resource('poddisruptionbudgets.policy').namespace('default').get(name);

async function evictError(e: Env, name: string, options?: Parameters<Client['evict']>[2]): Promise<StatusError> {
  return (await e.client.evict('default', name, options).then(
    () => assert.fail('eviction succeeded'),
    (err: unknown) => err,
  )) as StatusError;
}

void test('eviction without a budget deletes the pod and marks it DisruptionTarget', async () => {
  const e = await env();
  await pod(e, 'web-1', 'Running', true);
  await e.client.evict('default', 'web-1');
  const p = await getPod(e, 'web-1');
  assert.ok(p.metadata?.deletionTimestamp, 'graceful deletion started');
  const cond = p.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
  assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['True', 'EvictionByEvictionAPI', 'Eviction API: evicting']);
  await e.api.stop();
});

void test('a budget with no disruption left refuses with 429 and the DisruptionBudget cause', async () => {
  const e = await env();
  await pod(e, 'web-1', 'Running', true);
  await pdb(e, 'web-pdb', { minAvailable: 1 }, { currentHealthy: 1, desiredHealthy: 1, expectedPods: 1, disruptionsAllowed: 0 });
  const err = await evictError(e, 'web-1');
  assert.equal(err.code, 429);
  assert.equal(err.reason, 'TooManyRequests');
  assert.equal(err.message, "Cannot evict pod as it would violate the pod's disruption budget.");
  assert.deepEqual(err.details?.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web-pdb needs 1 healthy pods and has 1 currently' }]);
  assert.equal((await getPod(e, 'web-1')).metadata?.deletionTimestamp, undefined, 'the pod stays');
  await e.api.stop();
});

void test('an eviction within budget spends a disruption and records the pod in disruptedPods', async () => {
  const e = await env();
  await pod(e, 'web-1', 'Running', true);
  await pod(e, 'web-2', 'Running', true);
  await pdb(e, 'web-pdb', { minAvailable: 1 }, { currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, disruptionsAllowed: 1 });
  await e.client.evict('default', 'web-1');
  const status = (await getPdb(e, 'web-pdb')).status!;
  assert.equal(status.disruptionsAllowed, 0);
  assert.deepEqual(Object.keys(status.disruptedPods ?? {}), ['web-1']);
  assert.deepEqual(
    status.conditions?.map((c) => [c.type, c.status, c.reason]),
    [['DisruptionAllowed', 'False', 'InsufficientPods']],
  );
  assert.ok((await getPod(e, 'web-1')).metadata?.deletionTimestamp);
  // The budget is spent: the second pod stays.
  assert.equal((await evictError(e, 'web-2')).code, 429);
  await e.api.stop();
});

void test('dry run checks the budget but writes neither budget nor pod', async () => {
  const e = await env();
  await pod(e, 'web-1', 'Running', true);
  await pdb(e, 'web-pdb', { minAvailable: 1 }, { currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, disruptionsAllowed: 1 });
  await e.client.evict('default', 'web-1', { dryRun: ['All'] });
  assert.equal((await getPdb(e, 'web-pdb')).status?.disruptionsAllowed, 1);
  const p = await getPod(e, 'web-1');
  assert.equal(p.metadata?.deletionTimestamp, undefined);
  assert.equal(p.status?.conditions?.some((c) => c.type === 'DisruptionTarget'), false);
  await e.api.stop();
});

void test('a status behind the spec is still being processed: 429', async () => {
  const e = await env();
  await pod(e, 'web-1', 'Running', true);
  await pdb(e, 'web-pdb', { minAvailable: 1 }, { observedGeneration: 0, disruptionsAllowed: 5 });
  const err = await evictError(e, 'web-1');
  assert.equal(err.code, 429);
  assert.deepEqual(err.details?.causes, [{ reason: 'DisruptionBudget', message: 'The disruption budget web-pdb is still being processed by the server.' }]);
  await e.api.stop();
});

void test('two budgets for one pod: 500 as upstream', async () => {
  const e = await env();
  await pod(e, 'web-1', 'Running', true);
  await pdb(e, 'a', { minAvailable: 0 }, { disruptionsAllowed: 1 });
  await pdb(e, 'b', { minAvailable: 0 }, { disruptionsAllowed: 1 });
  const err = await evictError(e, 'web-1');
  assert.equal(err.code, 500);
  assert.equal(err.message, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  await e.api.stop();
});

void test('terminal and pending pods are deleted whatever the budget says', async () => {
  const e = await env();
  await pod(e, 'done', 'Succeeded', false);
  await pod(e, 'pending', 'Pending', false);
  await pdb(e, 'web-pdb', { minAvailable: 5 }, { disruptionsAllowed: 0, desiredHealthy: 5 });
  await e.client.evict('default', 'done');
  await e.client.evict('default', 'pending');
  // A terminal pod needs no grace: it is gone.
  await assert.rejects(getPod(e, 'done'), (err: StatusError) => err.code === 404);
  assert.ok((await getPod(e, 'pending')).metadata?.deletionTimestamp);
  assert.equal((await getPdb(e, 'web-pdb')).status?.disruptionsAllowed, 0, 'nothing spent');
  await e.api.stop();
});

void test('unhealthy pods: IfHealthyBudget only while the budget is whole, AlwaysAllow always, neither spends a disruption', async () => {
  const e = await env();
  await pod(e, 'sick', 'Running', false);
  // IfHealthyBudget (the default) with the budget not whole: refused.
  await pdb(e, 'web-pdb', { minAvailable: 2 }, { currentHealthy: 1, desiredHealthy: 2, disruptionsAllowed: 0 });
  assert.equal((await evictError(e, 'sick')).code, 429);
  // With the budget whole, the unready pod goes and nothing is spent.
  const pdbs = e.client.resource('poddisruptionbudgets.policy').namespace('default');
  const cur = await getPdb(e, 'web-pdb');
  await pdbs.updateStatus({ ...cur, status: { ...cur.status!, currentHealthy: 2, disruptionsAllowed: 0 } });
  await e.client.evict('default', 'sick');
  assert.ok((await getPod(e, 'sick')).metadata?.deletionTimestamp);
  assert.equal((await getPdb(e, 'web-pdb')).status?.disruptedPods, undefined);

  await pod(e, 'sick-2', 'Running', false, { app: 'api' });
  const always = await pdbs.create({ metadata: { name: 'api-pdb', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'api' } }, minAvailable: 3, unhealthyPodEvictionPolicy: 'AlwaysAllow' } });
  await pdbs.updateStatus({ ...always, status: { observedGeneration: 1, currentHealthy: 0, desiredHealthy: 3, expectedPods: 3, disruptionsAllowed: 0 } });
  await e.client.evict('default', 'sick-2');
  assert.ok((await getPod(e, 'sick-2')).metadata?.deletionTimestamp);
  await e.api.stop();
});

void test('PodDisruptionBudget strategy: create resets the status and starts at generation 1; spec changes bump it, status writes do not', async () => {
  const e = await env();
  const pdbs = e.client.resource('poddisruptionbudgets.policy').namespace('default');
  const created = await pdbs.create({
    metadata: { name: 'web', namespace: 'default' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } },
    status: { disruptionsAllowed: 9, currentHealthy: 9, desiredHealthy: 0, expectedPods: 9 },
  });
  assert.equal(created.status, undefined);
  assert.equal(created.metadata?.generation, 1);
  const withStatus = await pdbs.updateStatus({ ...created, status: { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, observedGeneration: 1 } });
  assert.equal(withStatus.metadata?.generation, 1);
  const changed = await pdbs.update({ ...withStatus, spec: { ...withStatus.spec, minAvailable: 2 }, status: undefined });
  assert.equal(changed.metadata?.generation, 2);
  assert.equal(changed.status?.disruptionsAllowed, 1, 'a spec update keeps the status');
  await e.api.stop();
});
