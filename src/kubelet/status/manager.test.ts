import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PodStatus } from '../../api/types.js';
import { schemaForKind } from '../../api/schema.js';
import { applyStrategicMergePatch } from '../../api/patch/strategic.js';
import { statusPatch } from './manager.js';

// The patch is applied as the API server applies it (strategic merge with the Pod schema), so what
// is checked is the status a client reads back.
function applied(old: PodStatus, next: PodStatus): PodStatus {
  const patch = statusPatch('uid-1', old, next) as { status: unknown };
  const out = applyStrategicMergePatch({ status: old } as never, { status: patch.status }, schemaForKind('', 'v1', 'Pod'));
  return (out as { status: PodStatus }).status;
}

describe('statusPatch', () => {
  it('replaces the pod IP of a recreated sandbox instead of merging both', () => {
    const old: PodStatus = { phase: 'Running', podIP: '10.0.0.2', podIPs: [{ ip: '10.0.0.2' }], hostIPs: [{ ip: '127.0.0.1' }] };
    const next: PodStatus = { phase: 'Running', podIP: '10.0.0.3', podIPs: [{ ip: '10.0.0.3' }], hostIPs: [{ ip: '127.0.0.1' }] };
    assert.deepEqual(applied(old, next), next);
  });

  it('clears a condition reason once the condition no longer has one', () => {
    const old: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [app]' }] };
    const next: PodStatus = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    assert.deepEqual(applied(old, next), next);
  });

  it('drops fields the new status no longer has and keeps condition order', () => {
    const old: PodStatus = { phase: 'Pending', message: 'x', conditions: [{ type: 'Ready', status: 'False' }, { type: 'PodScheduled', status: 'True' }] };
    const next: PodStatus = { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Ready', status: 'True' }] };
    assert.deepEqual(applied(old, next), next);
  });
});
