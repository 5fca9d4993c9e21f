import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserInfo } from '../../authn/user.js';
import type { AuthorizationAttributes } from '../authorizer.js';
import { RbacAuthorizer } from './authorizer.js';
import { fakePolicy } from './testing.js';

const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
const attrs = (user: UserInfo, verb: string, resource: string, namespace: string): AuthorizationAttributes => ({
  user, verb, isResourceRequest: true, path: '', namespace, apiGroup: '', apiVersion: 'v1', resource, subresource: '', name: '',
});

void describe('RbacAuthorizer', () => {
  const policy = {
    clusterRoles: [{ metadata: { name: 'reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }] }],
    roles: [{ metadata: { namespace: 'ns', name: 'cm-writer' }, rules: [{ verbs: ['create'], apiGroups: [''], resources: ['configmaps'] }] }],
    clusterRoleBindings: [
      { metadata: { name: 'readers' }, roleRef: ref('ClusterRole', 'reader'), subjects: [{ kind: 'Group', name: 'readers' }] },
      { metadata: { name: 'dangling' }, roleRef: ref('ClusterRole', 'gone'), subjects: [{ kind: 'User', name: 'dan' }] },
      // A ServiceAccount subject without a namespace in a ClusterRoleBinding matches nobody.
      { metadata: { name: 'nobody' }, roleRef: ref('ClusterRole', 'reader'), subjects: [{ kind: 'ServiceAccount', name: 'default' }] },
    ],
    roleBindings: [
      { metadata: { namespace: 'ns', name: 'w' }, roleRef: ref('Role', 'cm-writer'), subjects: [{ kind: 'User', name: 'alice' }, { kind: 'ServiceAccount', name: 'bot' }] },
      { metadata: { namespace: 'ns', name: 'r' }, roleRef: ref('ClusterRole', 'reader'), subjects: [{ kind: 'User', name: 'bob' }] },
    ],
  };
  const rbac = new RbacAuthorizer(fakePolicy(policy));
  const alice = { name: 'alice', groups: ['system:authenticated'] };
  const bob = { name: 'bob', groups: [] };
  const reader = { name: 'carol', groups: ['readers'] };
  const bot = { name: 'system:serviceaccount:ns:bot', groups: [] };
  const sa = { name: 'system:serviceaccount:other:default', groups: [] };
  const cases: [string, AuthorizationAttributes, string][] = [
    ['a group bound cluster-wide', attrs(reader, 'list', 'pods', 'any'), 'allow'],
    ['a verb the role lacks', attrs(reader, 'delete', 'pods', 'any'), 'noOpinion'],
    ['a Role in its namespace', attrs(alice, 'create', 'configmaps', 'ns'), 'allow'],
    ['a Role outside its namespace', attrs(alice, 'create', 'configmaps', 'other'), 'noOpinion'],
    ['a Role does not reach the cluster scope', attrs(alice, 'create', 'configmaps', ''), 'noOpinion'],
    ['a ClusterRole bound in one namespace', attrs(bob, 'get', 'pods', 'ns'), 'allow'],
    ['... and not in another', attrs(bob, 'get', 'pods', 'other'), 'noOpinion'],
    ['a service account of the binding\'s namespace', attrs(bot, 'create', 'configmaps', 'ns'), 'allow'],
    ['a service account without a namespace in a ClusterRoleBinding', attrs(sa, 'get', 'pods', 'x'), 'noOpinion'],
  ];
  for (const [name, a, want] of cases) void it(name, async () => assert.equal((await rbac.authorize(a)).decision, want));

  void it('reports a missing role as upstream', async () => {
    assert.deepEqual(await rbac.authorize(attrs({ name: 'dan', groups: [] }, 'get', 'pods', 'ns')), {
      decision: 'noOpinion',
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found',
    });
  });

  void it('sees changes once the source moves', async () => {
    const p = { ...policy, clusterRoleBindings: [...policy.clusterRoleBindings] };
    const source = fakePolicy(p);
    const a = new RbacAuthorizer(source);
    const eve = { name: 'eve', groups: [] };
    assert.equal((await a.authorize(attrs(eve, 'get', 'pods', 'x'))).decision, 'noOpinion');
    p.clusterRoleBindings.push({ metadata: { name: 'eve' }, roleRef: ref('ClusterRole', 'reader'), subjects: [{ kind: 'User', name: 'eve' }] });
    source.bump();
    assert.equal((await a.authorize(attrs(eve, 'get', 'pods', 'x'))).decision, 'allow');
  });

  void it('resolves the rules of a user for SelfSubjectRulesReview', async () => {
    assert.deepEqual(await rbac.rulesFor(alice, 'ns'), {
      resourceRules: [{ verbs: ['create'], apiGroups: [''], resources: ['configmaps'], resourceNames: undefined }],
      nonResourceRules: [],
      incomplete: false,
    });
    const dan = await rbac.rulesFor({ name: 'dan', groups: [] }, 'ns');
    assert.equal(dan.incomplete, true);
    assert.equal(dan.evaluationError, 'clusterrole.rbac.authorization.k8s.io "gone" not found');
  });

  void it('stays cheap with 10,000 bindings', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      metadata: { namespace: `ns${i % 100}`, name: `b${i}` },
      roleRef: ref('ClusterRole', 'reader'),
      subjects: [{ kind: 'User', name: `user${i}` }],
    }));
    const a = new RbacAuthorizer(fakePolicy({ ...policy, roleBindings: many }));
    assert.equal((await a.authorize(attrs({ name: 'user4242', groups: [] }, 'get', 'pods', 'ns42'))).decision, 'allow');
    assert.equal((await a.authorize(attrs({ name: 'user4242', groups: [] }, 'get', 'pods', 'ns43'))).decision, 'noOpinion');
  });
});
