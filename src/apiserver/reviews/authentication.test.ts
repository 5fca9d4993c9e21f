import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../api/errors.js';
import { authenticationFailed, type Authenticator } from '../authn/authenticator.js';
import { TokenFileAuthenticator } from '../authn/tokenfile.js';
import { UnionAuthenticator } from '../authn/union.js';
import { audienceAgnostic, selfSubjectReview, tokenReview, type TokenAuthenticator } from './authentication.js';

const apiAudiences = ['https://kubernetes.default.svc.cluster.local'];
const tokens = new TokenFileAuthenticator(new Map([['good', { name: 'alice', uid: '42', groups: ['dev'] }]]));
const agnostic = audienceAgnostic(new UnionAuthenticator([tokens]), apiAudiences);
const review = (spec: object) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec }) as never;

void describe('TokenReview', () => {
  const cases: [string, object, object][] = [
    [
      'a good token, the server audiences by default',
      { token: 'good' },
      { authenticated: true, user: { username: 'alice', uid: '42', groups: ['dev', 'system:authenticated'] }, audiences: apiAudiences },
    ],
    ['a good token for the server audience', { token: 'good', audiences: [apiAudiences[0], 'other'] }, { authenticated: true, user: { username: 'alice', uid: '42', groups: ['dev', 'system:authenticated'] }, audiences: apiAudiences }],
    ['a good token for another audience proves nobody', { token: 'good', audiences: ['vault'] }, { authenticated: false, error: 'invalid bearer token' }],
    ['a bad token says why', { token: 'bad' }, { authenticated: false, error: 'invalid bearer token' }],
  ];
  for (const [name, spec, status] of cases) {
    void it(name, async () => {
      const answer = await tokenReview(agnostic, apiAudiences, review(spec));
      assert.deepEqual(answer.status, status);
      assert.deepEqual(answer.spec, spec);
    });
  }

  void it('reports the cause of a refusal, not the 401', async () => {
    const refusing: Authenticator = { authenticate: async () => Promise.reject(authenticationFailed('token expired')) };
    const answer = await tokenReview(audienceAgnostic(refusing, apiAudiences), apiAudiences, review({ token: 't' }));
    assert.deepEqual(answer.status, { authenticated: false, error: 'token expired' });
  });

  void it('refuses an answer for audiences that were not asked for', async () => {
    const wrong: TokenAuthenticator = { authenticateToken: async () => ({ user: { name: 'x', groups: [] }, audiences: ['elsewhere'] }) };
    await assert.rejects(tokenReview(wrong, apiAudiences, review({ token: 't' })), (err) => isStatusError(err) && err.code === 500);
  });

  void it('needs a token', async () => {
    await assert.rejects(tokenReview(agnostic, apiAudiences, review({})), (err) => isStatusError(err) && err.code === 400 && err.message === 'token is required for TokenReview in authentication');
  });
});

void describe('SelfSubjectReview', () => {
  void it('answers with the requester and the time', () => {
    const answer = selfSubjectReview({ name: 'alice', uid: '42', groups: ['dev'], extra: { scopes: ['a'] } }, Date.UTC(2025, 0, 2, 3, 4, 5), { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    assert.deepEqual(answer, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: '2025-01-02T03:04:05Z' },
      status: { userInfo: { username: 'alice', uid: '42', groups: ['dev'], extra: { scopes: ['a'] } } },
    });
  });
});
