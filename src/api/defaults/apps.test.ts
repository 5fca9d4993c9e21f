import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from './index.js';

type Obj = Record<string, any>;

function defaulted(group: string, kind: string, obj: Obj): Obj {
  applyDefaults(group, kind, obj);
  return obj;
}

const template = () => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });

test('DaemonSet defaults: RollingUpdate 1 unavailable 0 surge, ten revisions, pod-template defaults', () => {
  const ds = defaulted('apps', 'DaemonSet', { spec: { template: template() } });
  assert.deepEqual(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.equal(ds.spec.revisionHistoryLimit, 10);
  assert.equal(ds.spec.template.spec.restartPolicy, 'Always');
  assert.equal(ds.spec.template.spec.containers[0].imagePullPolicy, 'Always');
  const onDelete = defaulted('apps', 'DaemonSet', { spec: { updateStrategy: { type: 'OnDelete' }, revisionHistoryLimit: 0 } });
  assert.deepEqual(onDelete.spec.updateStrategy, { type: 'OnDelete' });
  assert.equal(onDelete.spec.revisionHistoryLimit, 0);
  const kept = defaulted('apps', 'DaemonSet', { spec: { updateStrategy: { rollingUpdate: { maxUnavailable: '10%' } } } });
  assert.deepEqual(kept.spec.updateStrategy.rollingUpdate, { maxUnavailable: '10%', maxSurge: 0 });
});

test('StatefulSet defaults as SetDefaults_StatefulSet with 1.33 gates', () => {
  const ss = defaulted('apps', 'StatefulSet', {
    spec: { template: template(), volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1024Mi' } } } }] },
  });
  assert.equal(ss.spec.replicas, 1);
  assert.equal(ss.spec.podManagementPolicy, 'OrderedReady');
  assert.deepEqual(ss.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
  assert.deepEqual(ss.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
  assert.equal(ss.spec.revisionHistoryLimit, 10);
  assert.equal(ss.spec.template.spec.dnsPolicy, 'ClusterFirst');
  const claim = ss.spec.volumeClaimTemplates[0];
  assert.equal(claim.spec.volumeMode, 'Filesystem');
  assert.equal(claim.spec.resources.requests.storage, '1Gi');
  assert.deepEqual(claim.status, { phase: 'Pending' });
  // An explicit RollingUpdate without rollingUpdate stays so; OnDelete gets no partition.
  assert.deepEqual(defaulted('apps', 'StatefulSet', { spec: { updateStrategy: { type: 'RollingUpdate' } } }).spec.updateStrategy, { type: 'RollingUpdate' });
  assert.deepEqual(defaulted('apps', 'StatefulSet', { spec: { updateStrategy: { type: 'OnDelete' } } }).spec.updateStrategy, { type: 'OnDelete' });
});

test('ReplicationController defaults: selector and labels from the template, one replica', () => {
  const rc = defaulted('', 'ReplicationController', { metadata: { name: 'web' }, spec: { template: template() } });
  assert.deepEqual(rc.spec.selector, { app: 'web' });
  assert.deepEqual(rc.metadata.labels, { app: 'web' });
  assert.equal(rc.spec.replicas, 1);
  assert.equal(rc.spec.template.spec.terminationGracePeriodSeconds, 30);
  const own = defaulted('', 'ReplicationController', { metadata: { labels: { team: 'a' } }, spec: { selector: { app: 'web' }, replicas: 0, template: template() } });
  assert.deepEqual(own.metadata.labels, { team: 'a' });
  assert.deepEqual(own.spec.selector, { app: 'web' });
  assert.equal(own.spec.replicas, 0);
});

test('PodTemplate gets the pod-template defaults', () => {
  const pt = defaulted('', 'PodTemplate', { template: template() });
  assert.equal(pt.template.spec.schedulerName, 'default-scheduler');
  assert.equal(pt.template.spec.containers[0].terminationMessagePolicy, 'File');
});
