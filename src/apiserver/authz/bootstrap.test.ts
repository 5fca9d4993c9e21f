import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnionAuthorizer, type AuthorizationAttributes } from './authorizer.js';
import { AuthenticatedAuthorizer, PrivilegedGroupsAuthorizer, PublicInfoAuthorizer } from './builtin.js';
import { BootstrapperAuthorizer, ClusterInfoAuthorizer } from './bootstrap.js';
import { anonymousUser } from '../authn/user.js';

const union = new UnionAuthorizer([new PrivilegedGroupsAuthorizer(), new PublicInfoAuthorizer(), new ClusterInfoAuthorizer(), new BootstrapperAuthorizer(), new AuthenticatedAuthorizer()]);
const bootstrapper = { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] };
const attrs = (over: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: bootstrapper,
  verb: 'get',
  isResourceRequest: true,
  path: '/',
  namespace: '',
  apiGroup: '',
  apiVersion: 'v1',
  resource: '',
  subresource: '',
  name: '',
  ...over,
});
const csr = { apiGroup: 'certificates.k8s.io', resource: 'certificatesigningrequests' };

test('bootstrappers may create and read CSRs and nothing else', async () => {
  for (const verb of ['create', 'get', 'list', 'watch']) assert.equal((await union.authorize(attrs({ ...csr, verb }))).decision, 'allow', verb);
  for (const a of [
    attrs({ ...csr, verb: 'delete' }),
    attrs({ ...csr, verb: 'update', subresource: 'approval' }),
    attrs({ verb: 'list', resource: 'pods', namespace: 'default' }),
    attrs({ verb: 'get', resource: 'secrets', namespace: 'kube-system' }),
  ]) {
    assert.equal((await union.authorize(a)).decision, 'deny');
  }
});

test('public info and cluster-info stay readable; masters and other users are unaffected', async () => {
  assert.equal((await union.authorize(attrs({ isResourceRequest: false, path: '/version' }))).decision, 'allow');
  const clusterInfo = { resource: 'configmaps', namespace: 'kube-public', name: 'cluster-info' };
  assert.equal((await union.authorize(attrs({ user: anonymousUser, ...clusterInfo }))).decision, 'allow');
  assert.equal((await union.authorize(attrs({ user: anonymousUser, ...clusterInfo, name: 'other' }))).decision, 'noOpinion');
  assert.equal((await union.authorize(attrs({ user: anonymousUser, ...clusterInfo, verb: 'update' }))).decision, 'noOpinion');
  const master = { name: 'x', groups: ['system:masters', 'system:bootstrappers'] };
  assert.equal((await union.authorize(attrs({ user: master, resource: 'pods', verb: 'list' }))).decision, 'allow');
  const user = { name: 'u', groups: ['system:authenticated'] };
  assert.equal((await union.authorize(attrs({ user, resource: 'pods', verb: 'list' }))).decision, 'allow');
});
