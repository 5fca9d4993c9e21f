import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { EndpointSliceTracker } from './tracker.js';

const slice = (uid: string, rv: number, generation: number, ips: string[] = []): EndpointSlice => ({
  metadata: { name: `web-${uid}`, namespace: 'ns', uid, resourceVersion: String(rv), generation, labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: ips.map((ip) => ({ addresses: [ip] })),
});
const names = (slices: EndpointSlice[]) => slices.map((s) => `${s.metadata?.name}@${s.metadata?.resourceVersion}`);

test("a sync sees the controller's own writes before the cache does, and the cache once it is newer", () => {
  const t = new EndpointSliceTracker();
  const cachedA = slice('a', 10, 1);
  t.update(slice('a', 12, 2, ['10.0.0.1'])); // updated, not seen yet
  t.update(slice('b', 13, 1)); // created, not seen yet
  t.expectDeletion(slice('c', 11, 1)); // deleted, still cached
  assert.deepEqual(names(t.current('ns/web', [cachedA, slice('c', 11, 1), slice('d', 9, 1)])), ['web-a@12', 'web-d@9', 'web-b@13']);
  // Someone else wrote a after the controller: the cache's copy is the newer one.
  assert.deepEqual(names(t.current('ns/web', [slice('a', 20, 3), slice('b', 13, 1)])), ['web-a@20', 'web-b@13']);
  // Its own echo does not queue the Service; another writer's change does.
  assert.equal(t.shouldSync(slice('a', 12, 2)), false);
  assert.equal(t.shouldSync(slice('a', 20, 3)), true);
  // A deletion it did not make is unexpected; the one it made is not.
  assert.equal(t.handleDeletion(slice('b', 13, 1)), true);
  assert.equal(t.handleDeletion(slice('c', 11, 1)), false);
});
