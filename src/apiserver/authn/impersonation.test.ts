import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../api/errors.js';
import { asksImpersonation, impersonationOf } from './impersonation.js';

test('no impersonation headers, no impersonation', () => {
  assert.equal(impersonationOf({ accept: ['application/json'] }), undefined);
});

test('a user: impersonate on users, and the user is authenticated', () => {
  assert.deepEqual(impersonationOf({ 'impersonate-user': ['jane'] }), {
    requests: [{ apiGroup: '', resource: 'users', subresource: '', namespace: '', name: 'jane' }],
    user: { name: 'jane', groups: ['system:authenticated'] },
  });
});

test('a service account: impersonate on serviceaccounts in its namespace, and its fixed groups', () => {
  const i = impersonationOf({ 'impersonate-user': ['system:serviceaccount:ns1:robot'] })!;
  assert.deepEqual(i.requests, [{ apiGroup: '', resource: 'serviceaccounts', subresource: '', namespace: 'ns1', name: 'robot' }]);
  assert.deepEqual(i.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated']);
  // A malformed service account name is an ordinary user name.
  assert.equal(impersonationOf({ 'impersonate-user': ['system:serviceaccount:ns1'] })!.requests[0]!.resource, 'users');
});

test('groups, a uid and extras: each authorized, the extra keys percent-decoded and lowercased', () => {
  const i = impersonationOf({
    'impersonate-user': ['jane'],
    'impersonate-group': ['devs', 'a,b'],
    'impersonate-uid': ['u-1'],
    'impersonate-extra-acme.com%2Fproject': ['p1', 'p2'],
    'impersonate-extra-__proto__': ['x'],
  })!;
  assert.deepEqual(
    i.requests.map((r) => `${r.apiGroup}/${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.name}`),
    ['/users jane', 'authentication.k8s.io/userextras/acme.com/project p1', 'authentication.k8s.io/userextras/acme.com/project p2', 'authentication.k8s.io/userextras/__proto__ x', '/groups devs', '/groups a,b', 'authentication.k8s.io/uids u-1'],
  );
  assert.deepEqual(i.user.groups, ['devs', 'a,b', 'system:authenticated']);
  assert.equal(i.user.uid, 'u-1');
  // A key named __proto__ is data (an object literal would set the prototype instead: parse it).
  assert.deepEqual(Object.entries(i.user.extra!), Object.entries(JSON.parse('{"acme.com/project":["p1","p2"],"__proto__":["x"]}') as object));
  assert.equal(({} as Record<string, unknown>).x, undefined);
});

test('anonymous stays unauthenticated; an explicit system:unauthenticated group is kept', () => {
  assert.deepEqual(impersonationOf({ 'impersonate-user': ['system:anonymous'] })!.user.groups, ['system:unauthenticated']);
  assert.deepEqual(impersonationOf({ 'impersonate-user': ['jane'], 'impersonate-group': ['system:unauthenticated'] })!.user.groups, ['system:unauthenticated']);
});

test('groups, a uid or extras without a user are refused', () => {
  for (const headers of [{ 'impersonate-group': ['devs'] }, { 'impersonate-uid': ['u'] }, { 'impersonate-extra-k': ['v'] }]) {
    assert.throws(() => impersonationOf(headers), (err: unknown) => isStatusError(err) && err.code === 400);
  }
  assert.throws(() => impersonationOf({ 'impersonate-user': ['jane'], 'impersonate-extra-%zz': ['v'] }), (err: unknown) => isStatusError(err) && err.code === 400);
});

test('the cheap check sees any Impersonate-* header, in any case, and nothing else', () => {
  assert.equal(asksImpersonation(['Host', 'x', 'Accept', 'application/json']), false);
  assert.equal(asksImpersonation(['Host', 'x', 'IMPERSONATE-USER', 'jane']), true);
  assert.equal(asksImpersonation(['impersonate-extra-k', 'v']), true);
  assert.equal(asksImpersonation(['Impersonate-', 'v']), false);
});
