import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';

type Obj = Record<string, any>;

const quota = (spec: Obj, status?: Obj): Obj => ({ metadata: { name: 'q', namespace: 'ns', resourceVersion: '1' }, spec, ...(status ? { status } : {}) });
const create = (o: Obj) => validateCreate('', 'ResourceQuota', o).map(fieldErrorMessage);

void test('ResourceQuota spec: quota resource names, quantities, scopes and the scope selector', () => {
  const cases: { name: string; spec: Obj; want: string[] }[] = [
    { name: 'standard names', spec: { hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi', 'services.nodeports': '0' } }, want: [] },
    { name: 'object counts and extended resources', spec: { hard: { 'count/deployments.apps': '3', 'requests.example.com/gpu': '2' } }, want: [] },
    {
      name: 'not a quota resource',
      spec: { hard: { foo: '1' } },
      want: ['spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified', 'spec.hard[foo]: Invalid value: "foo": must be a standard resource for quota'],
    },
    { name: 'negative', spec: { hard: { 'requests.cpu': '-1' } }, want: ['spec.hard[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0'] },
    { name: 'a fraction of a counted resource', spec: { hard: { pods: '1.5' } }, want: ['spec.hard[pods]: Invalid value: 1500m: must be an integer'] },
    { name: 'scope for pods', spec: { hard: { pods: '1', 'requests.cpu': '1' }, scopes: ['NotBestEffort', 'Terminating'] }, want: [] },
    { name: 'unknown scope', spec: { hard: { configmaps: '1' }, scopes: ['Nope'] }, want: ['spec.scopes: Invalid value: []core.ResourceQuotaScope{"Nope"}: unsupported scope'] },
    {
      name: 'BestEffort only limits pod counts',
      spec: { hard: { 'requests.cpu': '1' }, scopes: ['BestEffort'] },
      want: ['spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource'],
    },
    {
      name: 'conflicting scopes',
      spec: { hard: { pods: '1' }, scopes: ['Terminating', 'NotTerminating'] },
      want: ['spec.scopes: Invalid value: []core.ResourceQuotaScope{"Terminating", "NotTerminating"}: conflicting scopes'],
    },
    {
      name: 'scope selector on priority classes',
      spec: { hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
      want: [],
    },
    {
      name: 'scope selector: In needs values, BestEffort needs Exists',
      spec: {
        hard: { pods: '1' },
        scopeSelector: {
          matchExpressions: [
            { scopeName: 'PriorityClass', operator: 'In' },
            { scopeName: 'BestEffort', operator: 'In', values: ['x'] },
          ],
        },
      },
      want: [
        "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
        "spec.scopeSelector.matchExpressions.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
      ],
    },
    {
      name: 'scope selector operator',
      spec: { hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'Like' }] } },
      want: ['spec.scopeSelector.matchExpressions.operator: Invalid value: "Like": not a valid selector operator'],
    },
  ];
  for (const c of cases) assert.deepEqual(create(quota(c.spec)), c.want, c.name);
});

void test('ResourceQuota updates: scopes are immutable; status writes check hard and used', () => {
  const old = quota({ hard: { pods: '1' }, scopes: ['BestEffort'] });
  assert.deepEqual(validateUpdate('', 'ResourceQuota', quota({ hard: { pods: '2' }, scopes: ['BestEffort'] }), old).map(fieldErrorMessage), []);
  assert.deepEqual(validateUpdate('', 'ResourceQuota', quota({ hard: { pods: '2' }, scopes: ['NotBestEffort'] }), old).map(fieldErrorMessage), [
    'spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable',
  ]);
  const status = (used: Obj) => quota({ hard: { pods: '1' } }, { hard: { pods: '1' }, used });
  assert.deepEqual(validateStatusUpdate('', 'ResourceQuota', status({ pods: '1' }), old).map(fieldErrorMessage), []);
  assert.deepEqual(validateStatusUpdate('', 'ResourceQuota', status({ pods: '-1' }), old).map(fieldErrorMessage), [
    'status.used[pods]: Invalid value: "-1": must be greater than or equal to 0',
  ]);
});
