import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateRequest } from '../../../api/certificates.js';
import type { CertificateSigningRequest } from '../../../api/types.js';
import { ensurePki } from '../../../apiserver/authn/pki.js';
import { SharedInformerFactory } from '../../../client/factory.js';
import { FakeApi } from '../../../apiserver/testing/fakeapi.js';
import { FakeClock } from '../../../util/clock.js';
import { newLogger } from '../../../util/log.js';
import { CsrSigner, certificateDurationMs, signingDecision } from './signer.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const approved = [{ type: 'Approved', status: 'True' }];

function csr(pem: string, signerName: string, usages: string[], extra: Partial<CertificateSigningRequest['spec']> = {}, conditions = approved): CertificateSigningRequest {
  return { metadata: { name: 'c' }, spec: { request: b64(pem), signerName, usages, ...extra }, status: { conditions } } as CertificateSigningRequest;
}

test('durations: a year, or the requested one when shorter, never under 10 minutes', () => {
  assert.equal(certificateDurationMs(undefined), 365 * 24 * 3600 * 1000);
  assert.equal(certificateDurationMs(3600), 3600 * 1000);
  assert.equal(certificateDurationMs(10 * 365 * 24 * 3600), 365 * 24 * 3600 * 1000);
  assert.equal(certificateDurationMs(60), 600 * 1000);
});

test('decisions: unapproved, issued or foreign requests are left alone; invalid ones fail', async () => {
  const { csrPem } = await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
  const kc = 'kubernetes.io/kube-apiserver-client-kubelet';
  assert.equal(signingDecision(csr(csrPem, kc, ['digital signature', 'client auth'], {}, [])).action, 'none');
  assert.equal(signingDecision(csr(csrPem, 'example.com/x', ['client auth'])).action, 'none');
  const issued = csr(csrPem, kc, ['digital signature', 'client auth']);
  issued.status!.certificate = 'eA==';
  assert.equal(signingDecision(issued).action, 'none');
  assert.deepEqual(signingDecision(csr(csrPem, kc, ['server auth'])), {
    action: 'fail',
    message: 'usages did not match [digital signature client auth] or [digital signature key encipherment client auth]',
  });
  assert.deepEqual(signingDecision(csr(csrPem, 'kubernetes.io/kube-apiserver-client', ['client auth', 'server auth'])), {
    action: 'fail',
    message: 'invalid usage for client certificate: server auth',
  });
});

test('the signer issues a certificate that chains to the CA with the requested usages, SANs and duration', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-signer-'));
  try {
    const clock = new FakeClock(Date.now());
    const pki = await ensurePki(join(dir, 'pki'), { clock });
    const { csrPem, keyPem } = await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'], sans: ['n1', '10.0.0.7'] });
    const api = await FakeApi.start();
    try {
      const node = api.client({ name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] });
      const client = api.client();
      const csrs = client.resource('certificatesigningrequests.certificates.k8s.io');
      const { spec } = csr(csrPem, 'kubernetes.io/kubelet-serving', ['digital signature', 'key encipherment', 'server auth'], { expirationSeconds: 7200 });
      await node.resource('certificatesigningrequests.certificates.k8s.io').create({ metadata: { name: 'c' }, spec });
      const conditions = [{ type: 'Approved', status: 'True', reason: 'Test', message: 'approved' }];
      await csrs.patch('c', 'merge', { status: { conditions } }, { subresource: 'approval' });
      const signer = new CsrSigner({ client, informers: new SharedInformerFactory({ client }), clock, logger: newLogger('test'), certFile: join(dir, 'pki', 'ca.crt'), keyFile: join(dir, 'pki', 'ca.key') });
      await signer.handle(await csrs.get('c'));
      const written = await csrs.get('c');
      assert.equal(api.actions.filter((a) => a.subresource === 'status').length, 1);
      const cert = new X509Certificate(Buffer.from(written.status!.certificate!, 'base64'));
      const ca = new X509Certificate(pki.ca.certPem);
      assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey));
      assert.equal(cert.subject, 'CN=system:node:n1\nO=system:nodes');
      assert.equal(cert.subjectAltName, 'DNS:n1, IP Address:10.0.0.7');
      assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
      assert.equal(cert.ca, false);
      assert.equal(Date.parse(cert.validTo), Math.floor((clock.now() + 7200_000) / 1000) * 1000);
      assert.ok(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(keyPem)));
    } finally {
      await api.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
