import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ResourceQuota } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { StatusError, staleConflict } from '../../../api/errors.js';
import { FakeClock } from '../../../util/clock.js';
import type { AdmissionAttributes } from '../interface.js';
import { admissionAttributes, fakeLookups } from '../testing.js';
import { ResourceQuotaAdmission, type ResourceQuotaAccess } from './resourcequota.js';


/** Quotas held as a store would: each status write needs the resourceVersion it read, and bumps it. */
class FakeQuotaStore implements ResourceQuotaAccess {
  writes = 0;
  conflicts = 0;
  constructor(public quotas: ResourceQuota[]) {}
  async list(namespace: string): Promise<ResourceQuota[]> {
    return structuredClone(this.quotas.filter((q) => q.metadata?.namespace === namespace));
  }
  async updateStatus(quota: ResourceQuota): Promise<void> {
    // Let racing writers interleave.
    await new Promise((r) => setImmediate(r));
    const i = this.quotas.findIndex((q) => q.metadata?.name === quota.metadata?.name);
    const cur = this.quotas[i]!;
    if (cur.metadata?.resourceVersion !== quota.metadata?.resourceVersion) {
      this.conflicts++;
      throw staleConflict({ group: '', resource: 'resourcequotas' }, quota.metadata?.name ?? '');
    }
    this.writes++;
    this.quotas[i] = { ...cur, status: quota.status, metadata: { ...cur.metadata, resourceVersion: String(Number(cur.metadata?.resourceVersion) + 1) } };
  }
}

const quota = (name: string, hard: Record<string, string>, used: Record<string, string>, spec: ResourceQuota['spec'] = {}): ResourceQuota => ({
  metadata: { name, namespace: 'ns', resourceVersion: '1' },
  spec: { hard, ...spec },
  status: { hard, used },
});

function setup(quotas: ResourceQuota[]) {
  const store = new FakeQuotaStore(quotas);
  // The cache serves what the store holds (a stale copy would only cost a retry).
  const objects = { resourcequotas: store.quotas };
  const plugin = new ResourceQuotaAdmission({
    lookups: { ...fakeLookups(objects), list: async () => structuredClone(store.quotas) as never },
    quotas: store,
    clock: new FakeClock(Date.UTC(2026, 0, 1)),
  });
  return { store, plugin };
}

const createPod = (name: string, spec: Partial<Pod['spec']> = {}, dryRun = false) =>
  admissionAttributes('', 'v1', 'pods', { dryRun, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec } } });

const refusal = (message: string) => (err: unknown) => {
  assert.ok(err instanceof StatusError);
  assert.equal(err.code, 403);
  assert.equal(err.reason, 'Forbidden');
  assert.equal(err.message, message);
  return true;
};

test('charges each create into status.used and refuses the one that exceeds, with upstream message', async () => {
  const { store, plugin } = setup([quota('q', { pods: '2' }, { pods: '0' })]);
  await plugin.validate(createPod('p1'));
  await plugin.validate(createPod('p2'));
  assert.deepEqual(store.quotas[0]!.status?.used, { pods: '2' });
  await assert.rejects(plugin.validate(createPod('p3')), refusal('pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2'));
  assert.deepEqual(store.quotas[0]!.status?.used, { pods: '2' });
});

test('two creates racing for the last slot: exactly one is admitted', async () => {
  const { store, plugin } = setup([quota('q', { pods: '2' }, { pods: '1' })]);
  // Two plugins (two API servers) over one store: only compare-and-swap keeps them honest.
  const other = new ResourceQuotaAdmission({ lookups: { ...fakeLookups({}), list: async () => structuredClone(store.quotas) as never }, quotas: store, clock: new FakeClock() });
  const results = await Promise.allSettled([plugin.validate(createPod('a')), other.validate(createPod('b')), plugin.validate(createPod('c'))]);
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  assert.equal(results.filter((r) => r.status === 'rejected').length, 2);
  assert.deepEqual(store.quotas[0]!.status?.used, { pods: '2' });
  assert.equal(store.writes, 1);
  // The loser lost a compare-and-swap, re-read the quota and was refused on the fresh count.
  assert.ok(store.conflicts >= 1);
});

test('a quota on compute makes each container set it ("failed quota")', async () => {
  const { plugin } = setup([quota('q', { 'limits.cpu': '2', 'requests.cpu': '1' }, { 'limits.cpu': '0', 'requests.cpu': '0' })]);
  await assert.rejects(plugin.validate(createPod('p')), refusal('pods "p" is forbidden: failed quota: q: must specify limits.cpu for: c; requests.cpu for: c'));
});

test('compute is charged and its excess named with quantities as a cluster prints them', async () => {
  const { store, plugin } = setup([quota('compute', { 'requests.memory': '1Gi', pods: '10' }, { 'requests.memory': '768Mi', pods: '3' })]);
  const big = { containers: [{ name: 'c', image: 'b', resources: { requests: { memory: '512Mi' } } }] };
  await assert.rejects(
    plugin.validate(createPod('p', big)),
    refusal('pods "p" is forbidden: exceeded quota: compute, requested: requests.memory=512Mi, used: requests.memory=768Mi, limited: requests.memory=1Gi'),
  );
  await plugin.validate(createPod('p', { containers: [{ name: 'c', image: 'b', resources: { requests: { memory: '256Mi' } } }] }));
  assert.deepEqual(store.quotas[0]!.status?.used, { pods: '4', 'requests.memory': '1Gi' });
});

test('a quota whose usage was never calculated refuses what it tracks', async () => {
  const { plugin } = setup([quota('q', { pods: '2' }, {})]);
  await assert.rejects(plugin.validate(createPod('p')), refusal('pods "p" is forbidden: status unknown for quota: q, resources: pods'));
});

test('scoped quotas charge only the pods in scope; dry runs charge nothing', async () => {
  const { store, plugin } = setup([quota('be', { pods: '1' }, { pods: '1' }, { scopes: ['BestEffort'] })]);
  await plugin.validate(createPod('burstable', { containers: [{ name: 'c', image: 'b', resources: { requests: { cpu: '1' } } }] }));
  await assert.rejects(plugin.validate(createPod('besteffort')), /exceeded quota: be/);
  const open = setup([quota('q', { pods: '5' }, { pods: '0' })]);
  await open.plugin.validate(createPod('p', {}, true));
  assert.equal(open.store.writes, 0);
  assert.equal(store.writes, 0);
});

test('subresource writes and quota-less namespaces are not evaluated; configmaps count by their legacy name', async () => {
  const { store, plugin } = setup([quota('q', { configmaps: '1' }, { configmaps: '0' })]);
  assert.equal(plugin.handles({ ...createPod('p'), subresource: 'status', operation: 'UPDATE' }), false);
  const cm: AdmissionAttributes = {
    ...createPod('x'),
    resource: findResource('', 'v1', 'configmaps')!,
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1', namespace: 'ns' } },
  };
  await plugin.validate(cm);
  assert.deepEqual(store.quotas[0]!.status?.used, { configmaps: '1' });
  await assert.rejects(plugin.validate({ ...cm, object: { ...cm.object!, metadata: { name: 'cm2' } } }), refusal('configmaps "cm2" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=1, limited: configmaps=1'));
});

test('a service update pays only for what it adds: ClusterIP to NodePort charges its node ports', async () => {
  const { store, plugin } = setup([quota('q', { services: '5', 'services.nodeports': '1' }, { services: '1', 'services.nodeports': '0' })]);
  const svc = (type: string, rv?: string): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'ns', resourceVersion: rv }, spec: { type, ports: [{ port: 80 }, { port: 443 }] } }) as KubeObject;
  const update = (type: string): AdmissionAttributes => ({
    ...createPod('s'),
    operation: 'UPDATE',
    resource: findResource('', 'v1', 'services')!,
    object: svc(type),
    oldObject: svc('ClusterIP', '7'),
  });
  // Nothing changes in what it charges: no write.
  await plugin.validate(update('ClusterIP'));
  assert.equal(store.writes, 0);
  await assert.rejects(
    plugin.validate(update('NodePort')),
    refusal('services "s" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1'),
  );
});
