import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { makeNode, makePod, type PodBuilder } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { ERR_REASON_CONFLICT, ERR_REASON_POD, NodeAffinity } from './nodeaffinity.js';

const node = makeNode().name('node-1').labels({ zone: 'a', gpu: 'true', cores: '8' }).obj();

describe('NodeAffinity filter', () => {
  const cases: { name: string; pod: PodBuilder; fits: boolean }[] = [
    { name: 'no constraints', pod: makePod(), fits: true },
    { name: 'nodeSelector matches', pod: makePod().nodeSelector({ zone: 'a' }), fits: true },
    { name: 'nodeSelector mismatch', pod: makePod().nodeSelector({ zone: 'b' }), fits: false },
    { name: 'In', pod: makePod().nodeAffinity([{ key: 'zone', operator: 'In', values: ['a', 'b'] }]), fits: true },
    { name: 'NotIn', pod: makePod().nodeAffinity([{ key: 'zone', operator: 'NotIn', values: ['a'] }]), fits: false },
    { name: 'Exists', pod: makePod().nodeAffinity([{ key: 'gpu', operator: 'Exists' }]), fits: true },
    { name: 'DoesNotExist', pod: makePod().nodeAffinity([{ key: 'gpu', operator: 'DoesNotExist' }]), fits: false },
    { name: 'Gt', pod: makePod().nodeAffinity([{ key: 'cores', operator: 'Gt', values: ['4'] }]), fits: true },
    { name: 'Lt', pod: makePod().nodeAffinity([{ key: 'cores', operator: 'Lt', values: ['4'] }]), fits: false },
    { name: 'expressions are ANDed', pod: makePod().nodeAffinity([{ key: 'zone', operator: 'In', values: ['a'] }, { key: 'gpu', operator: 'DoesNotExist' }]), fits: false },
    {
      name: 'terms are ORed',
      pod: makePod()
        .nodeAffinity([{ key: 'zone', operator: 'In', values: ['b'] }])
        .nodeAffinity([{ key: 'gpu', operator: 'Exists' }]),
      fits: true,
    },
    { name: 'an empty term matches nothing', pod: makePod().nodeAffinity([]), fits: false },
    { name: 'an invalid term matches nothing', pod: makePod().nodeAffinity([{ key: 'cores', operator: 'Gt', values: ['many'] }]), fits: false },
    { name: 'matchFields metadata.name', pod: makePod().nodeAffinity([], [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }]), fits: true },
    { name: 'matchFields another name', pod: makePod().nodeAffinity([], [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }]), fits: false },
    { name: 'nodeSelector and affinity both apply', pod: makePod().nodeSelector({ zone: 'b' }).nodeAffinity([{ key: 'gpu', operator: 'Exists' }]), fits: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pl = new NodeAffinity();
      const state = new CycleState();
      const pod = c.pod.obj();
      pl.preFilter(state, pod);
      const s = pl.filter(state, pod, nodeInfo(node));
      assert.equal(s === undefined, c.fits);
      if (s) assert.deepEqual([s.code, s.message()], ['UnschedulableAndUnresolvable', ERR_REASON_POD]);
    });
  }
});

describe('NodeAffinity preFilter', () => {
  const name = (values: string[]) => [{ key: 'metadata.name', operator: 'In', values }];
  const cases = [
    { name: 'skips pods without required constraints', pod: makePod(), want: { status: 'Skip' } },
    { name: 'all nodes for label terms', pod: makePod().nodeAffinity([{ key: 'zone', operator: 'Exists' }]), want: {} },
    { name: 'the named nodes', pod: makePod().nodeAffinity([], name(['n1'])).nodeAffinity([], name(['n2'])), want: { nodes: ['n1', 'n2'] } },
    { name: 'all nodes when one term is unrestricted', pod: makePod().nodeAffinity([], name(['n1'])).nodeAffinity([{ key: 'zone', operator: 'Exists' }]), want: {} },
    {
      name: 'conflicting names in one term',
      pod: makePod().nodeAffinity([], [...name(['n1']), ...name(['n2'])]),
      want: { status: 'UnschedulableAndUnresolvable', message: ERR_REASON_CONFLICT },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const out = new NodeAffinity().preFilter(new CycleState(), c.pod.obj());
      const got: Record<string, unknown> = {};
      if (out.status) got.status = out.status.code;
      if (out.status?.message()) got.message = out.status.message();
      if (out.result?.nodeNames) got.nodes = [...out.result.nodeNames].sort();
      assert.deepEqual(got, c.want);
    });
  }
});

describe('NodeAffinity score', () => {
  it('sums the weights of matching preferred terms, normalized to 100', () => {
    const pl = new NodeAffinity();
    const pod = makePod()
      .preferredNodeAffinity(2, [{ key: 'zone', operator: 'In', values: ['a'] }])
      .preferredNodeAffinity(6, [{ key: 'gpu', operator: 'Exists' }])
      .obj();
    const nodes = [makeNode().labels({ zone: 'a' }), makeNode().labels({ zone: 'a', gpu: 'x' }), makeNode().labels({ gpu: 'x' }), makeNode()].map((b) => nodeInfo(b.obj()));
    const state = new CycleState();
    assert.equal(pl.preScore(state, pod), undefined);
    const scores = nodes.map((n) => pl.score(state, pod, n));
    assert.deepEqual(scores, [2, 8, 6, 0]);
    pl.normalizeScore(state, pod, scores);
    assert.deepEqual(scores, [25, 100, 75, 0]);
  });

  it('skips scoring without preferred terms', () => {
    assert.equal(new NodeAffinity().preScore(new CycleState(), makePod().obj())?.code, 'Skip');
  });
});
