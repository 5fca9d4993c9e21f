import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { writeKubeconfig } from './kubeconfig-write.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

void describe('writeKubeconfig', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kite-kubeconfig-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const base = { server: 'https://127.0.0.1:6443', caPem: 'CA PEM\n', user: 'kubernetes-admin' };
  const cases: [string, Parameters<typeof writeKubeconfig>[1], object, string][] = [
    [
      'client certificate',
      { ...base, certPem: 'CERT\n', keyPem: 'KEY\n' },
      { 'client-certificate-data': b64('CERT\n'), 'client-key-data': b64('KEY\n') },
      'kubernetes-admin@kite',
    ],
    ['token, named cluster and context', { ...base, token: 't0k3n', cluster: 'lab', context: 'lab-admin' }, { token: 't0k3n' }, 'lab-admin'],
  ];
  for (const [name, opts, user, context] of cases) {
    void it(name, async () => {
      const path = join(dir, name.replace(/\W+/g, '-'), 'config');
      await writeKubeconfig(path, opts);
      const cluster = opts.cluster ?? 'kite';
      assert.deepEqual(parse(await readFile(path, 'utf8')), {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: cluster, cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64('CA PEM\n') } }],
        users: [{ name: 'kubernetes-admin', user }],
        contexts: [{ name: context, context: { cluster, user: 'kubernetes-admin' } }],
        'current-context': context,
        preferences: {},
      });
      assert.equal((await stat(path)).mode & 0o777, 0o600);
    });
  }

  void it('replaces an existing file, tightening its mode, and leaves no temporary file', async () => {
    const sub = join(dir, 'replace');
    const path = join(sub, 'config');
    await writeKubeconfig(path, { ...base, token: 'a' });
    await writeFile(path, 'old');
    await chmod(path, 0o644);
    await writeKubeconfig(path, { ...base, token: 'b' });
    assert.equal(parse(await readFile(path, 'utf8')).users[0].user.token, 'b');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(sub), ['config']);
  });
});
