import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from '../defaults/index.js';
import { fieldErrorMessage } from '../field.js';
import { validateCreate } from './index.js';

const group = 'admissionregistration.k8s.io';

function webhook(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'a.example.com',
    clientConfig: { url: 'https://127.0.0.1:8443/x' },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}

const errors = (kind: string, webhooks: unknown[]) => validateCreate(group, kind, { metadata: { name: 'c' }, webhooks }).map(fieldErrorMessage);

test('webhook configurations get upstream defaults', () => {
  const c = { metadata: { name: 'c' }, webhooks: [webhook({ clientConfig: { service: { name: 's', namespace: 'n' } } })] };
  applyDefaults(group, 'MutatingWebhookConfiguration', c);
  const h = c.webhooks[0] as Record<string, any>;
  assert.equal(h.failurePolicy, 'Fail');
  assert.equal(h.matchPolicy, 'Equivalent');
  assert.deepEqual(h.namespaceSelector, {});
  assert.deepEqual(h.objectSelector, {});
  assert.equal(h.timeoutSeconds, 10);
  assert.equal(h.reinvocationPolicy, 'Never');
  assert.equal(h.rules[0].scope, '*');
  assert.equal(h.clientConfig.service.port, 443);
  const v = { metadata: { name: 'c' }, webhooks: [webhook()] };
  applyDefaults(group, 'ValidatingWebhookConfiguration', v);
  assert.equal((v.webhooks[0] as Record<string, unknown>).reinvocationPolicy, undefined);
});

test('webhook configurations are validated with upstream messages', () => {
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook()]), []);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook(), webhook()]), ['webhooks[1].name: Duplicate value: "a.example.com"']);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ name: 'short' })]), [
    'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
  ]);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ timeoutSeconds: 31 })]), [
    'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
  ]);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ sideEffects: undefined })]), ['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun']);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ clientConfig: {} })]), ['webhooks[0].clientConfig: Required value: exactly one of url or service is required']);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ clientConfig: { url: 'http://h/x' } })]), [
    `webhooks[0].clientConfig.url: Invalid value: "http://h/x": 'https' is the only allowed URL scheme`,
  ]);
  assert.deepEqual(errors('MutatingWebhookConfiguration', [webhook({ reinvocationPolicy: 'Always' })]), [
    'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
  ]);
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ rules: [{ operations: ['*', 'CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] })]), [
    `webhooks[0].rules[0].operations: Invalid value: []string{"*", "CREATE"}: if '*' is present, must not specify other operations`,
  ]);
});
