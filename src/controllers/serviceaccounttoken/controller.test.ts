import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { pino } from 'pino';
import type { Secret, ServiceAccount } from '../../api/types.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { legacyClaimKeys, legacyIssuer, TokenSigner } from '../../apiserver/authn/satoken.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { isServiceAccountToken, serviceAccountNameKey, serviceAccountTokenSecretType, serviceAccountUIDKey, TokensController } from './controller.js';
import { until } from '../kit/testing.js';

const decode = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');

describe('serviceaccount-token-controller', () => {
  it('isServiceAccountToken: type, namespace, name, and the UID annotation when there is one', () => {
    const sa = { namespace: 'ns', name: 'build', uid: 'u1' };
    const secret = (annotations: Record<string, string>, type = serviceAccountTokenSecretType, namespace = 'ns'): Secret => ({ type, metadata: { namespace, name: 's', annotations } });
    assert.equal(isServiceAccountToken(secret({ [serviceAccountNameKey]: 'build' }), sa), true);
    assert.equal(isServiceAccountToken(secret({ [serviceAccountNameKey]: 'build', [serviceAccountUIDKey]: 'u1' }), sa), true);
    assert.equal(isServiceAccountToken(secret({ [serviceAccountNameKey]: 'build', [serviceAccountUIDKey]: 'u2' }), sa), false);
    assert.equal(isServiceAccountToken(secret({ [serviceAccountNameKey]: 'other' }), sa), false);
    assert.equal(isServiceAccountToken(secret({ [serviceAccountNameKey]: 'build' }, 'Opaque'), sa), false);
    assert.equal(isServiceAccountToken(secret({ [serviceAccountNameKey]: 'build' }, serviceAccountTokenSecretType, 'other'), sa), false);
  });

  it('fills a token Secret, deletes one naming a missing account, and deletes the tokens of a deleted account', async () => {
    const clock = new FakeClock();
    const api = await FakeApi.start({ clock });
    const client = api.client();
    const informers = new SharedInformerFactory({ client, clock });
    const signer = new TokenSigner(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    const controller = new TokensController({ client, informers, clock, logger: pino({ level: 'silent' }), signer, rootCA: 'CA PEM' });
    controller.start();
    informers.start();
    const secrets = client.resource<Secret>('', 'v1', 'secrets').namespace('default');
    const sas = client.resource<ServiceAccount>('', 'v1', 'serviceaccounts').namespace('default');
    try {
      const sa = await sas.create({ metadata: { name: 'build' } });
      await secrets.create({ metadata: { name: 'build-token', annotations: { [serviceAccountNameKey]: 'build' } }, type: serviceAccountTokenSecretType, data: { extra: 'eA==' } });
      const filled = await until(async () => {
        const s = await secrets.get('build-token');
        return s.data?.token ? s : undefined;
      }, 'data.token');
      assert.equal(decode(filled.data?.['ca.crt']), 'CA PEM');
      assert.equal(decode(filled.data?.namespace), 'default');
      assert.equal(filled.data?.extra, 'eA==');
      assert.equal(filled.metadata?.annotations?.[serviceAccountUIDKey], sa.metadata?.uid);
      const claims = await signer.verify(decode(filled.data?.token), clock.now());
      assert.equal(claims.iss, legacyIssuer);
      assert.equal(claims.sub, 'system:serviceaccount:default:build');
      assert.equal(claims[legacyClaimKeys.secretName], 'build-token');
      assert.equal(claims[legacyClaimKeys.serviceAccountUID], sa.metadata?.uid);
      assert.equal(claims.exp, undefined);

      // A Secret for an account that does not exist is deleted.
      await secrets.create({ metadata: { name: 'orphan', annotations: { [serviceAccountNameKey]: 'nobody' } }, type: serviceAccountTokenSecretType });
      await until(async () => ((await secrets.list()).items.some((s) => s.metadata?.name === 'orphan') ? undefined : true), 'orphan deleted');

      // Deleting the account deletes its tokens, and leaves other Secrets.
      await secrets.create({ metadata: { name: 'plain' }, data: { a: 'YQ==' } });
      await sas.delete('build');
      await until(async () => ((await secrets.list()).items.some((s) => s.metadata?.name === 'build-token') ? undefined : true), 'build-token deleted');
      assert.ok(await secrets.get('plain'));
    } finally {
      await controller.stop();
      await informers.shutdown();
      await api.stop();
    }
  });
});
