import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, issueClientCertificate } from '../apiserver/authn/pki.js';
import { notFound, StatusError } from '../api/errors.js';
import { writeKubeconfig } from './kubeconfig-write.js';
import { loadKubeconfig } from './kubeconfig.js';
import { encodeQuery, errorFromStatus, RestClient, type WatchEvent } from './rest.js';

let dir: string;
let server: https.Server;
let client: RestClient;
let url: string;
let pki: Awaited<ReturnType<typeof ensurePki>>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kite-rest-'));
  pki = await ensurePki(dir);
  server = https.createServer({ cert: pki.serving.certPem, key: pki.serving.keyPem, ca: pki.ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    const user = (req.socket as TLSSocket).authorized ? peer.subject.CN : req.headers.authorization === 'Bearer s3cret' ? 'token-user' : undefined;
    if (!user) {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(new StatusError(401, 'Unauthorized', 'Unauthorized').toStatus()));
    }
    const u = new URL(req.url!, 'https://x');
    if (u.pathname === '/echo') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ user, method: req.method, query: u.search, contentType: req.headers['content-type'] ?? null, body }));
      });
      return;
    }
    if (u.pathname === '/missing') {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify(notFound({ group: '', resource: 'pods' }, 'web').toStatus()));
    }
    if (u.pathname === '/plain-503') {
      res.writeHead(503, { 'Content-Type': 'text/plain' });
      return res.end('overloaded');
    }
    if (u.pathname === '/plain-500') {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      return res.end('boom');
    }
    if (u.pathname === '/watch') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // Split events across writes and inside a line, as TCP may.
      const lines = [
        JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' } } }),
        JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '2' } } }),
      ].join('\n');
      res.write(lines.slice(0, 10));
      res.write(`${lines.slice(10)}\n`);
      if (u.searchParams.get('end') === 'true') {
        res.write(JSON.stringify({ type: 'DELETED', object: { metadata: { name: 'a' } } }));
        return res.end();
      }
      return; // stays open until the client aborts
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = join(dir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfig, { server: url, caPem: pki.ca.certPem, certPem: pki.admin.certPem, keyPem: pki.admin.keyPem, user: 'admin' });
  client = new RestClient(await loadKubeconfig(kubeconfig));
});

after(async () => {
  client.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

void test('authenticates with the kubeconfig client certificate and sends JSON', async () => {
  const got = await client.request<Record<string, unknown>>({ method: 'POST', path: '/echo', query: { a: 'x y', b: true, c: undefined, l: ['1', '2'] }, body: { k: 1 } });
  assert.deepEqual(got, { user: 'kubernetes-admin', method: 'POST', query: '?a=x+y&b=true&l=1&l=2', contentType: 'application/json', body: '{"k":1}' });
  const raw = await client.request<Record<string, unknown>>({ method: 'PATCH', path: '/echo', body: 'a: 1\n', contentType: 'application/apply-patch+yaml' });
  assert.equal(raw.contentType, 'application/apply-patch+yaml');
  assert.equal(raw.body, 'a: 1\n');
});

void test('bearer token auth', async () => {
  const c = new RestClient({ server: url, ca: pki.ca.certPem, token: 's3cret' });
  assert.equal((await c.request<{ user: string }>({ path: '/echo' })).user, 'token-user');
  c.close();
  const other = await issueClientCertificate(pki, { commonName: 'alice' });
  const d = new RestClient({ server: url, ca: pki.ca.certPem, cert: other.certPem, key: other.keyPem });
  assert.equal((await d.request<{ user: string }>({ path: '/echo' })).user, 'alice');
  d.close();
});

void test('a Unix socket in place of the host and port (the API server loopback socket)', async () => {
  const socketPath = `\0kite-rest-test-${randomUUID()}`;
  const local = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, authorization: req.headers.authorization }));
  });
  await new Promise<void>((r) => local.listen({ path: socketPath }, r));
  const c = new RestClient({ server: 'http://localhost', socketPath, token: 't0ken' });
  assert.deepEqual(await c.request({ path: '/api/v1/pods', query: { limit: 1 } }), { path: '/api/v1/pods?limit=1', authorization: 'Bearer t0ken' });
  c.close();
  local.closeAllConnections();
  await new Promise((r) => local.close(r));
});

void test('error bodies become StatusErrors', async () => {
  const cases: [string, number, string, string][] = [
    ['/missing', 404, 'NotFound', 'pods "web" not found'],
    ['/plain-503', 503, 'ServiceUnavailable', 'the server is currently unable to handle the request'],
    ['/plain-500', 500, 'InternalError', 'an error on the server ("boom") has prevented the request from succeeding'],
  ];
  for (const [path, code, reason, message] of cases) {
    await assert.rejects(client.request({ path }), (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.deepEqual([e.code, e.reason, e.message], [code, reason, message]);
      return true;
    });
  }
  const anon = new RestClient({ server: url, ca: pki.ca.certPem });
  await assert.rejects(anon.request({ path: '/echo' }), { code: 401, reason: 'Unauthorized' });
  anon.close();
});

void test('an untrusted server certificate is refused unless TLS verification is skipped', async () => {
  const c = new RestClient({ server: url, token: 's3cret' });
  await assert.rejects(c.request({ path: '/echo' }), (e: Error) => !(e instanceof StatusError));
  c.close();
  const insecure = new RestClient({ server: url, token: 's3cret', insecureSkipTLSVerify: true });
  assert.equal((await insecure.request<{ user: string }>({ path: '/echo' })).user, 'token-user');
  insecure.close();
});

void test('watch yields JSON-line events across chunk boundaries and ends with the stream', async () => {
  const events: WatchEvent<{ metadata: { name?: string } }>[] = [];
  for await (const ev of client.watch<{ metadata: { name?: string } }>({ path: '/watch', query: { end: true } })) events.push(ev);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'BOOKMARK', 'DELETED'],
  );
  assert.equal(events[0]!.object.metadata.name, 'a');
});

void test('aborting a watch ends it quietly', async () => {
  const ac = new AbortController();
  const seen: string[] = [];
  for await (const ev of client.watch({ path: '/watch', signal: ac.signal })) {
    seen.push(ev.type);
    if (ev.type === 'BOOKMARK') ac.abort();
  }
  assert.deepEqual(seen, ['ADDED', 'BOOKMARK']);
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(client.request({ path: '/echo', signal: pre.signal }), { name: 'AbortError' });
});

void test('helpers', () => {
  assert.equal(encodeQuery({}), '');
  assert.equal(encodeQuery({ watch: true, resourceVersion: '5', n: 3 }), '?watch=true&resourceVersion=5&n=3');
  const e = errorFromStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' });
  assert.deepEqual([e.code, e.reason, e.message], [410, 'Expired', 'too old resource version: 1 (5)']);
});
