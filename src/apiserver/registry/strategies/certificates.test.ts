import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../../api/meta.js';
import type { CertificateSigningRequest } from '../../../api/types.js';
import { csrCondition } from '../../printers/certificates.js';
import { certificateSigningRequestStrategy } from './certificates.js';

const strategy = certificateSigningRequestStrategy();
const now = Date.UTC(2026, 0, 1);
const csr = (over: Record<string, unknown> = {}) =>
  ({ metadata: { name: 'c' }, spec: { request: 'eA==', signerName: 'example.com/x', usages: ['client auth'], username: 'forged', groups: ['system:masters'] }, ...over }) as unknown as StoredObject;

test('create: requestor fields come from the authenticated user; status starts empty', () => {
  const obj = csr({ status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'eA==' } });
  strategy.prepareForCreate(obj, { now, user: { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] } });
  const spec = (obj as unknown as CertificateSigningRequest).spec;
  assert.equal(spec.username, 'system:bootstrap:abcdef');
  assert.deepEqual(spec.groups, ['system:bootstrappers', 'system:authenticated']);
  assert.equal(spec.uid, undefined);
  assert.deepEqual(obj.status, {});
});

test('approval writes only conditions, stamping their times; updates keep spec and status', () => {
  const old = csr({ status: {} });
  const approval = csr({ spec: { changed: true }, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'R' }], certificate: 'eA==' } });
  strategy.prepareForSubresourceUpdate('approval', approval, old, { now });
  assert.deepEqual(approval.spec, old.spec);
  assert.deepEqual(approval.status, {
    conditions: [{ type: 'Approved', status: 'True', reason: 'R', lastUpdateTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  });
  const update = csr({ spec: { changed: true }, status: { certificate: 'eA==' } });
  strategy.prepareForUpdate(update, old, { now });
  assert.deepEqual([update.spec, update.status], [old.spec, old.status]);
  assert.equal(strategy.selectableFields(old)['spec.signerName'], 'example.com/x');
});

test('the CONDITION column', () => {
  const c = (conditions: string[], certificate?: string) => ({ status: { conditions: conditions.map((type) => ({ type, status: 'True' })), certificate } }) as CertificateSigningRequest;
  assert.equal(csrCondition(c([])), 'Pending');
  assert.equal(csrCondition(c(['Approved'], 'eA==')), 'Approved,Issued');
  assert.equal(csrCondition(c(['Approved', 'Failed'])), 'Approved,Failed');
  assert.equal(csrCondition(c(['Denied'])), 'Denied');
});
