import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import { findResource, resources, type ResourceInfo } from '../../api/resources.js';
import { printerFor, toTable } from './table.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const pods = findResource('', 'v1', 'pods')!;

const pod: StoredObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: 'u1',
    resourceVersion: '42',
    creationTimestamp: '2025-06-01T11:59:55Z',
    labels: { app: 'web' },
    managedFields: [{ manager: 'kubectl', operation: 'Update' }],
  },
  spec: { nodeName: 'node1', containers: [{ name: 'nginx', image: 'nginx' }] },
  status: {
    phase: 'Succeeded',
    podIPs: [{ ip: '10.1.0.5' }],
    containerStatuses: [{ name: 'nginx', image: 'nginx', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
  },
};

void test('toTable: a meta.k8s.io/v1 Table with every column and one row per object', () => {
  const table = toTable(pods, [pod], { includeObject: 'Metadata', now: NOW });
  assert.equal(table.kind, 'Table');
  assert.equal(table.apiVersion, 'meta.k8s.io/v1');
  assert.deepEqual(table.metadata, {});
  assert.equal(table.columnDefinitions.length, 9);
  assert.deepEqual(table.rows[0]!.cells, ['web', '0/1', 'Completed', '0', '5s', '10.1.0.5', 'node1', '<none>', '<none>']);
  assert.deepEqual(table.rows[0]!.conditions, [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
  assert.deepEqual(toTable(pods, [], { includeObject: 'Metadata', now: NOW }).rows, []);
});

void test('toTable: noHeaders leaves the column definitions out but keeps every cell', () => {
  const table = toTable(pods, [pod], { includeObject: 'None', now: NOW, noHeaders: true });
  assert.deepEqual(table.columnDefinitions, []);
  assert.equal(table.rows[0]!.cells.length, 9);
});

void test('toTable: row objects follow includeObject', () => {
  const object = (include: 'None' | 'Metadata' | 'Object') => toTable(pods, [pod], { includeObject: include, now: NOW }).rows[0]!;
  assert.equal('object' in object('None'), false);
  // The full metadata, managedFields included, as upstream's PartialObjectMetadata.
  assert.deepEqual(object('Metadata').object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: pod.metadata });
  const { apiVersion: _a, kind: _k, ...rest } = pod;
  assert.deepEqual(object('Object').object, { ...pod });
  // Kind and apiVersion are filled in even when storage left them out.
  const full = toTable(pods, [rest as StoredObject], { includeObject: 'Object', now: NOW }).rows[0]!.object;
  assert.equal(full?.kind, 'Pod');
  assert.equal(full?.apiVersion, 'v1');
});

void test('every catalog kind upstream prints has its own printer whose cells match its columns', () => {
  const stub: StoredObject = { metadata: { name: 'x', creationTimestamp: '2025-06-01T11:00:00Z' } };
  // Upstream registers no printer for these: they get NAME and CREATED AT.
  const unprinted = new Set(['/LimitRange', 'rbac.authorization.k8s.io/Role', 'rbac.authorization.k8s.io/ClusterRole']);
  for (const r of resources.filter((r) => !unprinted.has(`${r.group}/${r.kind}`))) {
    const p = printerFor(r);
    assert.notEqual(p, printerFor({ group: 'example.com', kind: 'Widget' }), `${r.group}/${r.kind} has no printer`);
    assert.equal(p.columns[0]!.name === 'Name' || p.columns[0]!.name === 'Last Seen', true, r.kind);
    assert.equal(p.columns.filter((c) => c.format === 'name').length, 1, `${r.kind}: one name column`);
    const { cells } = p.print(stub, NOW);
    assert.equal(cells.length, p.columns.length, `${r.group}/${r.kind}: cells vs columns`);
  }
});

void test('kinds without a printer get NAME and CREATED AT', () => {
  const widgets: ResourceInfo = { ...pods, group: 'example.com', resource: 'widgets', kind: 'Widget', listKind: 'WidgetList' };
  const table = toTable(
    widgets,
    [
      { metadata: { name: 'w1', creationTimestamp: '2025-05-31T10:00:00.123456Z' } },
      { metadata: { name: 'w2' } },
    ],
    { includeObject: 'None', now: NOW },
  );
  assert.deepEqual(
    table.columnDefinitions.map((c) => [c.name, c.type, c.format]),
    [
      ['Name', 'string', 'name'],
      ['Created At', 'date', ''],
    ],
  );
  assert.deepEqual(
    table.rows.map((r) => r.cells),
    [
      ['w1', '2025-05-31T10:00:00Z'],
      ['w2', '0001-01-01T00:00:00Z'],
    ],
  );
});
