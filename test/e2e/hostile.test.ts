// Malformed and hostile requests: each gets a metav1.Status with the right 4xx code, the server
// stays up, and nothing is half-written.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { ensurePki } from '../../src/apiserver/authn/pki.js';
import { removeDir, startServer, tempDir, type KiteServer } from './harness.js';
import { raw, type RawResponse } from './raw.js';

const pods = '/api/v1/namespaces/default/pods';

function assertStatus(r: RawResponse, code: number, reason: string, message?: RegExp): void {
  assert.equal(r.code, code, r.body);
  const s = r.json();
  assert.equal(s.kind, 'Status');
  assert.equal(s.apiVersion, 'v1');
  assert.equal(s.status, 'Failure');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason);
  if (message) assert.match(s.message, message);
}

const goodPod = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox:1.35' }] } });

describe('hostile and malformed requests', () => {
  let server: KiteServer;
  // An admin certificate of another cluster's CA: valid in form, not trusted here.
  let foreign: { cert: string; key: string };
  const foreignDir = tempDir('foreign-pki');
  const req = (opts: Parameters<typeof raw>[1]) => raw(server.kubeconfig, opts);
  before(async () => {
    server = await startServer();
    const other = await ensurePki(foreignDir);
    foreign = { cert: other.admin.certPem, key: other.admin.keyPem };
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
    removeDir(foreignDir);
  });

  const cases: [string, () => Parameters<typeof raw>[1], number, string, RegExp?][] = [
    ['malformed JSON', () => ({ method: 'POST', path: pods, body: '{"apiVersion":' }), 400, 'BadRequest', /json parse error/],
    ['an array body', () => ({ method: 'POST', path: pods, body: '[1,2]' }), 400, 'BadRequest'],
    ['malformed YAML', () => ({ method: 'POST', path: pods, body: 'a: [b', headers: { 'Content-Type': 'application/yaml' } }), 400, 'BadRequest', /yaml/],
    ['a wrong field type', () => ({ method: 'POST', path: pods, body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"t"},"spec":{"containers":"x"}}' }), 400, 'BadRequest', /cannot unmarshal string into Go struct field PodSpec\.spec\.containers of type \[\]v1\.Container/],
    ['an unknown field under Strict', () => ({ method: 'POST', path: `${pods}?fieldValidation=Strict`, body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"u"},"spec":{"bogus":1,"containers":[{"name":"c","image":"i"}]}}' }), 400, 'BadRequest', /strict decoding error: unknown field "spec\.bogus"/],
    ['a bad fieldValidation value', () => ({ method: 'POST', path: `${pods}?fieldValidation=Loud`, body: goodPod('fv') }), 400, 'BadRequest'],
    ['a body over 3 MiB', () => ({ method: 'POST', path: pods, body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'big', annotations: { a: 'x'.repeat(3 * 1024 * 1024) } } }) }), 413, 'RequestEntityTooLarge'],
    ['an unsupported media type', () => ({ method: 'POST', path: pods, body: 'x', headers: { 'Content-Type': 'text/plain' } }), 415, 'UnsupportedMediaType'],
    ['an unsupported patch type', () => ({ method: 'PATCH', path: `${pods}/x`, body: '{}', headers: { 'Content-Type': 'application/json' } }), 415, 'UnsupportedMediaType'],
    ['an unknown resource', () => ({ path: '/api/v1/namespaces/default/gizmos' }), 404, 'NotFound'],
    ['an unknown group', () => ({ path: '/apis/nope.example.com/v1/things' }), 404, 'NotFound'],
    ['an unknown method', () => ({ method: 'PROPFIND', path: pods }), 405, 'MethodNotAllowed'],
    ['an invalid name', () => ({ method: 'POST', path: pods, body: goodPod('Not_Valid') }), 422, 'Invalid', /metadata\.name: Invalid value: "Not_Valid"/],
    ['a missing image', () => ({ method: 'POST', path: pods, body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"noimg"},"spec":{"containers":[{"name":"c"}]}}' }), 422, 'Invalid', /spec\.containers\[0\]\.image: Required value/],
    ['a kind that does not match the URL', () => ({ method: 'POST', path: pods, body: '{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}' }), 400, 'BadRequest'],
    ['a namespace that does not match the URL', () => ({ method: 'POST', path: pods, body: JSON.stringify({ ...JSON.parse(goodPod('ns')), metadata: { name: 'ns', namespace: 'other' } }) }), 400, 'BadRequest', /does not match the namespace/],
    ['an invalid label selector', () => ({ path: `${pods}?labelSelector=a%20in%20(` }), 400, 'BadRequest'],
    ['an unsupported field selector', () => ({ path: `${pods}?fieldSelector=spec.bogus%3Dx` }), 400, 'BadRequest', /field label not supported: spec\.bogus/],
    ['a non-numeric resourceVersion', () => ({ path: `${pods}?watch=true&resourceVersion=abc` }), 422, 'Invalid', /^pods "" is invalid: resourceVersion: Invalid value: "abc": strconv\.ParseUint: parsing "abc": invalid syntax$/],
    ['resourceVersionMatch without a resourceVersion', () => ({ path: `${pods}?resourceVersionMatch=NotOlderThan` }), 422, 'Invalid', /ListOptions\.meta\.k8s\.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided/],
    ['sendInitialEvents without bookmarks', () => ({ path: `${pods}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan` }), 422, 'Invalid', /allowWatchBookmarks: Forbidden/],
    ['a garbage continue token', () => ({ path: `${pods}?limit=1&continue=%%%` }), 400, 'BadRequest'],
    ['a bad dryRun value', () => ({ method: 'POST', path: `${pods}?dryRun=Some`, body: goodPod('dr') }), 400, 'BadRequest'],
    ['a JSON patch that is not a list', () => ({ method: 'PATCH', path: `${pods}/exists`, body: '{"op":"add"}', headers: { 'Content-Type': 'application/json-patch+json' } }), 400, 'BadRequest'],
    ['an apply without fieldManager', () => ({ method: 'PATCH', path: `${pods}/exists`, body: goodPod('exists'), headers: { 'Content-Type': 'application/apply-patch+yaml' } }), 422, 'Invalid', /fieldManager: Required value/],
    ['an update with a stale resourceVersion', () => ({ method: 'PUT', path: `${pods}/exists`, body: JSON.stringify({ ...JSON.parse(goodPod('exists')), metadata: { name: 'exists', resourceVersion: '1' } }) }), 409, 'Conflict', /the object has been modified/],
    ['a delete with a bad propagationPolicy', () => ({ method: 'DELETE', path: `${pods}/exists`, body: '{"propagationPolicy":"Sideways"}' }), 422, 'Invalid'],
    ['no credentials', () => ({ path: pods, anonymous: true }), 401, 'Unauthorized'],
    ['a certificate from another CA', () => ({ path: pods, cert: foreign }), 401, 'Unauthorized'],
  ];

  it('sets up an object to patch', async () => {
    const r = await req({ method: 'POST', path: pods, body: goodPod('exists') });
    assert.equal(r.code, 201, r.body);
  });

  for (const [what, make, code, reason, message] of cases) {
    it(`answers ${what} with ${code} ${reason}`, async () => {
      assertStatus(await req(make()), code, reason, message);
    });
  }

  it('accepts an unknown field under Warn with a warning header', async () => {
    const r = await req({
      method: 'POST',
      path: `${pods}?fieldValidation=Warn`,
      body: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"warned"},"spec":{"bogus":1,"containers":[{"name":"c","image":"i"}]}}',
    });
    assert.equal(r.code, 201, r.body);
    assert.match(String(r.headers.warning), /299 - "unknown field \\"spec\.bogus\\""/);
    assert.equal(r.json().spec.bogus, undefined);
  });

  it('survives deeply nested JSON', async () => {
    const deep = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
    const r = await req({ method: 'POST', path: pods, body: deep });
    assert.ok(r.code >= 400 && r.code < 500, `${r.code} ${r.body.slice(0, 200)}`);
  });

  it('answers on its loopback socket only with a component token', async () => {
    const sockets = loopbackSocketsOf(server.proc.pid!);
    assert.equal(sockets.length, 1, 'one loopback listener, for the scheduler and controller threads');
    for (const authorization of [undefined, 'Bearer not-a-component-token']) {
      const r = await getOverSocket(sockets[0]!, '/api/v1/namespaces/kube-system/secrets', authorization);
      assert.equal(r.code, 401, r.body);
      assert.equal(JSON.parse(r.body).reason, 'Unauthorized');
    }
  });

  it('wrote nothing for the failed requests and is still healthy', async () => {
    const list = (await req({ path: pods })).json();
    const names = list.items.map((p: { metadata: { name: string } }) => p.metadata.name).sort();
    assert.deepEqual(names, ['exists', 'warned']);
    const health = await req({ path: '/healthz', anonymous: true });
    assert.equal(health.code, 200);
    assert.equal(health.body, 'ok');
  });
});


/** The abstract Unix sockets named like the API server's loopback listener among pid's open sockets. */
function loopbackSocketsOf(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  // /proc/net/unix: Num RefCount Protocol Flags Type St Inode Path; abstract names start with "@".
  const names = readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => inodes.has(f[6] ?? '') && f[7]?.startsWith('@kite-apiserver-'))
    // libuv binds the whole sun_path, so the name shows padded with NULs ("@"); it pads alike on connect.
    .map((f) => `\0${f[7]!.slice(1).replace(/@+$/, '')}`);
  return [...new Set(names)];
}

function getOverSocket(socketPath: string, path: string, authorization?: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = request({ socketPath, path, headers: authorization ? { Authorization: authorization } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    r.on('error', reject);
    r.end();
  });
}
