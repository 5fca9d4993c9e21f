import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCertificateRequest } from '../../../api/certificates.js';
import type { AuthorizationAttributes } from '../../authz/authorizer.js';
import type { AdmissionOperation } from '../interface.js';
import { CertificateApproval } from './certificateapproval.js';
import { CertificateSigning } from './certificatesigning.js';
import { CertificateSubjectRestriction } from './certificatesubjectrestriction.js';
import { admissionAttributes, forbiddenMessage } from '../testing.js';

const csr = (signerName: string, extra: object = {}) => ({ metadata: { name: 'csr-1' }, spec: { signerName, request: '' }, ...extra });
const attrs = (operation: AdmissionOperation, subresource: string, object: object, oldObject?: object) =>
  admissionAttributes('certificates.k8s.io', 'v1', 'certificatesigningrequests', { operation, subresource, name: 'csr-1', object, oldObject, user: { name: 'alice', groups: [] } });

/** An authorizer that allows exactly these `verb signers/name` rights, recording what it was asked. */
function authorizer(allowed: string[], asked: string[] = []) {
  return async (a: AuthorizationAttributes) => {
    const right = `${a.verb} ${a.resource}/${a.name}`;
    asked.push(right);
    return { decision: allowed.includes(right) ? ('allow' as const) : ('noOpinion' as const) };
  };
}


test('approval needs approve on the signer name or its domain wildcard', async () => {
  const a = attrs('UPDATE', 'approval', csr('example.com/foo'));
  const asked: string[] = [];
  assert.equal(
    await forbiddenMessage(new CertificateApproval(authorizer([], asked)).validate(a)),
    'certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: user not permitted to approve requests with signerName "example.com/foo"',
  );
  assert.deepEqual(asked, ['approve signers/example.com/foo', 'approve signers/example.com/*']);
  await new CertificateApproval(authorizer(['approve signers/example.com/*'])).validate(a);
  await new CertificateApproval(authorizer(['approve signers/example.com/foo'])).validate(a);
  assert.equal(new CertificateApproval(authorizer([])).handles(attrs('UPDATE', 'status', csr('x/y'))), false);
});

test('signing needs sign only when status.certificate changes', async () => {
  const old = csr('example.com/foo');
  const signed = csr('example.com/foo', { status: { certificate: 'Y2VydA==' } });
  const none = new CertificateSigning(authorizer([]));
  assert.equal(
    await forbiddenMessage(none.validate(attrs('UPDATE', 'status', signed, old))),
    'certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: user not permitted to sign requests with signerName "example.com/foo"',
  );
  await none.validate(attrs('UPDATE', 'status', csr('example.com/foo', { status: { conditions: [] } }), old));
  await new CertificateSigning(authorizer(['sign signers/example.com/foo'])).validate(attrs('UPDATE', 'status', signed, old));
});

test('no system:masters client certificates through the kube-apiserver-client signer', async () => {
  const masters = await createCertificateRequest({ commonName: 'eve', organizations: ['system:masters'] });
  const plain = await createCertificateRequest({ commonName: 'bob', organizations: ['devs'] });
  const withRequest = (signerName: string, pem: string) => ({ metadata: { name: 'csr-1' }, spec: { signerName, request: Buffer.from(pem).toString('base64') } });
  const p = new CertificateSubjectRestriction();
  assert.equal(
    await forbiddenMessage(p.validate(attrs('CREATE', '', withRequest('kubernetes.io/kube-apiserver-client', masters.csrPem)))),
    'certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
  await p.validate(attrs('CREATE', '', withRequest('kubernetes.io/kube-apiserver-client', plain.csrPem)));
  await p.validate(attrs('CREATE', '', withRequest('example.com/foo', masters.csrPem)));
});
