import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { Pod } from './types.js';
import { disruptionConditionUpToDate, podDisruptionBudgetsFor, withDisruptionAllowedCondition } from './pdb.js';

const pdb = (name: string, selector: LabelSelector | undefined, namespace = 'default'): PodDisruptionBudget => ({
  metadata: { name, namespace },
  spec: { selector },
});
const pod = (labels?: Record<string, string>): Pod => ({ metadata: { name: 'p', namespace: 'default', labels } });

void test('podDisruptionBudgetsFor: same namespace, matching non-empty valid selectors; unlabelled pods match none', () => {
  const pdbs = [
    pdb('match', { matchLabels: { app: 'web' } }),
    pdb('expr', { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] }),
    pdb('empty', {}),
    pdb('nil', undefined),
    pdb('invalid', { matchExpressions: [{ key: 'app', operator: 'Like' }] }),
    pdb('other-ns', { matchLabels: { app: 'web' } }, 'prod'),
    pdb('other-app', { matchLabels: { app: 'db' } }),
  ];
  assert.deepEqual(
    podDisruptionBudgetsFor(pdbs, pod({ app: 'web' })).map((p) => p.metadata?.name),
    ['match', 'expr'],
  );
  assert.deepEqual(podDisruptionBudgetsFor(pdbs, pod()), []);
});

void test('the DisruptionAllowed condition follows disruptionsAllowed; its transition time moves only with its status', () => {
  const s1 = withDisruptionAllowedCondition({ disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2, observedGeneration: 3 }, '2026-01-01T00:00:00Z');
  assert.deepEqual(s1.conditions, [{ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  const same = withDisruptionAllowedCondition({ ...s1, disruptionsAllowed: 2 }, '2026-01-01T00:05:00Z');
  assert.equal(same.conditions?.[0]?.lastTransitionTime, '2026-01-01T00:00:00Z');
  const s2 = withDisruptionAllowedCondition({ ...s1, disruptionsAllowed: 0 }, '2026-01-01T00:10:00Z');
  assert.deepEqual([s2.conditions?.[0]?.status, s2.conditions?.[0]?.reason, s2.conditions?.[0]?.lastTransitionTime], ['False', 'InsufficientPods', '2026-01-01T00:10:00Z']);

  const at = (generation: number, status: PodDisruptionBudget['status']): PodDisruptionBudget => ({ metadata: { generation }, status });
  assert.equal(disruptionConditionUpToDate(at(3, s1)), true);
  assert.equal(disruptionConditionUpToDate(at(4, s1)), false, 'a newer generation');
  assert.equal(disruptionConditionUpToDate(at(3, { ...s1, disruptionsAllowed: 0 })), false, 'condition disagrees');
  assert.equal(disruptionConditionUpToDate(at(3, { ...s1, conditions: [] })), false, 'no condition');
});
