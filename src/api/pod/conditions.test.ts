import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { withPodCondition } from './conditions.js';

describe('withPodCondition', () => {
  it('adds, replaces, and keeps the transition time when the status stays', () => {
    const added = withPodCondition({ phase: 'Pending' }, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: 't1' });
    assert.deepEqual(added, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: 't1' }] });
    const same = withPodCondition(added, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'again', lastTransitionTime: 't2' });
    assert.equal(same.conditions![0]!.lastTransitionTime, 't1');
    assert.equal(same.conditions![0]!.message, 'again');
    const flipped = withPodCondition(same, { type: 'PodScheduled', status: 'True', lastTransitionTime: 't3' });
    assert.deepEqual(flipped.conditions, [{ type: 'PodScheduled', status: 'True', lastTransitionTime: 't3' }]);
  });
});
