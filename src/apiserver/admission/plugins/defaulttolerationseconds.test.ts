import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionAttributes } from '../interface.js';
import { DefaultTolerationSeconds } from './defaulttolerationseconds.js';
import { admissionAttributes, admitNamingChanges } from '../testing.js';

const notReady = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
const unreachable = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };

function attrs(tolerations: object[] | undefined, subresource = '', resource = 'pods'): AdmissionAttributes {
  const object = { metadata: { name: 'p' }, spec: { containers: [], ...(tolerations ? { tolerations } : {}) } };
  return admissionAttributes('', 'v1', resource, { subresource, namespace: 'd', object });
}

test('adds the missing NoExecute tolerations', async () => {
  const cases: [string, object[] | undefined, object[]][] = [
    ['none', undefined, [notReady, unreachable]],
    ['not-ready present', [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }], [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }, unreachable]],
    ['tolerate everything', [{ operator: 'Exists' }], [{ operator: 'Exists' }]],
    ['other effect only', [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }], [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoSchedule' }, notReady, unreachable]],
  ];
  const plugin = new DefaultTolerationSeconds();
  for (const [name, tolerations, want] of cases) {
    const a = attrs(tolerations);
    assert.ok(plugin.handles(a));
    await plugin.admit(a);
    assert.deepEqual((a.object!.spec as { tolerations: object[] }).tolerations, want, name);
  }
});

test('only pods proper', () => {
  const plugin = new DefaultTolerationSeconds();
  assert.equal(plugin.handles(attrs(undefined, 'status')), false);
  assert.equal(plugin.handles(attrs(undefined, '', 'services')), false);
  assert.equal(plugin.handles({ ...attrs(undefined), operation: 'DELETE' }), false);
});

test('names what it sets, for the pod timeline', async () => {
  const plugin = new DefaultTolerationSeconds();
  assert.deepEqual(await admitNamingChanges(plugin, attrs([{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }])), ['spec.tolerations']);
  assert.deepEqual(await admitNamingChanges(plugin, attrs([{ operator: 'Exists' }])), []);
});
