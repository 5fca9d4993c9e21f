import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStatusError } from '../../api/errors.js';
import { FakeClock } from '../../util/clock.js';
import { ensurePki, issueClientCertificate, issueServingCertificate, type Pki } from '../authn/pki.js';
import type { TokenAuthenticator } from '../reviews/authentication.js';
import { loginUser, type LoginDependencies } from './login.js';

const tokens: TokenAuthenticator = {
  async authenticateToken(token) {
    return token === 'good-token' ? { user: { name: 'tina', groups: ['viewers', 'system:authenticated'] }, audiences: [] } : undefined;
  },
};
const code = (c: number) => (err: unknown) => isStatusError(err) && err.code === c;

describe('console login', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-console-login-'));
  const clock = new FakeClock(Date.now());
  let pki: Pki;
  let other: Pki;
  let deps: LoginDependencies;
  before(async () => {
    pki = await ensurePki(join(dir, 'a'), { clock });
    other = await ensurePki(join(dir, 'b'), { clock });
    deps = { tokens, caPem: pki.ca.certPem, clock };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('takes a token the server authenticates, and refuses one it does not', async () => {
    assert.deepEqual(await loginUser({ token: 'good-token' }, deps), { name: 'tina', groups: ['viewers', 'system:authenticated'] });
    await assert.rejects(loginUser({ token: 'bad-token' }, deps), code(401));
  });

  it('takes a client certificate of the cluster CA with its key: CN is the user, O the groups', async () => {
    const pair = await issueClientCertificate(pki, { commonName: 'carol', organizations: ['ops', 'dev'] });
    assert.deepEqual(await loginUser({ clientCertificate: pair.certPem, clientKey: pair.keyPem }, deps), { name: 'carol', groups: ['ops', 'dev'] });
  });

  it('refuses a certificate without its own key', async () => {
    const pair = await issueClientCertificate(pki, { commonName: 'carol' });
    const thief = await issueClientCertificate(pki, { commonName: 'mallory' });
    await assert.rejects(loginUser({ clientCertificate: pair.certPem, clientKey: thief.keyPem }, deps), code(401));
  });

  it('refuses a certificate of another CA', async () => {
    const pair = await issueClientCertificate(other, { commonName: 'kubernetes-admin', organizations: ['system:masters'] });
    await assert.rejects(loginUser({ clientCertificate: pair.certPem, clientKey: pair.keyPem }, deps), code(401));
  });

  it('refuses a certificate out of date', async () => {
    const pair = await issueClientCertificate(pki, { commonName: 'carol', days: 1 });
    const later = { ...deps, clock: new FakeClock(clock.now() + 2 * 86_400_000) };
    await assert.rejects(loginUser({ clientCertificate: pair.certPem, clientKey: pair.keyPem }, later), code(401));
  });

  it('refuses a certificate that is not for client authentication', async () => {
    const serving = await issueServingCertificate(pki, { commonName: 'carol', sans: ['127.0.0.1'] });
    await assert.rejects(loginUser({ clientCertificate: serving.certPem, clientKey: serving.keyPem }, deps), code(401));
  });

  it('refuses garbage as a 401 and a malformed body as a 400, prototypes untouched', async () => {
    await assert.rejects(loginUser({ clientCertificate: 'not a pem', clientKey: 'nor this' }, deps), code(401));
    for (const body of [null, [], 'token', {}, { token: 5 }, { clientCertificate: 'x' }]) await assert.rejects(loginUser(body, deps), code(400));
    await assert.rejects(loginUser(JSON.parse('{"__proto__": {"token": "good-token"}}'), deps), code(400));
    assert.equal(({} as Record<string, unknown>).token, undefined);
  });
});
