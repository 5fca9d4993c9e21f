// The CSR signer, as upstream's pkg/controller/certificates/signer: approved requests for the
// kubelet client, kubelet serving and kube-apiserver client signers are signed by the cluster CA
// (kube-controller-manager's --cluster-signing-{cert,key}-file) for a year, or for the requested
// spec.expirationSeconds when shorter, and written to status.certificate. A request its signer
// refuses gets a Failed condition with reason SignerValidationFailure.
import '../../../util/reflect-metadata.js';
import * as x509 from '@peculiar/x509';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  CSR_APPROVED,
  CSR_FAILED,
  KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
  KUBE_APISERVER_CLIENT_SIGNER,
  KUBELET_SERVING_SIGNER,
  hasCondition,
  parseCertificateRequest,
  requestPem,
  type CertificateRequestInfo,
} from '../../../api/certificates.js';
import { rfc3339 } from '../../../api/time.js';
import type { CertificateSigningRequest } from '../../../api/types.js';
import { signLeaf, type CertKeyPair, type LeafTemplate } from '../../../apiserver/authn/pki.js';
import type { Client } from '../../../client/client.js';
import type { SharedInformerFactory } from '../../../client/factory.js';
import type { Clock } from '../../../util/clock.js';
import type { Logger } from '../../../util/log.js';
import { CertificateController, csrClient, type CsrClient } from '../controller.js';
import { kubeletClientRequestError, kubeletServingRequestError } from '../kubelet.js';

export const SIGNER_VALIDATION_FAILURE = 'SignerValidationFailure';
/** kube-controller-manager's --cluster-signing-duration default. */
export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * 3600 * 1000;
const MIN_DURATION_MS = 10 * 60 * 1000;
/** Certificates start this far in the past, for clocks that run behind. */
const BACKDATE_MS = 5 * 60 * 1000;

const keyUsageBits: Record<string, number> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};

const extKeyUsageOids: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

const apiServerClientUsages = new Set(['digital signature', 'key encipherment', 'client auth']);

/** Each signer's check of a request (upstream's isRequestForSignerFn); an error message fails the request. */
const signerChecks: Record<string, (req: CertificateRequestInfo, usages: readonly string[]) => string | undefined> = {
  [KUBE_APISERVER_CLIENT_KUBELET_SIGNER]: kubeletClientRequestError,
  [KUBELET_SERVING_SIGNER]: kubeletServingRequestError,
  [KUBE_APISERVER_CLIENT_SIGNER]: (_req, usages) => {
    const bad = usages.find((u) => !apiServerClientUsages.has(u));
    return bad === undefined ? undefined : `invalid usage for client certificate: ${bad}`;
  },
};

/** How long the certificate lasts: the signing duration, or the requested one when shorter (never under 10 minutes). */
export function certificateDurationMs(expirationSeconds: number | undefined, maxMs = DEFAULT_SIGNING_DURATION_MS): number {
  if (expirationSeconds === undefined) return maxMs;
  return Math.min(maxMs, Math.max(expirationSeconds * 1000, MIN_DURATION_MS));
}

export type SigningDecision = { action: 'none' } | { action: 'fail'; message: string } | { action: 'sign'; template: Omit<LeafTemplate, 'notBefore' | 'notAfter'>; durationMs: number };

/** What the signer does with a request: nothing (not approved, already done, not ours), fail it, or sign it. */
export function signingDecision(csr: CertificateSigningRequest, maxDurationMs = DEFAULT_SIGNING_DURATION_MS): SigningDecision {
  if (!hasCondition(csr, CSR_APPROVED) || hasCondition(csr, CSR_FAILED) || csr.status?.certificate) return { action: 'none' };
  const check = signerChecks[csr.spec.signerName];
  if (!check) return { action: 'none' };
  let req: CertificateRequestInfo;
  try {
    req = parseCertificateRequest(requestPem(csr));
  } catch (err) {
    return { action: 'fail', message: `unable to parse csr ${JSON.stringify(csr.metadata?.name ?? '')}: ${(err as Error).message}` };
  }
  const usages = csr.spec.usages ?? [];
  const why = check(req, usages);
  if (why) return { action: 'fail', message: why };
  const sans: x509.JsonGeneralName[] = [
    ...req.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...req.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...req.emailAddresses.map((value) => ({ type: 'email' as const, value })),
    ...req.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  return {
    action: 'sign',
    durationMs: certificateDurationMs(csr.spec.expirationSeconds, maxDurationMs),
    template: {
      subject: [...(req.commonName ? [{ CN: [req.commonName] }] : []), ...req.organizations.map((o) => ({ O: [o] }))],
      publicKey: req.publicKeyDer,
      keyUsages: usages.reduce((bits, u) => bits | (keyUsageBits[u] ?? 0), 0),
      extendedKeyUsages: [...new Set(usages.map((u) => extKeyUsageOids[u]).filter((o): o is string => o !== undefined))],
      sans,
    },
  };
}

export interface CsrSignerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** PEM files of the cluster CA; read at each signing so a rotated CA is picked up. */
  certFile: string;
  keyFile: string;
  maxDurationMs?: number;
}

export class CsrSigner {
  private readonly csrs: CsrClient;
  private readonly controller: CertificateController;

  constructor(private readonly opts: CsrSignerOptions) {
    this.csrs = csrClient(opts.client);
    this.controller = new CertificateController({ name: 'csrsigning', informers: opts.informers, clock: opts.clock, logger: opts.logger, handler: (csr) => this.handle(csr) });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  async handle(csr: CertificateSigningRequest): Promise<void> {
    const decision = signingDecision(csr, this.opts.maxDurationMs);
    if (decision.action === 'none') return;
    const now = this.opts.clock.now();
    if (decision.action === 'fail') {
      const failed = { type: CSR_FAILED, status: 'True', reason: SIGNER_VALIDATION_FAILURE, message: decision.message, lastUpdateTime: rfc3339(now) };
      await this.csrs.updateStatus({ ...csr, status: { ...csr.status, conditions: [...(csr.status?.conditions ?? []), failed] } });
      return;
    }
    const ca: CertKeyPair = { certPem: await readFile(this.opts.certFile, 'utf8'), keyPem: await readFile(this.opts.keyFile, 'utf8') };
    // Never past the CA's own expiry.
    const notAfter = Math.min(now + decision.durationMs, Date.parse(new X509Certificate(ca.certPem).validTo));
    const certPem = await signLeaf({ ca, clock: this.opts.clock }, { ...decision.template, notBefore: now - BACKDATE_MS, notAfter });
    await this.csrs.updateStatus({ ...csr, status: { ...csr.status, certificate: Buffer.from(certPem).toString('base64') } });
    this.opts.logger.info({ csr: csr.metadata!.name, signer: csr.spec.signerName }, 'signed certificate');
  }
}

