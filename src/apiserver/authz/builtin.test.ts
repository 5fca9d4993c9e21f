import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserInfo } from '../authn/user.js';
import type { AuthorizationAttributes, Decision } from './authorizer.js';
import { UnionAuthorizer } from './authorizer.js';
import { AuthenticatedAuthorizer, PrivilegedGroupsAuthorizer, PublicInfoAuthorizer } from './builtin.js';

const anonymous: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const alice: UserInfo = { name: 'alice', groups: ['system:authenticated'] };
const admin: UserInfo = { name: 'kubernetes-admin', groups: ['system:masters'] };

const nonResource = (user: UserInfo, path: string, verb = 'get'): AuthorizationAttributes => ({
  user, verb, isResourceRequest: false, path, namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '',
});
const listPods = (user: UserInfo): AuthorizationAttributes => ({
  user, verb: 'list', isResourceRequest: true, path: '/api/v1/namespaces/default/pods', namespace: 'default', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', name: '',
});

void describe('built-in authorizers', () => {
  const cases: [string, AuthorizationAttributes, Decision, Decision, Decision][] = [
    // [case, attributes, privileged, public info, authenticated]
    ['anonymous reads /healthz', nonResource(anonymous, '/healthz'), 'noOpinion', 'allow', 'noOpinion'],
    ['anonymous reads /version', nonResource(anonymous, '/version'), 'noOpinion', 'allow', 'noOpinion'],
    ['anonymous posts /healthz', nonResource(anonymous, '/healthz', 'post'), 'noOpinion', 'noOpinion', 'noOpinion'],
    ['anonymous reads /api', nonResource(anonymous, '/api'), 'noOpinion', 'noOpinion', 'noOpinion'],
    ['anonymous lists pods', listPods(anonymous), 'noOpinion', 'noOpinion', 'noOpinion'],
    ['a user lists pods', listPods(alice), 'noOpinion', 'noOpinion', 'allow'],
    ['a user reads /api', nonResource(alice, '/api'), 'noOpinion', 'noOpinion', 'allow'],
    ['an admin lists pods', listPods(admin), 'allow', 'noOpinion', 'noOpinion'],
  ];
  for (const [name, attrs, privileged, publicInfo, authenticated] of cases) {
    void it(name, async () => {
      assert.equal((await new PrivilegedGroupsAuthorizer().authorize(attrs)).decision, privileged);
      assert.equal((await new PublicInfoAuthorizer().authorize(attrs)).decision, publicInfo);
      assert.equal((await new AuthenticatedAuthorizer().authorize(attrs)).decision, authenticated);
      const union = new UnionAuthorizer([new PrivilegedGroupsAuthorizer(), new PublicInfoAuthorizer(), new AuthenticatedAuthorizer()]);
      const any = [privileged, publicInfo, authenticated].includes('allow');
      assert.equal((await union.authorize(attrs)).decision, any ? 'allow' : 'noOpinion');
    });
  }
});
