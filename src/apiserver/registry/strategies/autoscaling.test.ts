import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../../api/errors.js';
import { conditionsAnnotation, metricSpecsAnnotation, metricStatusesAnnotation } from '../../../api/autoscaling.js';
import { FakeApi } from '../../testing/fakeapi.js';

type Obj = Record<string, any>;
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };

test('v2 is stored; v1 serves the same objects through the conversion', async () => {
  const api = await FakeApi.start();
  try {
    const client = api.client();
    const v2 = client.resource<Obj>('autoscaling', 'v2', 'horizontalpodautoscalers').namespace('default');
    const v1 = client.resource<Obj>('autoscaling', 'v1', 'horizontalpodautoscalers').namespace('default');
    const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
    const created = await v2.create({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web' },
      spec: { scaleTargetRef: ref, maxReplicas: 5, metrics: [memory] },
      status: { currentReplicas: 9 },
    });
    assert.equal(created.spec.minReplicas, 1);
    assert.deepEqual(created.status, { desiredReplicas: 0, currentMetrics: null }, 'create resets the status');
    assert.equal(created.metadata.generation, undefined, 'upstream does not track generation for HPAs');
    // As Go encodes a new HPA's status: desiredReplicas and currentMetrics are not omitempty.
    assert.deepEqual((await v2.get('web')).status, { desiredReplicas: 0, currentMetrics: null });
    assert.deepEqual((await v1.get('web')).status, { currentReplicas: 0, desiredReplicas: 0 });

    // The status as the controller writes it, in v2.
    await v2.updateStatus({
      ...created,
      status: {
        currentReplicas: 2,
        desiredReplicas: 2,
        currentMetrics: [{ type: 'Resource', resource: { name: 'memory', current: { averageValue: '50Mi' } } }],
        conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'ReadyForNewScale' }],
      },
    });
    const asV1 = await v1.get('web');
    assert.equal(asV1.apiVersion, 'autoscaling/v1');
    assert.equal(asV1.spec.targetCPUUtilizationPercentage, undefined);
    assert.ok(asV1.metadata.annotations[metricSpecsAnnotation].includes('"memory"'));
    assert.ok(asV1.metadata.annotations[metricStatusesAnnotation].includes('50Mi'));
    assert.ok(asV1.metadata.annotations[conditionsAnnotation].includes('ReadyForNewScale'));

    // A v1 client edits its view: the CPU target is added, the memory metric and the status survive,
    // even though it sends back stale status annotations.
    asV1.spec.targetCPUUtilizationPercentage = 60;
    asV1.metadata.annotations[metricStatusesAnnotation] = '[]';
    const updated = await v1.update(asV1);
    assert.equal(updated.spec.targetCPUUtilizationPercentage, 60);
    const again = await v2.get('web');
    assert.deepEqual(again.spec.metrics, [memory, { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } }]);
    assert.equal(again.status.currentMetrics[0].resource.current.averageValue, '50Mi');
    assert.equal(again.metadata.annotations, undefined, 'the round-trip annotations are not stored');

    // A v1 create gets the implicit CPU target; a bad one is refused with the v2 field path.
    const plain = await v1.create({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'plain' }, spec: { scaleTargetRef: ref, maxReplicas: 3 } });
    assert.equal(plain.spec.targetCPUUtilizationPercentage, 80);
    const refused = await v1
      .create({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'bad' }, spec: { scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 0 } })
      .then(() => undefined, (e: unknown) => e);
    assert.ok(refused instanceof StatusError);
    assert.equal(refused.code, 422);
    assert.equal(
      refused.message,
      'HorizontalPodAutoscaler.autoscaling "bad" is invalid: spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0',
    );
  } finally {
    await api.stop();
  }
});
