import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deletionConditions, type DeleteResult } from './deleter.js';

const t0 = Date.UTC(2026, 0, 1, 0, 0, 0);

describe('deletionConditions', () => {
  it('reports remaining content and finalizers as upstream words them', () => {
    const result: DeleteResult = {
      remaining: new Map([['pods.', 2]]),
      finalizers: new Map([['example.com/hold', 1]]),
      done: false,
    };
    const conds = deletionConditions(result, t0);
    const byType = Object.fromEntries(conds.map((c) => [c.type, c]));
    assert.equal(byType.NamespaceContentRemaining!.status, 'True');
    assert.equal(byType.NamespaceContentRemaining!.message, 'Some resources are remaining: pods. has 2 resource instances');
    assert.equal(byType.NamespaceFinalizersRemaining!.message, 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    assert.equal(byType.NamespaceDeletionDiscoveryFailure!.status, 'False');
    assert.equal(conds.length, 5);
  });

  it('keeps lastTransitionTime of conditions that did not change', () => {
    const empty: DeleteResult = { remaining: new Map(), finalizers: new Map(), done: true };
    const first = deletionConditions(empty, t0);
    const later = deletionConditions(empty, t0 + 60_000, first);
    assert.deepEqual(later, first);
    const changed = deletionConditions({ ...empty, remaining: new Map([['configmaps.', 1]]), done: false }, t0 + 60_000, first);
    const remaining = changed.find((c) => c.type === 'NamespaceContentRemaining')!;
    assert.equal(remaining.lastTransitionTime, '2026-01-01T00:01:00Z');
    assert.equal(changed.find((c) => c.type === 'NamespaceDeletionDiscoveryFailure')!.lastTransitionTime, '2026-01-01T00:00:00Z');
  });
});
