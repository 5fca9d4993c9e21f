import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthorizationAttributes } from './authorizer.js';
import { forbiddenError, newForbidden } from './forbidden.js';

const anon = { name: 'system:anonymous', groups: ['system:unauthenticated'] };
const attrs = (a: Partial<AuthorizationAttributes>): AuthorizationAttributes => ({
  user: anon,
  verb: 'get',
  isResourceRequest: true,
  path: '',
  namespace: '',
  apiGroup: '',
  apiVersion: 'v1',
  resource: '',
  subresource: '',
  name: '',
  ...a,
});

void describe('forbiddenError', () => {
  const cases: [string, Partial<AuthorizationAttributes>, string | undefined, string, object][] = [
    [
      'namespaced list',
      { verb: 'list', namespace: 'default', resource: 'pods' },
      undefined,
      'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
      { kind: 'pods' },
    ],
    [
      'named object in a group, with subresource',
      { verb: 'update', namespace: 'prod', apiGroup: 'apps', resource: 'deployments', subresource: 'scale', name: 'web', user: { name: 'bob', groups: [] } },
      undefined,
      'deployments.apps "web" is forbidden: User "bob" cannot update resource "deployments/scale" in API group "apps" in the namespace "prod"',
      { group: 'apps', kind: 'deployments', name: 'web' },
    ],
    [
      'cluster scope',
      { verb: 'list', resource: 'nodes' },
      undefined,
      'nodes is forbidden: User "system:anonymous" cannot list resource "nodes" in API group "" at the cluster scope',
      { kind: 'nodes' },
    ],
    [
      'non-resource path',
      { isResourceRequest: false, path: '/foo', apiVersion: '' },
      undefined,
      'forbidden: User "system:anonymous" cannot get path "/foo"',
      {},
    ],
    [
      'with the authorizer reason, HTML-escaped path',
      { isResourceRequest: false, path: '/<x>&' },
      'no RBAC policy matched',
      'forbidden: User "system:anonymous" cannot get path "/&lt;x&gt;&amp;": no RBAC policy matched',
      {},
    ],
  ];
  for (const [name, a, reason, message, details] of cases) {
    void it(name, () => {
      const status = forbiddenError(attrs(a), reason).toStatus();
      assert.equal(status.code, 403);
      assert.equal(status.reason, 'Forbidden');
      assert.equal(status.message, message);
      assert.deepEqual(status.details, details);
    });
  }
});

void describe('newForbidden', () => {
  void it('quotes names as Go does', () => {
    assert.equal(newForbidden({ group: '', resource: 'pods' }, 'a"b', 'no').message, 'pods "a\\"b" is forbidden: no');
  });
});
