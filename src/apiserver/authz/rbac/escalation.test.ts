import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../../api/errors.js';
import type { ClusterRole, RoleBinding } from '../../../api/types.js';
import { PrivilegedGroupsAuthorizer } from '../builtin.js';
import { UnionAuthorizer } from '../authorizer.js';
import { RbacAuthorizer } from './authorizer.js';
import { confirmBindingWrite, confirmRoleWrite, type EscalationDeps } from './escalation.js';
import { fakePolicy } from './testing.js';

const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
const rbac = new RbacAuthorizer(
  fakePolicy({
    clusterRoles: [
      { metadata: { name: 'edit' }, rules: [{ verbs: ['get', 'create'], apiGroups: [''], resources: ['pods', 'configmaps'] }] },
      { metadata: { name: 'admin' }, rules: [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }, { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'] }] },
      { metadata: { name: 'binder' }, rules: [{ verbs: ['bind'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['admin'] }] },
    ],
    roleBindings: [
      { metadata: { namespace: 'ns', name: 'e' }, roleRef: ref('ClusterRole', 'edit'), subjects: [{ kind: 'User', name: 'bob' }, { kind: 'User', name: 'binder' }] },
      { metadata: { namespace: 'ns', name: 'b' }, roleRef: ref('ClusterRole', 'binder'), subjects: [{ kind: 'User', name: 'binder' }] },
    ],
  }),
);
const deps: EscalationDeps = { authorizer: new UnionAuthorizer([new PrivilegedGroupsAuthorizer(), rbac]), rbac };
const bob = { name: 'bob', groups: ['system:authenticated'] };
const rolebindings = { group: 'rbac.authorization.k8s.io', resource: 'rolebindings' };
const binding = (role: string): RoleBinding => ({ metadata: { name: 'x', namespace: 'ns' }, roleRef: ref('ClusterRole', role), subjects: [{ kind: 'User', name: 'z' }] });

void describe('escalation prevention', () => {
  void it('refuses binding a role with rules the user lacks, with upstream\'s message', async () => {
    await assert.rejects(confirmBindingWrite(deps, bob, rolebindings, binding('admin'), undefined, 'ns'), (err) => {
      assert.ok(isStatusError(err) && err.code === 403);
      assert.equal(
        err.message,
        'rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
          '{APIGroups:[""], Resources:["pods"], Verbs:["*"]}\n{APIGroups:["authorization.k8s.io"], Resources:["localsubjectaccessreviews"], Verbs:["create"]}',
      );
      return true;
    });
  });

  void it('allows binding what the user holds, with bind, or as system:masters', async () => {
    await confirmBindingWrite(deps, bob, rolebindings, binding('edit'), undefined, 'ns');
    await confirmBindingWrite(deps, { name: 'binder', groups: [] }, rolebindings, binding('admin'), undefined, 'ns');
    await confirmBindingWrite(deps, { name: 'root', groups: ['system:masters'] }, rolebindings, binding('admin'), undefined, 'ns');
  });

  void it('a missing role is NotFound', async () => {
    await assert.rejects(confirmBindingWrite(deps, bob, rolebindings, binding('nope'), undefined, 'ns'), (err) => isStatusError(err) && err.code === 404);
  });

  void it('refuses a role granting more than the user holds, unless unchanged', async () => {
    const roles = { group: 'rbac.authorization.k8s.io', resource: 'roles' };
    const role = (verbs: string[]): ClusterRole => ({ metadata: { name: 'r', namespace: 'ns' }, rules: [{ verbs, apiGroups: [''], resources: ['pods'] }] });
    await confirmRoleWrite(deps, bob, roles, role(['get']), undefined, 'ns');
    await assert.rejects(confirmRoleWrite(deps, bob, roles, role(['delete']), undefined, 'ns'), /roles.rbac.authorization.k8s.io "r" is forbidden: .*\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["delete"\]\}$/);
    await confirmRoleWrite(deps, bob, roles, role(['delete']), role(['delete']), 'ns');
  });

  void it('an aggregationRule needs full authority', async () => {
    const agg: ClusterRole = { metadata: { name: 'a' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] } };
    await assert.rejects(confirmRoleWrite(deps, bob, { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }, agg, undefined, ''), /must have cluster-admin privileges to use the aggregationRule/);
  });
});
