import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ObjectMeta } from '../api/meta.js';
import { DeletedFinalStateUnknown, Indexer, metaNamespaceKeyFunc, namespaceIndex, splitMetaNamespaceKey, type IndexFunc } from './indexer.js';

interface Pod {
  metadata: ObjectMeta;
  spec: { nodeName?: string; volumes?: string[] };
}
const pod = (ns: string, name: string, nodeName?: string, volumes?: string[]): Pod => ({ metadata: { namespace: ns, name }, spec: { nodeName, volumes } });

const byNode: IndexFunc<Pod> = (p) => (p.spec.nodeName ? [p.spec.nodeName] : []);
const byVolume: IndexFunc<Pod> = (p) => p.spec.volumes ?? [];

void test('keys', () => {
  const cases: [Parameters<typeof metaNamespaceKeyFunc>[0], string][] = [
    [{ metadata: { namespace: 'ns', name: 'a' } }, 'ns/a'],
    [{ metadata: { name: 'node1' } }, 'node1'],
    [new DeletedFinalStateUnknown('ns/gone', {}), 'ns/gone'],
  ];
  for (const [o, want] of cases) assert.equal(metaNamespaceKeyFunc(o), want);
  assert.deepEqual(splitMetaNamespaceKey('ns/a'), { namespace: 'ns', name: 'a' });
  assert.deepEqual(splitMetaNamespaceKey('a'), { namespace: '', name: 'a' });
  assert.throws(() => splitMetaNamespaceKey('a/b/c'), { message: 'unexpected key format: "a/b/c"' });
});

void test('indexes follow adds, updates, deletes and replace', () => {
  const ix = new Indexer<Pod>();
  ix.addIndexers({ node: byNode, volume: byVolume });
  ix.add(pod('a', 'p1', 'n1', ['v1', 'v2']));
  ix.add(pod('a', 'p2', 'n1', ['v2']));
  ix.add(pod('b', 'p3'));
  const names = (ps: Pod[]) => ps.map((p) => p.metadata.name).sort();
  assert.deepEqual(names(ix.byIndex('node', 'n1')), ['p1', 'p2']);
  assert.deepEqual(names(ix.byIndex('volume', 'v2')), ['p1', 'p2']);
  assert.deepEqual(names(ix.byIndex(namespaceIndex, 'a')), ['p1', 'p2']);

  ix.update(pod('a', 'p1', 'n2', ['v3']));
  assert.deepEqual(names(ix.byIndex('node', 'n1')), ['p2']);
  assert.deepEqual(names(ix.byIndex('node', 'n2')), ['p1']);
  assert.deepEqual(names(ix.byIndex('volume', 'v1')), []);
  assert.deepEqual(ix.listIndexFuncValues('volume').sort(), ['v2', 'v3']);

  ix.delete(pod('a', 'p2'));
  assert.deepEqual(ix.byIndex('node', 'n1'), []);
  assert.equal(ix.getByKey('a/p2'), undefined);

  ix.replace([pod('c', 'p9', 'n9')]);
  assert.deepEqual(ix.listKeys(), ['c/p9']);
  assert.deepEqual(names(ix.byIndex('node', 'n9')), ['p9']);
  assert.deepEqual(ix.byIndex('node', 'n2'), []);
});

void test('index errors', () => {
  const ix = new Indexer<Pod>({ node: byNode });
  assert.throws(() => ix.byIndex('nope', 'x'), { message: 'Index with name nope does not exist' });
  assert.throws(() => ix.addIndexers({ node: byNode }), { message: 'indexer conflict: node' });
  ix.add(pod('a', 'p', 'n1'));
  ix.addIndexers({ volume: byVolume });
  ix.add(pod('a', 'q', 'n1', ['v']));
  assert.deepEqual(ix.indexKeys('volume', 'v'), ['a/q']);
  assert.deepEqual(ix.indexKeys('node', 'n1').sort(), ['a/p', 'a/q']);
});
