import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeManagedFields, encodeManagedFields, FieldSet, pathString } from './managedfields.js';

const v1 = {
  'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
  'f:spec': {
    'f:containers': {
      'k:{"name":"nginx"}': {
        '.': {},
        'f:image': {},
        'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
      },
    },
  },
};

void describe('FieldSet', () => {
  void it('round-trips FieldsV1', () => assert.deepEqual(FieldSet.fromFieldsV1(v1).toFieldsV1(), v1));

  void it('serializes "." first, then fields, keys, values and indices in order', () => {
    const s = FieldSet.of([['f:l', 'i:10'], ['f:l', 'i:9'], ['f:l', 'v:"b"'], ['f:l', 'k:{"a":1}'], ['f:l', 'f:z'], ['f:l', 'f:a'], ['f:l']]);
    assert.deepEqual(Object.keys(s.toFieldsV1()['f:l'] as object), ['.', 'f:a', 'f:z', 'k:{"a":1}', 'v:"b"', 'i:9', 'i:10']);
  });

  void it('lists paths members first, then children depth-first', () => {
    const s = FieldSet.fromFieldsV1(v1);
    assert.deepEqual(s.paths().map(pathString), [
      '.metadata.labels',
      '.metadata.labels.app',
      '.spec.containers[name="nginx"]',
      '.spec.containers[name="nginx"].image',
      '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]',
      '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort',
    ]);
  });

  const a = FieldSet.of([['f:a'], ['f:a', 'f:x'], ['f:b', 'f:y'], ['f:c']]);
  const b = FieldSet.of([['f:a'], ['f:b', 'f:y'], ['f:d']]);
  const ops: [string, FieldSet, string[]][] = [
    ['union', a.union(b), ['.a', '.c', '.d', '.a.x', '.b.y']],
    ['difference keeps descendants of removed members', a.difference(b), ['.c', '.a.x']],
    ['recursiveDifference drops them', a.recursiveDifference(b), ['.c']],
    ['intersection', a.intersection(b), ['.a', '.b.y']],
  ];
  for (const [name, got, want] of ops) void it(name, () => assert.deepEqual(got.paths().map(pathString), want));

  void it('has and isEmpty', () => {
    assert.ok(a.has(['f:a', 'f:x']));
    assert.ok(!a.has(['f:b']));
    assert.ok(new FieldSet().isEmpty());
    assert.ok(a.difference(a).isEmpty());
  });

  void it('equals compares paths, not identity', () => {
    assert.ok(a.equals(FieldSet.of(a.paths())));
    assert.ok(!a.equals(b));
    assert.ok(!a.equals(a.difference(FieldSet.of([['f:a', 'f:x']]))));
  });

  void it('operations that change nothing return an operand, and share unchanged subtrees', () => {
    const empty = new FieldSet();
    assert.equal(a.union(empty), a);
    assert.equal(empty.union(a), a);
    assert.equal(a.union(FieldSet.of([['f:a', 'f:x']])), a);
    assert.equal(a.difference(empty), a);
    assert.equal(a.difference(FieldSet.of([['f:z']])), a);
    assert.equal(a.recursiveDifference(empty), a);
    assert.equal(a.union(b).children.get('f:a'), a.children.get('f:a'));
    assert.equal(a.difference(FieldSet.of([['f:c']])).children.get('f:b'), a.children.get('f:b'));
  });

  void it('prints set items and indices', () => {
    assert.equal(pathString(['f:metadata', 'f:finalizers', 'v:"x"']), '.metadata.finalizers[="x"]');
    assert.equal(pathString(['f:l', 'i:3']), '.l[3]');
  });

  for (const bad of [[], { 'x:y': {} }, { 'f:a': 1 }]) {
    void it(`rejects malformed FieldsV1 ${JSON.stringify(bad)}`, () => assert.throws(() => FieldSet.fromFieldsV1(bad)));
  }
});

void describe('managedFields encoding', () => {
  void it('orders Apply before Update, then by time and manager, dropping empty sets', () => {
    const entry = (manager: string, operation: string, time: string) => ({ manager, operation, apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } });
    const managers = decodeManagedFields([
      entry('z', 'Update', '2026-01-01T00:00:02Z'),
      entry('b', 'Update', '2026-01-01T00:00:01Z'),
      entry('a', 'Update', '2026-01-01T00:00:01Z'),
      entry('late', 'Apply', '2026-01-01T00:00:09Z'),
      { ...entry('empty', 'Update', '2026-01-01T00:00:00Z'), fieldsV1: {} },
    ]);
    assert.deepEqual(encodeManagedFields(managers).map((e) => e.manager), ['late', 'a', 'b', 'z']);
  });

  void it('keeps a canonical entry\'s FieldsV1 object and rewrites any other', () => {
    const entry = (fieldsV1: object) => ({ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1 });
    assert.equal(encodeManagedFields(decodeManagedFields([entry(v1)]))[0]!.fieldsV1, v1);
    const messy = [
      { 'f:b': {}, 'f:a': {} },
      { '.': {}, 'f:a': {} },
      { 'f:a': { '.': {} } },
      { 'f:a': { 'f:x': {}, '.': {} } },
      { 'f:a': { '.': { 'f:y': {} }, 'f:x': {} } },
      { 'f:l': { 'i:10': {}, 'i:9': {} } },
    ];
    for (const fieldsV1 of messy) {
      const got = encodeManagedFields(decodeManagedFields([entry(fieldsV1)]))[0]!.fieldsV1;
      assert.notEqual(got, fieldsV1);
      assert.equal(JSON.stringify(got), JSON.stringify(FieldSet.fromFieldsV1(fieldsV1).toFieldsV1()));
      assert.notEqual(JSON.stringify(got), JSON.stringify(fieldsV1), `${JSON.stringify(fieldsV1)} is rewritten`);
    }
  });

  void it('merges duplicate entries of one manager', () => {
    const m = decodeManagedFields([
      { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } },
      { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:b': {} } },
    ]);
    assert.deepEqual(encodeManagedFields(m)[0]!.fieldsV1, { 'f:a': {}, 'f:b': {} });
  });

  void it('keeps updaters of different versions apart but appliers together', () => {
    const e = (operation: string, apiVersion: string) => ({ manager: 'm', operation, apiVersion, fieldsType: 'FieldsV1', fieldsV1: { 'f:a': {} } });
    assert.equal(decodeManagedFields([e('Update', 'v1'), e('Update', 'v2')]).size, 2);
    assert.equal(decodeManagedFields([e('Apply', 'v1'), e('Apply', 'v2')]).size, 1);
  });

  for (const bad of [{ operation: 'Patch', fieldsType: 'FieldsV1' }, { operation: 'Update', fieldsType: 'FieldsV2' }]) {
    void it(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => decodeManagedFields([{ manager: 'm', ...bad }])));
  }
});
