import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionOperation } from '../interface.js';
import { TaintNodesByCondition } from './taintnodesbycondition.js';
import { admissionAttributes } from '../testing.js';

const attrs = (spec: object, operation: AdmissionOperation = 'CREATE') => admissionAttributes('', 'v1', 'nodes', { operation, object: { metadata: { name: 'n' }, spec } });

test('new nodes get the not-ready NoSchedule taint once', async () => {
  const p = new TaintNodesByCondition();
  const fresh = attrs({});
  await p.admit(fresh);
  assert.deepEqual(fresh.object!.spec, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
  const tainted = attrs({ taints: [{ key: 'a', effect: 'NoExecute' }, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
  await p.admit(tainted);
  assert.equal((tainted.object!.spec as { taints: unknown[] }).taints.length, 2);
  assert.equal(p.handles(attrs({}, 'UPDATE')), false);
});
