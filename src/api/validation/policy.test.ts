import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';

type Obj = Record<string, any>;

const pdb = (spec: Obj, name = 'web'): Obj => ({ metadata: { name, namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } });
const create = (o: Obj) => validateCreate('policy', 'PodDisruptionBudget', o).map(fieldErrorMessage);

void test('PodDisruptionBudget spec: minAvailable xor maxUnavailable, int-or-percent, selector, eviction policy', () => {
  const cases: { name: string; spec: Obj; want: string[] }[] = [
    { name: 'minAvailable int', spec: { minAvailable: 2 }, want: [] },
    { name: 'maxUnavailable percent', spec: { maxUnavailable: '25%' }, want: [] },
    { name: 'neither (the controller treats it as allowing nothing)', spec: {}, want: [] },
    { name: 'both', spec: { minAvailable: 1, maxUnavailable: 1 }, want: ['spec: Invalid value: {"selector":{"matchLabels":{"app":"web"}},"minAvailable":1,"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set'] },
    { name: 'negative', spec: { minAvailable: -1 }, want: ['spec.minAvailable: Invalid value: -1: must be greater than or equal to 0'] },
    { name: 'over 100%', spec: { maxUnavailable: '120%' }, want: ['spec.maxUnavailable: Invalid value: 120%: must not be greater than 100%'] },
    {
      name: 'not a percent',
      spec: { minAvailable: 'half' },
      want: ["spec.minAvailable: Invalid value: half: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"],
    },
    { name: 'bad selector operator', spec: { minAvailable: 1, selector: { matchExpressions: [{ key: 'app', operator: 'Like' }] } }, want: ['spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator'] },
    { name: 'policy AlwaysAllow', spec: { minAvailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' }, want: [] },
    {
      name: 'policy unknown',
      spec: { minAvailable: 1, unhealthyPodEvictionPolicy: 'Never' },
      want: ['spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"'],
    },
  ];
  for (const c of cases) assert.deepEqual(create(pdb(c.spec)), c.want, c.name);
});

void test('PodDisruptionBudget names are path segments, not DNS subdomains', () => {
  assert.deepEqual(create(pdb({ minAvailable: 1 }, 'Web_PDB')), []);
  assert.deepEqual(create(pdb({ minAvailable: 1 }, 'a%b')), ["metadata.name: Invalid value: \"a%b\": may not contain '%'"]);
  assert.deepEqual(create(pdb({ minAvailable: 1 }, '..')), ["metadata.name: Invalid value: \"..\": may not be '..'"]);
});

void test('PodDisruptionBudget updates may change the spec; status counts are non-negative and conditions checked', () => {
  const old: Obj = { ...pdb({ minAvailable: 1 }), metadata: { name: 'web', namespace: 'default', uid: 'u', creationTimestamp: '2025-01-01T00:00:00Z' } };
  assert.deepEqual(validateUpdate('policy', 'PodDisruptionBudget', { ...old, spec: { ...old.spec, minAvailable: 3 } }, old), []);
  const status = (s: Obj) => validateStatusUpdate('policy', 'PodDisruptionBudget', { ...old, status: s }, old).map(fieldErrorMessage);
  const ok = { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', lastTransitionTime: '2025-01-01T00:00:00Z', observedGeneration: 1 };
  assert.deepEqual(status({ disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, conditions: [ok] }), []);
  assert.deepEqual(status({ disruptionsAllowed: -1, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 }), ['status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0']);
  assert.deepEqual(status({ conditions: [ok, { ...ok, status: 'Maybe', reason: '' }] }), [
    'status.conditions[1].type: Duplicate value: "DisruptionAllowed"',
    'status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    'status.conditions[1].reason: Required value: must be set',
  ]);
});
