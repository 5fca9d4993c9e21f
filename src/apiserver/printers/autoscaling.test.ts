import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import { formatHPAMetrics, horizontalPodAutoscalerPrinter } from './autoscaling.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const meta = { name: 'web', namespace: 'default', creationTimestamp: '2025-06-01T11:58:00Z' };
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
const cpu = (u?: number) => ({ type: 'Resource' as const, resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: u } } });

test('hpa columns and a fresh HPA as kubectl get hpa shows it', () => {
  assert.deepEqual(
    horizontalPodAutoscalerPrinter.columns.map((c) => [c.name, c.type]),
    [['Name', 'string'], ['Reference', 'string'], ['Targets', 'string'], ['MinPods', 'string'], ['MaxPods', 'integer'], ['Replicas', 'integer'], ['Age', 'string']],
  );
  const hpa = { apiVersion: 'autoscaling/v2', metadata: meta, spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5, metrics: [cpu(50)] } };
  assert.deepEqual(horizontalPodAutoscalerPrinter.print(hpa as unknown as StoredObject, NOW).cells, ['web', 'Deployment/web', 'cpu: <unknown>/50%', '1', 5, 0, '2m']);
  // The v1 view prints the same.
  const v1 = { apiVersion: 'autoscaling/v1', metadata: meta, spec: { scaleTargetRef: ref, maxReplicas: 5, targetCPUUtilizationPercentage: 50 }, status: { currentReplicas: 2, desiredReplicas: 2, currentCPUUtilizationPercentage: 12 } };
  assert.deepEqual(horizontalPodAutoscalerPrinter.print(v1 as unknown as StoredObject, NOW).cells, ['web', 'Deployment/web', 'cpu: 12%/50%', '<unset>', 5, 2, '2m']);
});

test('TARGETS formatting as upstream formatHPAMetrics', () => {
  assert.equal(formatHPAMetrics([], []), '<none>');
  assert.equal(formatHPAMetrics([cpu(undefined)], []), 'cpu: <unknown>/<auto>');
  const memory = { type: 'Resource' as const, resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
  const pods = { type: 'Pods' as const, pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } };
  const external = { type: 'External' as const, external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } } };
  assert.equal(
    formatHPAMetrics(
      [memory, pods, external],
      [{ type: 'Resource', resource: { name: 'memory', current: { averageValue: '20Mi' } } }, { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '3' } } }],
    ),
    'memory: 20Mi/100Mi, 3/10 + 1 more...',
  );
  assert.equal(formatHPAMetrics([external], []), '<unknown>/30 (avg)');
});
