import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCertificateRequest, parseCertificateRequest } from '../certificates.js';
import { aggregateMessage } from '../field.js';
import {
  validateCertificateSigningRequestApprovalUpdate,
  validateCertificateSigningRequestCreate,
  validateCertificateSigningRequestStatusUpdate,
  validateCertificateSigningRequestUpdate,
} from './certificates.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const { csrPem } = await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'], sans: ['n1', '10.0.0.1'] });

function csr(over: Record<string, unknown> = {}, status: Record<string, unknown> = {}) {
  return {
    metadata: { name: 'c1' },
    spec: { request: b64(csrPem), signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['digital signature', 'client auth'], ...over },
    status,
  };
}

test('parseCertificateRequest reads the subject and SANs and checks the signature', () => {
  const info = parseCertificateRequest(csrPem);
  assert.equal(info.commonName, 'system:node:n1');
  assert.deepEqual(info.organizations, ['system:nodes']);
  assert.deepEqual(info.dnsNames, ['n1']);
  assert.deepEqual(info.ipAddresses, ['10.0.0.1']);
  // Flip a byte of the signature (the last bytes of the DER).
  const der = Buffer.from(csrPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  der[der.length - 3] ^= 0xff;
  const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  assert.throws(() => parseCertificateRequest(tampered));
  assert.throws(() => parseCertificateRequest('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'), /PEM block type must be CERTIFICATE REQUEST/);
});

test('a well-formed request is valid', () => {
  assert.deepEqual(validateCertificateSigningRequestCreate(csr()), []);
});

test('create errors read as upstream', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ request: b64('nope') }, /^spec\.request: Invalid value: \[\]byte\{0x6e, 0x6f, 0x70, 0x65\}: PEM block type must be CERTIFICATE REQUEST$/],
    [{ usages: [] }, /^spec\.usages: Required value$/],
    [{ usages: ['client auth', 'client auth'] }, /^spec\.usages\[1\]: Duplicate value: "client auth"$/],
    [{ usages: ['bogus'] }, /^spec\.usages\[0\]: Unsupported value: "bogus": supported values: "any", /],
    [{ signerName: '' }, /^spec\.signerName: Required value$/],
    [{ signerName: 'nodomain' }, /must be a fully qualified domain and path of the form 'example.com\/signer-name'/],
    [{ signerName: 'kubernetes.io/legacy-unknown' }, /the legacy signerName is not allowed via this API version/],
    [{ expirationSeconds: 599 }, /^spec\.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds \(10 minutes\)$/],
  ];
  for (const [over, re] of cases) assert.match(aggregateMessage(validateCertificateSigningRequestCreate(csr(over))), re);
});

test('conditions: true-only types, exclusive Approved and Denied', () => {
  const bad = csr({}, { conditions: [{ type: 'Approved', status: 'False' }, { type: 'Denied', status: 'True' }] });
  const msg = aggregateMessage(validateCertificateSigningRequestCreate(bad));
  assert.match(msg, /status\.conditions\[0\]\.status: Unsupported value: "False": supported values: "True"/);
  assert.match(msg, /status\.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive/);
});

test('only the approval subresource may add Approved; only status may set the certificate, once', () => {
  const old = csr();
  const approved = csr({}, { conditions: [{ type: 'Approved', status: 'True', reason: 'R' }] });
  assert.match(aggregateMessage(validateCertificateSigningRequestUpdate(approved, old)), /updates may not add a condition of type "Approved"/);
  assert.match(aggregateMessage(validateCertificateSigningRequestStatusUpdate(approved, old)), /updates may not add a condition of type "Approved"/);
  assert.deepEqual(validateCertificateSigningRequestApprovalUpdate(approved, old), []);
  assert.match(aggregateMessage(validateCertificateSigningRequestApprovalUpdate(old, approved)), /updates may not remove a condition of type "Approved"/);

  const certPem = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
  const withBadCert = csr({}, { ...approved.status, certificate: b64(certPem) });
  assert.match(aggregateMessage(validateCertificateSigningRequestStatusUpdate(withBadCert, approved)), /status\.certificate: Invalid value: "<certificate data>"/);
  assert.match(aggregateMessage(validateCertificateSigningRequestUpdate(withBadCert, approved)), /updates may not set certificate content/);
  const notPem = csr({}, { ...approved.status, certificate: b64('-----BEGIN KEY-----\nAAAA\n-----END KEY-----\n') });
  assert.match(aggregateMessage(validateCertificateSigningRequestStatusUpdate(notPem, approved)), /only CERTIFICATE PEM blocks are allowed, found "KEY"/);
});
