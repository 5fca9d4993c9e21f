import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UserInfo } from '../authn/user.js';
import type { AuthorizationAttributes } from './authorizer.js';
import { PrivilegedGroupsAuthorizer } from './builtin.js';

const listPods = (user: UserInfo): AuthorizationAttributes => ({
  user, verb: 'list', isResourceRequest: true, path: '/api/v1/namespaces/default/pods', namespace: 'default', apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: '', name: '',
});

void describe('PrivilegedGroupsAuthorizer', () => {
  const cases: [string, UserInfo, string][] = [
    ['system:masters may do anything', { name: 'kubernetes-admin', groups: ['system:masters'] }, 'allow'],
    ['an authenticated user gets no opinion', { name: 'alice', groups: ['system:authenticated'] }, 'noOpinion'],
    ['anonymous gets no opinion', { name: 'system:anonymous', groups: ['system:unauthenticated'] }, 'noOpinion'],
  ];
  for (const [name, user, want] of cases) {
    void it(name, async () => assert.equal((await new PrivilegedGroupsAuthorizer().authorize(listPods(user))).decision, want));
  }
});
