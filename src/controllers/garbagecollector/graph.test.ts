import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { findResource, type ResourceInfo } from '../../api/resources.js';
import type { MetaObject } from '../../client/indexer.js';
import { Graph } from './graph.js';

const configmaps = findResource('', 'v1', 'configmaps')!;
const nodes = findResource('', 'v1', 'nodes')!;

const ref = (uid: string, name: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid, ...extra });

function cm(uid: string, name: string, owners: OwnerReference[] = [], meta: MetaObject['metadata'] = {}, namespace = 'ns'): MetaObject {
  return { metadata: { uid, name, namespace, ownerReferences: owners, ...meta } };
}

type Step = { observe: MetaObject; info?: ResourceInfo } | { remove: MetaObject };

function run(steps: Step[]): { graph: Graph; deletes: string[]; orphans: string[] } {
  const deletes: string[] = [];
  const orphans: string[] = [];
  const graph = new Graph({ attemptToDelete: (uid) => deletes.push(uid), attemptToOrphan: (uid) => orphans.push(uid) });
  for (const step of steps) {
    if ('observe' in step) graph.observe(step.info ?? configmaps, step.observe);
    else graph.remove(step.remove);
  }
  return { graph, deletes, orphans };
}

const owner = cm('o', 'owner');
const deleting = (finalizer: string) => ({ deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: [finalizer] });

describe('Graph', () => {
  const cases: { name: string; steps: Step[]; deletes: string[]; orphans?: string[] }[] = [
    { name: 'a dependent whose owner is observed needs nothing', steps: [{ observe: owner }, { observe: cm('d', 'dep', [ref('o', 'owner')]) }], deletes: [] },
    { name: 'a dependent whose owner is not observed is looked at', steps: [{ observe: cm('d', 'dep', [ref('o', 'owner')]) }], deletes: ['d'] },
    {
      name: 'the UID must hold the name the reference states',
      steps: [{ observe: owner }, { observe: cm('d', 'dep', [ref('o', 'other-name')]) }],
      deletes: ['d'],
    },
    {
      name: 'a namespaced owner in another namespace does not count',
      steps: [{ observe: owner }, { observe: cm('d', 'dep', [ref('o', 'owner')], {}, 'elsewhere') }],
      deletes: ['d'],
    },
    {
      name: 'a cluster-scoped owner counts for dependents in any namespace',
      steps: [{ observe: { metadata: { uid: 'n', name: 'node1' } }, info: nodes }, { observe: cm('d', 'dep', [ref('n', 'node1', { kind: 'Node' })]) }],
      deletes: [],
    },
    {
      name: 'an owner deleted: its dependents are looked at',
      steps: [{ observe: owner }, { observe: cm('d1', 'a', [ref('o', 'owner')]) }, { observe: cm('d2', 'b', [ref('o', 'owner')]) }, { remove: owner }],
      deletes: ['d1', 'd2'],
    },
    {
      name: 'an owner starts foreground deletion: every dependent and the owner are looked at',
      steps: [{ observe: owner }, { observe: cm('d', 'dep', [ref('o', 'owner')]) }, { observe: cm('o', 'owner', [], deleting('foregroundDeletion')) }],
      deletes: ['d', 'o'],
    },
    {
      name: 'a blocking dependent removed: the foreground owner is looked at again',
      steps: [
        { observe: cm('o', 'owner', [], deleting('foregroundDeletion')) },
        { observe: cm('d', 'dep', [ref('o', 'owner', { blockOwnerDeletion: true })]) },
        { remove: cm('d', 'dep') },
      ],
      deletes: ['o', 'd', 'o'],
    },
    {
      name: 'a blocking reference turned non-blocking: the foreground owner is looked at again',
      steps: [
        { observe: cm('o', 'owner', [], deleting('foregroundDeletion')) },
        { observe: cm('d', 'dep', [ref('o', 'owner', { blockOwnerDeletion: true })]) },
        { observe: cm('d', 'dep', [ref('o', 'owner', { blockOwnerDeletion: false })]) },
      ],
      deletes: ['o', 'd', 'o', 'd'],
    },
    {
      name: 'an owner deleted with the orphan policy is orphaned, not collected',
      steps: [{ observe: owner }, { observe: cm('d', 'dep', [ref('o', 'owner')]) }, { observe: cm('o', 'owner', [], deleting('orphan')) }],
      deletes: [],
      orphans: ['o'],
    },
    {
      name: 'an object being deleted is left alone',
      steps: [{ observe: cm('d', 'dep', [ref('gone', 'x')], { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['example.com/hold'] }) }],
      deletes: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { deletes, orphans } = run(c.steps);
      assert.deepEqual(deletes, c.deletes);
      assert.deepEqual(orphans, c.orphans ?? []);
    });
  }

  it('tracks dependents by UID as references come and go', () => {
    const { graph } = run([
      { observe: owner },
      { observe: cm('d1', 'a', [ref('o', 'owner', { blockOwnerDeletion: true })]) },
      { observe: cm('d2', 'b', [ref('o', 'owner')]) },
    ]);
    assert.deepEqual(graph.dependents('o').map((d) => d.uid), ['d1', 'd2']);
    assert.deepEqual(graph.blockingDependents('o').map((d) => d.uid), ['d1']);
    graph.observe(configmaps, cm('d1', 'a', []));
    assert.deepEqual(graph.dependents('o').map((d) => d.uid), ['d2']);
    assert.deepEqual(graph.blockingDependents('o'), []);
    graph.remove(cm('d2', 'b'));
    assert.deepEqual(graph.dependents('o'), []);
  });
});
