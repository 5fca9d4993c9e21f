// Every patch mechanism over request data keeps `__proto__`, `constructor` and `prototype` as data keys:
// none may reach Object.prototype or reparent an object, and such keys round-trip like any other.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyMergePatch } from './mergepatch.js';
import { applyJsonPatch, maxAccumulatedCopyBytes } from './jsonpatch.js';
import { applyStrategicMergePatch } from './strategic.js';
import { applyPatch, updateManagedFields } from './apply.js';
import { deepClone, type JsonObject } from './json.js';
import { schemaForKind } from '../schema.js';
import { StatusError } from '../errors.js';

const schema = schemaForKind('', 'v1', 'Pod');
const pod = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'x', labels: { app: 'a' } },
  spec: { containers: [{ name: 'c', image: 'i' }] },
});
// JSON.parse makes `__proto__` an own key, as a request body does.
const body = (text: string): JsonObject => JSON.parse(text) as JsonObject;
const prototypeNames = Object.getOwnPropertyNames(Object.prototype).join();

function assertUntouched(): void {
  assert.equal(Object.getOwnPropertyNames(Object.prototype).join(), prototypeNames);
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
}

const labelsOf = (o: JsonObject) => (o.metadata as JsonObject).labels as JsonObject;

describe('patches over hostile keys', () => {
  after(assertUntouched);

  it('merge patch stores __proto__, constructor and prototype as data', () => {
    const out = applyMergePatch(pod(), body('{"__proto__":{"polluted":"yes"},"metadata":{"labels":{"constructor":"c","__proto__":"p","prototype":"q"}}}'));
    assertUntouched();
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, '__proto__')?.value, { polluted: 'yes' });
    assert.deepEqual(JSON.parse(JSON.stringify(labelsOf(out))), body('{"app":"a","constructor":"c","__proto__":"p","prototype":"q"}'));
    assert.equal(Object.getOwnPropertyNames(labelsOf(out)).length, 4);
  });

  it('JSON patch pointers resolve only own keys', () => {
    for (const path of ['/metadata/__proto__/polluted', '/metadata/constructor/polluted', '/__proto__/polluted']) {
      assert.throws(() => applyJsonPatch(pod(), [{ op: 'add', path, value: 'yes' }]), (e: unknown) => e instanceof StatusError && e.code === 422);
      assertUntouched();
    }
    const out = applyJsonPatch(pod(), body('[{"op":"add","path":"/metadata/labels/__proto__","value":"p"},{"op":"add","path":"/metadata/labels/constructor","value":"c"},{"op":"copy","from":"/metadata/labels/__proto__","path":"/metadata/labels/prototype"}]'));
    assert.deepEqual(JSON.parse(JSON.stringify(labelsOf(out))), body('{"app":"a","__proto__":"p","constructor":"c","prototype":"p"}'));
    // `test` of an inherited name sees nothing there.
    applyJsonPatch(pod(), [{ op: 'test', path: '/metadata/toString', value: null }]);
    assertUntouched();
  });

  it('strategic merge patch and server-side apply do the same', () => {
    const smp = applyStrategicMergePatch(pod(), body('{"__proto__":{"polluted":"yes"},"metadata":{"labels":{"constructor":"c","__proto__":"p"}},"spec":{"constructor":{"polluted":"yes"}}}'), schema);
    assertUntouched();
    assert.deepEqual(JSON.parse(JSON.stringify(labelsOf(smp))), body('{"app":"a","constructor":"c","__proto__":"p"}'));
    const applied = body('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","labels":{"constructor":"c","__proto__":"p"}},"__proto__":{"polluted":"yes"}}');
    const opts = { manager: 'm', force: false, apiVersion: 'v1', kind: 'Pod', now: '2024-01-01T00:00:00Z', schema };
    const created = applyPatch(undefined, applied, opts).object;
    const again = applyPatch(created, deepClone(applied), { ...opts, manager: 'n', force: true }).object;
    assertUntouched();
    assert.deepEqual(JSON.parse(JSON.stringify(labelsOf(again))), body('{"constructor":"c","__proto__":"p"}'));
    const fields = JSON.stringify((again.metadata as JsonObject).managedFields);
    assert.match(fields, /"f:__proto__"/);
    assert.match(fields, /"f:constructor"/);
    const updated = updateManagedFields(created, applyMergePatch(created, body('{"metadata":{"labels":{"prototype":"q"}}}')), { manager: 'u', apiVersion: 'v1', now: '2024-01-01T00:00:01Z', schema });
    assertUntouched();
    assert.match(JSON.stringify(updated.managedFields), /"f:prototype"/);
  });
});

describe('JSON patch copy amplification', () => {
  it('refuses once the copies add more than 3 MiB, as the library limit does (422)', () => {
    // Each copy doubles the list: 25 of them would make 2^25 items from a 2 KB patch.
    const ops = [{ op: 'add', path: '/a', value: ['x'.repeat(64)] }];
    for (let i = 0; i < 25; i++) ops.push({ op: 'copy', from: '/a', path: '/a/-' } as never);
    try {
      applyJsonPatch({}, ops);
      assert.fail('accepted');
    } catch (err) {
      assert.ok(err instanceof StatusError);
      assert.deepEqual(err.toStatus(), {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'the server rejected our request due to an error in our request',
        reason: 'Invalid',
        details: {},
        code: 422,
      });
    }
    // Copies within the budget still apply.
    const small = applyJsonPatch({ a: ['x'] }, [{ op: 'copy', from: '/a', path: '/b' }]);
    assert.deepEqual(small, { a: ['x'], b: ['x'] });
    assert.ok(maxAccumulatedCopyBytes === 3 * 1024 * 1024);
  });
});
