import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock.js';
import { isStatusError } from '../../api/errors.js';
import { ensurePki, issueClientCertificate, servingTlsOptions, type CertKeyPair, type Pki } from './pki.js';
import { X509Authenticator } from './x509.js';

// A real TLS server configured as the API server will be, except that it also trusts a second CA (as a
// server trusting a front proxy would), so only the authenticator stands between that CA's users and
// the cluster. Each request answers with what the authenticator made of it.
void describe('X509Authenticator over HTTPS', () => {
  let dir: string;
  let pki: Pki;
  let other: Pki;
  let server: Server;
  let port: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kite-x509-'));
    pki = await ensurePki(join(dir, 'cluster'));
    other = await ensurePki(join(dir, 'other'));
    const authn = new X509Authenticator(pki.ca.certPem);
    server = createServer(
      { ...servingTlsOptions(pki), ca: [pki.ca.certPem, other.ca.certPem] },
      (req, res) => {
        authn.authenticate(req).then(
          (user) => res.end(JSON.stringify({ user: user ?? null })),
          (err: unknown) => res.end(JSON.stringify({ code: isStatusError(err) ? err.code : 500 })),
        );
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  function call(client?: CertKeyPair): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/api', ca: pki.ca.certPem, cert: client?.certPem, key: client?.keyPem, agent: false },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(JSON.parse(body)));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  const cases: [string, () => Promise<CertKeyPair | undefined>, unknown][] = [
    ['the admin certificate', async () => pki.admin, { user: { name: 'kubernetes-admin', groups: ['system:masters'] } }],
    [
      'an issued node certificate',
      () => issueClientCertificate(pki, { commonName: 'system:node:n1', organizations: ['system:nodes', 'team-a'] }),
      { user: { name: 'system:node:n1', groups: ['system:nodes', 'team-a'] } },
    ],
    ['a certificate without organizations', () => issueClientCertificate(pki, { commonName: 'alice' }), { user: { name: 'alice', groups: [] } }],
    ['no certificate', async () => undefined, { user: null }],
    ['a certificate from another CA', async () => other.admin, { code: 401 }],
    [
      'an expired certificate',
      () => issueClientCertificate({ ca: pki.ca, clock: new FakeClock(Date.now() - 3 * 24 * 3600 * 1000) }, { commonName: 'old', days: 1 }),
      { code: 401 },
    ],
    ['a serving certificate (not for client auth)', async () => pki.serving, { code: 401 }],
  ];
  for (const [name, make, want] of cases) {
    void it(name, async () => assert.deepEqual(await call(await make()), want));
  }
});
