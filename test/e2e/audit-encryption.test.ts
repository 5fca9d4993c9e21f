// Audit logging, encryption at rest and `kite kubeconfig --user`, with the real kubectl against a
// kite server started with an audit policy and an EncryptionConfiguration (SQLite and etcd).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createDecipheriv } from 'node:crypto';
import { EtcdStore } from '../../src/storage/etcd/etcd-store.js';
import { startEtcd, type EtcdServer } from '../../src/storage/testing/etcd-server.js';
import { eventually, kiteBin, kubectl, kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';

const policy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  resources: [{group: "", resources: [pods]}]
- level: Metadata
`;

const key1 = Buffer.alloc(32, 7).toString('base64');
const key2 = Buffer.alloc(32, 9).toString('base64');
const encryption = (...keys: [string, string][]) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
${keys.map(([name, secret]) => `      - name: ${name}\n        secret: ${secret}\n`).join('')}  - identity: {}
`;

interface Event {
  kind: string;
  apiVersion: string;
  stage: string;
  verb: string;
  auditID: string;
  user: { username: string; groups?: string[] };
  objectRef?: { resource?: string; namespace?: string; name?: string };
  requestObject?: { kind?: string; metadata?: { name?: string } };
  responseObject?: { kind?: string; metadata?: { uid?: string } };
  responseStatus?: { code: number };
  annotations?: Record<string, string>;
}

const auditEvents = (path: string): Event[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);

const secretYaml = (name: string, value: string) => `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\nstringData:\n  password: ${value}\n`;

function rawSqliteValue(dataDir: string, key: string): string {
  const db = new Database(join(dataDir, 'state.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[string], string>('SELECT value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1').pluck().get(key)!;
  } finally {
    db.close();
  }
}

describe('kite server --audit-policy-file --encryption-provider-config (SQLite)', () => {
  let server: KiteServer;
  let dir: string;
  let auditLog: string;
  let encryptionFile: string;
  const args = () => ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', auditLog, '--encryption-provider-config', encryptionFile];
  before(async () => {
    dir = tempDir('kite-aud');
    auditLog = join(dir, 'audit', 'audit.log');
    encryptionFile = join(dir, 'encryption.yaml');
    writeFileSync(join(dir, 'policy.yaml'), policy);
    writeFileSync(encryptionFile, encryption(['key1', key1]));
    server = await startServer({ dataDir: join(dir, 'data'), extraArgs: args() });
    // ServiceAccount admission waits only a moment for the controller's default account.
    await eventually(() => (kubectl(server, ['get', 'serviceaccount', 'default']).code === 0 ? true : undefined), 'the default ServiceAccount');
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  it('logs a kubectl create of a pod as audit.k8s.io/v1 Events with the request and response objects', async () => {
    kubectlOk(server, ['create', '-f', '-'], 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: audited\nspec:\n  containers:\n  - name: c\n    image: busybox:1.35\n');
    const done = await eventually(
      () => auditEvents(auditLog).find((e) => e.verb === 'create' && e.objectRef?.resource === 'pods' && e.stage === 'ResponseComplete'),
      'the audit event of the pod create',
    );
    assert.equal(done.kind, 'Event');
    assert.equal(done.apiVersion, 'audit.k8s.io/v1');
    assert.equal(done.user.username, 'kubernetes-admin');
    assert.deepEqual(done.objectRef, { resource: 'pods', namespace: 'default', name: 'audited', apiGroup: '', apiVersion: 'v1' });
    assert.equal(done.requestObject?.kind, 'Pod');
    assert.equal(done.requestObject?.metadata?.name, 'audited');
    assert.equal(done.responseObject?.kind, 'Pod');
    assert.match(done.responseObject?.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(done.responseStatus?.code, 201);
    assert.equal(done.annotations?.['authorization.k8s.io/decision'], 'allow');
    // Admission's annotations: PodSecurity's policy for the default namespace.
    assert.equal(done.annotations?.['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
    const all = auditEvents(auditLog);
    assert.ok(all.every((e) => e.stage !== 'RequestReceived'), 'the policy omits RequestReceived');
    const metadataOnly = all.find((e) => e.objectRef?.resource === 'namespaces' || (e.objectRef && e.objectRef.resource !== 'pods'));
    assert.ok(metadataOnly && metadataOnly.requestObject === undefined && metadataOnly.responseObject === undefined, 'other resources are logged at Metadata');
  });

  it('stores Secrets as k8s:enc:aescbc:v1:key1: ciphertext and serves them in plain; a new key rotates them', async () => {
    kubectlOk(server, ['create', '-f', '-'], secretYaml('db', 'hunter2'));
    const raw = rawSqliteValue(server.dataDir, '/registry/secrets/default/db');
    assert.ok(raw.startsWith('k8s:enc:aescbc:v1:key1:'), raw.slice(0, 40));
    assert.ok(!raw.includes('hunter2') && !raw.includes(Buffer.from('hunter2').toString('base64')));
    assert.equal(kubectlOk(server, ['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']), Buffer.from('hunter2').toString('base64'));
    // A ConfigMap is not listed: it stays plain JSON.
    kubectlOk(server, ['create', 'configmap', 'plain', '--from-literal=a=b']);
    assert.ok(rawSqliteValue(server.dataDir, '/registry/configmaps/default/plain').startsWith('{'));

    // Rotation as upstream documents it: the new key first, restart, rewrite every Secret.
    await server.stop();
    writeFileSync(encryptionFile, encryption(['key2', key2], ['key1', key1]));
    server = await startServer({ dataDir: server.dataDir, extraArgs: args() });
    assert.equal(kubectlOk(server, ['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']), Buffer.from('hunter2').toString('base64'), 'key1 still reads');
    kubectlOk(server, ['replace', '-f', '-'], kubectlOk(server, ['get', 'secrets', '-A', '-o', 'json']));
    assert.ok(rawSqliteValue(server.dataDir, '/registry/secrets/default/db').startsWith('k8s:enc:aescbc:v1:key2:'));
    assert.equal(kubectlOk(server, ['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']), Buffer.from('hunter2').toString('base64'));
  });

  it('kite kubeconfig --user jane writes a kubeconfig that authenticates as jane', async () => {
    const out = join(dir, 'jane.kubeconfig');
    const made = spawnSync(process.execPath, [kiteBin, 'kubeconfig', '--user', 'jane', '--group', 'devs', '--group', 'qa', '--kubeconfig', server.kubeconfig, '--out', out], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    assert.match(made.stdout, /kubeconfig for user jane written to /);
    const jane = { kubeconfig: out };
    assert.match(kubectlOk(jane, ['get', '--raw', '/api']), /"kind":"APIVersions"/);
    const seen = await eventually(() => auditEvents(auditLog).find((e) => e.user.username === 'jane' && e.verb === 'get'), 'an audit event of jane');
    assert.deepEqual(seen.user.groups, ['devs', 'qa', 'system:authenticated']);
    const whoami = kubectl(jane, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    if (whoami.code === 0) assert.equal(whoami.stdout, 'jane');
    const csrs = kubectlOk(server, ['get', 'csr', '-o', 'jsonpath={range .items[*]}{.spec.signerName} {.status.conditions[0].type}{"\\n"}{end}']);
    assert.match(csrs, /^kubernetes\.io\/kube-apiserver-client Approved$/m);
  });

  it('kite kubeconfig refuses a missing user and a short expiration in one line', () => {
    const noUser = spawnSync(process.execPath, [kiteBin, 'kubeconfig', '--kubeconfig', server.kubeconfig], { encoding: 'utf8' });
    assert.equal(noUser.status, 1);
    assert.match(noUser.stderr, /--user is required/);
    const short = spawnSync(process.execPath, [kiteBin, 'kubeconfig', '--user', 'x', '--expiration-seconds', '60', '--kubeconfig', server.kubeconfig], { encoding: 'utf8' });
    assert.equal(short.status, 1);
    assert.match(short.stderr, /--expiration-seconds must be a whole number of at least 600, got "60"/);
  });
});

describe('kite server --encryption-provider-config on etcd', () => {
  let etcd: EtcdServer;
  let server: KiteServer;
  let dir: string;
  before(async () => {
    dir = tempDir('kite-aud-etcd');
    etcd = await startEtcd();
    writeFileSync(join(dir, 'encryption.yaml'), encryption(['key1', key1]));
    server = await startServer({ dataDir: join(dir, 'data'), store: `etcd://${etcd.endpoint}`, extraArgs: ['--encryption-provider-config', join(dir, 'encryption.yaml')] });
  });
  after(async () => {
    await server?.stop();
    await etcd?.stop();
    removeDir(dir);
  });

  it('stores the ciphertext in etcd and serves the Secret in plain', async () => {
    kubectlOk(server, ['create', '-f', '-'], secretYaml('db', 'hunter2'));
    const raw = new EtcdStore({ endpoints: [etcd.endpoint] });
    try {
      const kv = await raw.get('/registry/secrets/default/db');
      assert.ok(kv!.value.startsWith('k8s:enc:aescbc:v1:key1:'), kv!.value.slice(0, 40));
      assert.ok(!kv!.value.includes(Buffer.from('hunter2').toString('base64')));
    } finally {
      await raw.close();
    }
    assert.equal(kubectlOk(server, ['get', 'secret', 'db', '-o', 'jsonpath={.data.password}']), Buffer.from('hunter2').toString('base64'));
  });

  it("writes upstream's bytes: kube-apiserver's aescbc (IV, then the ciphertext) opens them", async () => {
    // etcd's own JSON gateway hands out the stored bytes, untouched by kite's client.
    const res = await fetch(`http://${etcd.endpoint}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('/registry/secrets/default/db').toString('base64') }) });
    const body = (await res.json()) as { kvs: { value: string }[] };
    const bytes = Buffer.from(body.kvs[0]!.value, 'base64');
    const prefix = Buffer.from('k8s:enc:aescbc:v1:key1:');
    assert.deepEqual(bytes.subarray(0, prefix.length), prefix);
    const sealed = bytes.subarray(prefix.length);
    const decipher = createDecipheriv('aes-256-cbc', Buffer.from(key1, 'base64'), sealed.subarray(0, 16));
    const plain = JSON.parse(Buffer.concat([decipher.update(sealed.subarray(16)), decipher.final()]).toString('utf8')) as { data: Record<string, string> };
    assert.equal(plain.data.password, Buffer.from('hunter2').toString('base64'));
  });
});
