// The console through the real API server: its files and headers, no way out of its folder, and
// a login whose session is authorized as its user, not more.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ApiServer } from '../server.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { contentSecurityPolicy } from './handler.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('the console on the API server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-console-'));
  const root = join(dir, 'console');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>kite console</title>');
  writeFileSync(join(root, 'assets', 'main-ABC123.js'), 'console.log(1)');
  writeFileSync(join(root, 'assets', 'style-ABC123.css'), 'body{}');
  writeFileSync(join(dir, 'secret.txt'), 'do not serve');
  symlinkSync(join(dir, 'secret.txt'), join(root, 'assets', 'link.js'));
  writeFileSync(join(dir, 'tokens.csv'), 'nobody-token,nobody,1001\n');
  const server = new ApiServer({ dataDir: join(dir, 'data'), listen: '127.0.0.1:0', storage: 'sqlite', components: [], tokenAuthFile: join(dir, 'tokens.csv'), consoleDir: root, logger: pino({ level: 'silent' }) });
  let call: (method: string, path: string, opts?: { body?: string; token?: string }) => Promise<Answer>;
  let admin: { cert: string; key: string };

  before(async () => {
    await server.start();
    const cfg = await loadKubeconfig(server.kubeconfigPath);
    admin = { cert: cfg.cert!.toString(), key: cfg.key!.toString() };
    const url = new URL(cfg.server);
    // No client certificate: whatever the console proves, it proves by its session.
    const agent = new https.Agent({ ca: cfg.ca });
    call = (method, path, opts = {}) =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = {};
        if (opts.token) headers.authorization = `Bearer ${opts.token}`;
        if (opts.body !== undefined) headers['content-type'] = 'application/json';
        const req = https.request({ agent, host: url.hostname, port: url.port, path, method, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        });
        req.on('error', reject);
        req.end(opts.body);
      });
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const login = async (body: object) => {
    const res = await call('POST', '/ui/api/login', { body: JSON.stringify(body) });
    return { res, session: res.status === 201 ? (JSON.parse(res.body) as { token: string; user: { username: string; groups: string[] } }) : undefined };
  };

  it('redirects /ui to /ui/ and serves index.html there without credentials, with the security headers', async () => {
    const redirect = await call('GET', '/ui');
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.location, '/ui/');
    const index = await call('GET', '/ui/');
    assert.equal(index.status, 200);
    assert.match(index.body, /kite console/);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(index.headers['cache-control'], 'no-cache');
    assert.equal(index.headers['content-security-policy'], contentSecurityPolicy);
    assert.doesNotMatch(contentSecurityPolicy, /unsafe-inline|unsafe-eval|\*/);
    assert.equal(index.headers['x-frame-options'], 'DENY');
    assert.equal(index.headers['x-content-type-options'], 'nosniff');
  });

  it('serves the hashed assets with their types, cached for good', async () => {
    const js = await call('GET', '/ui/assets/main-ABC123.js');
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    const css = await call('HEAD', '/ui/assets/style-ABC123.css');
    assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
    assert.equal(css.body, '');
  });

  it('serves nothing outside its folder, nor through a symbolic link', async () => {
    for (const path of ['/ui/../secret.txt', '/ui/assets/../../secret.txt', '/ui/%2e%2e/secret.txt', '/ui/assets/..%2f..%2fsecret.txt', '/ui/assets/link.js', '/ui//etc/passwd', '/ui/.', '/ui/assets/missing.js', '/ui/assets\\..\\..\\secret.txt']) {
      const res = await call('GET', path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.body, /do not serve/, path);
      assert.equal(JSON.parse(res.body).kind, 'Status', path);
    }
    assert.equal((await call('PUT', '/ui/index.html')).status, 405);
  });

  it('logs in with a client certificate and its key; the session acts as that user', async () => {
    const { res, session } = await login({ clientCertificate: admin.cert, clientKey: admin.key });
    assert.equal(res.status, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(session?.user.username, 'kubernetes-admin');
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods', { token: session!.token })).status, 200);
  });

  it('logs in with a token; a user without rights gets 403 for data, and logout ends the session', async () => {
    const { res, session } = await login({ token: 'nobody-token' });
    assert.equal(res.status, 201, res.body);
    assert.equal(session?.user.username, 'nobody');
    const denied = await call('GET', '/api/v1/namespaces/default/pods', { token: session!.token });
    assert.equal(denied.status, 403);
    assert.match(JSON.parse(denied.body).message, /User "nobody" cannot list resource "pods"/);
    assert.equal((await call('POST', '/ui/api/logout', { token: session!.token })).status, 204);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods', { token: session!.token })).status, 401);
  });

  it('refuses bad credentials with a 401 and bad bodies with a 400, as Status objects', async () => {
    assert.equal((await login({ token: 'wrong' })).res.status, 401);
    const garbage = await call('POST', '/ui/api/login', { body: '{"token":' });
    assert.equal(garbage.status, 400);
    assert.equal(JSON.parse(garbage.body).kind, 'Status');
    assert.equal((await call('GET', '/ui/api/login')).status, 405);
    // A session is not a token TokenReview or a second login accepts.
    const { session } = await login({ token: 'nobody-token' });
    assert.equal((await login({ token: session!.token })).res.status, 401);
  });
});
