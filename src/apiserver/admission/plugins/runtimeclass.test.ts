import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, RuntimeClass } from '../../../api/types.js';
import { admissionAttributes, admitNamingChanges, fakeLookups, forbiddenMessage } from '../testing.js';
import { RuntimeClassAdmission } from './runtimeclass.js';

const classes: RuntimeClass[] = [
  { metadata: { name: 'kata' }, handler: 'kata', overhead: { podFixed: { cpu: '250m', memory: '120Mi' } }, scheduling: { nodeSelector: { sandbox: 'yes' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] } },
  { metadata: { name: 'plain' }, handler: 'runc' },
];
const plugin = () => new RuntimeClassAdmission({ lookups: fakeLookups({ 'runtimeclasses.node.k8s.io': classes }) });
const attrs = (spec: Partial<NonNullable<Pod['spec']>>) =>
  admissionAttributes('', 'v1', 'pods', { namespace: 'd', object: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }], ...spec } } });


test('sets overhead and merges scheduling from the RuntimeClass', async () => {
  const a = attrs({ runtimeClassName: 'kata', nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'x', operator: 'Exists' }] });
  await plugin().admit(a);
  await plugin().validate(a);
  const spec = (a.object as Pod).spec!;
  assert.deepEqual(spec.overhead, { cpu: '250m', memory: '120Mi' });
  assert.deepEqual(spec.nodeSelector, { disk: 'ssd', sandbox: 'yes' });
  assert.deepEqual(spec.tolerations, [{ key: 'x', operator: 'Exists' }, { key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }]);
  const plain = attrs({ runtimeClassName: 'plain' });
  await plugin().admit(plain);
  assert.equal((plain.object as Pod).spec!.overhead, undefined);
});

test('refusals worded as upstream', async () => {
  assert.equal(await forbiddenMessage(plugin().admit(attrs({ runtimeClassName: 'x' }))), 'pods "p" is forbidden: pod rejected: RuntimeClass "x" not found');
  assert.equal(
    await forbiddenMessage(plugin().admit(attrs({ runtimeClassName: 'kata', overhead: { cpu: '1' } }))),
    `pods "p" is forbidden: spec.overhead: Forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
  );
  assert.equal(await forbiddenMessage(plugin().validate(attrs({ overhead: { cpu: '1' } }))), 'pods "p" is forbidden: spec.overhead: Forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  assert.equal(
    await forbiddenMessage(plugin().admit(attrs({ runtimeClassName: 'kata', nodeSelector: { sandbox: 'no' } }))),
    'pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no',
  );
});

test('names what it sets, for the pod timeline', async () => {
  const kata = classes[0]!;
  assert.deepEqual(await admitNamingChanges(plugin(), attrs({ runtimeClassName: 'kata', nodeSelector: { disk: 'ssd' } })), ['spec.overhead', 'spec.nodeSelector', 'spec.tolerations']);
  const settled = attrs({ runtimeClassName: 'kata', overhead: { ...kata.overhead!.podFixed }, nodeSelector: { sandbox: 'yes' }, tolerations: [...kata.scheduling!.tolerations!] });
  assert.deepEqual(await admitNamingChanges(plugin(), settled), [], 'a pod that has it all already');
});
