import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from './policy.js';
import type { RequestInfo } from '../http/requestinfo.js';

const policy = parsePolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  userGroups: ["system:nodes"]
  nonResourceURLs: ["/healthz*", "/version"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["pods/log", "pods/status"]
- level: Request
  omitStages: [ResponseStarted]
  omitManagedFields: true
  resources:
  - group: ""
    resources: ["configmaps"]
    resourceNames: ["controller-leader"]
- level: Metadata
  namespaces: ["kube-system"]
- level: RequestResponse
  resources:
  - group: "apps"
    resources: ["*/scale"]
  - group: "batch"
    resources: ["jobs/*"]
  - group: "example.com"
- level: Metadata
  nonResourceURLs: ["/metrics"]
`);

const info = (over: Partial<RequestInfo>): RequestInfo => ({
  isResourceRequest: true, path: '/api/v1/pods', verb: 'get', apiPrefix: 'api', apiGroup: '', apiVersion: 'v1', namespace: 'default', resource: 'pods', subresource: '', name: '', parts: [], ...over,
});
const jane = { name: 'jane', groups: ['system:authenticated'] };
const proxy = { name: 'system:kube-proxy', groups: ['system:authenticated'] };
const node = { name: 'system:node:a', groups: ['system:nodes'] };

test('rules match in order on users, groups, verbs, resources, subresources, names, namespaces and URLs', () => {
  const cases: [typeof jane, Partial<RequestInfo>, string][] = [
    [proxy, { verb: 'watch' }, 'None'],
    [proxy, { verb: 'list', resource: 'pods', subresource: 'log' }, 'RequestResponse'],
    [jane, { resource: 'pods', subresource: 'log', name: 'p' }, 'RequestResponse'],
    [jane, { resource: 'pods', subresource: 'status', name: 'p' }, 'RequestResponse'],
    [jane, { resource: 'pods' }, 'None'],
    [jane, { resource: 'configmaps', name: 'controller-leader' }, 'Request'],
    [jane, { resource: 'configmaps', name: 'other' }, 'None'],
    [jane, { resource: 'configmaps', name: 'other', namespace: 'kube-system' }, 'Metadata'],
    [jane, { apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }, 'RequestResponse'],
    [jane, { apiGroup: 'apps', resource: 'deployments' }, 'None'],
    [jane, { apiGroup: 'batch', resource: 'jobs', subresource: 'status' }, 'RequestResponse'],
    [jane, { apiGroup: 'batch', resource: 'cronjobs', subresource: 'status' }, 'None'],
    [jane, { apiGroup: 'example.com', resource: 'widgets' }, 'RequestResponse'],
    [node, { isResourceRequest: false, path: '/healthz/ready', verb: 'get' }, 'None'],
    [jane, { isResourceRequest: false, path: '/healthz', verb: 'get' }, 'None'],
    [jane, { isResourceRequest: false, path: '/metrics', verb: 'get' }, 'Metadata'],
    [jane, { isResourceRequest: false, path: '/metricsx', verb: 'get' }, 'None'],
  ];
  for (const [user, over, level] of cases) assert.equal(policy.evaluate(user, info(over)).level, level, JSON.stringify(over));
});

test('omitStages join the policy and the rule; omitManagedFields is the rule over the policy', () => {
  const c = policy.evaluate(jane, info({ resource: 'configmaps', name: 'controller-leader' }));
  assert.deepEqual([...c.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  assert.equal(c.omitManagedFields, true);
  const m = policy.evaluate(jane, info({ namespace: 'kube-system' }));
  assert.deepEqual([...m.omitStages], ['RequestReceived']);
  assert.equal(m.omitManagedFields, false);
});

test('bad policies are refused with one clear line', () => {
  const head = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';
  const cases: [string, RegExp][] = [
    ['kind: Policy', /expected kind Policy of apiVersion audit.k8s.io\/v1/],
    [`${head}rules:\n- level: Everything`, /rules\[0\]\.level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"/],
    [`${head}rules:\n- users: [a]`, /rules\[0\]\.level: Required value/],
    [`${head}rules:\n- level: None\n  omitStages: [Later]`, /rules\[0\]\.omitStages\[0\]: Unsupported value: "Later"/],
    [`${head}rules:\n- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]`, /rules cannot apply to both regular resources and non-resource URLs/],
    [`${head}rules:\n- level: None\n  resources: [{resourceNames: [a]}]`, /resourceNames require a non-empty resources list/],
    ['{', /failed decoding audit policy: [^\n]+$/],
  ];
  for (const [doc, message] of cases) assert.throws(() => parsePolicy(doc), message, doc);
  // A key named __proto__ is data: it neither pollutes nor narrows the rule.
  const p = parsePolicy(`${head}rules: [{level: Metadata, __proto__: {users: [x]}}]`);
  assert.equal(p.evaluate(jane, info({})).level, 'Metadata');
  assert.equal(({} as Record<string, unknown>).users, undefined);
});
