import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../api/errors.js';
import { UnionAuthorizer, checkAuthorized, type AuthorizationAttributes, type AuthorizationResult, type Authorizer } from './authorizer.js';

const attrs: AuthorizationAttributes = {
  user: { name: 'bob', groups: [] },
  verb: 'delete',
  isResourceRequest: true,
  path: '/api/v1/namespaces/ns/pods/p',
  namespace: 'ns',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  name: 'p',
};

/** An authorizer that answers result and records that it was asked. */
function fixed(result: AuthorizationResult | Error, asked: string[], label: string): Authorizer {
  return {
    authorize: async () => {
      asked.push(label);
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

void describe('UnionAuthorizer', () => {
  const allow: AuthorizationResult = { decision: 'allow' };
  const deny: AuthorizationResult = { decision: 'deny', reason: 'denied by policy' };
  const none = (reason?: string): AuthorizationResult => ({ decision: 'noOpinion', reason });
  const cases: [string, (AuthorizationResult | Error)[], AuthorizationResult | 'throws', string[]][] = [
    ['first allow wins', [none(), allow, deny], allow, ['0', '1']],
    ['first deny wins', [deny, allow], deny, ['0']],
    ['all without opinion joins their reasons', [none('a'), none(), none('b')], { decision: 'noOpinion', reason: 'a\nb' }, ['0', '1', '2']],
    ['an error does not hide a later allow', [new Error('x'), allow], allow, ['0', '1']],
    ['an error with no decision is rethrown', [new Error('x'), none()], 'throws', ['0', '1']],
    ['empty union has no opinion', [], { decision: 'noOpinion', reason: undefined }, []],
  ];
  for (const [name, results, want, wantAsked] of cases) {
    void it(name, async () => {
      const asked: string[] = [];
      const union = new UnionAuthorizer(results.map((r, i) => fixed(r, asked, String(i))));
      if (want === 'throws') await assert.rejects(union.authorize(attrs), /x/);
      else assert.deepEqual(await union.authorize(attrs), want);
      assert.deepEqual(asked, wantAsked);
    });
  }
});

void describe('checkAuthorized', () => {
  const cases: [string, AuthorizationResult | Error, number | undefined, string?][] = [
    ['allow passes', { decision: 'allow' }, undefined],
    ['no opinion is 403', { decision: 'noOpinion' }, 403, 'pods "p" is forbidden: User "bob" cannot delete resource "pods" in API group "" in the namespace "ns"'],
    ['deny is 403 with the reason', { decision: 'deny', reason: 'nope' }, 403, 'pods "p" is forbidden: User "bob" cannot delete resource "pods" in API group "" in the namespace "ns": nope'],
    ['a failing authorizer is 500', new Error('boom'), 500, 'Internal error occurred: boom'],
  ];
  for (const [name, result, code, message] of cases) {
    void it(name, async () => {
      const p = checkAuthorized(fixed(result, [], ''), attrs);
      if (code === undefined) await p;
      else await assert.rejects(p, (err) => isStatusError(err) && err.code === code && err.message === message);
    });
  }
});
