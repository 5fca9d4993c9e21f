import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApi } from '../../testing/fakeapi.js';
import { FakeClock } from '../../../util/clock.js';
import { TEMPLATE_GENERATION_ANNOTATION } from './apps.js';

type Obj = Record<string, any>;

const template = (image: string) => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } });

void test('workload strategies through the API: templateGeneration, status reset, generation, dropped fields, status.replicas', async () => {
  const api = await FakeApi.start({ clock: new FakeClock(Date.UTC(2026, 0, 1)) });
  try {
    const c = api.client();
    await c.resource('namespaces').create({ metadata: { name: 'ns' } });
    const dsClient = c.resource<Obj>('apps', 'v1', 'daemonsets').namespace('ns');
    // A writer's own templateGeneration and status are not what the server keeps.
    const ds = await dsClient.create({
      metadata: { name: 'web', annotations: { [TEMPLATE_GENERATION_ANNOTATION]: '0' } },
      spec: { selector: { matchLabels: { app: 'web' } }, template: template('nginx:1') },
      status: { numberReady: 4 },
    });
    assert.equal(ds.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '1');
    assert.equal(ds.metadata.generation, 1);
    assert.equal(ds.status?.numberReady, undefined);
    const relabelled = await dsClient.update({ ...ds, metadata: { ...ds.metadata, labels: { x: 'y' }, annotations: { [TEMPLATE_GENERATION_ANNOTATION]: '7' } } });
    assert.equal(relabelled.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '1');
    assert.equal(relabelled.metadata.generation, 1);
    const rolled = await dsClient.update({ ...relabelled, spec: { ...relabelled.spec, template: template('nginx:2') } });
    assert.equal(rolled.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '2');
    assert.equal(rolled.metadata.generation, 2);
    const history = await dsClient.update({ ...rolled, spec: { ...rolled.spec, revisionHistoryLimit: 3 } });
    assert.equal(history.metadata.annotations[TEMPLATE_GENERATION_ANNOTATION], '2');
    assert.equal(history.metadata.generation, 3);

    const sts = await c.resource<Obj>('apps', 'v1', 'statefulsets').namespace('ns').create({
      metadata: { name: 'db' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: template('pg'), updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } },
    });
    assert.deepEqual(sts.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });

    const rcClient = c.resource<Obj>('', 'v1', 'replicationcontrollers').namespace('ns');
    const rc = await rcClient.create({ metadata: { name: 'web' }, spec: { replicas: 2, template: template('nginx') } });
    assert.equal(rc.metadata.generation, 1);
    await rcClient.updateStatus({ ...rc, status: { replicas: 2 } });
    assert.deepEqual((await rcClient.list({ fieldSelector: 'status.replicas=2' })).items.map((o) => o.metadata.name), ['web']);
    assert.deepEqual((await rcClient.list({ fieldSelector: 'status.replicas=0' })).items, []);

    // A v1 RC's delete that names no policy orphans its pods (the garbage collector removes the finalizer).
    await rcClient.delete('web');
    const deleting = await rcClient.get('web');
    assert.deepEqual(deleting.metadata.finalizers, ['orphan']);
    assert.ok(deleting.metadata.deletionTimestamp);
    await rcClient.create({ metadata: { name: 'gone' }, spec: { template: template('nginx') } });
    await rcClient.delete('gone', { propagationPolicy: 'Background' });
    await assert.rejects(rcClient.get('gone'), { code: 404 });
    // ReplicaSets keep the global default: dependents deleted in the background.
    const rsClient = c.resource<Obj>('apps', 'v1', 'replicasets').namespace('ns');
    await rsClient.create({ metadata: { name: 'rs' }, spec: { selector: { matchLabels: { app: 'web' } }, template: template('nginx') } });
    await rsClient.delete('rs');
    await assert.rejects(rsClient.get('rs'), { code: 404 });

    const ptClient = c.resource<Obj>('', 'v1', 'podtemplates').namespace('ns');
    const pt = await ptClient.create({ metadata: { name: 't' }, template: template('a') });
    assert.equal(pt.metadata.generation, 1);
    assert.equal((await ptClient.update({ ...pt, template: template('b') })).metadata.generation, 2);
  } finally {
    await api.stop();
  }
});
