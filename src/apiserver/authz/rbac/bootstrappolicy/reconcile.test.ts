import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../../../storage/sqlite/sqlite-store.js';
import { FakeClock } from '../../../../util/clock.js';
import { Registries } from '../../../registry/registries.js';
import type { ClusterRole, ClusterRoleBinding } from '../../../../api/types.js';
import { ensureRbacPolicy, reconcileBinding, reconcileRole } from './reconcile.js';
import { clusterRoles } from './policy.js';

const admin = { dryRun: false, user: { name: 'admin', groups: ['system:masters'] }, subresource: '' };

async function newRegistries(): Promise<Registries> {
  const admitter = { mutate: async () => undefined, validate: async () => undefined };
  const registries = new Registries({ store: new SqliteStore(':memory:'), clock: new FakeClock(Date.UTC(2026, 0, 1)), admitter, synchronousWatch: true });
  await registries.start();
  return registries;
}

void describe('reconcileRole and reconcileBinding', () => {
  void it('adds missing rules, labels and subjects, keeps what is there, and reports no change when complete', () => {
    const expected: ClusterRole = { metadata: { name: 'r', labels: { a: '1' } }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] };
    const existing: ClusterRole = { metadata: { name: 'r', labels: { a: '2' } }, rules: [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'] }] };
    const got = reconcileRole(existing, expected)!;
    assert.deepEqual(got.rules, [...existing.rules!, ...expected.rules!]);
    assert.deepEqual(got.metadata?.labels, { a: '2' });
    assert.equal(reconcileRole(got, expected), undefined);
    const b = (names: string[]): ClusterRoleBinding => ({ metadata: { name: 'b' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' }, subjects: names.map((name) => ({ kind: 'User', name })) });
    assert.deepEqual(reconcileBinding(b(['x']), b(['y']))?.subjects?.map((s) => s.name), ['x', 'y']);
    assert.equal(reconcileBinding(b(['x', 'y']), b(['y'])), undefined);
  });
});

void describe('ensureRbacPolicy', () => {
  void it('creates the policy, repairs autoupdate objects and leaves autoupdate=false alone', async () => {
    const registries = await newRegistries();
    await ensureRbacPolicy(registries);
    const roles = registries.of('rbac.authorization.k8s.io', 'clusterroles');
    const view = (await roles.get('', 'view')) as ClusterRole;
    assert.equal(view.metadata?.labels?.['kubernetes.io/bootstrapping'], 'rbac-defaults');
    assert.equal(view.metadata?.annotations?.['rbac.authorization.kubernetes.io/autoupdate'], 'true');
    assert.equal(registries.cachedList('clusterroles.rbac.authorization.k8s.io').length >= clusterRoles.length, true);
    assert.ok(await registries.lookup('rolebindings.rbac.authorization.k8s.io', 'kube-system', 'system::leader-locking-kube-scheduler'));

    // An operator strips rules from one role and takes another over.
    await roles.update('', 'system:basic-user', (cur) => ({ ...cur!, rules: [] }), admin);
    await roles.update('', 'system:discovery', (cur) => ({ ...cur!, rules: [], metadata: { ...cur!.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } } }), admin);
    await ensureRbacPolicy(registries);
    assert.equal(((await roles.get('', 'system:basic-user')) as ClusterRole).rules?.length, 2);
    assert.deepEqual(((await roles.get('', 'system:discovery')) as ClusterRole).rules, []);
    registries.stop();
  });
});
