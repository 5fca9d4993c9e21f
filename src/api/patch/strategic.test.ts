import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { schemaForKind, type FieldSchema } from '../schema.js';
import { StatusError } from '../errors.js';
import type { JsonObject } from './json.js';
import { applyStrategicMergePatch } from './strategic.js';

const pod = schemaForKind('', 'v1', 'Pod');

// A hand-written schema for cases the built-in kinds do not exercise.
const custom: FieldSchema = {
  type: 'object',
  properties: {
    lists: { type: 'array', patchStrategy: 'merge', items: { type: 'array' } },
    replaced: { type: 'object', patchStrategy: 'replace', properties: { a: { type: 'string' }, b: { type: 'string' } } },
    items: { type: 'array', patchStrategy: 'merge', patchMergeKey: 'name' },
  },
};

const live = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web',
    labels: { app: 'web', tier: 'fe' },
    finalizers: ['a', 'b'],
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' },
  },
  spec: {
    containers: [
      { name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }] },
      { name: 'sidecar', image: 'busybox', env: [{ name: 'A', value: '1' }] },
    ],
    tolerations: [{ key: 'x', operator: 'Exists' }],
    volumes: [{ name: 'data', hostPath: { path: '/data' } }],
  },
});

interface Case {
  name: string;
  schema?: FieldSchema | undefined;
  original?: JsonObject;
  patch: unknown;
  /** Paths (dot-separated) and their expected values after the patch. */
  want?: Record<string, unknown>;
  error?: { code: number; reason: string; message: string };
}

const get = (obj: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v === undefined || v === null ? undefined : (v as Record<string, unknown>)[k]), obj);

const cases: Case[] = [
  {
    name: 'kubectl apply body for a changed label',
    patch: {
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"x":1}\n' }, labels: { app: 'web2' } },
    },
    want: {
      'metadata.labels': { app: 'web2', tier: 'fe' },
      'metadata.annotations': { 'kubectl.kubernetes.io/last-applied-configuration': '{"x":1}\n' },
    },
  },
  {
    name: 'kubectl apply body for a changed image with a container removed',
    patch: {
      spec: {
        '$setElementOrder/containers': [{ name: 'nginx' }],
        containers: [{ image: 'nginx:1.28', name: 'nginx' }, { $patch: 'delete', name: 'sidecar' }],
      },
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' } },
    },
    want: {
      'spec.containers': [{ name: 'nginx', image: 'nginx:1.28', ports: [{ containerPort: 80, protocol: 'TCP' }] }],
    },
  },
  {
    name: 'a new merge-list item goes before the live ones (upstream order)',
    patch: { spec: { containers: [{ name: 'log', image: 'fluent' }] } },
    want: { 'spec.containers': ['log', 'nginx', 'sidecar'] },
  },
  {
    name: '$setElementOrder places a new item where the directive says',
    patch: {
      spec: { '$setElementOrder/containers': [{ name: 'nginx' }, { name: 'log' }, { name: 'sidecar' }], containers: [{ name: 'log', image: 'fluent' }] },
    },
    want: { 'spec.containers': ['nginx', 'log', 'sidecar'] },
  },
  {
    name: 'nested merge lists merge by their own key',
    patch: { spec: { containers: [{ name: 'sidecar', env: [{ name: 'B', value: '2' }, { name: 'A', value: '9' }] }] } },
    want: { 'spec.containers.1.env': [{ name: 'B', value: '2' }, { name: 'A', value: '9' }] },
  },
  {
    name: 'ports merge by containerPort',
    patch: { spec: { containers: [{ name: 'nginx', ports: [{ containerPort: 80, name: 'http' }] }] } },
    want: { 'spec.containers.0.ports': [{ containerPort: 80, protocol: 'TCP', name: 'http' }] },
  },
  {
    name: 'null deletes a key',
    patch: { metadata: { labels: { tier: null, gone: null } } },
    want: { 'metadata.labels': { app: 'web' } },
  },
  {
    name: '$patch: replace on a map replaces it',
    patch: { metadata: { labels: { $patch: 'replace', only: 'one' } } },
    want: { 'metadata.labels': { only: 'one' } },
  },
  {
    name: '$patch: delete on a map empties it',
    patch: { metadata: { labels: { $patch: 'delete' } } },
    want: { 'metadata.labels': {} },
  },
  {
    name: '$patch: replace in a merge list replaces the list',
    patch: { spec: { containers: [{ name: 'solo', image: 'x' }, { $patch: 'replace' }] } },
    want: { 'spec.containers': [{ name: 'solo', image: 'x' }] },
  },
  {
    name: 'an atomic list is replaced',
    patch: { spec: { tolerations: [{ key: 'y', operator: 'Exists' }] } },
    want: { 'spec.tolerations': [{ key: 'y', operator: 'Exists' }] },
  },
  {
    name: 'a primitive merge list merges as a set, new values first',
    patch: { metadata: { finalizers: ['c', 'a'] } },
    want: { 'metadata.finalizers': ['c', 'a', 'b'] },
  },
  {
    name: '$deleteFromPrimitiveList removes values',
    patch: { metadata: { '$deleteFromPrimitiveList/finalizers': ['a', 'zzz'] } },
    want: { 'metadata.finalizers': ['b'] },
  },
  {
    name: 'kubectl-style finalizer change: order, addition and deletion together',
    patch: { metadata: { '$setElementOrder/finalizers': ['a', 'c'], finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['b'] } },
    want: { 'metadata.finalizers': ['a', 'c'] },
  },
  {
    name: '$retainKeys clears keys not listed (volume source switch)',
    patch: { spec: { volumes: [{ name: 'data', $retainKeys: ['emptyDir', 'name'], emptyDir: {} }] } },
    want: { 'spec.volumes': [{ name: 'data', emptyDir: {} }] },
  },
  {
    name: 'a new map is merged so its directives apply',
    original: { metadata: { name: 'x' } },
    patch: { metadata: { labels: { a: '1', b: null } } },
    want: { 'metadata.labels': { a: '1' } },
  },
  {
    name: 'without a schema maps merge and lists are replaced',
    schema: undefined,
    original: { spec: { list: [1, 2], m: { a: 1, b: 2 } } },
    patch: { spec: { list: [3], m: { b: null, c: 3 } } },
    want: { 'spec.list': [3], 'spec.m': { a: 1, c: 3 } },
  },
  {
    name: 'replace strategy on a map takes the patch value',
    schema: custom,
    original: { replaced: { a: 'x', b: 'y' } },
    patch: { replaced: { a: 'z' } },
    want: { replaced: { a: 'z' } },
  },
  {
    name: 'a type change replaces the value',
    patch: { metadata: { labels: 'oops' } },
    want: { 'metadata.labels': 'oops' },
  },
  {
    name: 'null patch is a no-op',
    patch: null,
    want: { 'metadata.labels': { app: 'web', tier: 'fe' } },
  },
  {
    name: 'an unknown $patch on a map is a 400 with the library message',
    patch: { metadata: { labels: { $patch: 'merge' } } },
    error: { code: 400, reason: 'BadRequest', message: 'unknown patch type: merge in map: map[$patch:merge]' },
  },
  {
    name: 'an unknown $patch in a list item is a 400',
    patch: { spec: { containers: [{ $patch: 'bogus', name: 'x' }] } },
    error: { code: 400, reason: 'BadRequest', message: 'unknown patch type: bogus in map: map[$patch:bogus name:x]' },
  },
  {
    name: '$patch: merge in a list is refused',
    patch: { spec: { containers: [{ $patch: 'merge', name: 'x' }] } },
    error: { code: 400, reason: 'BadRequest', message: 'merging lists cannot yet be specified in the patch' },
  },
  {
    name: 'a list item without its merge key is refused',
    patch: { spec: { containers: [{ image: 'x' }] } },
    error: { code: 400, reason: 'BadRequest', message: 'map: map[image:x] does not contain declared merge key: name' },
  },
  {
    name: '$retainKeys must be a list',
    patch: { spec: { volumes: [{ name: 'data', $retainKeys: 'name' }] } },
    error: { code: 400, reason: 'BadRequest', message: 'invalid patch format of retainKeys' },
  },
  {
    name: '$retainKeys must list every field the patch sets',
    patch: { spec: { volumes: [{ name: 'data', $retainKeys: ['name'], emptyDir: {} }] } },
    error: { code: 400, reason: 'BadRequest', message: 'invalid patch format of retainKeys' },
  },
  {
    name: '$deleteFromPrimitiveList needs a list name',
    patch: { metadata: { $deleteFromPrimitiveList: ['a'] } },
    error: { code: 400, reason: 'BadRequest', message: 'invalid patch format of primitive list' },
  },
  {
    name: '$setElementOrder needs a list name',
    patch: { metadata: { $setElementOrder: ['a'] } },
    error: { code: 400, reason: 'BadRequest', message: 'invalid patch format of setElementOrder list' },
  },
  {
    name: '$setElementOrder must agree with the patch list',
    patch: { spec: { '$setElementOrder/containers': [{ name: 'nginx' }], containers: [{ name: 'other', image: 'x' }] } },
    error: {
      code: 400,
      reason: 'BadRequest',
      message: "The order in patch list:\n[map[image:x name:other]]\n doesn't match $setElementOrder list:\n[map[name:nginx]]\n",
    },
  },
  {
    name: 'a merge list of lists is a 422',
    schema: custom,
    original: { lists: [[1]] },
    patch: { lists: [[2]] },
    error: { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' },
  },
  {
    name: 'a patch that is not an object is a 400',
    patch: [1],
    error: { code: 400, reason: 'BadRequest', message: 'json: cannot unmarshal array into Go value of type map[string]interface {}' },
  },
];

void describe('applyStrategicMergePatch', () => {
  for (const c of cases) {
    void it(c.name, () => {
      const original = c.original ?? live();
      const before = structuredClone(original);
      const schema = 'schema' in c ? c.schema : pod;
      if (c.error) {
        assert.throws(
          () => applyStrategicMergePatch(original, c.patch, schema),
          (err: unknown) => {
            assert.ok(err instanceof StatusError);
            assert.deepEqual({ code: err.code, reason: err.reason, message: err.message }, c.error);
            return true;
          },
        );
        return;
      }
      const out = applyStrategicMergePatch(original, c.patch, schema);
      for (const [path, want] of Object.entries(c.want ?? {})) {
        const got = get(out, path);
        // Order-only expectations list container names.
        if (Array.isArray(want) && want.every((w) => typeof w === 'string') && path === 'spec.containers') {
          assert.deepEqual((got as JsonObject[]).map((x) => x.name), want, path);
        } else {
          assert.deepEqual(got, want, path);
        }
      }
      assert.deepEqual(original, before, 'the original is not mutated');
    });
  }
});
