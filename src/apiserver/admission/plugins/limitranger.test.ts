import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LimitRange, Pod } from '../../../api/types.js';
import { isStatusError } from '../../../api/errors.js';
import { admissionAttributes, admitNamingChanges, fakeLookups } from '../testing.js';
import { LimitRanger } from './limitranger.js';

const range = (limits: NonNullable<LimitRange['spec']>['limits'], namespace = 'd'): LimitRange => ({ metadata: { name: 'lr', namespace }, spec: { limits } });

const podAttrs = (pod: Pod) => admissionAttributes('', 'v1', 'pods', { namespace: 'd', name: 'p', object: pod });

const pod = (containers: Pod['spec'] extends infer S ? (S extends { containers: infer C } ? C : never) : never): Pod => ({ metadata: { name: 'p', namespace: 'd' }, spec: { containers } });

test('defaults requests and limits from Container items and notes them', async () => {
  const lr = new LimitRanger({ lookups: fakeLookups({ limitranges: [range([{ type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '100m' } }]), range([{ type: 'Container', default: { cpu: '9' } }], 'other')] }) });
  const p = pod([{ name: 'c', image: 'x', resources: { limits: { memory: '64Mi' } } }, { name: 'd', image: 'x' }]);
  await lr.admit(podAttrs(p));
  assert.deepEqual(p.spec!.containers[0].resources, { limits: { memory: '64Mi', cpu: '500m' }, requests: { cpu: '100m', memory: '128Mi' } });
  assert.deepEqual(p.spec!.containers[1].resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  assert.equal(
    p.metadata!.annotations!['kubernetes.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container c; cpu limit for container c; cpu, memory request for container d; cpu, memory limit for container d',
  );
});

test('a pod without LimitRanges is left alone', async () => {
  const p = pod([{ name: 'c', image: 'x' }]);
  await new LimitRanger({ lookups: fakeLookups({}) }).admit(podAttrs(p));
  assert.deepEqual(p, pod([{ name: 'c', image: 'x' }]));
});

test('min, max and ratio refusals worded as upstream', async () => {
  const refusal = async (items: NonNullable<LimitRange['spec']>['limits'], p: Pod) => {
    try {
      await new LimitRanger({ lookups: fakeLookups({ limitranges: [range(items)] }) }).validate(podAttrs(p));
    } catch (err) {
      assert.ok(isStatusError(err));
      assert.equal(err.code, 403);
      return err.message;
    }
    return 'admitted';
  };
  const big = pod([{ name: 'c', image: 'x', resources: { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } } }]);
  assert.equal(await refusal([{ type: 'Container', max: { cpu: '1' } }], big), 'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  assert.equal(
    await refusal([{ type: 'Container', max: { cpu: '1', memory: '512Mi' } }], big),
    'pods "p" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum memory usage per Container is 512Mi, but limit is 1Gi]',
  );
  assert.equal(await refusal([{ type: 'Container', min: { cpu: '4' } }], big), 'pods "p" is forbidden: minimum cpu usage per Container is 4, but request is 2');
  assert.equal(await refusal([{ type: 'Container', max: { 'ephemeral-storage': '1Gi' } }], big), 'pods "p" is forbidden: maximum ephemeral-storage usage per Container is 1Gi.  No limit is specified');
  const twice = pod([{ name: 'c', image: 'x', resources: { requests: { cpu: '1' }, limits: { cpu: '3' } } }]);
  assert.equal(await refusal([{ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }], twice), 'pods "p" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000');
  const two = pod([{ name: 'a', image: 'x', resources: { limits: { cpu: '1' } } }, { name: 'b', image: 'x', resources: { limits: { cpu: '1' } } }]);
  assert.equal(await refusal([{ type: 'Pod', max: { cpu: '1500m' } }], two), 'pods "p" is forbidden: maximum cpu usage per Pod is 1500m, but limit is 2');
  assert.equal(await refusal([{ type: 'Container', max: { cpu: '1' } }], two), 'admitted');
});

test('names what it sets, for the pod timeline', async () => {
  const lr = new LimitRanger({ lookups: fakeLookups({ limitranges: [range([{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }])] }) });
  const p = pod([{ name: 'c', image: 'x', resources: { limits: { cpu: '1' }, requests: { cpu: '1' } } }, { name: 'd', image: 'x', resources: { requests: { memory: '1Mi' } } }]);
  assert.deepEqual(await admitNamingChanges(lr, podAttrs(p)), ['spec.containers[1].resources', 'metadata.annotations']);
});
