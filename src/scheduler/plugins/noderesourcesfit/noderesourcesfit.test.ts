import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { makeNode, makePod, type PodBuilder } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { NodeResourcesFit } from './noderesourcesfit.js';

const node = makeNode().capacity({ cpu: '2', memory: '2Gi', 'example.com/gpu': '1', pods: '2' }).obj();

describe('NodeResourcesFit filter', () => {
  const cases: { name: string; pod: PodBuilder; existing?: PodBuilder[]; want?: [string, string[]] }[] = [
    { name: 'fits', pod: makePod().req({ cpu: '1', memory: '1Gi' }) },
    { name: 'fits exactly', pod: makePod().req({ cpu: '1' }), existing: [makePod().req({ cpu: '1' })] },
    { name: 'insufficient cpu', pod: makePod().req({ cpu: '1' }), existing: [makePod().req({ cpu: '1500m' })], want: ['Unschedulable', ['Insufficient cpu']] },
    {
      name: 'insufficient cpu and memory',
      pod: makePod().req({ cpu: '1', memory: '1Gi' }),
      existing: [makePod().req({ cpu: '1500m', memory: '1500Mi' })],
      want: ['Unschedulable', ['Insufficient cpu', 'Insufficient memory']],
    },
    { name: 'more than the whole node is unresolvable', pod: makePod().req({ cpu: '3' }), want: ['UnschedulableAndUnresolvable', ['Insufficient cpu']] },
    { name: 'the init-container peak counts', pod: makePod().req({ cpu: '100m' }).initReq({ cpu: '1500m' }), existing: [makePod().req({ cpu: '1' })], want: ['Unschedulable', ['Insufficient cpu']] },
    { name: 'sidecars count with the containers', pod: makePod().req({ cpu: '600m' }).sidecarReq({ cpu: '600m' }), existing: [makePod().req({ cpu: '1' })], want: ['Unschedulable', ['Insufficient cpu']] },
    { name: 'overhead counts', pod: makePod().req({ cpu: '1' }).overhead({ cpu: '100m' }), existing: [makePod().req({ cpu: '1' })], want: ['Unschedulable', ['Insufficient cpu']] },
    { name: 'extended resource available', pod: makePod().req({ 'example.com/gpu': '1' }) },
    { name: 'extended resource used up', pod: makePod().req({ 'example.com/gpu': '1' }), existing: [makePod().req({ 'example.com/gpu': '1' })], want: ['Unschedulable', ['Insufficient example.com/gpu']] },
    { name: 'extended resource the node lacks', pod: makePod().req({ 'example.com/fpga': '1' }), want: ['UnschedulableAndUnresolvable', ['Insufficient example.com/fpga']] },
    { name: 'too many pods', pod: makePod(), existing: [makePod(), makePod()], want: ['Unschedulable', ['Too many pods']] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pl = new NodeResourcesFit();
      const state = new CycleState();
      const pod = c.pod.obj();
      pl.preFilter(state, pod);
      const s = pl.filter(state, pod, nodeInfo(node, ...(c.existing ?? []).map((b) => b.obj())));
      assert.deepEqual(s && [s.code, s.reasons], c.want);
    });
  }
});

describe('NodeResourcesFit score (LeastAllocated)', () => {
  const big = makeNode().capacity({ cpu: '4', memory: '10000' }).obj();
  const cases: { name: string; pod: PodBuilder; existing?: PodBuilder[]; want: number }[] = [
    // cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 → 37
    { name: 'empty node', pod: makePod().req({ cpu: '3', memory: '5000' }), want: 37 },
    { name: 'with an existing pod', pod: makePod().req({ cpu: '1', memory: '2000' }), existing: [makePod().req({ cpu: '1', memory: '3000' })], want: 50 },
    // No requests: 100m and 200Mi defaults; 200Mi exceeds the 10000-byte node → memory 0, cpu 97.
    { name: 'BestEffort pods count non-zero defaults', pod: makePod().req({}), want: 48 },
    { name: 'over-committed scores 0', pod: makePod().req({ cpu: '5', memory: '20000' }), want: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pl = new NodeResourcesFit();
      const state = new CycleState();
      const pod = c.pod.obj();
      assert.equal(pl.preScore(state, pod), undefined);
      assert.equal(pl.score(state, pod, nodeInfo(big, ...(c.existing ?? []).map((b) => b.obj()))), c.want);
    });
  }
});
