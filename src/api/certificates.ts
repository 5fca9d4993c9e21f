// certificates.k8s.io vocabulary shared by the API server (validation), the controllers (approver,
// signer) and the kubelet (bootstrap): signer names, key usages, condition types, and a synchronous
// PKCS#10 parser whose error texts match upstream's certificates.ParseCSR.
import '../util/reflect-metadata.js';
import * as x509 from '@peculiar/x509';
import { KeyObject, createPublicKey, verify as verifySignature, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type { CertificateSigningRequest } from './types.js';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

export const CSR_APPROVED = 'Approved';
export const CSR_DENIED = 'Denied';
export const CSR_FAILED = 'Failed';

/** The node identity kubelets use: CN system:node:<name>, O system:nodes. */
export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/** Every usage upstream accepts in spec.usages. */
export const validUsages: readonly string[] = [
  'signing',
  'digital signature',
  'content commitment',
  'key encipherment',
  'key agreement',
  'data encipherment',
  'cert sign',
  'crl sign',
  'encipher only',
  'decipher only',
  'any',
  'server auth',
  'client auth',
  'code signing',
  'email protection',
  's/mime',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'timestamping',
  'ocsp signing',
  'microsoft sgc',
  'netscape sgc',
];

/** What the approver and signer need from a PKCS#10 request. */
export interface CertificateRequestInfo {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** SubjectPublicKeyInfo, DER. */
  publicKeyDer: Buffer;
}

export interface PemBlock {
  type: string;
  der: Buffer;
  /** Whether the block carries RFC 1421 headers ("Proc-Type: ..."). */
  headers: boolean;
}

/** Every PEM block of text in order; text around the blocks is ignored, as Go's pem.Decode does. */
export function decodePemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  const re = /-----BEGIN ([^\n-]+)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const lines = m[2]!.split(/\r?\n/);
    const headers = lines.some((l) => l.includes(':'));
    blocks.push({ type: m[1]!, der: Buffer.from(lines.filter((l) => !l.includes(':')).join(''), 'base64'), headers });
  }
  return blocks;
}

/** Node's digest name for a signature algorithm; null for Ed25519, which takes none. */
function digestOf(alg: x509.HashedAlgorithm & { name: string }): string | null | undefined {
  if (alg.name === 'Ed25519' || alg.name === 'EdDSA') return null;
  if (alg.name !== 'ECDSA' && alg.name !== 'RSASSA-PKCS1-v1_5') return undefined;
  const hash = typeof alg.hash === 'string' ? alg.hash : alg.hash?.name;
  return hash ? hash.replace('-', '').toLowerCase() : undefined;
}

/**
 * Parses a PEM CERTIFICATE REQUEST and checks its self-signature. Throws Errors whose messages are
 * upstream's ("PEM block type must be CERTIFICATE REQUEST", ...), for field errors.
 */
export function parseCertificateRequest(pem: string): CertificateRequestInfo {
  const block = decodePemBlocks(pem)[0];
  if (!block || block.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let req: x509.Pkcs10CertificateRequest;
  try {
    req = new x509.Pkcs10CertificateRequest(block.der);
  } catch (err) {
    throw new Error(`asn1: structure error: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const hash = digestOf(req.signatureAlgorithm as x509.HashedAlgorithm & { name: string });
  if (hash === undefined) throw new Error('x509: cannot verify signature: algorithm unimplemented');
  const publicKeyDer = Buffer.from(req.publicKey.rawData);
  const ok = verifySignature(hash, firstElement(block.der), createPublicKey({ key: publicKeyDer, format: 'der', type: 'spki' }), Buffer.from(req.signature));
  if (!ok) throw new Error(hash === null ? 'ed25519: verification failure' : 'x509: signature verification failure');
  const san = req.extensions.find((e): e is x509.SubjectAlternativeNameExtension => e instanceof x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  const of = (type: string) => names.filter((n) => n.type === type).map((n) => n.value);
  return {
    commonName: req.subjectName.getField('CN')[0] ?? '',
    organizations: req.subjectName.getField('O'),
    dnsNames: of('dns'),
    ipAddresses: of('ip'),
    emailAddresses: of('email'),
    uris: of('url'),
    publicKeyDer,
  };
}

/** The raw bytes of the first element inside a DER SEQUENCE: the signed part (certificationRequestInfo). */
function firstElement(der: Buffer): Buffer {
  const outer = tlv(der, 0);
  const inner = tlv(der, outer.contentStart);
  return der.subarray(outer.contentStart, inner.contentStart + inner.length);
}

function tlv(der: Buffer, at: number): { contentStart: number; length: number } {
  let i = at + 1;
  let length = der[i++]!;
  if (length & 0x80) {
    const n = length & 0x7f;
    length = 0;
    for (let k = 0; k < n; k++) length = length * 256 + der[i++]!;
  }
  if (i + length > der.length) throw new Error('asn1: syntax error: data truncated');
  return { contentStart: i, length };
}

/** spec.request (base64 in JSON) as PEM text. */
export function requestPem(csr: Pick<CertificateSigningRequest, 'spec'>): string {
  return Buffer.from(csr.spec?.request ?? '', 'base64').toString('utf8');
}

export function hasCondition(csr: Pick<CertificateSigningRequest, 'status'>, type: string): boolean {
  return csr.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

export interface CertificateRequestSubject {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for the subjectAltName extension, told apart by their syntax. */
  sans?: string[];
}

/** A fresh ECDSA P-256 key and a PKCS#10 request signed by it, both PEM (the key PKCS#8). */
export async function createCertificateRequest(subject: CertificateRequestSubject): Promise<{ keyPem: string; csrPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const sans = subject.sans ?? [];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [subject.commonName] }, ...(subject.organizations ?? []).map((o) => ({ O: [o] }))],
    keys,
    signingAlgorithm: alg,
    extensions: sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans.map((s) => ({ type: isIP(s) ? 'ip' : 'dns', value: s })))] : [],
  }, webcrypto);
  return { keyPem: KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string, csrPem: csr.toString('pem') };
}
