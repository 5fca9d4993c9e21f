import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCertificateRequest } from '../../../api/certificates.js';
import type { CertificateSigningRequest } from '../../../api/types.js';
import { pino } from 'pino';
import { FakeApi } from '../../../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../../../client/factory.js';
import { FakeClock } from '../../../util/clock.js';
import { CsrApprover, NODE_CLIENT_MESSAGE, SELF_NODE_CLIENT_MESSAGE, SELF_NODE_SERVING_MESSAGE, approvalMessage } from './approver.js';

const client = await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'] });
const serving = await createCertificateRequest({ commonName: 'system:node:n1', organizations: ['system:nodes'], sans: ['n1', '10.0.0.1'] });
const notNode = await createCertificateRequest({ commonName: 'alice', organizations: ['system:nodes'] });
const b64 = (s: string) => Buffer.from(s).toString('base64');
const bootstrapper = { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] };
const node = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };

function csr(pem: string, signerName: string, usages: string[], requestor: { username: string; groups: string[] }, conditions: { type: string; status: string }[] = []): CertificateSigningRequest {
  return { metadata: { name: 'c' }, spec: { request: b64(pem), signerName, usages, ...requestor }, status: { conditions } } as CertificateSigningRequest;
}

const kubeletClient = 'kubernetes.io/kube-apiserver-client-kubelet';
const kubeletServing = 'kubernetes.io/kubelet-serving';

test('approval decisions', () => {
  const cases: [string, CertificateSigningRequest, string | undefined][] = [
    ['bootstrapper asks for a node client cert', csr(client.csrPem, kubeletClient, ['digital signature', 'client auth'], bootstrapper), NODE_CLIENT_MESSAGE],
    ['key encipherment is optional', csr(client.csrPem, kubeletClient, ['digital signature', 'key encipherment', 'client auth'], bootstrapper), NODE_CLIENT_MESSAGE],
    ['the node renews its own', csr(client.csrPem, kubeletClient, ['digital signature', 'client auth'], node), SELF_NODE_CLIENT_MESSAGE],
    ['another node may not renew it', csr(client.csrPem, kubeletClient, ['digital signature', 'client auth'], { ...node, username: 'system:node:n2' }), undefined],
    ['an ordinary user may not ask', csr(client.csrPem, kubeletClient, ['digital signature', 'client auth'], { username: 'bob', groups: ['system:authenticated'] }), undefined],
    ['server auth in a client request', csr(client.csrPem, kubeletClient, ['digital signature', 'server auth'], bootstrapper), undefined],
    ['CN is not a node', csr(notNode.csrPem, kubeletClient, ['digital signature', 'client auth'], bootstrapper), undefined],
    ['SANs in a client request', csr(serving.csrPem, kubeletClient, ['digital signature', 'client auth'], bootstrapper), undefined],
    ['the node asks for its serving cert', csr(serving.csrPem, kubeletServing, ['digital signature', 'key encipherment', 'server auth'], node), SELF_NODE_SERVING_MESSAGE],
    ['a bootstrapper may not ask for serving', csr(serving.csrPem, kubeletServing, ['digital signature', 'server auth'], bootstrapper), undefined],
    ['serving without SANs', csr(client.csrPem, kubeletServing, ['digital signature', 'server auth'], node), undefined],
    ['other signers are left alone', csr(client.csrPem, 'example.com/x', ['digital signature', 'client auth'], bootstrapper), undefined],
    ['already approved', csr(client.csrPem, kubeletClient, ['digital signature', 'client auth'], bootstrapper, [{ type: 'Approved', status: 'True' }]), undefined],
    ['denied stays denied', csr(client.csrPem, kubeletClient, ['digital signature', 'client auth'], bootstrapper, [{ type: 'Denied', status: 'True' }]), undefined],
  ];
  for (const [name, c, want] of cases) assert.equal(approvalMessage(c), want, name);
});

test('the approver approves a bootstrapper\'s node client request through the approval subresource, and leaves others alone', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const api = await FakeApi.start({ clock });
  const controllerClient = api.client({ name: 'system:kube-controller-manager', groups: ['system:authenticated'] });
  const csrs = api.client().resource('certificatesigningrequests.certificates.k8s.io');
  const request = (name: string, user: { username: string; groups: string[] }) =>
    api
      .client({ name: user.username, groups: user.groups })
      .resource('certificatesigningrequests.certificates.k8s.io')
      .create({ metadata: { name }, spec: { request: b64(client.csrPem), signerName: kubeletClient, usages: ['digital signature', 'client auth'] } } as CertificateSigningRequest);
  await request('from-bootstrapper', bootstrapper);
  await request('from-bob', { username: 'bob', groups: ['system:authenticated'] });
  const informers = new SharedInformerFactory({ client: controllerClient, clock });
  const approver = new CsrApprover({ client: controllerClient, informers, clock, logger: pino({ level: 'silent' }) });
  approver.start();
  informers.start();
  try {
    await clock.advance(1000);
    const approved = (await csrs.get('from-bootstrapper')).status?.conditions ?? [];
    assert.deepEqual(approved.map((c) => [c.type, c.status, c.reason, c.message]), [['Approved', 'True', 'AutoApproved', NODE_CLIENT_MESSAGE]]);
    assert.equal((await csrs.get('from-bob')).status?.conditions, undefined);
    assert.deepEqual(api.actions.filter((a) => a.user === 'system:kube-controller-manager' && a.subresource).map((a) => `${a.verb} ${a.name}/${a.subresource}`), ['update from-bootstrapper/approval']);
  } finally {
    await approver.stop();
    await informers.shutdown();
    await api.stop();
  }
});
