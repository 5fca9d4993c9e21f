// The HTTP edge under hostile input, on a real `kite server`: request targets sent byte for byte
// (no client resolves `..` for us), resourceVersions from the future, methods a path does not take,
// query options in every spelling, and floods of slow and fast requests.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';

interface Reply {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface Client {
  port: number;
  ca: string;
  cert?: string;
  key?: string;
  token?: string;
}

function clientOf(server: KiteServer, token?: string): Client {
  const pki = join(server.dataDir, 'pki');
  const ca = readFileSync(join(pki, 'ca.crt'), 'utf8');
  if (token) return { port: server.port, ca, token };
  return { port: server.port, ca, cert: readFileSync(join(pki, 'admin.crt'), 'utf8'), key: readFileSync(join(pki, 'admin.key'), 'utf8') };
}

/** One request with `target` on the request line exactly as given. */
function send(c: Client, method: string, target: string, opts: { body?: string; headers?: Record<string, string>; agent?: https.Agent } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: c.port,
        method,
        path: target,
        ca: c.ca,
        cert: c.cert,
        key: c.key,
        agent: opts.agent,
        headers: {
          ...(c.token ? { Authorization: `Bearer ${c.token}` } : {}),
          ...(opts.body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(opts.body)) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${target}: no answer in 30 s`)));
    req.on('error', (err) => reject(new Error(`${method} ${target}: ${err.message}`)));
    req.end(opts.body);
  });
}

function assertStatus(r: Reply, code: number, reason: string, message?: RegExp | string): any {
  assert.equal(r.code, code, r.body);
  const s = JSON.parse(r.body);
  assert.equal(s.kind, 'Status');
  assert.equal(s.code, code);
  assert.equal(s.reason, reason);
  if (typeof message === 'string') assert.equal(s.message, message);
  else if (message) assert.match(s.message, message);
  return s;
}

const pods = '/api/v1/namespaces/default/pods';
const cm = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });

describe('hostile HTTP: paths, resourceVersions, methods, query options', () => {
  let server: KiteServer;
  let admin: Client;
  before(async () => {
    server = await startServer({ extraArgs: ['--components', 'apiserver'] });
    admin = clientOf(server);
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('DELETE of a pod named ".." (and "%2e%2e") is a 400 and leaves the namespace alone', async () => {
    const ns = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'victim' } });
    assert.equal((await send(admin, 'POST', '/api/v1/namespaces', { body: ns })).code, 201);
    for (const name of ['..', '%2e%2e', '%2E.', '..%2f', '../']) {
      assertStatus(await send(admin, 'DELETE', `/api/v1/namespaces/victim/pods/${name}`), 400, 'BadRequest', `Name parameter invalid: "..": may not be '..'`);
    }
    const got = await send(admin, 'GET', '/api/v1/namespaces/victim');
    assert.equal(got.code, 200);
    assert.equal(JSON.parse(got.body).metadata.deletionTimestamp, undefined, 'the namespace was not deleted');
  });

  const refused: [string, string, number, string, string | RegExp][] = [
    ['GET', `${pods}/.`, 400, 'BadRequest', `Name parameter invalid: ".": may not be '.'`],
    ['GET', `${pods}/%2e`, 400, 'BadRequest', `Name parameter invalid: ".": may not be '.'`],
    ['PUT', `${pods}/a%25b`, 400, 'BadRequest', `Name parameter invalid: "a%b": may not contain '%'`],
    ['GET', '/api/v1/namespaces/../pods', 400, 'BadRequest', `Namespace parameter invalid: "..": may not be '..'`],
    ['DELETE', '/api/v1/namespaces/..', 400, 'BadRequest', `Name parameter invalid: "..": may not be '..'`],
    ['GET', '/api/v1/namespaces//pods/x', 400, 'BadRequest', 'Namespace parameter required.'],
    ['GET', `${pods}//status`, 400, 'BadRequest', 'Name parameter required.'],
    ['GET', `${pods}/x//log`, 404, 'NotFound', 'the server could not find the requested resource'],
    ['GET', `${pods}/%zz`, 400, 'BadRequest', 'invalid URL escape "%zz"'],
    ['GET', `${pods}/%`, 400, 'BadRequest', 'invalid URL escape "%"'],
    ['GET', `${pods}/%c3%28`, 400, 'BadRequest', /URL/],
    ['GET', '/healthz/%zz', 400, 'BadRequest', /invalid URL escape/],
    ['PATCH', pods, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['PUT', pods, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['POST', `${pods}/x`, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['DELETE', `${pods}/x/status`, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['DELETE', '/api/v1/namespaces', 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['DELETE', `${pods}/x/log`, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['PUT', `${pods}/x/exec`, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['GET', `${pods}/x/binding`, 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['GET', `${pods}?limit=abc`, 400, 'BadRequest', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ['GET', `${pods}?watch=1&timeoutSeconds=1.5`, 400, 'BadRequest', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
    ['GET', `${pods}?timeout=soon`, 400, 'BadRequest', 'invalid timeout specified in the request URL - time: invalid duration "soon"'],
    ['GET', `${pods}?resourceVersion=abc`, 400, 'BadRequest', 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'],
    ['GET', `${pods}?watch=1&resourceVersion=-1`, 422, 'Invalid', 'pods "" is invalid: resourceVersion: Invalid value: "-1": strconv.ParseUint: parsing "-1": invalid syntax'],
  ];
  for (const [method, target, code, reason, message] of refused) {
    it(`${method} ${target} is a ${code} ${reason}`, async () => {
      const body = method === 'PUT' || method === 'PATCH' || method === 'POST' ? '{}' : undefined;
      const headers = method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : undefined;
      assertStatus(await send(admin, method, target, { body, headers }), code, reason, message);
    });
  }

  it('a resourceVersion from the future is the 504 Too large resource version, for list, get and watch', async () => {
    const future = '999999999';
    const targets = [
      `${pods}?resourceVersion=${future}&resourceVersionMatch=Exact`,
      `${pods}?resourceVersion=${future}&resourceVersionMatch=NotOlderThan`,
      `${pods}?resourceVersion=${future}`,
      `/api/v1/namespaces/default?resourceVersion=${future}`,
      `${pods}?watch=true&resourceVersion=${future}`,
    ];
    const replies = await Promise.all(targets.map((t) => send(admin, 'GET', t)));
    for (const [i, r] of replies.entries()) {
      const s = assertStatus(r, 504, 'Timeout', new RegExp(`^Too large resource version: ${future}, current: \\d+$`));
      assert.deepEqual(s.details.causes, [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], targets[i]);
      assert.equal(r.headers['retry-after'], '1');
    }
  });

  it('a continue token of any shape is the 400 "invalid continue token", never a 500', async () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64url');
    const tokens: [string, string][] = [
      [b64('null'), 'invalid continue token: continue key is not valid: server does not recognize this encoded version '],
      [b64('[]'), 'invalid continue token: continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken'],
      [b64('{"v":"meta.k8s.io/v1","rv":"1","start":"a"}'), 'invalid continue token: continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64'],
      [b64('{"v":"meta.k8s.io/v1","rv":1,"start":"../x"}'), 'invalid continue token: continue key is not valid: ../x'],
      ['%2B%2B', 'invalid continue token: continue key is not valid: illegal base64 data at input byte 0'],
    ];
    for (const [token, message] of tokens) {
      assertStatus(await send(admin, 'GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${token}`), 400, 'BadRequest', message);
    }
    // A revision past any the store has is the 504 of an Exact list, not a storage error.
    const future = b64('{"v":"meta.k8s.io/v1","rv":99999999999,"start":"default/a\\u0000"}');
    assertStatus(await send(admin, 'GET', `/api/v1/configmaps?limit=1&continue=${future}`), 504, 'Timeout', /^Too large resource version: 99999999999/);
  });

  it('any int64 limit lists (a larger one is the 400 of ParseInt), at the current or an exact revision', async () => {
    assert.equal((await send(admin, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('limits') })).code, 201);
    const rv = JSON.parse((await send(admin, 'GET', '/api/v1/configmaps')).body).metadata.resourceVersion;
    for (const q of ['limit=9223372036854775807', `limit=9223372036854775807&resourceVersion=${rv}&resourceVersionMatch=Exact`]) {
      const r = await send(admin, 'GET', `/api/v1/configmaps?${q}`);
      assert.equal(r.code, 200, r.body);
      const list = JSON.parse(r.body);
      assert.ok(list.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'limits'));
      assert.equal(list.metadata.continue, undefined);
    }
    assertStatus(
      await send(admin, 'GET', '/api/v1/configmaps?limit=99999999999999999999&resourceVersion=1&resourceVersionMatch=Exact'),
      400,
      'BadRequest',
      'strconv.ParseInt: parsing "99999999999999999999": value out of range',
    );
  });

  it('a bad includeObject for a Table is a 400 before the create, which is not done', async () => {
    const table = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const r = await send(admin, 'POST', '/api/v1/namespaces/default/configmaps?includeObject=bogus', { body: cm('tabled'), headers: table });
    assertStatus(r, 400, 'BadRequest', `Unable to convert to Table as requested: includeObject: Invalid value: "bogus": must be 'Metadata', 'Object', 'None', or empty`);
    assert.equal((await send(admin, 'GET', '/api/v1/namespaces/default/configmaps/tabled')).code, 404);
    assert.equal((await send(admin, 'GET', '/api/v1/namespaces/default/configmaps?includeObject=', { headers: table })).code, 200);
  });

  it('Accept ranges are read in goautoneg order: q=0 still serves JSON, a higher q wins', async () => {
    const r = await send(admin, 'GET', '/api/v1/namespaces/default/configmaps', { headers: { Accept: 'application/json;q=0' } });
    assert.equal(r.code, 200, r.body);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const y = await send(admin, 'GET', '/api/v1/namespaces/default/configmaps', { headers: { Accept: 'application/json;q=0.5, application/yaml' } });
    assert.match(String(y.headers['content-type']), /^application\/yaml/);
  });

  it('watch=True (python-kubernetes) is a watch and sees the event', async () => {
    const list = JSON.parse((await send(admin, 'GET', '/api/v1/namespaces/default/configmaps')).body);
    const watch = send(admin, 'GET', `/api/v1/namespaces/default/configmaps?watch=True&timeoutSeconds=2&resourceVersion=${list.metadata.resourceVersion}`);
    assert.equal((await send(admin, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('py') })).code, 201);
    const events = (await watch).body.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name]), [['ADDED', 'py']]);
    const notWatch = await send(admin, 'GET', '/api/v1/namespaces/default/configmaps?watch=False');
    assert.equal(JSON.parse(notWatch.body).kind, 'ConfigMapList');
  });

  it('JSON bodies end in a newline that Content-Length counts', async () => {
    const replies = [
      await send(admin, 'GET', '/api/v1/namespaces/default'),
      await send(admin, 'GET', pods),
      await send(admin, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('nl') }),
      await send(admin, 'GET', `${pods}/missing`),
      await send(admin, 'GET', '/version'),
    ];
    for (const r of replies) {
      assert.ok(r.body.endsWith('}\n'), r.body.slice(-20));
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
    }
  });
});

/**
 * A TLS connection that sends `head` at once, then `text` one byte every `everyMs`; resolves with
 * what the server sent before closing it ('gave up' when the server never closed it in 20 s).
 */
function dribble(port: number, ca: string, head: string, text: string, everyMs: number): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      if (head) socket.write(head);
      timer = setInterval(() => {
        if (i < text.length && !socket.destroyed) socket.write(text[i++]!);
      }, everyMs);
    });
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.on('error', () => undefined);
    let gaveUp = false;
    socket.on('close', () => {
      clearInterval(timer);
      resolve(gaveUp ? 'gave up' : received);
    });
    // Bounded: a connection the server never closes fails the test instead of hanging it.
    setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, 20_000).unref();
  });
}

const postHead = 'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer flood-token\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';

describe('hostile HTTP: a flood of slow and fast requests', () => {
  const tokenDir = tempDir('flood-tokens');
  let server: KiteServer;
  let admin: Client;
  let user: Client;
  before(async () => {
    const tokens = join(tokenDir, 'tokens.csv');
    writeFileSync(tokens, 'flood-token,flooder,1001,"developers"\n');
    server = await startServer({
      extraArgs: ['--components', 'apiserver', '--token-auth-file', tokens, '--request-timeout', '2s', '--max-requests-inflight', '20', '--max-mutating-requests-inflight', '10'],
    });
    // RBAC rights without system:masters, whose requests the in-flight limits exempt.
    kubectlOk(server, ['create', 'clusterrolebinding', 'developers', '--clusterrole=cluster-admin', '--group=developers']);
    admin = clientOf(server);
    user = clientOf(server, 'flood-token');
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
    removeDir(tokenDir);
  });

  it('a request that outlives --request-timeout is a 504; a body never finished is too', async () => {
    // The wait for a future resourceVersion (3 s) outlives the 2 s request timeout.
    assertStatus(await send(user, 'GET', `${pods}?resourceVersion=999999999`), 504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded');
    assertStatus(await send(user, 'GET', `/api/v1/namespaces/default?resourceVersion=999999999&timeout=500ms`), 504, 'Timeout', /context deadline exceeded/);
    const reply = await dribble(server.port, user.ca, postHead, `{"apiVersion":"v1"${' '.repeat(900)}`, 20);
    assert.match(reply, /^HTTP\/1\.1 504 /, reply);
    assert.match(reply, /context deadline exceeded/);
  });

  it('leaves /readyz and a normal GET answering, and answers the excess with 429 Retry-After: 1', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 100 });
    // 500 slowloris connections: headers, and bodies, one byte at a time.
    const slowHeaders = Array.from({ length: 400 }, () => dribble(server.port, user.ca, '', `GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer flood-token\r\nX-Pad: ${'a'.repeat(200)}\r\n\r\n`, 50));
    const slowBodies = Array.from({ length: 100 }, () =>
      dribble(server.port, user.ca, postHead, ' '.repeat(999), 20),
    );
    // Requests that hold read-only slots: each waits for a resourceVersion that does not come.
    const holders = Array.from({ length: 40 }, () => send(user, 'GET', `${pods}?resourceVersion=999999999`, { agent }));
    await new Promise((r) => setTimeout(r, 300));
    // Thousands of fast GETs meanwhile.
    const fast = Array.from({ length: 2000 }, () => send(user, 'GET', '/api/v1/namespaces/default', { agent }));
    const probesDuring = await Promise.all([send(admin, 'GET', '/readyz'), send({ ...user, token: undefined }, 'GET', '/readyz'), send(admin, 'GET', '/api/v1/namespaces/default')]);
    for (const r of probesDuring) assert.equal(r.code, 200, `during the flood: ${r.body}`);

    const replies = [...(await Promise.all(holders)), ...(await Promise.all(fast))];
    const throttled = replies.filter((r) => r.code === 429);
    assert.ok(throttled.length > 0, 'some requests were over the in-flight bound');
    for (const r of throttled) {
      assert.equal(r.headers['retry-after'], '1');
      assert.equal(r.body, 'Too many requests, please try again later.\n');
    }
    for (const r of replies) assert.ok([200, 429, 504].includes(r.code), `${r.code} ${r.body}`);

    const slow = await Promise.all([...slowHeaders, ...slowBodies]);
    // The server closed every slow connection itself within the bound: headers with a 408 (or, for one
    // it had not read a byte of yet, without a word), bodies with a 504 or 429.
    for (const text of slow.slice(0, 400)) assert.match(text, /^(HTTP\/1\.1 408 |$)/, text.slice(0, 80));
    for (const text of slow.slice(400)) assert.match(text, /^HTTP\/1\.1 (429|504) /, text.slice(0, 80));
    agent.destroy();

    assert.equal((await send(user, 'GET', '/readyz')).code, 200);
    const get = await send(user, 'GET', '/api/v1/namespaces/default');
    assert.equal(get.code, 200, get.body);
  });
});
