import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ServiceAccount } from 'kubernetes-types/core/v1.js';
import { isStatusError } from '../../../api/errors.js';
import { findResource } from '../../../api/resources.js';
import { FakeClock } from '../../../util/clock.js';
import type { AdmissionOperation } from '../interface.js';
import { admissionAttributes, admitNamingChanges, fakeLookups, type LookupObjects } from '../testing.js';
import { ServiceAccountAdmission, defaultAPITokenMountPath, tokenVolumeSource } from './serviceaccount.js';

const sa = (name: string, extra: Partial<ServiceAccount> = {}): ServiceAccount => ({ metadata: { name, namespace: 'ns', uid: `${name}-uid` }, ...extra });

const attrs = (pod: Pod, operation: AdmissionOperation = 'CREATE') => admissionAttributes('', 'v1', 'pods', { operation, namespace: 'ns', object: pod });

const podOf = (spec: Partial<Pod['spec']> = {}, metadata: Pod['metadata'] = { name: 'p' }): Pod => ({ metadata, spec: { containers: [{ name: 'c' }], ...spec } });

function plugin(objects: LookupObjects, clock = new FakeClock()): ServiceAccountAdmission {
  return new ServiceAccountAdmission({ lookups: fakeLookups(objects), clock, randomSuffix: () => 'b2c4d' });
}

const mount = { name: 'kube-api-access-b2c4d', readOnly: true, mountPath: defaultAPITokenMountPath };

test('defaults the service account and mounts the token volume in every container', async () => {
  const pod = podOf({ initContainers: [{ name: 'i' }], containers: [{ name: 'a' }, { name: 'b', volumeMounts: [{ name: 'x', mountPath: '/x' }] }], volumes: [{ name: 'x', emptyDir: {} }] });
  await plugin({ serviceaccounts: [sa('default')] }).admit(attrs(pod));
  const spec = pod.spec!;
  assert.equal(spec.serviceAccountName, 'default');
  assert.deepEqual(spec.initContainers![0]!.volumeMounts, [mount]);
  assert.deepEqual(spec.containers[0]!.volumeMounts, [mount]);
  assert.deepEqual(spec.containers[1]!.volumeMounts, [{ name: 'x', mountPath: '/x' }, mount]);
  assert.deepEqual(spec.volumes, [{ name: 'x', emptyDir: {} }, { name: 'kube-api-access-b2c4d', projected: tokenVolumeSource() }]);
  const src = tokenVolumeSource();
  assert.equal(src.defaultMode, 420);
  assert.deepEqual(src.sources![0], { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } });
});

test('automountServiceAccountToken: the pod wins over its service account', async () => {
  const cases: [string, boolean | undefined, boolean | undefined, boolean][] = [
    ['neither says', undefined, undefined, true],
    ['sa off', undefined, false, false],
    ['pod off', false, true, false],
    ['pod on, sa off', true, false, true],
  ];
  for (const [name, podSetting, saSetting, want] of cases) {
    const pod = podOf({ serviceAccountName: 'robot', ...(podSetting === undefined ? {} : { automountServiceAccountToken: podSetting }) });
    await plugin({ serviceaccounts: [sa('robot', saSetting === undefined ? {} : { automountServiceAccountToken: saSetting })] }).admit(attrs(pod));
    assert.equal(pod.spec!.volumes?.length === 1, want, name);
  }
});

test('a container mounting the token path itself is left alone; an existing kube-api-access volume is reused', async () => {
  const own = { name: 'mine', mountPath: defaultAPITokenMountPath };
  const pod = podOf({ containers: [{ name: 'a', volumeMounts: [own] }], volumes: [{ name: 'mine', emptyDir: {} }] });
  await plugin({ serviceaccounts: [sa('default')] }).admit(attrs(pod));
  assert.deepEqual(pod.spec!.containers[0]!.volumeMounts, [own]);
  assert.deepEqual(pod.spec!.volumes, [{ name: 'mine', emptyDir: {} }]);

  const reused = podOf({ volumes: [{ name: 'kube-api-access-zzzzz', projected: tokenVolumeSource() }] });
  await plugin({ serviceaccounts: [sa('default')] }).admit(attrs(reused));
  assert.deepEqual(reused.spec!.containers[0]!.volumeMounts, [{ ...mount, name: 'kube-api-access-zzzzz' }]);
  assert.equal(reused.spec!.volumes!.length, 1);
});

test('a missing service account is refused with upstream message; the default one is waited for', async () => {
  const pod = podOf({ serviceAccountName: 'ghost' }, { generateName: 'web-' });
  await assert.rejects(plugin({}).admit(attrs(pod)), (err: unknown) => {
    assert.ok(isStatusError(err));
    assert.equal(err.toStatus().code, 403);
    assert.equal(err.toStatus().message, 'pods "web-" is forbidden: error looking up service account ns/ghost: serviceaccount "ghost" not found');
    return true;
  });

  // The default service account appears while the plugin retries.
  const clock = new FakeClock();
  const objects: LookupObjects = {};
  const admitted = plugin(objects, clock).admit(attrs(podOf()));
  await clock.advance(250);
  objects.serviceaccounts = [sa('default')];
  await clock.advance(250);
  await admitted;

  const never = plugin({}, clock).admit(attrs(podOf()));
  const refused = assert.rejects(never, /serviceaccount "default" not found/);
  for (let i = 0; i < 10; i++) await clock.advance(200);
  await refused;
});

test('copies imagePullSecrets; leaves mirror pods, updates and other resources alone', async () => {
  const pod = podOf();
  await plugin({ serviceaccounts: [sa('default', { imagePullSecrets: [{ name: 'reg' }] })] }).admit(attrs(pod));
  assert.deepEqual(pod.spec!.imagePullSecrets, [{ name: 'reg' }]);

  const mirror = podOf({}, { name: 'm', annotations: { 'kubernetes.io/config.mirror': 'x' } });
  await plugin({}).admit(attrs(mirror));
  assert.equal(mirror.spec!.serviceAccountName, undefined);

  const p = plugin({});
  assert.equal(p.handles(attrs(podOf(), 'UPDATE')), false);
  assert.equal(p.handles({ ...attrs(podOf()), subresource: 'status' }), false);
  assert.equal(p.handles({ ...attrs(podOf()), resource: findResource('', 'v1', 'services')! }), false);
});

test('names what it sets, for the pod timeline', async () => {
  const pod = podOf({ initContainers: [{ name: 'i' }], containers: [{ name: 'a' }, { name: 'b', volumeMounts: [{ name: 'x', mountPath: '/x' }] }], volumes: [{ name: 'x', emptyDir: {} }] });
  const named = await admitNamingChanges(plugin({ serviceaccounts: [sa('default', { imagePullSecrets: [{ name: 'reg' }] })] }), attrs(pod));
  assert.deepEqual(named, ['spec.serviceAccountName', 'spec.initContainers[0].volumeMounts', 'spec.containers[0].volumeMounts', 'spec.containers[1].volumeMounts', 'spec.volumes', 'spec.imagePullSecrets']);
  const mounted = structuredClone(pod);
  assert.deepEqual(await admitNamingChanges(plugin({ serviceaccounts: [sa('default')] }), attrs(mounted)), [], 'a pod already set up is left alone');
});
