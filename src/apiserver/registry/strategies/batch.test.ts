import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../../api/meta.js';
import { FakeApi } from '../../testing/fakeapi.js';
import { jobStrategy } from './batch.js';

type Obj = Record<string, any>;
const strategy = jobStrategy();
const now = Date.UTC(2026, 0, 1);
const job = (spec: Obj = {}, metadata: Obj = {}) =>
  ({ metadata: { name: 'pi', uid: 'u-1', ...metadata }, spec: { manualSelector: false, template: { spec: {} }, ...spec }, status: { succeeded: 3 } }) as unknown as StoredObject & Obj;

test('create: a selector on the UID and the four template labels; status cleared; labels from the template', () => {
  const j = job();
  strategy.prepareForCreate(j, { now });
  const want = { 'batch.kubernetes.io/controller-uid': 'u-1', 'batch.kubernetes.io/job-name': 'pi', 'controller-uid': 'u-1', 'job-name': 'pi' };
  assert.deepEqual(j.spec.template.metadata.labels, want);
  assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u-1' } });
  assert.deepEqual(j.status, {});
  assert.deepEqual(j.metadata.labels, want);
});

test('create: labels the user set are kept (validation judges them); a manual selector is left alone', () => {
  const j = job({ template: { metadata: { labels: { 'job-name': 'other' } } } }, { labels: { app: 'a' } });
  strategy.prepareForCreate(j, { now });
  assert.equal(j.spec.template.metadata.labels['job-name'], 'other');
  assert.equal(j.spec.template.metadata.labels['batch.kubernetes.io/job-name'], 'pi');
  assert.deepEqual(j.metadata.labels, { app: 'a' });
  const manual = job({ manualSelector: true, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } } } });
  strategy.prepareForCreate(manual, { now });
  assert.deepEqual(manual.spec.selector, { matchLabels: { app: 'a' } });
  assert.deepEqual(manual.spec.template.metadata.labels, { app: 'a' });
});

test('status.successful is selectable; spec changes bump generation', () => {
  assert.equal(strategy.selectableFields(job())['status.successful'], '3');
  assert.equal(strategy.selectableFields(job({}, {}))['metadata.name'], 'pi');
  assert.equal(strategy.tracksGeneration, true);
});

test('a Job deleted without a propagation policy orphans its pods (batch/v1 default); an explicit policy wins', async () => {
  const api = await FakeApi.start();
  try {
    const jobs = api.client().resource<Record<string, any>>('batch', 'v1', 'jobs').namespace('default');
    const spec = { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } };
    await jobs.create({ metadata: { name: 'a' }, spec });
    await jobs.create({ metadata: { name: 'b' }, spec });
    await jobs.delete('a');
    const a = await jobs.get('a');
    assert.deepEqual([Boolean(a.metadata.deletionTimestamp), a.metadata.finalizers], [true, ['orphan']]);
    await jobs.delete('b', { propagationPolicy: 'Background' });
    await assert.rejects(jobs.get('b'), /not found/);
  } finally {
    await api.stop();
  }
});
