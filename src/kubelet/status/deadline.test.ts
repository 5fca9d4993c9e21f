import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '../../api/types.js';
import { activeDeadline, enforceActiveDeadline } from './deadline.js';

const start = Date.UTC(2026, 0, 1);
const pod = (activeDeadlineSeconds?: number): Pod => ({ metadata: { name: 'p' }, spec: { containers: [], activeDeadlineSeconds } });
const running: PodStatus = { phase: 'Running', startTime: new Date(start).toISOString() };

describe('activeDeadlineSeconds', () => {
  it('ends at startTime plus the deadline', () => {
    assert.equal(activeDeadline(pod(30), running), start + 30_000);
    assert.equal(activeDeadline(pod(), running), undefined);
    assert.equal(activeDeadline(pod(30), { phase: 'Pending' }), undefined);
  });

  it('fails the pod with DeadlineExceeded once the deadline has passed, not before', () => {
    assert.deepEqual(enforceActiveDeadline(pod(30), running, start + 29_999), { status: running, exceeded: false });
    const { status, exceeded } = enforceActiveDeadline(pod(30), running, start + 30_000);
    assert.equal(exceeded, true);
    assert.deepEqual(status, { ...running, phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' });
  });

  it('leaves a pod that already finished alone', () => {
    const done: PodStatus = { ...running, phase: 'Succeeded' };
    assert.equal(enforceActiveDeadline(pod(1), done, start + 60_000).exceeded, false);
  });
});
