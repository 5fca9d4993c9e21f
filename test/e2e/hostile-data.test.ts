// Hostile request data against a real `kite server`: prototype keys, copy amplification, malformed
// strategic merge patches, deep nesting and duplicate keys each get upstream's Status, the server keeps
// answering, and what was stored is data.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startServer, type KiteServer } from './harness.js';
import { raw, type RawResponse } from './raw.js';

const pods = '/api/v1/namespaces/default/pods';
const merge = { 'Content-Type': 'application/merge-patch+json' };
const jsonPatch = { 'Content-Type': 'application/json-patch+json' };
const strategic = { 'Content-Type': 'application/strategic-merge-patch+json' };

function assertStatus(r: RawResponse, code: number, reason: string | undefined, message?: RegExp | string): void {
  assert.equal(r.code, code, r.body);
  const s = r.json();
  assert.equal(s.kind, 'Status');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason);
  if (typeof message === 'string') assert.equal(s.message, message);
  else if (message) assert.match(s.message, message);
  assert.doesNotMatch(s.message, /TypeError|RangeError|Maximum call stack|undefined/);
}

const pod = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.35' }] } });
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('hostile request data', () => {
  let server: KiteServer;
  const req = (opts: Parameters<typeof raw>[1]) => raw(server.kubeconfig, opts);
  const getPod = async (name: string) => {
    const r = await req({ path: `${pods}/${name}` });
    assert.equal(r.code, 200, r.body);
    return r.json();
  };
  before(async () => {
    server = await startServer();
    for (const name of ['x', 'smp', 'deep', 'dup']) assert.equal((await req({ method: 'POST', path: pods, body: pod(name) })).code, 201);
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('a merge patch with __proto__ stores data and pollutes nothing', async () => {
    const r = await req({ method: 'PATCH', path: `${pods}/x`, headers: merge, body: '{"__proto__":{"polluted":"yes"},"metadata":{"labels":{"constructor":"c","prototype":"p"}}}' });
    assert.equal(r.code, 200, r.body);
    // The server answers the next request, and the labels are stored as labels.
    const labels = (await getPod('x')).metadata.labels;
    assert.deepEqual(labels, { constructor: 'c', prototype: 'p' });
    assert.equal((await req({ path: pods })).code, 200);
  });

  it('a label key __proto__ is refused by validation, as upstream refuses it', async () => {
    const r = await req({ method: 'PATCH', path: `${pods}/x`, headers: merge, body: '{"metadata":{"labels":{"__proto__":"p"}}}' });
    assertStatus(r, 422, 'Invalid', /metadata\.labels: Invalid value: "__proto__"/);
    assert.deepEqual((await getPod('x')).metadata.labels, { constructor: 'c', prototype: 'p' });
  });

  it('JSON patch pointers through __proto__ or constructor find nothing', async () => {
    for (const path of ['/metadata/__proto__/polluted', '/metadata/constructor/polluted']) {
      const r = await req({ method: 'PATCH', path: `${pods}/x`, headers: jsonPatch, body: JSON.stringify([{ op: 'add', path, value: 'yes' }]) });
      assertStatus(r, 422, 'Invalid', 'the server rejected our request due to an error in our request');
    }
    const r = await req({ method: 'PATCH', path: `${pods}/x`, headers: jsonPatch, body: '[{"op":"add","path":"/metadata/annotations","value":{"constructor":"yes"}}]' });
    assert.equal(r.code, 200, r.body);
    assert.deepEqual((await getPod('x')).metadata.annotations, { constructor: 'yes' });
  });

  it('copy amplification stops at the 3 MiB copy budget with a 422', async () => {
    const ops: unknown[] = [{ op: 'add', path: '/metadata/annotations', value: { a: 'x'.repeat(64) } }, { op: 'add', path: '/spec/l', value: ['x'.repeat(64)] }];
    for (let i = 0; i < 25; i++) ops.push({ op: 'copy', from: '/spec/l', path: '/spec/l/-' });
    const body = JSON.stringify(ops);
    assert.ok(body.length < 2500);
    assertStatus(await req({ method: 'PATCH', path: `${pods}/x`, headers: jsonPatch, body }), 422, 'Invalid', 'the server rejected our request due to an error in our request');
    assert.equal((await getPod('x')).metadata.annotations.a, undefined);
  });

  it('malformed strategic merge patches get upstream codes and messages', async () => {
    const cases: [string, number, string | undefined, string][] = [
      ['{"spec":{"containers":[{"image":"nginx"}]}}', 400, 'BadRequest', 'map: map[image:nginx] does not contain declared merge key: name'],
      ['{"metadata":{"$retainKeys":"x"}}', 400, 'BadRequest', 'invalid patch format of retainKeys'],
      ['{"metadata":{"$deleteFromPrimitiveList":["a"]}}', 400, 'BadRequest', 'invalid patch format of primitive list'],
      ['{"metadata":{"$setElementOrder":["a"]}}', 400, 'BadRequest', 'invalid patch format of setElementOrder list'],
      ['{"spec":{"$patch":"bogus"}}', 400, 'BadRequest', 'unknown patch type: bogus in map: map[$patch:bogus]'],
      ['{"spec":{"containers":[{"$patch":"merge","name":"c"}]}}', 400, 'BadRequest', 'merging lists cannot yet be specified in the patch'],
    ];
    for (const [body, code, reason, message] of cases) {
      assertStatus(await req({ method: 'PATCH', path: `${pods}/smp`, headers: strategic, body }), code, reason, message);
    }
    assert.equal((await getPod('smp')).spec.containers[0].image, 'busybox:1.35');
  });

  it('bodies nested past the depth bound are a 400 for every content type', async () => {
    const deep = `{"metadata":{"annotations":${nested(10_001)}}}`;
    const depthMessage = "couldn't get version/kind; json parse error: invalid character '{' exceeded max depth";
    for (const headers of [merge, strategic]) assertStatus(await req({ method: 'PATCH', path: `${pods}/deep`, headers, body: deep }), 400, 'BadRequest', depthMessage);
    assertStatus(await req({ method: 'PATCH', path: `${pods}/deep`, headers: jsonPatch, body: `[{"op":"add","path":"/x","value":${nested(5000)}}]` }), 400, 'BadRequest', depthMessage);
    assertStatus(await req({ method: 'POST', path: pods, body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d"},"x":${nested(5000)}}` }), 400, 'BadRequest', depthMessage);
    const yaml = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: deep\nx: ${'['.repeat(10_001)}${']'.repeat(10_001)}\n`;
    for (const headers of [{ 'Content-Type': 'application/yaml' }]) assertStatus(await req({ method: 'POST', path: pods, headers, body: yaml }), 400, 'BadRequest', /exceeded max depth/);
    assertStatus(await req({ method: 'PATCH', path: `${pods}/deep?fieldManager=t`, headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: yaml }), 400, 'BadRequest', /exceeded max depth/);
    // Nesting within the bound still works (the unknown field is dropped).
    assert.equal((await req({ method: 'PATCH', path: `${pods}/deep`, headers: merge, body: `{"x":${nested(200)}}` })).code, 200);
    assert.equal((await getPod('deep')).x, undefined);
  });

  it('duplicate keys: Strict refuses, Warn warns, Ignore accepts', async () => {
    const body = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d1","name":"d2"},"spec":{"containers":[{"name":"c","image":"i"}]}}';
    assertStatus(await req({ method: 'POST', path: `${pods}?fieldValidation=Strict`, body }), 400, 'BadRequest', 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name"');
    const warned = await req({ method: 'POST', path: `${pods}?fieldValidation=Warn`, body });
    assert.equal(warned.code, 201, warned.body);
    assert.match(String(warned.headers.warning), /duplicate field \\"metadata\.name\\"/);
    assert.equal(warned.json().metadata.name, 'd2');
    const ignored = await req({ method: 'POST', path: `${pods}?fieldValidation=Ignore`, body: body.replace('"d2"', '"d3"') });
    assert.equal(ignored.code, 201, ignored.body);
    assert.equal(ignored.headers.warning, undefined);

    const patch = '{"metadata":{"labels":{"a":"1","a":"2"}}}';
    const strict = await req({ method: 'PATCH', path: `${pods}/dup?fieldValidation=Strict`, headers: merge, body: patch });
    assertStatus(strict, 422, 'Invalid', /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: duplicate field "metadata\.labels\.a"$/);
    assert.equal((await getPod('dup')).metadata.labels, undefined);
    const warnPatch = await req({ method: 'PATCH', path: `${pods}/dup?fieldValidation=Warn`, headers: strategic, body: patch });
    assert.equal(warnPatch.code, 200, warnPatch.body);
    assert.match(String(warnPatch.headers.warning), /duplicate field \\"metadata\.labels\.a\\"/);
    assert.deepEqual((await getPod('dup')).metadata.labels, { a: '2' });
  });

  it('a warning about a field named beyond Latin-1 goes out as its UTF-8 bytes; the 201 and the object stand', async () => {
    const configmaps = '/api/v1/namespaces/default/configmaps';
    for (const validation of ['', '?fieldValidation=Warn']) {
      const name = `w${validation.length}`;
      const r = await req({ method: 'POST', path: `${configmaps}${validation}`, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"名":1,"ctl\\u0001":2}` });
      assert.equal(r.code, 201, r.body);
      // Node reads header bytes as latin1; a Go client reads them as the UTF-8 upstream wrote.
      const warnings = ([] as string[]).concat(r.headers.warning ?? []).map((h) => Buffer.from(h, 'latin1').toString('utf8'));
      // The warning whose text holds a control character is dropped, as upstream's NewWarningHeader refuses it.
      assert.deepEqual(warnings, ['299 - "unknown field \\"名\\""']);
      assert.equal((await req({ path: `${configmaps}/${name}` })).code, 200);
    }
  });

  it('a kind or apiVersion that is not a string is the decoder\'s 400 and nothing is stored; null ones are empty', async () => {
    const configmaps = '/api/v1/namespaces/default/configmaps';
    for (const [field, value, type] of [['kind', '{"toString":null}', 'object'], ['apiVersion', '{"toString":null}', 'object'], ['kind', '5', 'number'], ['apiVersion', 'true', 'bool']]) {
      const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"k1"},"${field}":${value}}`;
      assertStatus(await req({ method: 'POST', path: configmaps, body }), 400, 'BadRequest', `couldn't get version/kind; json parse error: json: cannot unmarshal ${type} into Go struct field .${field} of type string`);
    }
    assert.equal((await req({ path: `${configmaps}/k1` })).code, 404);
    const created = await req({ method: 'POST', path: configmaps, body: '{"apiVersion":null,"kind":null,"metadata":{"name":"k2","namespace":null}}' });
    assert.equal(created.code, 201, created.body);
    assert.equal(created.json().metadata.namespace, 'default');
    const updated = await req({ method: 'PUT', path: `${configmaps}/k2`, body: '{"apiVersion":"","kind":"","metadata":{"name":null},"data":{"a":"b"}}' });
    assert.equal(updated.code, 200, updated.body);
    assert.deepEqual(updated.json().data, { a: 'b' });
  });
});
