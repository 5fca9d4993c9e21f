import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { QueueingHint } from '../../framework/events.js';
import { NodeInfo } from '../../framework/types.js';
import { makeNode, makePod } from '../../testing/builders.js';
import { nodeInfo } from '../../testing/plugins.js';
import { ERR_REASON_UNKNOWN_CONDITION, ERR_REASON_UNSCHEDULABLE, NodeUnschedulable } from './nodeunschedulable.js';

describe('NodeUnschedulable', () => {
  const tolerating = makePod().toleration({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }).obj();
  const cases = [
    { name: 'schedulable node', pod: makePod().obj(), node: nodeInfo(makeNode().obj()), want: undefined },
    { name: 'cordoned node', pod: makePod().obj(), node: nodeInfo(makeNode().unschedulable().obj()), want: ERR_REASON_UNSCHEDULABLE },
    { name: 'cordoned node, tolerated', pod: tolerating, node: nodeInfo(makeNode().unschedulable().obj()), want: undefined },
    { name: 'NodeInfo without a node', pod: makePod().obj(), node: new NodeInfo(), want: ERR_REASON_UNKNOWN_CONDITION },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = new NodeUnschedulable().filter(new CycleState(), c.pod, c.node);
      assert.equal(s?.message(), c.want);
      if (s) assert.equal(s.code, 'UnschedulableAndUnresolvable');
    });
  }

  it('requeues on a node update only when the node admits the pod', () => {
    const [reg] = new NodeUnschedulable().eventsToRegister();
    assert.equal(reg!.queueingHintFn!(makePod().obj(), undefined, makeNode().unschedulable().obj()), QueueingHint.QueueSkip);
    assert.equal(reg!.queueingHintFn!(makePod().obj(), undefined, makeNode().obj()), QueueingHint.Queue);
  });
});
