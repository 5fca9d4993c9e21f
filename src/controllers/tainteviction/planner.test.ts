import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { getMatchingTolerations, getMinTolerationTime, getNoExecuteTaints, planPodOnNode, type EvictionPlan } from './planner.js';

const NOW = Date.UTC(2026, 0, 1);
const dedicated: Taint = { key: 'dedicated', value: 'x', effect: 'NoExecute' };
const unreachable: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
const tol = (key: string, tolerationSeconds?: number, extra: Partial<Toleration> = {}): Toleration => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds, ...extra });

describe('taint eviction planner', () => {
  it('keeps only NoExecute taints', () => {
    const taints: Taint[] = [{ key: 'a', effect: 'NoSchedule' }, dedicated, { key: 'b', effect: 'PreferNoSchedule' }];
    assert.deepEqual(getNoExecuteTaints(taints), [dedicated]);
    assert.deepEqual(getNoExecuteTaints(undefined), []);
  });

  it('matches each taint with its first tolerating toleration', () => {
    const first = tol('dedicated', 30);
    const cases: [string, Taint[], Toleration[] | undefined, boolean, Toleration[]][] = [
      ['no taints', [], undefined, true, []],
      ['no tolerations', [dedicated], undefined, false, []],
      ['first match wins', [dedicated], [first, tol('dedicated', 5)], true, [first]],
      ['one taint untolerated', [dedicated, unreachable], [first], false, []],
      ['Equal compares the value', [dedicated], [{ key: 'dedicated', value: 'y', effect: 'NoExecute' }], false, []],
      ['an empty key with Exists tolerates all', [dedicated, unreachable], [{ operator: 'Exists' }], true, [{ operator: 'Exists' }, { operator: 'Exists' }]],
    ];
    for (const [name, taints, tolerations, allTolerated, used] of cases) assert.deepEqual(getMatchingTolerations(taints, tolerations), { allTolerated, used }, name);
  });

  it('takes the smallest tolerationSeconds; none is forever, zero or negative is now', () => {
    const cases: [string, Toleration[], number][] = [
      ['none used', [], 0],
      ['forever', [tol('a')], -1],
      ['smallest', [tol('a', 300), tol('b'), tol('c', 10)], 10_000],
      ['zero', [tol('a', 300), tol('b', 0)], 0],
      ['negative', [tol('a', -5)], 0],
    ];
    for (const [name, tolerations, want] of cases) assert.equal(getMinTolerationTime(tolerations), want, name);
  });

  it('plans the pod on its node', () => {
    const cases: [string, Taint[], Toleration[] | undefined, boolean, EvictionPlan][] = [
      ['taints gone', [], [tol('dedicated', 10)], true, { action: 'cancel' }],
      ['not tolerated', [dedicated], undefined, false, { action: 'deleteNow' }],
      ['not tolerated, already scheduled', [dedicated, unreachable], [tol('dedicated', 10)], true, { action: 'deleteNow' }],
      ['tolerated forever', [dedicated], [tol('dedicated')], true, { action: 'cancel' }],
      ['tolerated for 10 s', [dedicated], [tol('dedicated', 10)], false, { action: 'schedule', fireAt: NOW + 10_000 }],
      ['default 300 s', [unreachable], [tol('node.kubernetes.io/unreachable', 300)], false, { action: 'schedule', fireAt: NOW + 300_000 }],
      ['zero seconds', [dedicated], [tol('dedicated', 0)], false, { action: 'schedule', fireAt: NOW }],
      ['already scheduled', [dedicated], [tol('dedicated', 10)], true, { action: 'keep' }],
    ];
    for (const [name, taints, tolerations, scheduled, want] of cases) assert.deepEqual(planPodOnNode(taints, tolerations, NOW, scheduled), want, name);
  });
});
