import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock.js';
import { ensurePki, issueClientCertificate, issueServingCertificate, type Pki } from './pki.js';

const clientAuth = '1.3.6.1.5.5.7.3.2';
const serverAuth = '1.3.6.1.5.5.7.3.1';
const YEAR_MS = 365 * 24 * 3600 * 1000;

void describe('ensurePki', () => {
  let dir: string;
  let pki: Pki;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kite-pki-'));
    pki = await ensurePki(join(dir, 'pki'), { extraSans: ['kite.example', '10.0.0.7'] });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  void it('makes a CA that signs the serving and admin certificates', () => {
    const ca = new X509Certificate(pki.ca.certPem);
    assert.equal(ca.ca, true);
    assert.ok(ca.verify(ca.publicKey), 'CA is self-signed');
    const caYears = (Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / YEAR_MS;
    assert.ok(caYears > 9.9 && caYears < 10.1, `CA validity ${caYears} years`);
    for (const pair of [pki.serving, pki.admin]) {
      const cert = new X509Certificate(pair.certPem);
      assert.equal(cert.ca, false);
      assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey));
    }
  });

  const sanCases: [string, 'host' | 'ip'][] = [
    ['localhost', 'host'],
    [hostname().toLowerCase(), 'host'],
    ['kite.example', 'host'],
    ['127.0.0.1', 'ip'],
    ['::1', 'ip'],
    ['10.0.0.7', 'ip'],
  ];
  for (const [name, kind] of sanCases) {
    void it(`serving certificate covers ${name}`, () => {
      const cert = new X509Certificate(pki.serving.certPem);
      assert.equal(kind === 'ip' ? cert.checkIP(name) : cert.checkHost(name, { wildcards: false }), name);
    });
  }

  void it('serving certificate is for server auth only, valid about a year', () => {
    const cert = new X509Certificate(pki.serving.certPem);
    assert.deepEqual(cert.keyUsage, [serverAuth]);
    assert.equal(cert.checkHost('other.example'), undefined);
    const years = (Date.parse(cert.validTo) - Date.now()) / YEAR_MS;
    assert.ok(years > 0.99 && years < 1.01, `serving validity ${years} years`);
  });

  void it('admin certificate is kubernetes-admin in system:masters, for client auth', () => {
    const cert = new X509Certificate(pki.admin.certPem);
    assert.equal(cert.subject, 'CN=kubernetes-admin\nO=system:masters');
    assert.deepEqual(cert.keyUsage, [clientAuth]);
  });

  void it('writes keys 0600 and certificates beside them', async () => {
    for (const name of ['ca', 'apiserver', 'admin']) {
      assert.equal((await stat(join(pki.dir, `${name}.key`))).mode & 0o777, 0o600, name);
      assert.equal(await readFile(join(pki.dir, `${name}.crt`), 'utf8'), name === 'ca' ? pki.ca.certPem : name === 'admin' ? pki.admin.certPem : pki.serving.certPem);
    }
  });

  void it('reuses everything on a later start with the same names', async () => {
    const again = await ensurePki(pki.dir, { extraSans: ['kite.example', '10.0.0.7'] });
    assert.deepEqual(again.ca, pki.ca);
    assert.deepEqual(again.serving, pki.serving);
    assert.deepEqual(again.admin, pki.admin);
  });

  void it('reissues only the serving certificate when a SAN is added', async () => {
    const copy = join(dir, 'sans');
    const first = await ensurePki(copy);
    const second = await ensurePki(copy, { extraSans: ['new.example'] });
    assert.deepEqual(second.ca, first.ca);
    assert.deepEqual(second.admin, first.admin);
    assert.notEqual(second.serving.certPem, first.serving.certPem);
    assert.equal(new X509Certificate(second.serving.certPem).checkHost('new.example'), 'new.example');
  });

  void it('replaces an expired CA and everything it signed, and renews leaves near expiry', async () => {
    const old = join(dir, 'expired');
    const past = new FakeClock(Date.now() - 11 * YEAR_MS);
    const stale = await ensurePki(old, { clock: past });
    const renewed = await ensurePki(old);
    assert.notEqual(renewed.ca.certPem, stale.ca.certPem);
    const ca = new X509Certificate(renewed.ca.certPem);
    assert.ok(new X509Certificate(renewed.admin.certPem).checkIssued(ca));
    assert.ok(new X509Certificate(renewed.serving.certPem).checkIssued(ca));

    const nearExpiry = join(dir, 'near');
    const early = await ensurePki(nearExpiry, { clock: new FakeClock(Date.now() - YEAR_MS + 10 * 24 * 3600 * 1000) });
    const later = await ensurePki(nearExpiry);
    assert.deepEqual(later.ca, early.ca, 'a valid CA is never regenerated');
    assert.notEqual(later.serving.certPem, early.serving.certPem);
    assert.notEqual(later.admin.certPem, early.admin.certPem);
  });

  void it('issues client certificates with every organization as a group', async () => {
    const pair = await issueClientCertificate(pki, { commonName: 'system:node:n1', organizations: ['system:nodes', 'extra'], days: 2 });
    const cert = new X509Certificate(pair.certPem);
    assert.equal(cert.subject, 'CN=system:node:n1\nO=system:nodes\nO=extra');
    assert.deepEqual(cert.keyUsage, [clientAuth]);
    assert.ok(cert.checkPrivateKey(createPrivateKey(pair.keyPem)));
    const days = (Date.parse(cert.validTo) - Date.now()) / (24 * 3600 * 1000);
    assert.ok(days > 1.9 && days < 2.1, `validity ${days} days`);
  });

  void it('issues serving certificates for the given names', async () => {
    const pair = await issueServingCertificate(pki, { commonName: 'n1', sans: ['n1.example', '192.168.1.5'] });
    const cert = new X509Certificate(pair.certPem);
    assert.equal(cert.checkHost('n1.example'), 'n1.example');
    assert.equal(cert.checkIP('192.168.1.5'), '192.168.1.5');
    assert.equal(cert.checkHost('localhost'), undefined);
  });
});
