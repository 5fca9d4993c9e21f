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

test("webhooks' matchConditions: at most 64, each compiles, names qualified and unique", () => {
  const mc = (name: string, expression: string) => ({ name, expression });
  assert.deepEqual(errors('ValidatingWebhookConfiguration', [webhook({ matchConditions: [mc('a', "object.metadata.name != 'x'"), mc('b', 'request.dryRun == false')] })]), []);
  const many = Array.from({ length: 65 }, (_, i) => mc(`c${i}`, 'true'));
  assert.deepEqual(errors('MutatingWebhookConfiguration', [webhook({ matchConditions: many })]), ['webhooks[0].matchConditions: Too many: 65: must have at most 64 items']);
  const bad = errors('ValidatingWebhookConfiguration', [webhook({ matchConditions: [mc('a', 'true'), mc('a', 'true'), mc('', ' '), mc('Bad Name', 'object.')] })]);
  assert.equal(bad[0], 'webhooks[0].matchConditions[1].name: Duplicate value: "a"');
  assert.equal(bad[1], 'webhooks[0].matchConditions[2].expression: Required value');
  assert.equal(bad[2], 'webhooks[0].matchConditions[2].name: Required value');
  assert.match(bad[3]!, /^webhooks\[0\]\.matchConditions\[3\]\.expression: Invalid value: "object\.": compilation failed: ERROR: <input>/);
  assert.match(bad[4]!, /^webhooks\[0\]\.matchConditions\[3\]\.name: Invalid value: "Bad Name": name part must consist of alphanumeric characters/);
  assert.equal(bad.length, 5);
});

const messages = (kind: string, obj: Record<string, unknown>) => {
  applyDefaults('admissionregistration.k8s.io', kind, obj);
  return validateCreate('admissionregistration.k8s.io', kind, obj).map(fieldErrorMessage);
};

const rules = { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] };

test('a policy is defaulted and valid with rules and a compiling expression', () => {
  const obj: Record<string, any> = { metadata: { name: 'p' }, spec: { matchConstraints: rules, validations: [{ expression: 'object.spec.replicas <= 5' }] } };
  assert.deepEqual(messages('ValidatingAdmissionPolicy', obj), []);
  assert.equal(obj.spec.failurePolicy, 'Fail');
  assert.equal(obj.spec.matchConstraints.matchPolicy, 'Equivalent');
  assert.deepEqual(obj.spec.matchConstraints.namespaceSelector, {});
  assert.equal(obj.spec.matchConstraints.resourceRules[0].scope, '*');
});

test('policy refusals name the field', () => {
  assert.deepEqual(messages('ValidatingAdmissionPolicy', { metadata: { name: 'p' }, spec: {} }), [
    'spec.matchConstraints: Required value',
    'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
  ]);
  const bad = messages('ValidatingAdmissionPolicy', {
    metadata: { name: 'p' },
    spec: {
      failurePolicy: 'Sometimes',
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['MAKE'], resources: ['deployments'] }] },
      validations: [{ expression: 'object.spec.replicas <=', reason: 'Teapot' }, { expression: '' }],
      variables: [{ name: '1bad', expression: 'true' }],
    },
  });
  assert.equal(bad[0], 'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"');
  assert.equal(bad[1], 'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "MAKE": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"');
  assert.match(bad[2], /^spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <=": compilation failed: ERROR: <input>: /);
  assert.equal(bad[3], 'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"');
  assert.equal(bad[4], 'spec.validations[1].expression: Required value');
  assert.equal(bad[5], 'spec.variables[0].name: Invalid value: "1bad": name is not a valid CEL identifier');
  assert.equal(bad.length, 6);
});

test('binding validation: policyName, validationActions, paramRef', () => {
  assert.deepEqual(messages('ValidatingAdmissionPolicyBinding', { metadata: { name: 'b' }, spec: {} }), [
    'spec.policyName: Required value',
    'spec.validationActions: Required value: at least one validation action is required',
  ]);
  assert.deepEqual(messages('ValidatingAdmissionPolicyBinding', { metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Deny', 'Warn'] } }), [
    'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
  ]);
  assert.deepEqual(
    messages('ValidatingAdmissionPolicyBinding', { metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Audit', 'Audit', 'Log'], paramRef: { name: 'x' } } }),
    [
      'spec.paramRef.parameterNotFoundAction: Required value',
      'spec.validationActions[1]: Duplicate value: "Audit"',
      'spec.validationActions[2]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
    ],
  );
  assert.deepEqual(messages('ValidatingAdmissionPolicyBinding', { metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Warn', 'Audit'] } }), []);
});
