import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { FakeClock } from '../../util/clock.js';
import { isStatusError } from '../../api/errors.js';
import {
  BootstrapTokenAuthenticator,
  bootstrapTokenSecret,
  computeDetachedSignature,
  detachedSignatureIsValid,
  generateBootstrapToken,
  parseBootstrapToken,
  type BootstrapToken,
} from './bootstraptoken.js';
import type { Secret } from '../../api/types.js';

const token: BootstrapToken = { id: 'abcdef', secret: '0123456789abcdef' };
const req = (auth?: string) => ({ headers: auth ? { authorization: auth } : {} }) as IncomingMessage;

function authenticator(secrets: Secret[], clock = new FakeClock()) {
  return new BootstrapTokenAuthenticator({ clock, getSecret: async (name) => secrets.find((s) => s.metadata?.name === name) });
}

test('parse and generate tokens of the form <6>.<16>', () => {
  assert.deepEqual(parseBootstrapToken('abcdef.0123456789abcdef'), token);
  for (const bad of ['ABCDEF.0123456789abcdef', 'abcdef.0123456789abcde', 'abcdef0123456789abcdef', 'abcde.0123456789abcdefg']) assert.equal(parseBootstrapToken(bad), undefined, bad);
  const t = generateBootstrapToken();
  assert.deepEqual(parseBootstrapToken(`${t.id}.${t.secret}`), t);
});

test('the secret is stored as kubeadm stores it', () => {
  const s = bootstrapTokenSecret(token, { extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] });
  assert.equal(s.metadata?.name, 'bootstrap-token-abcdef');
  assert.equal(s.metadata?.namespace, 'kube-system');
  assert.equal(s.type, 'bootstrap.kubernetes.io/token');
  const data = Object.fromEntries(Object.entries(s.data!).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  assert.deepEqual(data, {
    'token-id': 'abcdef',
    'token-secret': '0123456789abcdef',
    'usage-bootstrap-authentication': 'true',
    'usage-bootstrap-signing': 'true',
    'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
  });
});

test('a valid token authenticates as system:bootstrap:<id> with its groups', async () => {
  const a = authenticator([bootstrapTokenSecret(token, { extraGroups: ['system:bootstrappers:kubeadm:default-node-token'] })]);
  assert.deepEqual(await a.authenticate(req('Bearer abcdef.0123456789abcdef')), {
    name: 'system:bootstrap:abcdef',
    groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token'],
  });
  // Not a bootstrap token, or no token at all: someone else's business.
  assert.equal(await a.authenticate(req('Bearer some-static-token')), undefined);
  assert.equal(await a.authenticate(req()), undefined);
});

test('wrong secret, unknown id, expired, not for authentication, or bad groups are 401', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const cases: [string, Secret[]][] = [
    ['Bearer abcdef.0123456789abcdee', [bootstrapTokenSecret(token)]],
    ['Bearer zzzzzz.0123456789abcdef', [bootstrapTokenSecret(token)]],
    ['Bearer abcdef.0123456789abcdef', [bootstrapTokenSecret(token, { expiresAt: Date.UTC(2025, 11, 31) })]],
    ['Bearer abcdef.0123456789abcdef', [bootstrapTokenSecret(token, { usages: ['signing'] })]],
    ['Bearer abcdef.0123456789abcdef', [bootstrapTokenSecret(token, { extraGroups: ['system:masters'] })]],
    ['Bearer abcdef.0123456789abcdef', [{ ...bootstrapTokenSecret(token), type: 'Opaque' }]],
  ];
  for (const [auth, secrets] of cases) {
    await assert.rejects(authenticator(secrets, clock).authenticate(req(auth)), (err) => isStatusError(err) && err.code === 401);
  }
  const future = authenticator([bootstrapTokenSecret(token, { expiresAt: Date.UTC(2026, 0, 2) })], clock);
  assert.equal((await future.authenticate(req('Bearer abcdef.0123456789abcdef')))?.name, 'system:bootstrap:abcdef');
});

test('detached JWS: header..signature, HS256 keyed by the token, verified against the content', () => {
  const content = 'apiVersion: v1\nkind: Config\n';
  const jws = computeDetachedSignature(content, token);
  const [header, payload, signature] = jws.split('.');
  assert.equal(payload, '');
  assert.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), { alg: 'HS256', kid: 'abcdef' });
  assert.equal(Buffer.from(signature!, 'base64url').length, 32);
  assert.ok(detachedSignatureIsValid(jws, content, token));
  assert.ok(!detachedSignatureIsValid(jws, `${content}#`, token));
  assert.ok(!detachedSignatureIsValid(jws, content, { ...token, secret: '0123456789abcdee' }));
});
