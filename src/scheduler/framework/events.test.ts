import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../api/types.js';
import { makeNode, makePod } from '../testing/builders.js';
import { ActionType, assignedPodUpdateActions, eventMatches, nodeUpdateActions } from './events.js';

describe('nodeUpdateActions', () => {
  const base = makeNode().name('n').capacity({ cpu: '1' }).obj();
  const with_ = (f: (n: Node) => void) => {
    const n = structuredClone(base);
    f(n);
    return n;
  };
  const cases = [
    { name: 'heartbeat only', node: with_((n) => (n.status!.conditions = [])), want: 0 },
    { name: 'allocatable', node: with_((n) => (n.status!.allocatable = { cpu: '2' })), want: ActionType.UpdateNodeAllocatable },
    { name: 'labels', node: with_((n) => (n.metadata!.labels = { a: 'b' })), want: ActionType.UpdateNodeLabel },
    { name: 'taints', node: with_((n) => (n.spec!.taints = [{ key: 'k', effect: 'NoSchedule' }])), want: ActionType.UpdateNodeTaint },
    { name: 'cordon counts as a taint change', node: with_((n) => (n.spec!.unschedulable = true)), want: ActionType.UpdateNodeTaint },
    { name: 'conditions', node: with_((n) => (n.status!.conditions = [{ type: 'Ready', status: 'True' }])), want: ActionType.UpdateNodeCondition },
  ];
  for (const c of cases) it(c.name, () => assert.equal(nodeUpdateActions(base, c.node), c.want));
});

describe('assignedPodUpdateActions', () => {
  it('reports label changes and request changes', () => {
    const pod = makePod().req({ cpu: '1' }).obj();
    assert.equal(assignedPodUpdateActions(pod, { ...pod, metadata: { ...pod.metadata, labels: { a: 'b' } } }), ActionType.UpdatePodLabel);
    assert.equal(assignedPodUpdateActions(pod, makePod().req({ cpu: '500m' }).obj()), ActionType.UpdatePodScaleDown);
    assert.equal(assignedPodUpdateActions(pod, { ...pod, status: { phase: 'Running' } }), 0);
  });
});

describe('eventMatches', () => {
  it('matches resource and action bits, with * as a wildcard', () => {
    assert.equal(eventMatches({ resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeTaint }, { resource: 'Node', actionType: ActionType.UpdateNodeTaint }), true);
    assert.equal(eventMatches({ resource: 'Node', actionType: ActionType.Add }, { resource: 'Node', actionType: ActionType.UpdateNodeLabel }), false);
    assert.equal(eventMatches({ resource: 'Pod', actionType: ActionType.All }, { resource: 'Node', actionType: ActionType.Add }), false);
    assert.equal(eventMatches({ resource: '*', actionType: ActionType.All }, { resource: 'Node', actionType: ActionType.Add }), true);
  });
});
