import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MatchResources } from 'kubernetes-types/admissionregistration/v1.js';
import type { ConfigMap, Namespace, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from '../../../../api/types.js';
import { findResource } from '../../../../api/resources.js';
import { isStatusError } from '../../../../api/errors.js';
import { fakeLookups, type LookupObjects } from '../../testing.js';
import type { AdmissionAttributes } from '../../interface.js';
import { ValidatingAdmissionPolicyPlugin } from './plugin.js';

type Spec = NonNullable<ValidatingAdmissionPolicy['spec']>;
type BindingSpec = NonNullable<ValidatingAdmissionPolicyBinding['spec']>;

/** kubernetes-types' NamedRuleWithOperations lacks the fields it inlines from Rule. */
const match = (m: object) => m as MatchResources;
const deploymentRules = match({ resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] });

function policy(name: string, spec: Partial<Spec>): ValidatingAdmissionPolicy {
  return { metadata: { name, uid: `uid-${name}`, generation: 1 }, spec: { failurePolicy: 'Fail', matchConstraints: deploymentRules, ...spec } };
}

function binding(name: string, spec: Partial<BindingSpec>): ValidatingAdmissionPolicyBinding {
  return { metadata: { name }, spec: { policyName: 'max-replicas', validationActions: ['Deny'], ...spec } };
}

const maxReplicas = policy('max-replicas', { validations: [{ expression: 'object.spec.replicas <= 5' }] });

function deployment(replicas: number, labels: Record<string, string> = {}, namespace = 'default'): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: findResource('apps', 'v1', 'deployments')!,
    subresource: '',
    namespace,
    name: 'd',
    object: { metadata: { name: 'd', namespace, labels }, spec: { replicas, template: { spec: { containers: [{ name: 'x', image: 'x' }] } } } },
    user: { name: 'alice', groups: ['devs'] },
    dryRun: false,
    warnings: [],
  };
}

const namespaces: Namespace[] = [
  { metadata: { name: 'default', labels: { 'kubernetes.io/metadata.name': 'default' } } },
  { metadata: { name: 'prod', labels: { env: 'prod' } } },
];

function plugin(objects: LookupObjects): ValidatingAdmissionPolicyPlugin {
  return new ValidatingAdmissionPolicyPlugin({ lookups: fakeLookups({ namespaces, ...objects }) });
}

async function refusal(p: Promise<void>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(isStatusError(err), String(err));
    return { code: err.code, reason: err.reason, message: err.message };
  }
  assert.fail('expected a refusal');
}

const objects = (p: ValidatingAdmissionPolicy[], b: ValidatingAdmissionPolicyBinding[], extra: LookupObjects = {}): LookupObjects => ({
  'validatingadmissionpolicies.admissionregistration.k8s.io': p,
  'validatingadmissionpolicybindings.admissionregistration.k8s.io': b,
  ...extra,
});

test('a Deny binding refuses with upstream message, reason Invalid and 422; a passing object is admitted', async () => {
  const p = plugin(objects([maxReplicas], [binding('max-replicas-binding', {})]));
  const err = await refusal(p.validate(deployment(6)));
  assert.deepEqual(err, {
    code: 422,
    reason: 'Invalid',
    message: `deployments.apps "d" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`,
  });
  await p.validate(deployment(5));
});

test('message, messageExpression and reason choose the refusal text and code', async () => {
  const cases: [Spec['validations'], number, string][] = [
    [[{ expression: 'object.spec.replicas <= 5', message: 'too many replicas', reason: 'Forbidden' }], 403, 'too many replicas'],
    [[{ expression: 'object.spec.replicas <= 5', message: 'static', messageExpression: '"replicas " + string(object.spec.replicas) + " > 5"' }], 422, 'replicas 6 > 5'],
    // A messageExpression that fails or gives no usable string falls back to message.
    [[{ expression: 'object.spec.replicas <= 5', message: 'static', messageExpression: 'object.spec.nope' }], 422, 'static'],
    [[{ expression: 'object.spec.replicas <= 5', messageExpression: '"two\\nlines"' }], 422, 'failed expression: object.spec.replicas <= 5'],
  ];
  for (const [validations, code, why] of cases) {
    const p = plugin(objects([policy('max-replicas', { validations })], [binding('b', {})]));
    const err = await refusal(p.validate(deployment(6)));
    assert.equal(err.code, code);
    assert.equal(err.message, `deployments.apps "d" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'b' denied request: ${why}`);
  }
});

test('a Warn binding admits and adds upstream warning', async () => {
  const p = plugin(objects([maxReplicas], [binding('warn-binding', { validationActions: ['Warn', 'Audit'] })]));
  const a = deployment(6);
  await p.validate(a);
  await p.validate(a);
  assert.deepEqual(a.warnings, ["Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'warn-binding': failed expression: object.spec.replicas <= 5"]);
});

test('policies and bindings apply only where they match', async () => {
  const cases: [string, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, AdmissionAttributes, boolean][] = [
    ['no binding for the policy', maxReplicas, binding('b', { policyName: 'other' }), deployment(6), false],
    ['other resource', policy('max-replicas', { matchConstraints: match({ resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] }), validations: [{ expression: 'false' }] }), binding('b', {}), deployment(6), false],
    ['other operation', policy('max-replicas', { matchConstraints: match({ resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['DELETE'], resources: ['deployments'] }] }), validations: [{ expression: 'false' }] }), binding('b', {}), deployment(6), false],
    ['wildcard rule', policy('max-replicas', { matchConstraints: match({ resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }] }), validations: [{ expression: 'false' }] }), binding('b', {}), deployment(6), true],
    ['excluded by name', policy('max-replicas', { matchConstraints: match({ ...deploymentRules, excludeResourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['*'], resources: ['deployments'], resourceNames: ['d'] }] }), validations: [{ expression: 'false' }] }), binding('b', {}), deployment(6), false],
    ['binding namespace selector matches', maxReplicas, binding('b', { matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } }), deployment(6, {}, 'prod'), true],
    ['binding namespace selector does not match', maxReplicas, binding('b', { matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } }), deployment(6), false],
    ['object selector matches', policy('max-replicas', { matchConstraints: { ...deploymentRules, objectSelector: { matchLabels: { app: 'web' } } }, validations: [{ expression: 'false' }] }), binding('b', {}), deployment(1, { app: 'web' }), true],
    ['object selector does not match', policy('max-replicas', { matchConstraints: { ...deploymentRules, objectSelector: { matchLabels: { app: 'web' } } }, validations: [{ expression: 'false' }] }), binding('b', {}), deployment(1), false],
    ['match condition false', policy('max-replicas', { matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 10' }], validations: [{ expression: 'false' }] }), binding('b', {}), deployment(6), false],
    ['match condition true', policy('max-replicas', { matchConditions: [{ name: 'big', expression: 'object.spec.replicas > 1' }], validations: [{ expression: 'false' }] }), binding('b', {}), deployment(6), true],
  ];
  for (const [name, pol, bind, a, refused] of cases) {
    const p = plugin(objects([pol], [bind]));
    if (refused) await refusal(p.validate(a));
    else await p.validate(a).catch((err) => assert.fail(`${name}: ${err}`));
  }
});

test('admission configuration kinds are exempt', () => {
  const p = plugin({});
  assert.equal(p.handles({ ...deployment(1), resource: findResource('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies')! }), false);
  assert.equal(p.handles(deployment(1)), true);
});

test('params from paramRef: by name, by selector, not found Deny and Allow', async () => {
  const withParams = policy('max-replicas', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: '"max is " + params.data.max + " for " + params.kind' }],
  });
  const cm = (name: string, max: string, labels: Record<string, string> = {}): ConfigMap => ({ metadata: { name, namespace: 'default', labels }, data: { max } });
  const byName = binding('b', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } });
  const p = plugin(objects([withParams], [byName], { configmaps: [cm('limits', '3')] }));
  const err = await refusal(p.validate(deployment(4)));
  assert.match(err.message, /denied request: max is 3 for ConfigMap$/);
  await p.validate(deployment(3));

  // Every selected param is evaluated.
  const bySelector = binding('b', { paramRef: { selector: { matchLabels: { tier: 'x' } }, parameterNotFoundAction: 'Allow' } });
  const sel = plugin(objects([withParams], [bySelector], { configmaps: [cm('a', '10', { tier: 'x' }), cm('b', '2', { tier: 'x' }), cm('c', '1')] }));
  assert.match((await refusal(sel.validate(deployment(4)))).message, /max is 2/);
  await sel.validate(deployment(2));

  const missing = plugin(objects([withParams], [byName]));
  assert.match(
    (await refusal(missing.validate(deployment(1)))).message,
    /ValidatingAdmissionPolicy 'max-replicas' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/,
  );
  const allow = plugin(objects([withParams], [binding('b', { paramRef: { name: 'limits', parameterNotFoundAction: 'Allow' } })]));
  await allow.validate(deployment(100));
});

test('variables compose, request and namespaceObject are offered', async () => {
  const pol = policy('max-replicas', {
    variables: [
      { name: 'limit', expression: 'namespaceObject.metadata.name == "prod" ? 10 : 2' },
      { name: 'over', expression: 'object.spec.replicas > variables.limit' },
    ],
    validations: [
      { expression: '!variables.over', messageExpression: '"limit " + string(variables.limit)' },
      { expression: 'request.userInfo.username != "mallory" && request.operation == "CREATE" && request.resource.resource == "deployments"', message: 'user' },
    ],
  });
  const p = plugin(objects([pol], [binding('b', {})]));
  assert.match((await refusal(p.validate(deployment(3)))).message, /denied request: limit 2$/);
  await p.validate(deployment(3, {}, 'prod'));
  assert.match((await refusal(p.validate({ ...deployment(1), user: { name: 'mallory', groups: [] } }))).message, /denied request: user$/);
});

test('failurePolicy decides what an evaluation error does', async () => {
  const failing = (failurePolicy: 'Fail' | 'Ignore') => policy('max-replicas', { failurePolicy, validations: [{ expression: 'object.spec.nope > 1' }] });
  const err = await refusal(plugin(objects([failing('Fail')], [binding('b', {})])).validate(deployment(1)));
  assert.equal(err.code, 422);
  assert.match(err.message, /denied request: expression 'object.spec.nope > 1' resulted in error: .*nope/);
  await plugin(objects([failing('Ignore')], [binding('b', {})])).validate(deployment(1));
  // A match condition error follows it too.
  const condition = (failurePolicy: 'Fail' | 'Ignore') =>
    policy('max-replicas', { failurePolicy, matchConditions: [{ name: 'c', expression: 'object.nope' }], validations: [{ expression: 'true' }] });
  assert.match((await refusal(plugin(objects([condition('Fail')], [binding('b', {})])).validate(deployment(1)))).message, /expression 'object.nope' resulted in error/);
  await plugin(objects([condition('Ignore')], [binding('b', {})])).validate(deployment(1));
});

test('a hostile expression is stopped by the cost bound, not run', async () => {
  const a = deployment(1);
  (a.object!.spec as Record<string, unknown>).items = Array.from({ length: 1000 }, (_, i) => i);
  const hostile = policy('max-replicas', {
    validations: [{ expression: 'object.spec.items.all(x, object.spec.items.all(y, object.spec.items.all(z, x + y + z >= 0)))' }],
  });
  const err = await refusal(plugin(objects([hostile], [binding('b', {})])).validate(a));
  assert.match(err.message, /resulted in error: operation cancelled: actual cost limit exceeded$/);
  // Variables that double a string each are cut off before they grow without bound.
  const doubling = policy('max-replicas', {
    variables: Array.from({ length: 40 }, (_, i) => ({ name: `v${i}`, expression: i === 0 ? '"xxxxxxxxxxxxxxxx"' : `variables.v${i - 1} + variables.v${i - 1}` })),
    validations: [{ expression: 'size(variables.v39) > 0' }],
  });
  assert.match((await refusal(plugin(objects([doubling], [binding('b', {})])).validate(deployment(1)))).message, /actual cost limit exceeded/);
});

test('on DELETE, object is null and oldObject is the stored object', async () => {
  const pol = policy('max-replicas', {
    matchConstraints: match({ resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['DELETE'], resources: ['deployments'] }] }),
    validations: [{ expression: 'object == null && oldObject.metadata.name != "protected"', message: 'protected', reason: 'Forbidden' }],
  });
  const p = plugin(objects([pol], [binding('b', {})]));
  const del = (name: string): AdmissionAttributes => {
    const { object, ...rest } = deployment(1);
    return { ...rest, operation: 'DELETE', name, oldObject: { ...object!, metadata: { name, namespace: 'default' } } };
  };
  const err = await refusal(p.validate(del('protected')));
  assert.deepEqual([err.code, err.message], [403, `deployments.apps "Unknown" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'b' denied request: protected`]);
  await p.validate(del('other'));
});
