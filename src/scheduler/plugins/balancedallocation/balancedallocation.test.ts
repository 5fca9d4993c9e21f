import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { makeNode, makePod, type PodBuilder } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { BalancedAllocation, balancedResourceScore } from './balancedallocation.js';

describe('NodeResourcesBalancedAllocation', () => {
  const node = makeNode().capacity({ cpu: '4', memory: '10000' }).obj();
  const cases: { name: string; pod: PodBuilder; existing?: PodBuilder[]; want: number }[] = [
    // fractions 0.75 and 0.5 → std 0.125 → 87
    { name: 'unbalanced', pod: makePod().req({ cpu: '3', memory: '5000' }), want: 87 },
    { name: 'balanced', pod: makePod().req({ cpu: '2', memory: '5000' }), want: 100 },
    { name: 'existing pods count with their real requests', pod: makePod().req({ cpu: '1', memory: '1000' }), existing: [makePod().req({ cpu: '1', memory: '4000' })], want: 100 },
    { name: 'fractions are capped at 1', pod: makePod().req({ cpu: '8', memory: '5000' }), want: 75 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pl = new BalancedAllocation();
      const state = new CycleState();
      const pod = c.pod.obj();
      assert.equal(pl.preScore(state, pod), undefined);
      assert.equal(pl.score(state, pod, nodeInfo(node, ...(c.existing ?? []).map((b) => b.obj()))), c.want);
    });
  }

  it('skips BestEffort pods', () => {
    assert.equal(new BalancedAllocation().preScore(new CycleState(), makePod().req({}).obj())?.code, 'Skip');
  });

  it('uses the standard deviation for more than two resources', () => {
    // fractions 0, 0.5, 1 → std sqrt(1/6) ≈ 0.408 → 59
    assert.equal(balancedResourceScore([0, 0.5, 1]), 59);
  });
});
