import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { isStatusError, unauthorized } from '../../api/errors.js';
import { AnonymousAuthenticator } from './anonymous.js';
import type { Authenticator } from './authenticator.js';
import { RequestAuthenticator, UnionAuthenticator } from './union.js';
import type { UserInfo } from './user.js';

const req = (url = '/api') => ({ url, headers: {} }) as IncomingMessage;
const returns = (user?: UserInfo): Authenticator => ({ authenticate: async () => user });
const rejects = (): Authenticator => ({
  authenticate: async () => {
    throw unauthorized();
  },
});
const alice: UserInfo = { name: 'alice', groups: ['dev'] };
const bob: UserInfo = { name: 'bob', groups: [] };

void describe('UnionAuthenticator', () => {
  const cases: [string, Authenticator[], UserInfo | undefined | 'throws'][] = [
    ['first success wins', [returns(alice), returns(bob)], { name: 'alice', groups: ['dev', 'system:authenticated'] }],
    ['skips authenticators without credentials', [returns(), returns(bob)], { name: 'bob', groups: ['system:authenticated'] }],
    ['a rejection does not stop a later success', [rejects(), returns(bob)], { name: 'bob', groups: ['system:authenticated'] }],
    ['a rejection with no success throws', [rejects(), returns()], 'throws'],
    ['nothing found is undefined', [returns(), returns()], undefined],
    ['already authenticated is left alone', [returns({ name: 'c', groups: ['system:authenticated'] })], { name: 'c', groups: ['system:authenticated'] }],
    ['a user named system:anonymous gets no authenticated group', [returns({ name: 'system:anonymous', groups: [] })], { name: 'system:anonymous', groups: [] }],
  ];
  for (const [name, authns, want] of cases) {
    void it(name, async () => {
      const union = new UnionAuthenticator(authns);
      if (want === 'throws') await assert.rejects(union.authenticate(req()), (err) => isStatusError(err) && err.code === 401);
      else assert.deepEqual(await union.authenticate(req()), want);
    });
  }
});

void describe('RequestAuthenticator', () => {
  const anonymous = new AnonymousAuthenticator(['/healthz']);
  const unauthorizedStatus = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Unauthorized',
    reason: 'Unauthorized',
    code: 401,
  };
  const cases: [string, Authenticator[], string, string | 401][] = [
    ['credentials win over anonymous', [returns(alice)], '/healthz', 'alice'],
    ['no credentials on a public path is anonymous', [returns()], '/healthz', 'system:anonymous'],
    ['no credentials elsewhere is 401', [returns()], '/api/v1/pods', 401],
    ['bad credentials on a public path are 401, not anonymous', [rejects()], '/healthz', 401],
    ['a crashing authenticator is 401', [{ authenticate: () => Promise.reject(new Error('boom')) }], '/api', 401],
  ];
  for (const [name, authns, url, want] of cases) {
    void it(name, async () => {
      const authn = new RequestAuthenticator(authns, anonymous);
      if (want === 401) {
        await assert.rejects(authn.authenticate(req(url)), (err) => isStatusError(err) && assert.deepEqual(err.toStatus(), unauthorizedStatus) === undefined);
      } else {
        assert.equal((await authn.authenticate(req(url))).name, want);
      }
    });
  }

  void it('without an anonymous authenticator every credential-less request is 401', async () => {
    await assert.rejects(new RequestAuthenticator([returns()]).authenticate(req('/healthz')), (err) => isStatusError(err) && err.code === 401);
  });
});
