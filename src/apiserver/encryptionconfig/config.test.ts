import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEncryptionConfiguration } from './config.js';
import { SqliteStore } from '../../storage/sqlite/sqlite-store.js';
import { TransformingStore } from '../../storage/value/store.js';
import { valueFromBytes, valueToBytes } from '../../storage/store.js';
import { createCipheriv, randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';

const key1 = Buffer.alloc(32, 1).toString('base64');
const key2 = Buffer.alloc(32, 2).toString('base64');

function config(providers: string, resources = '["secrets"]'): string {
  return `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: ${resources}\n  providers:\n${providers}`;
}

const aescbcKeys = (...keys: [string, string][]) => `  - aescbc:\n      keys:\n${keys.map(([n, s]) => `      - name: ${n}\n        secret: ${s}\n`).join('')}`;

test('each provider writes its upstream prefix and reads back what it wrote', () => {
  for (const provider of ['aescbc', 'aesgcm', 'secretbox']) {
    const t = parseEncryptionConfiguration(config(`  - ${provider}:\n      keys:\n      - name: key1\n        secret: ${key1}\n`))('', 'secrets')!;
    const plain = '{"kind":"Secret","data":{"a":"c2VjcmV0"}}';
    const stored = t.toStorage(plain, '/registry/secrets/default/s');
    assert.ok(stored.startsWith(`k8s:enc:${provider}:v1:key1:`), stored);
    assert.ok(!stored.includes('c2VjcmV0'));
    assert.deepEqual(t.fromStorage(stored, '/registry/secrets/default/s'), { plain, stale: false });
  }
});

test('aescbc seals an IV then whole PKCS#7 blocks; aesgcm binds the value to its key', () => {
  const cbc = parseEncryptionConfiguration(config(aescbcKeys(['key1', key1])))('', 'secrets')!;
  const sealed = Buffer.from(cbc.toStorage('x'.repeat(16), 'k').slice('k8s:enc:aescbc:v1:key1:'.length), 'latin1');
  assert.equal(sealed.length, 16 + 32, 'a full block of padding follows 16 bytes of data');
  const gcm = parseEncryptionConfiguration(config(`  - aesgcm:\n      keys:\n      - name: key1\n        secret: ${key1}\n`))('', 'secrets')!;
  const stored = gcm.toStorage('{}', '/registry/secrets/a/b');
  assert.throws(() => gcm.fromStorage(stored, '/registry/secrets/a/c'));
});

test("upstream's bytes: raw sealed data after the prefix, written and read as kube-apiserver does", () => {
  const secret = Buffer.alloc(32, 1);
  const key = '/registry/secrets/default/s';
  const plain = Buffer.from('{"kind":"Secret"}');
  const prefix = (p: string) => Buffer.from(`k8s:enc:${p}:v1:key1:`);
  // What kube-apiserver writes to etcd for each provider, sealed here by hand.
  const iv = randomBytes(16);
  const cbc = createCipheriv('aes-256-cbc', secret, iv);
  const nonce = randomBytes(12);
  const gcm = createCipheriv('aes-256-gcm', secret, nonce).setAAD(Buffer.from(key));
  const gcmBody = Buffer.concat([gcm.update(plain), gcm.final()]);
  const boxNonce = randomBytes(24);
  const upstream: Record<string, Buffer> = {
    aescbc: Buffer.concat([prefix('aescbc'), iv, cbc.update(plain), cbc.final()]),
    aesgcm: Buffer.concat([prefix('aesgcm'), nonce, gcmBody, gcm.getAuthTag()]),
    secretbox: Buffer.concat([prefix('secretbox'), boxNonce, nacl.secretbox(new Uint8Array(plain), new Uint8Array(boxNonce), new Uint8Array(secret))]),
  };
  for (const [provider, bytes] of Object.entries(upstream)) {
    const t = parseEncryptionConfiguration(config(`  - ${provider}:\n      keys:\n      - name: key1\n        secret: ${key1}\n`))('', 'secrets')!;
    assert.deepEqual(t.fromStorage(valueFromBytes(bytes), key), { plain: plain.toString(), stale: false }, provider);
    // kite's own value is the prefix and the raw sealed bytes, of upstream's length.
    const written = valueToBytes(t.toStorage(plain.toString(), key));
    assert.deepEqual(written.subarray(0, prefix(provider).length), prefix(provider));
    assert.equal(written.length, bytes.length, provider);
    assert.deepEqual(t.fromStorage(valueFromBytes(written), key), { plain: plain.toString(), stale: false });
  }
});

test('values kite wrote in base64 before still read, as stale so the next update rewrites them', () => {
  const t = parseEncryptionConfiguration(config(aescbcKeys(['key1', key1])))('', 'secrets')!;
  const raw = t.toStorage('{"old":true}', 'k');
  const prefix = 'k8s:enc:aescbc:v1:key1:';
  const legacy = prefix + Buffer.from(raw.slice(prefix.length), 'latin1').toString('base64');
  assert.deepEqual(t.fromStorage(legacy, 'k'), { plain: '{"old":true}', stale: true });
});

test('a value carries its bytes unchanged: JSON as UTF-8, an encrypted value byte for byte', () => {
  const every = Buffer.concat([Buffer.from('k8s:enc:secretbox:v1:k:'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]);
  assert.deepEqual(valueToBytes(valueFromBytes(every)), every);
  assert.deepEqual(valueToBytes('{"name":"Grüße ✓"}'), Buffer.from('{"name":"Grüße ✓"}', 'utf8'));
  assert.equal(valueFromBytes(Buffer.from('{"name":"Grüße ✓"}')), '{"name":"Grüße ✓"}');
});

test('key rotation: a new first key writes, the old one still reads; identity reads plain data but not ciphertext', () => {
  const old = parseEncryptionConfiguration(config(aescbcKeys(['key1', key1])))('', 'secrets')!;
  const rotated = parseEncryptionConfiguration(config(`${aescbcKeys(['key2', key2], ['key1', key1])}  - identity: {}\n`))('', 'secrets')!;
  const before = old.toStorage('{"a":1}', 'k');
  assert.deepEqual(rotated.fromStorage(before, 'k'), { plain: '{"a":1}', stale: true }, 'read by the second key: rewritten on update');
  assert.deepEqual(rotated.fromStorage(rotated.toStorage('{"a":1}', 'k'), 'k'), { plain: '{"a":1}', stale: false });
  assert.ok(rotated.toStorage('{"a":1}', 'k').startsWith('k8s:enc:aescbc:v1:key2:'));
  assert.deepEqual(rotated.fromStorage('{"plain":true}', 'k'), { plain: '{"plain":true}', stale: true });
  assert.throws(() => old.fromStorage('{"plain":true}', 'k'), /no matching prefix found/);
  const unknownKey = parseEncryptionConfiguration(config(`${aescbcKeys(['key9', key2])}  - identity: {}\n`))('', 'secrets')!;
  assert.throws(() => unknownKey.fromStorage(before, 'k'), /identity transformer tried to read encrypted data/);
});

test('resources: the first entry naming a resource applies; *.group and *.* patterns', () => {
  const doc = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers: [{identity: {}}]
- resources: ["*.apps", "configmaps"]
  providers: [{aesgcm: {keys: [{name: k, secret: ${key1}}]}}]
- resources: ["*.*"]
  providers: [{secretbox: {keys: [{name: s, secret: ${key1}}]}}]
`;
  const of = parseEncryptionConfiguration(doc);
  assert.equal(of('', 'secrets')!.toStorage('{}', 'k'), '{}');
  assert.ok(of('apps', 'deployments')!.toStorage('{}', 'k').startsWith('k8s:enc:aesgcm:v1:k:'));
  assert.ok(of('', 'configmaps')!.toStorage('{}', 'k').startsWith('k8s:enc:aesgcm:v1:k:'));
  assert.ok(of('batch', 'jobs')!.toStorage('{}', 'k').startsWith('k8s:enc:secretbox:v1:s:'));
  const secretsOnly = parseEncryptionConfiguration(config(aescbcKeys(['key1', key1])));
  assert.equal(secretsOnly('', 'configmaps'), undefined);
  assert.equal(secretsOnly('example.com', 'secrets'), undefined);
});

test('bad configurations are refused with one clear line', () => {
  const cases: [string, RegExp][] = [
    ['kind: Other', /expected kind EncryptionConfiguration of apiVersion apiserver.config.k8s.io\/v1/],
    [config(`  - kms:\n      name: x\n`), /resources\[0\]\.providers\[0\]\.kms: Forbidden: kms providers are not supported/],
    [config(aescbcKeys(['key1', Buffer.alloc(5).toString('base64')])), /keys\[0\]\.secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of \[16 24 32\]/],
    [config(aescbcKeys(['key1', 'not base64!'])), /secrets must be base64 encoded/],
    [config(`  - secretbox:\n      keys:\n      - name: a\n        secret: ${Buffer.alloc(16).toString('base64')}\n`), /expected one of \[32\]/],
    [config(`  - aescbc: {keys: [{name: a, secret: ${key1}}]}\n    identity: {}\n`), /more than one provider specified in a single element/],
    [config(`  - identity: {}\n`, '["*"]'), /use '\*\.' to encrypt all the resources from core API group/],
    ['apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: [{resources: [secrets], providers: []}]', /resources\[0\]\.providers: Required value/],
    ['kind: [', /error while parsing encryption provider configuration file: [^\n]+$/],
    [`apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- {__proto__: {}, resources: [secrets], providers: [{__proto__: {}}]}`, /providers\[0\]/],
  ];
  for (const [doc, message] of cases) assert.throws(() => parseEncryptionConfiguration(doc), message, doc);
});

test('a TransformingStore stores ciphertext and hands out plain values on get, list, watch and conflicts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-enc-'));
  const inner = new SqliteStore(join(dir, 'state.db'));
  try {
    const store = new TransformingStore(inner, parseEncryptionConfiguration(config(aescbcKeys(['key1', key1])))('', 'secrets')!);
    const events: string[] = [];
    const abort = new AbortController();
    store.watch({ prefix: '/registry/secrets/', afterRevision: 0, signal: abort.signal }, { event: (e) => events.push(`${e.type} ${e.kv.value}`), end: () => undefined });
    const created = await store.create('/registry/secrets/ns/a', '{"v":1}');
    assert.equal(created.value, '{"v":1}');
    assert.ok((await inner.get('/registry/secrets/ns/a'))!.value.startsWith('k8s:enc:aescbc:v1:key1:'));
    assert.equal((await store.get('/registry/secrets/ns/a'))!.value, '{"v":1}');
    assert.deepEqual((await store.list({ prefix: '/registry/secrets/' })).items.map((i) => i.value), ['{"v":1}']);
    await assert.rejects(store.update('/registry/secrets/ns/a', '{"v":2}', created.modRevision + 5), (err: { current?: { value: string } }) => err.current?.value === '{"v":1}');
    await store.update('/registry/secrets/ns/a', '{"v":2}', created.modRevision);
    // Every byte value survives SQLite's TEXT column.
    const every = valueFromBytes(Buffer.concat([Buffer.from('k8s:enc:aescbc:v1:key1:'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]));
    await inner.create('/registry/raw/x', every);
    assert.equal((await inner.get('/registry/raw/x'))!.value, every);
    await store.delete('/registry/secrets/ns/a');
    assert.deepEqual(events, ['put {"v":1}', 'put {"v":2}', 'delete {"v":2}']);
    abort.abort();
  } finally {
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
