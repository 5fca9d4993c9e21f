import { test } from 'node:test';
import assert from 'node:assert/strict';
import { behaviorSpecsAnnotation, conditionsAnnotation, hpaV1FromV2, hpaV2FromV1, metricSpecsAnnotation, metricStatusesAnnotation } from './autoscaling.js';

const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const cpu = (averageUtilization: number) => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } });
const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };

test('v2 → v1: the CPU target is v1 own, the rest travels in annotations', () => {
  const v2 = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'default', annotations: { keep: 'me' } },
    spec: {
      scaleTargetRef: ref,
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [cpu(50), memory],
      behavior: { scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } },
    },
    status: {
      currentReplicas: 2,
      desiredReplicas: 3,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 70, averageValue: '350m' } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale', message: 'recommended size matches current size' }],
    },
  };
  const v1 = hpaV1FromV2(v2);
  assert.equal(v1.apiVersion, 'autoscaling/v1');
  assert.deepEqual(v1.spec, { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 });
  assert.deepEqual(v1.status, { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 70 });
  const a = v1.metadata.annotations;
  assert.equal(a.keep, 'me');
  assert.equal(a[metricSpecsAnnotation], '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]');
  assert.equal(
    a[behaviorSpecsAnnotation],
    '{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}',
  );
  assert.equal(a[metricStatusesAnnotation], '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":70,"currentAverageValue":"350m"}}]');
  assert.equal(
    a[conditionsAnnotation],
    '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"}]',
  );
  // And back: nothing is lost, the round-trip annotations are gone.
  const back = hpaV2FromV1(v1);
  assert.deepEqual(back.metadata.annotations, { keep: 'me' });
  assert.deepEqual(back.spec.metrics, [memory, cpu(50)]);
  assert.deepEqual(back.spec.behavior, v2.spec.behavior);
  assert.deepEqual(back.status.currentMetrics, v2.status.currentMetrics);
  assert.deepEqual(back.status.conditions, v2.status.conditions);
});

test('v1 → v2: the implicit 80 % CPU target; unparsable annotations are ignored', () => {
  const v2 = hpaV2FromV1({ apiVersion: 'autoscaling/v1', metadata: { name: 'x', annotations: { [metricSpecsAnnotation]: '{not json' } }, spec: { scaleTargetRef: ref, maxReplicas: 3 } });
  assert.deepEqual(v2.spec.metrics, [cpu(80)]);
  assert.equal(v2.metadata.annotations, undefined);
  assert.deepEqual(hpaV2FromV1({ spec: { scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 0 } }).spec.metrics, [cpu(0)]);
});

test('v1 → v2: annotations of the wrong shape are ignored, as a failed Unmarshal', () => {
  const hostile = {
    metadata: {
      name: 'x',
      annotations: {
        [metricSpecsAnnotation]: '[{"type":"Resource","resource":{"name":{"__proto__":{"polluted":1}},"targetAverageUtilization":"lots"}}]',
        [behaviorSpecsAnnotation]: '{"ScaleUp":{"Policies":[{"Type":"Pods","Value":"four","PeriodSeconds":15}]}}',
        [metricStatusesAnnotation]: '[1,2]',
        [conditionsAnnotation]: `${'['.repeat(100000)}${']'.repeat(100000)}`,
      },
    },
    spec: { scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 40 },
    status: { currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 12 },
  };
  const v2 = hpaV2FromV1(hostile);
  assert.deepEqual(v2.spec.metrics, [cpu(40)]);
  assert.equal(v2.spec.behavior, undefined);
  assert.deepEqual(v2.status.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 12 } } }]);
  assert.equal(v2.status.conditions, undefined);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
