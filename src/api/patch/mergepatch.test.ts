import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../errors.js';
import type { JsonObject } from './json.js';
import { applyMergePatch } from './mergepatch.js';

const cases: { name: string; original: JsonObject; patch: unknown; want: JsonObject }[] = [
  { name: 'sets a label', original: { metadata: { labels: { a: '1' } } }, patch: { metadata: { labels: { k: 'v' } } }, want: { metadata: { labels: { a: '1', k: 'v' } } } },
  { name: 'empty patch changes nothing', original: { a: 1 }, patch: {}, want: { a: 1 } },
  { name: 'null deletes', original: { a: 1, b: { c: 2, d: 3 } }, patch: { a: null, b: { c: null } }, want: { b: { d: 3 } } },
  { name: 'null for an absent key is dropped', original: { a: 1 }, patch: { z: null }, want: { a: 1 } },
  { name: 'arrays are replaced', original: { l: [1, 2, 3] }, patch: { l: [4] }, want: { l: [4] } },
  { name: 'an object replaces a scalar', original: { a: 'x' }, patch: { a: { b: 1 } }, want: { a: { b: 1 } } },
  {
    name: 'nulls inside a replacing value are pruned, array slots kept',
    original: { a: 'x' },
    patch: { a: { b: null, c: 1, l: [null, { d: null, e: 2 }] } },
    want: { a: { c: 1, l: [null, { e: 2 }] } },
  },
];

void describe('applyMergePatch', () => {
  for (const c of cases) {
    void it(c.name, () => {
      const before = structuredClone(c.original);
      assert.deepEqual(applyMergePatch(c.original, c.patch), c.want);
      assert.deepEqual(c.original, before);
    });
  }
  for (const patch of [null, 'x', 1, [1]]) {
    void it(`rejects ${JSON.stringify(patch)} with 400 Invalid JSON Patch`, () => {
      assert.throws(
        () => applyMergePatch({}, patch),
        (e: unknown) => e instanceof StatusError && e.code === 400 && e.reason === 'BadRequest' && e.message === 'Invalid JSON Patch',
      );
    });
  }
});
