import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../errors.js';
import type { JsonObject } from './json.js';
import { applyJsonPatch, applyOperations, JsonPatchError } from './jsonpatch.js';

const doc = (): JsonObject => ({ metadata: { labels: { 'a/b': '1', 'c~d': '2' } }, spec: { list: [1, 2, 3], obj: { x: 1 } } });

const ok: { name: string; ops: unknown[]; want: JsonObject }[] = [
  { name: 'add a key', ops: [{ op: 'add', path: '/spec/new', value: true }], want: { ...doc(), spec: { ...(doc().spec as JsonObject), new: true } } },
  { name: 'add appends with -', ops: [{ op: 'add', path: '/spec/list/-', value: 4 }], want: { ...doc(), spec: { list: [1, 2, 3, 4], obj: { x: 1 } } } },
  { name: 'add inserts at an index', ops: [{ op: 'add', path: '/spec/list/1', value: 9 }], want: { ...doc(), spec: { list: [1, 9, 2, 3], obj: { x: 1 } } } },
  { name: 'add at the end index', ops: [{ op: 'add', path: '/spec/list/3', value: 9 }], want: { ...doc(), spec: { list: [1, 2, 3, 9], obj: { x: 1 } } } },
  { name: 'negative index counts from the end', ops: [{ op: 'remove', path: '/spec/list/-1' }], want: { ...doc(), spec: { list: [1, 2], obj: { x: 1 } } } },
  {
    name: 'escaped tokens ~1 and ~0',
    ops: [{ op: 'remove', path: '/metadata/labels/a~1b' }, { op: 'replace', path: '/metadata/labels/c~0d', value: '3' }],
    want: { ...doc(), metadata: { labels: { 'c~d': '3' } } },
  },
  { name: 'replace of a missing key adds it (library behaviour)', ops: [{ op: 'replace', path: '/spec/obj/y', value: 2 }], want: { ...doc(), spec: { list: [1, 2, 3], obj: { x: 1, y: 2 } } } },
  { name: 'move', ops: [{ op: 'move', from: '/spec/obj/x', path: '/spec/moved' }], want: { ...doc(), spec: { list: [1, 2, 3], obj: {}, moved: 1 } } },
  { name: 'copy deep-copies', ops: [{ op: 'copy', from: '/spec/obj', path: '/spec/copy' }, { op: 'replace', path: '/spec/copy/x', value: 5 }], want: { ...doc(), spec: { list: [1, 2, 3], obj: { x: 1 }, copy: { x: 5 } } } },
  { name: 'test that passes', ops: [{ op: 'test', path: '/spec/list', value: [1, 2, 3] }], want: doc() },
  { name: 'test of null matches an absent key', ops: [{ op: 'test', path: '/spec/none', value: null }], want: doc() },
];

const failing: { name: string; ops: unknown[]; message: string }[] = [
  { name: 'test that fails', ops: [{ op: 'test', path: '/spec/obj/x', value: 2 }], message: 'testing value /spec/obj/x failed: test failed' },
  { name: 'remove of a missing key', ops: [{ op: 'remove', path: '/spec/nope' }], message: "error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value" },
  { name: 'add under a missing parent', ops: [{ op: 'add', path: '/nope/x', value: 1 }], message: 'add operation does not apply: doc is missing path: "/nope/x": missing value' },
  { name: 'add past the end', ops: [{ op: 'add', path: '/spec/list/5', value: 1 }], message: "error in add for path: '/spec/list/5': Unable to access invalid index: 5: invalid index referenced" },
  { name: 'replace past the end', ops: [{ op: 'replace', path: '/spec/list/3', value: 1 }], message: 'replace operation does not apply: doc is missing key: /spec/list/3: Unable to access invalid index: 3: invalid index referenced' },
  { name: 'an unknown op', ops: [{ op: 'frob', path: '/a' }], message: 'Unexpected kind: frob' },
  { name: 'an op without path', ops: [{ op: 'add', value: 1 }], message: 'add operation failed to decode path' },
  { name: 'later failures discard earlier operations', ops: [{ op: 'add', path: '/a', value: 1 }, { op: 'test', path: '/a', value: 2 }], message: 'testing value /a failed: test failed' },
];

void describe('applyOperations', () => {
  for (const c of ok) {
    void it(c.name, () => {
      const d = doc();
      assert.deepEqual(applyOperations(d, c.ops as never), c.want);
      assert.deepEqual(d, doc(), 'input untouched');
    });
  }
  for (const c of failing) {
    void it(c.name, () => {
      assert.throws(() => applyOperations(doc(), c.ops as never), (e: unknown) => e instanceof JsonPatchError && e.message === c.message);
    });
  }
});

void describe('applyJsonPatch status codes', () => {
  const cases: { name: string; body: unknown; code: number; reason: string; message: string }[] = [
    { name: 'an operation that does not apply is a generic 422', body: [{ op: 'remove', path: '/x' }], code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' },
    { name: 'a body that is not a list is a 400', body: { op: 'add' }, code: 400, reason: 'BadRequest', message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch' },
    { name: 'an operation that is not an object is a 400', body: ['add'], code: 400, reason: 'BadRequest', message: 'json: cannot unmarshal string into Go value of type jsonpatch.Operation' },
    {
      name: 'more than 10000 operations is a 413',
      body: Array.from({ length: 10001 }, () => ({ op: 'test', path: '/a', value: null })),
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      assert.throws(
        () => applyJsonPatch({}, c.body),
        (e: unknown) => e instanceof StatusError && e.code === c.code && e.reason === c.reason && e.message === c.message,
      );
    });
  }
  void it('null is an empty patch', () => assert.deepEqual(applyJsonPatch({ a: 1 }, null), { a: 1 }));
});
