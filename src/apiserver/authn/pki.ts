// The cluster's certificates: one CA that signs the API server's serving certificate and every client
// certificate (admin, later kubelets). Created on first start, reused afterwards; leaves are reissued
// when they near expiry, stop covering the wanted names, or were signed by a different CA.
import '../../util/reflect-metadata.js';
import * as x509 from '@peculiar/x509';
import { KeyObject, X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { ServerOptions } from 'node:https';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../util/file.js';
import { realClock, type Clock } from '../../util/clock.js';

x509.cryptoProvider.set(webcrypto);

const DAY_MS = 24 * 60 * 60 * 1000;
const CA_DAYS = 3650;
const LEAF_DAYS = 365;
/** Leaves closer than this to expiry are reissued at start. */
const RENEW_BEFORE_MS = 30 * DAY_MS;
/** Backdating tolerates clocks that run a little behind on other machines. */
const BACKDATE_MS = 5 * 60 * 1000;
const keyAlgorithm: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const signingAlgorithm: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };

export const adminUser = { commonName: 'kubernetes-admin', organizations: ['system:masters'] };

export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

export interface Pki {
  dir: string;
  ca: CertKeyPair;
  /** The API server's serving certificate. */
  serving: CertKeyPair;
  /** The cluster-admin client certificate (CN kubernetes-admin, O system:masters). */
  admin: CertKeyPair;
  /** Dates certificates issued from this Pki. */
  clock: Clock;
}

/** What issuing needs: the CA pair and a clock. A Pki is one. */
export type Signer = Pick<Pki, 'ca' | 'clock'>;

export interface PkiOptions {
  /** More DNS names or IP addresses for the serving certificate. */
  extraSans?: string[];
  clock?: Clock;
}

export interface ClientCertificateRequest {
  commonName: string;
  organizations?: string[];
  days?: number;
}

export interface ServingCertificateRequest {
  commonName: string;
  /** DNS names and IP addresses, told apart by their syntax. */
  sans: string[];
  days?: number;
}

/** Loads the PKI under dir, creating or reissuing whatever is missing or no longer usable. */
export async function ensurePki(dir: string, opts: PkiOptions = {}): Promise<Pki> {
  const clock = opts.clock ?? realClock;
  const paths = (name: string) => ({ cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) });

  let ca = await readPair(paths('ca'));
  if (!ca || !usable(ca, clock, 0)) {
    ca = await createCa(clock);
    await writePair(paths('ca'), ca);
  }
  const signer: Signer = { ca, clock };

  const sans = servingSans(opts.extraSans ?? []);
  let serving = await readPair(paths('apiserver'));
  if (!serving || !usable(serving, clock, RENEW_BEFORE_MS, ca) || !coversSans(serving, sans)) {
    serving = await issueServingCertificate(signer, { commonName: 'kube-apiserver', sans });
    await writePair(paths('apiserver'), serving);
  }

  let admin = await readPair(paths('admin'));
  if (!admin || !usable(admin, clock, RENEW_BEFORE_MS, ca)) {
    admin = await issueClientCertificate(signer, adminUser);
    await writePair(paths('admin'), admin);
  }
  return { dir, ca, serving, admin, clock };
}

/**
 * The API server's TLS settings: a client certificate is asked for and checked against the CA, but a
 * request without one (or with a bad one) still reaches authentication, where a bearer token may do.
 */
export function servingTlsOptions(pki: Pki): ServerOptions {
  return { key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.ca.certPem, requestCert: true, rejectUnauthorized: false };
}

/** A client certificate (client auth) signed by the cluster CA: CN is the user name, O the groups. */
export function issueClientCertificate(pki: Signer, req: ClientCertificateRequest): Promise<CertKeyPair> {
  const subject: x509.JsonName = [{ CN: [req.commonName] }, ...(req.organizations ?? []).map((o) => ({ O: [o] }))];
  return issueLeaf(pki, subject, req.days ?? LEAF_DAYS, x509.ExtendedKeyUsage.clientAuth, []);
}

/** A serving certificate (server auth) signed by the cluster CA, valid for the given names and addresses. */
export function issueServingCertificate(pki: Signer, req: ServingCertificateRequest): Promise<CertKeyPair> {
  const names: x509.JsonGeneralName[] = req.sans.map((s) => ({ type: isIP(s) ? 'ip' : 'dns', value: s }));
  return issueLeaf(pki, [{ CN: [req.commonName] }], req.days ?? LEAF_DAYS, x509.ExtendedKeyUsage.serverAuth, names);
}

/** The names every API server answers to, then the extra ones, without repeats. */
function servingSans(extra: string[]): string[] {
  return [...new Set(['localhost', '127.0.0.1', '::1', hostname().toLowerCase(), ...extra])];
}

async function createCa(clock: Clock): Promise<CertKeyPair> {
  const keys = await newKeyPair();
  const now = clock.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: ['kite-ca'] }],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + CA_DAYS * DAY_MS),
    signingAlgorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: keyPem(keys.privateKey) };
}

async function issueLeaf(
  pki: Signer,
  subject: x509.JsonName,
  days: number,
  usage: x509.ExtendedKeyUsage,
  sans: x509.JsonGeneralName[],
): Promise<CertKeyPair> {
  const keys = await newKeyPair();
  const now = pki.clock.now();
  const certPem = await signLeaf(pki, {
    subject,
    publicKey: keys.publicKey,
    notBefore: now - BACKDATE_MS,
    notAfter: now + days * DAY_MS,
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    extendedKeyUsages: [usage],
    sans,
  });
  return { certPem, keyPem: keyPem(keys.privateKey) };
}

/** What the CA puts into a leaf certificate for a key it did not make (a CSR's). */
export interface LeafTemplate {
  subject: x509.JsonName;
  /** A CryptoKey, or SubjectPublicKeyInfo DER. */
  publicKey: webcrypto.CryptoKey | Uint8Array;
  /** ms since the epoch. */
  notBefore: number;
  notAfter: number;
  /** x509.KeyUsageFlags bits. */
  keyUsages: number;
  extendedKeyUsages: string[];
  sans: x509.JsonGeneralName[];
}

/** Signs a leaf certificate with the cluster CA; returns it as PEM. */
export async function signLeaf(pki: Signer, t: LeafTemplate): Promise<string> {
  const caCert = new x509.X509Certificate(pki.ca.certPem);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    createPrivateKey(pki.ca.keyPem).export({ type: 'pkcs8', format: 'der' }),
    keyAlgorithm,
    false,
    ['sign'],
  );
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (t.keyUsages) extensions.push(new x509.KeyUsagesExtension(t.keyUsages, true));
  if (t.extendedKeyUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(t.extendedKeyUsages));
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey));
  if (t.sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(t.sans));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: t.subject,
    issuer: caCert.subjectName,
    notBefore: new Date(t.notBefore),
    notAfter: new Date(t.notAfter),
    signingAlgorithm,
    publicKey: t.publicKey,
    signingKey: caKey,
    extensions,
  });
  return cert.toString('pem');
}

function newKeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']);
}

function keyPem(key: webcrypto.CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }) as string;
}

/** 128 random bits with the top bit clear: DER integers are signed and Go rejects negative serials. */
function serialNumber(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

/** Parses, is within its validity (with margin to spare), matches its key, and, given a CA, was signed by it. */
function usable(pair: CertKeyPair, clock: Clock, marginMs: number, ca?: CertKeyPair): boolean {
  try {
    const cert = new X509Certificate(pair.certPem);
    const now = clock.now();
    if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) - marginMs <= now) return false;
    if (!cert.checkPrivateKey(createPrivateKey(pair.keyPem))) return false;
    if (!ca) return true;
    const caCert = new X509Certificate(ca.certPem);
    return cert.checkIssued(caCert) && cert.verify(caCert.publicKey);
  } catch {
    return false;
  }
}

function coversSans(pair: CertKeyPair, sans: string[]): boolean {
  const cert = new X509Certificate(pair.certPem);
  return sans.every((s) => (isIP(s) ? cert.checkIP(s) : cert.checkHost(s, { wildcards: false })) !== undefined);
}

async function readPair(p: { cert: string; key: string }): Promise<CertKeyPair | undefined> {
  try {
    return { certPem: await readFile(p.cert, 'utf8'), keyPem: await readFile(p.key, 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function writePair(p: { cert: string; key: string }, pair: CertKeyPair): Promise<void> {
  // A crash between the two writes leaves a cert that does not match its key: usable() rejects it next start.
  await writeFileAtomic(p.key, pair.keyPem, 0o600);
  await writeFileAtomic(p.cert, pair.certPem, 0o644);
}

/**
 * The service-account signing key (kubeadm's sa.key): RSA 2048, as upstream signs tokens with RS256.
 * Made once next to the CA and kept, so tokens survive restarts and every server sharing the PKI
 * directory verifies the others' tokens.
 */
export async function ensureServiceAccountKey(dir: string): Promise<KeyObject> {
  const path = join(dir, 'sa.key');
  try {
    return createPrivateKey(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFileAtomic(path, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600);
  return privateKey;
}
