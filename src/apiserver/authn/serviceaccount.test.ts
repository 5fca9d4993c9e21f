// TokenRequest through the real handlers (FakeApi) and the authenticator that checks what it issues.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { decodeJwt } from 'jose';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import type { Pod, Secret, ServiceAccount } from '../../api/types.js';
import { isStatusError } from '../../api/errors.js';
import { FakeApi } from '../testing/fakeapi.js';
import { FakeClock } from '../../util/clock.js';
import type { TokenIssuer } from '../handlers/tokenrequest.js';
import { ServiceAccountAuthenticator } from './serviceaccount.js';
import { TokenSigner, expirationExtensionSeconds, legacyClaims } from './satoken.js';

const issuer = 'https://kubernetes.default.svc.cluster.local';
const signer = new TokenSigner(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
const tokens: TokenIssuer = { signer, issuer, apiAudiences: [issuer], maxExpirationSeconds: 0, extendExpiration: true, maxExtendedExpirationSeconds: expirationExtensionSeconds };
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } }) as IncomingMessage;

describe('service account tokens', () => {
  const clock = new FakeClock();
  let api: FakeApi;
  let auth: ServiceAccountAuthenticator;
  let sa: ServiceAccount;
  let pod: Pod;
  const request = (spec: TokenRequest['spec'], name = 'robot') =>
    api.client().resource('', 'v1', 'serviceaccounts').namespace('default').subresource<TokenRequest>('POST', name, 'token', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });

  before(async () => {
    api = await FakeApi.start({ clock, tokens });
    auth = new ServiceAccountAuthenticator({ signer, issuers: [issuer], apiAudiences: [issuer], get: (r, ns, n) => api.registries.lookup(r, ns, n), clock });
    const admin = api.client();
    sa = await admin.resource<ServiceAccount>('', 'v1', 'serviceaccounts').namespace('default').create({ metadata: { name: 'robot' } });
    pod = await admin.resource<Pod>('', 'v1', 'pods').namespace('default').create({ metadata: { name: 'p' }, spec: { serviceAccountName: 'robot', nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } });
  });
  after(() => api.stop());

  it('issues upstream claims with the default hour, and authenticates as the service account', async () => {
    const tr = await request({ audiences: [] });
    assert.equal(tr.spec.expirationSeconds, 3600);
    assert.deepEqual(tr.spec.audiences, [issuer]);
    const claims = decodeJwt(tr.status!.token);
    const now = Math.floor(clock.now() / 1000);
    assert.deepEqual(Object.keys(claims), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
    assert.deepEqual({ ...claims, jti: 'x' }, { aud: [issuer], exp: now + 3600, iat: now, iss: issuer, jti: 'x', 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot', uid: sa.metadata!.uid } }, nbf: now, sub: 'system:serviceaccount:default:robot' });
    assert.equal(tr.status!.expirationTimestamp, new Date((now + 3600) * 1000).toISOString().replace('.000', ''));
    const user = await auth.authenticate(bearer(tr.status!.token));
    assert.deepEqual(user, {
      name: 'system:serviceaccount:default:robot',
      uid: sa.metadata!.uid,
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
    });
  });

  it('a pod-bound 3607 s token lives a year and warns after its hour; it dies with its pod', async () => {
    const tr = await request({ audiences: [], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: pod.metadata!.uid } });
    const claims = decodeJwt(tr.status!.token);
    const now = Math.floor(clock.now() / 1000);
    assert.equal(claims.exp, now + expirationExtensionSeconds);
    const k8s = claims['kubernetes.io'] as Record<string, unknown>;
    assert.equal(k8s.warnafter, now + 3607);
    assert.deepEqual(k8s.pod, { name: 'p', uid: pod.metadata!.uid });
    // The status says the requested life: the kubelet rotates on it.
    assert.equal(Date.parse(tr.status!.expirationTimestamp!), (now + 3607) * 1000);
    const user = await auth.authenticate(bearer(tr.status!.token));
    assert.deepEqual(user?.extra?.['authentication.kubernetes.io/pod-name'], ['p']);
    assert.deepEqual(user?.extra?.['authentication.kubernetes.io/pod-uid'], [pod.metadata!.uid]);

    // Another audience, or another lifetime, gets no extension.
    assert.equal(decodeJwt((await request({ audiences: ['vault'], expirationSeconds: 3607, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p' } })).status!.token).exp, now + 3607);
    assert.equal(decodeJwt((await request({ audiences: [], expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p' } })).status!.token).exp, now + 3600);

    const admin = api.client();
    await admin.resource<Pod>('', 'v1', 'pods').namespace('default').delete('p', { gracePeriodSeconds: 0 });
    await assert.rejects(auth.authenticate(bearer(tr.status!.token)), (e: unknown) => isStatusError(e) && e.toStatus().code === 401);
  });

  it('refuses bad requests with upstream statuses', async () => {
    const cases: [TokenRequest['spec'], string, number, RegExp][] = [
      [{ audiences: [], expirationSeconds: 599 }, 'robot', 422, /spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes/],
      [{ audiences: [] }, 'ghost', 404, /serviceaccounts "ghost" not found/],
      [{ audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'gone' } }, 'robot', 404, /pods "gone" not found/],
      [{ audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' } }, 'robot', 400, /cannot bind token to object of type \/v1, Kind=ConfigMap/],
    ];
    for (const [spec, name, code, message] of cases) {
      await assert.rejects(request(spec, name), (e: unknown) => isStatusError(e) && e.toStatus().code === code && message.test(e.toStatus().message ?? ''), JSON.stringify(spec));
    }
    const secret = await api.client().resource<Secret>('', 'v1', 'secrets').namespace('default').create({ metadata: { name: 's' } });
    await assert.rejects(request({ audiences: [], boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'wrong' } }), (e: unknown) => isStatusError(e) && e.toStatus().code === 409 && /the UID in the bound object reference \(wrong\) does not match the UID in record/.test(e.toStatus().message ?? ''));
    assert.ok(secret.metadata?.uid);
  });

  it('refuses a wrong audience, an expired token, a recreated service account, a foreign key; ignores other issuers', async () => {
    const wrongAud = (await request({ audiences: ['vault'] })).status!.token;
    await assert.rejects(auth.authenticate(bearer(wrongAud)), /Unauthorized/);
    const expiring = (await request({ audiences: [], expirationSeconds: 600 })).status!.token;
    await clock.advance(600_000 + 61_000);
    await assert.rejects(auth.authenticate(bearer(expiring)), /Unauthorized/);

    const other = new TokenSigner(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    const now = Math.floor(clock.now() / 1000);
    const forged = await other.sign({ iss: issuer, aud: [issuer], exp: now + 600, iat: now, nbf: now, sub: 'x', 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'robot', uid: sa.metadata!.uid } } });
    await assert.rejects(auth.authenticate(bearer(forged)), /Unauthorized/);
    assert.equal(await auth.authenticate(bearer(await signer.sign({ iss: 'https://elsewhere', exp: now + 600 }))), undefined);
    assert.equal(await auth.authenticate(bearer('abcdef.0123456789abcdef')), undefined);

    const token = (await request({ audiences: [] })).status!.token;
    const sas = api.client().resource<ServiceAccount>('', 'v1', 'serviceaccounts').namespace('default');
    await sas.delete('robot');
    sa = await sas.create({ metadata: { name: 'robot' } });
    await assert.rejects(auth.authenticate(bearer(token)), /Unauthorized/);
  });

  it('a legacy Secret token authenticates while the Secret holds it', async () => {
    const token = await signer.sign(legacyClaims('default', { name: 'robot', uid: sa.metadata!.uid! }, 'robot-token'));
    const secrets = api.client().resource<Secret>('', 'v1', 'secrets').namespace('default');
    const secret = await secrets.create({ metadata: { name: 'robot-token', annotations: { 'kubernetes.io/service-account.name': 'robot' } }, type: 'kubernetes.io/service-account-token', data: { token: Buffer.from(token).toString('base64') } } as Secret);
    const user = await auth.authenticate(bearer(token));
    assert.equal(user?.name, 'system:serviceaccount:default:robot');
    await secrets.update({ ...secret, data: { token: Buffer.from('other').toString('base64') } });
    await assert.rejects(auth.authenticate(bearer(token)), /Unauthorized/);
  });
});
