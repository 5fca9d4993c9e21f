import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HorizontalPodAutoscalerBehavior } from 'kubernetes-types/autoscaling/v2.js';
import { newHistory, normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors, storeScaleEvent } from './normalize.js';

const T0 = Date.UTC(2026, 0, 1);
const s = (n: number) => n * 1000;

test('without behavior: the 300 s scale-down window, the 2× / 4 scale-up cap, the bounds', () => {
  const h = newHistory(5, T0);
  // A lower proposal is held at the highest recommendation of the last 5 minutes.
  let r = normalizeDesiredReplicas(h, T0 + s(15), 5, 2, 1, 10);
  assert.equal(r.replicas, 5);
  assert.equal(r.ableToScale.reason, 'ScaleDownStabilized');
  assert.deepEqual(r.scalingLimited, { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range', limited: false });
  r = normalizeDesiredReplicas(h, T0 + s(301), 5, 2, 1, 10);
  assert.equal(r.replicas, 2);
  assert.equal(r.ableToScale.reason, 'ReadyForNewScale');

  const up = normalizeDesiredReplicas(newHistory(1, T0), T0, 1, 10, 1, 20);
  assert.equal(up.replicas, 4);
  assert.deepEqual(up.scalingLimited, { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate', limited: true });
  const max = normalizeDesiredReplicas(newHistory(5, T0), T0, 5, 12, 1, 10);
  assert.deepEqual([max.replicas, max.scalingLimited.reason, max.scalingLimited.limited], [10, 'TooManyReplicas', true]);
  const min = normalizeDesiredReplicas(newHistory(1, T0 - s(400)), T0, 3, 0, 2, 10);
  assert.deepEqual([min.replicas, min.scalingLimited.reason, min.scalingLimited.message], [2, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count']);
});

const defaultScaleUp = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
};

test('with behavior: rate policies over the scale events of each period', () => {
  const behavior: HorizontalPodAutoscalerBehavior = { scaleUp: defaultScaleUp, scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } };
  const h = newHistory(2, T0);
  // 2 → the larger of +4 pods and +100 %: 6.
  let r = normalizeDesiredReplicasWithBehaviors(h, T0, behavior, 2, 20, 1, 50);
  assert.deepEqual([r.replicas, r.scalingLimited.reason], [6, 'ScaleUpLimit']);
  storeScaleEvent(h, behavior, T0, 2, 6);
  // Within the same 15 s period the period started at 2: no more growth.
  r = normalizeDesiredReplicasWithBehaviors(h, T0 + s(5), behavior, 6, 20, 1, 50);
  assert.equal(r.replicas, 6);
  // A new period starts from 6: the larger of 10 and 12.
  r = normalizeDesiredReplicasWithBehaviors(h, T0 + s(16), behavior, 6, 20, 1, 50);
  assert.equal(r.replicas, 12);
  // Scale-down: one pod a minute, the period starting where the last minute's changes began.
  const d = newHistory(12, T0);
  r = normalizeDesiredReplicasWithBehaviors(d, T0 + s(20), behavior, 12, 1, 1, 50);
  assert.deepEqual([r.replicas, r.scalingLimited.reason, r.scalingLimited.limited], [11, 'ScaleDownLimit', true]);
  storeScaleEvent(d, behavior, T0 + s(20), 12, 11);
  r = normalizeDesiredReplicasWithBehaviors(d, T0 + s(40), behavior, 11, 1, 1, 50);
  assert.equal(r.replicas, 11);
  r = normalizeDesiredReplicasWithBehaviors(d, T0 + s(81), behavior, 11, 1, 1, 50);
  assert.equal(r.replicas, 10);
});

test('with behavior: stabilization windows per direction, and Disabled', () => {
  const windows: HorizontalPodAutoscalerBehavior = { scaleUp: { ...defaultScaleUp, stabilizationWindowSeconds: 60 }, scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } };
  const h = newHistory(3, T0);
  // Scale-up waits for the lowest recommendation of the last minute (3, the initial one).
  let r = normalizeDesiredReplicasWithBehaviors(h, T0 + s(10), windows, 3, 8, 1, 10);
  assert.deepEqual([r.replicas, r.ableToScale.reason], [3, 'ScaleUpStabilized']);
  // Then the rate policies apply: 3 + 4 pods.
  r = normalizeDesiredReplicasWithBehaviors(h, T0 + s(75), windows, 3, 8, 1, 10);
  assert.deepEqual([r.replicas, r.ableToScale.reason, r.scalingLimited.reason], [7, 'ReadyForNewScale', 'ScaleUpLimit']);
  // An unset scale-down window is the controller's 300 s.
  r = normalizeDesiredReplicasWithBehaviors(h, T0 + s(90), windows, 7, 2, 1, 10);
  assert.deepEqual([r.replicas, r.ableToScale.reason], [7, 'ScaleDownStabilized']);
  const disabled: HorizontalPodAutoscalerBehavior = { scaleUp: { ...defaultScaleUp, selectPolicy: 'Disabled' }, scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } };
  r = normalizeDesiredReplicasWithBehaviors(newHistory(3, T0), T0, disabled, 3, 9, 1, 10);
  assert.deepEqual([r.replicas, r.scalingLimited.reason, r.scalingLimited.limited], [3, 'ScaleUpLimit', true]);
});
