import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Toleration } from 'kubernetes-types/core/v1.js';
import { CycleState } from '../../framework/cycle-state.js';
import { makeNode, makePod } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { TaintToleration } from './tainttoleration.js';

describe('TaintToleration filter', () => {
  const node = makeNode().taint('dedicated', 'db', 'NoSchedule').obj();
  const cases: { name: string; tolerations: Toleration[]; node?: ReturnType<typeof makeNode>; want?: string }[] = [
    { name: 'untolerated NoSchedule', tolerations: [], want: 'node(s) had untolerated taint {dedicated: db}' },
    { name: 'Equal with the value', tolerations: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] },
    { name: 'Equal with another value', tolerations: [{ key: 'dedicated', value: 'web' }], want: 'node(s) had untolerated taint {dedicated: db}' },
    { name: 'Exists on the key', tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
    { name: 'Exists on every key', tolerations: [{ operator: 'Exists' }] },
    { name: 'another effect', tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }], want: 'node(s) had untolerated taint {dedicated: db}' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pod = makePod().obj();
      pod.spec!.tolerations = c.tolerations;
      const s = new TaintToleration().filter(new CycleState(), pod, nodeInfo(node));
      assert.equal(s?.message(), c.want);
      if (s) assert.equal(s.code, 'UnschedulableAndUnresolvable');
    });
  }

  it('rejects NoExecute and ignores PreferNoSchedule', () => {
    const pl = new TaintToleration();
    const noExec = nodeInfo(makeNode().taint('k', 'v', 'NoExecute').obj());
    const prefer = nodeInfo(makeNode().taint('k', 'v', 'PreferNoSchedule').obj());
    assert.equal(pl.filter(new CycleState(), makePod().obj(), noExec)?.message(), 'node(s) had untolerated taint {k: v}');
    assert.equal(pl.filter(new CycleState(), makePod().obj(), prefer), undefined);
  });
});

describe('TaintToleration score', () => {
  it('prefers nodes with fewer untolerated PreferNoSchedule taints', () => {
    const pl = new TaintToleration();
    const pod = makePod().toleration({ key: 'tolerated', operator: 'Exists', effect: 'PreferNoSchedule' }).obj();
    const nodes = [
      nodeInfo(makeNode().obj()),
      nodeInfo(makeNode().taint('a', '1', 'PreferNoSchedule').taint('tolerated', 'x', 'PreferNoSchedule').obj()),
      nodeInfo(makeNode().taint('a', '1', 'PreferNoSchedule').taint('b', '2', 'PreferNoSchedule').obj()),
    ];
    const state = new CycleState();
    assert.equal(pl.preScore(state, pod), undefined);
    const scores = nodes.map((n) => pl.score(state, pod, n));
    assert.deepEqual(scores, [0, 1, 2]);
    pl.normalizeScore(state, pod, scores);
    assert.deepEqual(scores, [100, 50, 0]);
  });
});
