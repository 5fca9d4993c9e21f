import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { applyDefaults } from '../defaults/index.js';
import { validateCreate, validateUpdate } from './index.js';

type Obj = Record<string, any>;
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
function hpa(mutate: (h: Obj) => void = () => {}): Obj {
  const h: Obj = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5 } };
  mutate(h);
  return h;
}
const create = (h: Obj) => validateCreate('autoscaling', 'HorizontalPodAutoscaler', h).map(fieldErrorMessage);

test('defaults: minReplicas 1, an 80 % CPU target, behavior rules filled in', () => {
  const h = hpa((h) => {
    delete h.spec.minReplicas;
    h.spec.behavior = { scaleDown: { stabilizationWindowSeconds: 60 } };
  });
  applyDefaults('autoscaling', 'HorizontalPodAutoscaler', h);
  assert.equal(h.spec.minReplicas, 1);
  assert.deepEqual(h.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
  assert.deepEqual(h.spec.behavior, {
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
    scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
  assert.deepEqual(create(h), []);
  const v1: Obj = { apiVersion: 'autoscaling/v1', metadata: { name: 'x' }, spec: { scaleTargetRef: ref, maxReplicas: 2 } };
  applyDefaults('autoscaling', 'HorizontalPodAutoscaler', v1);
  assert.deepEqual(v1.spec, { scaleTargetRef: ref, maxReplicas: 2, minReplicas: 1 });
});

test('table of invalid HPAs with upstream paths and messages', () => {
  const cases: [string, (h: Obj) => void, string[]][] = [
    ['replica bounds', (h) => Object.assign(h.spec, { minReplicas: 0, maxReplicas: 0 }), [
      'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
      'spec.maxReplicas: Invalid value: 0: must be greater than 0',
      'spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas',
    ]],
    ['max below min', (h) => Object.assign(h.spec, { minReplicas: 3, maxReplicas: 2 }), ['spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`']],
    ['target reference', (h) => (h.spec.scaleTargetRef = { name: 'a/b' }), [
      'spec.scaleTargetRef.kind: Required value',
      "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
    ]],
    ['utilization 0', (h) => (h.spec.metrics = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }]), [
      'spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
    ]],
    ['resource without a target', (h) => (h.spec.metrics = [{ type: 'Resource', resource: { name: '', target: { type: 'Bogus' } } }]), [
      'spec.metrics[0].resource.name: Required value: must specify a resource name',
      'spec.metrics[0].resource.target.type: Invalid value: "Bogus": must be either Utilization, Value, or AverageValue',
      'spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization',
    ]],
    ['wrong source, two sources, unknown type', (h) => (h.spec.metrics = [
      { type: 'Pods', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 5 } }, pods: { metric: { name: 'q' }, target: { type: 'AverageValue', averageValue: '1' } } },
      { type: 'Nope' },
    ]), [
      'spec.metrics[0].pods: Required value: must populate information for the given metric source',
      'spec.metrics[1].pods: Forbidden: must populate the given metric source only',
      'spec.metrics[2].type: Unsupported value: "Nope": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"',
    ]],
    ['negative quantity', (h) => (h.spec.metrics = [{ type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '-1' } } }]), [
      'spec.metrics[0].pods.target.averageValue: Invalid value: -1: must be positive',
    ]],
    ['behavior', (h) => (h.spec.behavior = { scaleUp: { stabilizationWindowSeconds: 4000, selectPolicy: 'Avg', policies: [] }, scaleDown: { policies: [{ type: 'Pods', value: 0, periodSeconds: 1801 }] } }), [
      'spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: must be less than or equal to 3600',
      'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Avg": supported values: "Disabled", "Max", "Min"',
      'spec.behavior.scaleUp.policies: Required value: must specify at least one Policy',
      'spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero',
      'spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800',
    ]],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual([...new Set(create(hpa(mutate)))], want, name);
});

test('an update may keep minReplicas 0 the old object already had', () => {
  const old = hpa((h) => (h.spec.minReplicas = 0));
  const errs = validateUpdate('autoscaling', 'HorizontalPodAutoscaler', hpa((h) => (h.spec.minReplicas = 0)), old).map(fieldErrorMessage);
  assert.deepEqual(errs, ['spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas']);
});
