import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ControllerRevision } from 'kubernetes-types/apps/v1.js';
import { selectorFromSet } from '../../api/labels.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { FakeClock } from '../../util/clock.js';
import {
  canonicalJSON,
  ControllerHistory,
  controllerRevisionName,
  CONTROLLER_REVISION_HASH_LABEL,
  controllerRevisionsResource,
  hashControllerRevision,
  newControllerRevision,
  nextRevision,
  revisionsToTruncate,
  templatePatch,
} from './history.js';

const rev = (name: string, revision: number): ControllerRevision => ({ metadata: { name }, revision });

describe('ControllerRevision hashing', () => {
  it('hashes the patch as Go writes it, FNV-1 then the collision count, safe-encoded', () => {
    const data = templatePatch({ metadata: { labels: { app: 'web' } } });
    // Go's json.Marshal of the map: sorted keys.
    assert.equal(canonicalJSON(data), '{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}}}}}');
    // Expected values computed apart from this code (FNV-1 32 of those bytes, then of "3").
    assert.equal(hashControllerRevision(data), '7956996c7');
    assert.equal(hashControllerRevision(data, 3), '7c75489b68');
    assert.equal(canonicalJSON({ b: '<&>', a: [1, null] }), '{"a":[1,null],"b":"\\u003c\\u0026\\u003e"}');
  });

  it('names revisions prefix-hash with the prefix cut to 223 characters', () => {
    assert.equal(controllerRevisionName('web', 'abc'), 'web-abc');
    assert.equal(controllerRevisionName('x'.repeat(300), 'h').length, 225);
  });

  it('truncates the oldest revisions not in use down to the limit', () => {
    const revisions = [rev('r3', 3), rev('r1', 1), rev('r2', 2), rev('r4', 4), rev('r5', 5)];
    const names = (limit: number, inUse: string[]) => revisionsToTruncate(revisions, new Set(inUse), limit).map((r) => r.metadata!.name);
    assert.deepEqual(names(2, ['r5']), ['r1', 'r2']);
    assert.deepEqual(names(0, ['r5', 'r1']), ['r2', 'r3', 'r4']);
    assert.deepEqual(names(10, ['r5']), []);
    assert.equal(nextRevision(revisions), 6);
    assert.equal(nextRevision([]), 1);
  });
});

describe('ControllerHistory', () => {
  const parent = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web', namespace: 'default', uid: 'uid-1' } };

  it('creates a revision, returns the existing one for equal data, and moves past a collision', async () => {
    const api = await FakeApi.start({ clock: new FakeClock(Date.UTC(2026, 0, 1)) });
    try {
      const client = api.client();
      const history = new ControllerHistory(client);
      const data = templatePatch({ metadata: { labels: { app: 'web' } } });
      const wanted = newControllerRevision(parent, { app: 'web' }, data, 1, 0);
      assert.equal(wanted.metadata?.labels?.[CONTROLLER_REVISION_HASH_LABEL], hashControllerRevision(data, 0));
      const first = await history.createControllerRevision(parent, wanted, 0);
      assert.equal(first.collisionCount, 0);
      assert.equal(first.revision.metadata?.name, `web-${hashControllerRevision(data, 0)}`);
      assert.equal(first.revision.metadata?.ownerReferences?.[0]?.uid, 'uid-1');
      const again = await history.createControllerRevision(parent, wanted, 0);
      assert.equal(again.revision.metadata?.uid, first.revision.metadata?.uid, 'equal data: the same revision');

      // Another object already holds the name the next data hashes to.
      const other = templatePatch({ metadata: { labels: { app: 'other' } } });
      const revs = client.resource<ControllerRevision>(controllerRevisionsResource).namespace('default');
      await revs.create({ metadata: { name: `web-${hashControllerRevision(other, 0)}` }, data: { unrelated: true }, revision: 9 });
      const moved = await history.createControllerRevision(parent, newControllerRevision(parent, {}, other, 2, 0), 0);
      assert.equal(moved.collisionCount, 1);
      assert.equal(moved.revision.metadata?.name, `web-${hashControllerRevision(other, 1)}`);

      const updated = await history.updateControllerRevision(first.revision, 3);
      assert.equal(updated.revision, 3);

      // An orphan matching the selector is adopted; one owned by another parent is not claimed.
      await revs.create({ metadata: { name: 'orphan', labels: { app: 'web' } }, data: {}, revision: 1 });
      await revs.create({ metadata: { name: 'theirs', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'x', uid: 'uid-2', controller: true }] }, data: {}, revision: 1 });
      const all = (await revs.list()).items;
      const owned = await history.claimControllerRevisions(parent, selectorFromSet({ app: 'web' }), all);
      assert.deepEqual(owned.map((r) => r.metadata?.name).sort(), ['orphan', first.revision.metadata!.name!, moved.revision.metadata!.name!].sort());
      assert.equal((await revs.get('orphan')).metadata?.ownerReferences?.[0]?.uid, 'uid-1');
      await history.deleteControllerRevision(updated);
      await history.deleteControllerRevision(updated); // already gone: no error
      assert.equal((await revs.list()).items.some((r) => r.metadata?.name === updated.metadata?.name), false);
    } finally {
      await api.stop();
    }
  });
});
