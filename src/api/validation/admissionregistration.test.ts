import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { applyDefaults } from '../defaults/index.js';
import { validateCreate } from './index.js';

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
  assert.equal(bad[1], 'spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "MAKE": supported values: "CONNECT", "CREATE", "DELETE", "UPDATE"');
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
