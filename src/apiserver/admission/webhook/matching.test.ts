import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findResource } from '../../../api/resources.js';
import { fakeLookups } from '../testing.js';
import type { AdmissionAttributes, AdmissionOperation } from '../interface.js';
import { matchNamespaceSelector, matchObjectSelector, matchRules, type RuleWithOperations } from './matching.js';

function attrs(group: string, version: string, resource: string, extra: Partial<AdmissionAttributes> = {}, operation: AdmissionOperation = 'CREATE'): AdmissionAttributes {
  return { operation, resource: findResource(group, version, resource)!, subresource: '', namespace: 'd', name: 'x', user: { name: 'u', groups: [] }, dryRun: false, ...extra };
}

const rule = (r: Partial<RuleWithOperations>): RuleWithOperations => ({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: '*', ...r });
const matches = (r: Partial<RuleWithOperations>, a: AdmissionAttributes, matchPolicy?: string) => matchRules({ name: 'w', rules: [rule(r)], matchPolicy }, a) !== undefined;

test('rules match operations, groups, versions, resources with subresources, and scope as upstream', () => {
  const pod = attrs('', 'v1', 'pods');
  const status = attrs('', 'v1', 'pods', { subresource: 'status' }, 'UPDATE');
  const ns = attrs('', 'v1', 'namespaces', { namespace: '' });
  const node = attrs('', 'v1', 'nodes', { namespace: '' });
  const table: [Partial<RuleWithOperations>, AdmissionAttributes, boolean][] = [
    [{}, pod, true],
    [{ operations: ['UPDATE'] }, pod, false],
    [{ operations: ['CREATE', 'UPDATE'] }, pod, true],
    [{ apiGroups: ['apps'] }, pod, false],
    [{ apiGroups: [''] }, pod, true],
    [{ apiVersions: ['v2'] }, pod, false],
    [{ resources: ['pods'] }, pod, true],
    [{ resources: ['deployments'] }, pod, false],
    // `*` and a bare resource leave subresources out; `x/*`, `*/s` and `*/*` take them in.
    [{ resources: ['*'] }, status, false],
    [{ resources: ['pods'] }, status, false],
    [{ resources: ['pods/*'] }, status, true],
    [{ resources: ['pods/*'] }, pod, true],
    [{ resources: ['*/status'] }, status, true],
    [{ resources: ['*/status'] }, pod, false],
    [{ resources: ['pods/status'] }, status, true],
    [{ resources: ['*/*'] }, status, true],
    [{ scope: 'Namespaced' }, pod, true],
    [{ scope: 'Cluster' }, pod, false],
    [{ scope: 'Cluster' }, node, true],
    [{ scope: 'Namespaced' }, node, false],
    // Namespace objects are cluster-scoped whatever their request's namespace.
    [{ scope: 'Cluster' }, { ...ns, namespace: 'x' }, true],
    [{ scope: 'Namespaced' }, { ...ns, namespace: 'x' }, false],
  ];
  for (const [r, a, want] of table) assert.equal(matches(r, a), want, `${JSON.stringify(r)} on ${a.resource.resource}/${a.subresource}`);
});

test('matchPolicy Equivalent matches a rule for the same resource in another served version; Exact does not', () => {
  const hpaV2 = attrs('autoscaling', 'v2', 'horizontalpodautoscalers');
  const r = { apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] };
  const got = matchRules({ name: 'w', rules: [rule(r)], matchPolicy: 'Equivalent' }, hpaV2);
  assert.equal(got?.resource.version, 'v1');
  assert.equal(got?.equivalent, true);
  assert.equal(matches(r, hpaV2, 'Exact'), false);
  assert.equal(matches({ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }, hpaV2), false);
});

test('namespaceSelector looks at the namespace labels; a namespace at its own; other cluster-scoped objects always match', async () => {
  const lookups = fakeLookups({ namespaces: [{ metadata: { name: 'd', labels: { env: 'prod' } } }, { metadata: { name: 'e', labels: { env: 'dev' } } }] });
  const hook = { name: 'w', namespaceSelector: { matchLabels: { env: 'prod' } } };
  assert.equal(await matchNamespaceSelector(hook, attrs('', 'v1', 'pods'), lookups), true);
  assert.equal(await matchNamespaceSelector(hook, attrs('', 'v1', 'pods', { namespace: 'e' }), lookups), false);
  const nsObj = { metadata: { name: 'n', labels: { env: 'prod' } } };
  assert.equal(await matchNamespaceSelector(hook, attrs('', 'v1', 'namespaces', { namespace: '', object: nsObj }), lookups), true);
  assert.equal(await matchNamespaceSelector(hook, attrs('', 'v1', 'namespaces', { namespace: '', object: { metadata: { name: 'n' } } }), lookups), false);
  assert.equal(await matchNamespaceSelector(hook, attrs('', 'v1', 'nodes', { namespace: '' }), lookups), true);
  const notIn = { name: 'w', namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] } };
  assert.equal(await matchNamespaceSelector(notIn, attrs('', 'v1', 'pods', { namespace: 'e' }), lookups), true);
});

test('objectSelector matches when the new or the old object matches; {} matches everything', () => {
  const hook = { name: 'w', objectSelector: { matchLabels: { app: 'web' } } };
  const web = { metadata: { name: 'x', labels: { app: 'web' } } };
  const db = { metadata: { name: 'x', labels: { app: 'db' } } };
  assert.equal(matchObjectSelector(hook, attrs('', 'v1', 'pods', { object: web })), true);
  assert.equal(matchObjectSelector(hook, attrs('', 'v1', 'pods', { object: db })), false);
  assert.equal(matchObjectSelector(hook, attrs('', 'v1', 'pods', { object: db, oldObject: web }, 'UPDATE')), true);
  assert.equal(matchObjectSelector(hook, attrs('', 'v1', 'pods', { oldObject: web }, 'DELETE')), true);
  assert.equal(matchObjectSelector({ name: 'w', objectSelector: {} }, attrs('', 'v1', 'pods', { object: db })), true);
});
