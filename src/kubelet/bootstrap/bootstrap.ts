// The kubelet's TLS bootstrap, as upstream's pkg/kubelet/certificate/bootstrap with kubeadm's token
// discovery in front: trust the cluster CA (given, or read from cluster-info and checked against the
// token's JWS signature), then ask for a client certificate with the bootstrap token through a
// CertificateSigningRequest, and a serving certificate with the node's own new identity. Certificates
// still far from expiry are reused, so a restart asks for nothing.
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  CSR_DENIED,
  CSR_FAILED,
  KUBELET_SERVING_SIGNER,
  KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
  NODES_GROUP,
  NODE_USER_PREFIX,
  createCertificateRequest,
} from '../../api/certificates.js';
import type { CertificateSigningRequest, ConfigMap } from '../../api/types.js';
import { CLUSTER_INFO_CONFIGMAP, JWS_SIGNATURE_PREFIX, KUBE_PUBLIC_NAMESPACE, detachedSignatureIsValid, parseBootstrapToken } from '../../apiserver/authn/bootstraptoken.js';
import { writeKubeconfig } from '../../client/kubeconfig-write.js';
import { Client } from '../../client/client.js';
import { RestClient, type RestConfig } from '../../client/rest.js';
import { realClock, type Clock } from '../../util/clock.js';
import { writeFileAtomic } from '../../util/file.js';

export interface BootstrapOptions {
  /** The API server, e.g. https://10.0.0.1:6443. */
  server: string;
  /** The cluster CA as PEM or a file; without either it is discovered from cluster-info with the token. */
  caPem?: string;
  caFile?: string;
  /** A bootstrap token `<id>.<secret>`; needed only when there is no usable client certificate yet. */
  token?: string;
  /** Certificates go under <dataDir>/pki, the kubeconfig is <dataDir>/kubelet.kubeconfig. */
  dataDir: string;
  nodeName: string;
  nodeIP: string;
  clock?: Clock;
  /** How often a pending request is looked at again. */
  pollIntervalMs?: number;
  /** Give up waiting for a certificate after this long (upstream waits up to an hour). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface CertKeyFiles {
  certFile: string;
  keyFile: string;
  certPem: string;
  keyPem: string;
}

export interface KubeletCredentials {
  caPem: string;
  /** A kubeconfig holding the server, the CA and the node's client certificate. */
  kubeconfigPath: string;
  /** The same as a RestConfig, for the kubelet's own client. */
  rest: RestConfig;
  client: CertKeyFiles;
  /** For the kubelet's HTTPS API. */
  serving: CertKeyFiles;
}

/** Renew once less than this share of a certificate's lifetime is left (upstream rotates at 70–90% of it). */
const RENEW_WHEN_REMAINING = 0.2;

export async function bootstrapKubeletCredentials(opts: BootstrapOptions): Promise<KubeletCredentials> {
  const clock = opts.clock ?? realClock;
  const caPem = opts.caPem ?? (opts.caFile ? await readFile(opts.caFile, 'utf8') : await discoverClusterCA(opts.server, requireToken(opts)));
  const pki = join(opts.dataDir, 'pki');
  const user = `${NODE_USER_PREFIX}${opts.nodeName}`;

  const clientPaths = { certFile: join(pki, 'kubelet-client.crt'), keyFile: join(pki, 'kubelet-client.key') };
  let client = await readUsable(clientPaths, caPem, clock.now());
  if (!client) {
    const rest = new RestClient({ server: opts.server, ca: caPem, token: requireToken(opts), userAgent: 'kite-kubelet/bootstrap' });
    try {
      const pair = await requestCertificate(new Client(rest), opts, clock, {
        subject: { commonName: user, organizations: [NODES_GROUP] },
        signerName: KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
        usages: ['digital signature', 'client auth'],
      });
      client = await writePair(clientPaths, pair);
    } finally {
      rest.close();
    }
  }
  const restConfig: RestConfig = { server: opts.server, ca: caPem, cert: client.certPem, key: client.keyPem, userAgent: 'kite-kubelet' };
  const kubeconfigPath = join(opts.dataDir, 'kubelet.kubeconfig');
  await writeKubeconfig(kubeconfigPath, { server: opts.server, caPem, certPem: client.certPem, keyPem: client.keyPem, user: 'default-auth', cluster: 'default-cluster', context: 'default-context' });

  const sans = [...new Set([opts.nodeIP, opts.nodeName, hostname().toLowerCase(), 'localhost'])];
  const servingPaths = { certFile: join(pki, 'kubelet-serving.crt'), keyFile: join(pki, 'kubelet-serving.key') };
  let serving = await readUsable(servingPaths, caPem, clock.now(), sans);
  if (!serving) {
    const rest = new RestClient(restConfig);
    try {
      const pair = await requestCertificate(new Client(rest), opts, clock, {
        subject: { commonName: user, organizations: [NODES_GROUP], sans },
        signerName: KUBELET_SERVING_SIGNER,
        usages: ['digital signature', 'server auth'],
      });
      serving = await writePair(servingPaths, pair);
    } finally {
      rest.close();
    }
  }
  return { caPem, kubeconfigPath, rest: restConfig, client, serving };
}

function requireToken(opts: BootstrapOptions): string {
  if (!opts.token) throw new Error('a bootstrap token is required to join: no usable kubelet client certificate in the data directory');
  return opts.token;
}

/**
 * kubeadm's token discovery: read cluster-info without trusting the server yet, accept its CA only if
 * the kubeconfig carries this token's JWS signature, then read it again over TLS checked by that CA.
 */
export async function discoverClusterCA(server: string, token: string): Promise<string> {
  const parsed = parseBootstrapToken(token);
  if (!parsed) throw new Error(`the bootstrap token ${JSON.stringify(token.replace(/\..*/, '.<secret>'))} is not of the form [a-z0-9]{6}.[a-z0-9]{16}`);
  const path = `/api/v1/namespaces/${KUBE_PUBLIC_NAMESPACE}/configmaps/${CLUSTER_INFO_CONFIGMAP}`;
  const insecure = new RestClient({ server, insecureSkipTLSVerify: true, userAgent: 'kite-kubelet/discovery' });
  let cm: ConfigMap;
  try {
    cm = await insecure.request<ConfigMap>({ path });
  } finally {
    insecure.close();
  }
  const caPem = trustedClusterCA(cm, parsed);
  const verified = new RestClient({ server, ca: caPem, userAgent: 'kite-kubelet/discovery' });
  try {
    await verified.request<ConfigMap>({ path });
  } finally {
    verified.close();
  }
  return caPem;
}

/** The CA in a cluster-info ConfigMap, once its JWS signature by the token checks out; kubeadm's error texts otherwise. */
export function trustedClusterCA(cm: ConfigMap, token: { id: string; secret: string }): string {
  const kubeconfig = cm.data?.kubeconfig;
  if (!kubeconfig) throw new Error(`there is no kubeconfig key in the ${CLUSTER_INFO_CONFIGMAP} ConfigMap. This API Server isn't set up for token bootstrap, can't connect`);
  const signature = cm.data?.[`${JWS_SIGNATURE_PREFIX}${token.id}`];
  if (!signature) throw new Error(`token id ${JSON.stringify(token.id)} is invalid for this cluster or it has expired. Use "kubeadm token create" on the control-plane node to create a new valid token`);
  if (!detachedSignatureIsValid(signature, kubeconfig, token)) throw new Error("failed to verify JWS signature of received cluster info object, can't trust this API Server");
  const config = parse(kubeconfig) as { clusters?: { cluster?: { 'certificate-authority-data'?: string } }[] };
  const ca = config.clusters?.[0]?.cluster?.['certificate-authority-data'];
  if (!ca) throw new Error('the cluster-info kubeconfig has no certificate-authority-data');
  return Buffer.from(ca, 'base64').toString('utf8');
}

interface CertificateAsk {
  subject: Parameters<typeof createCertificateRequest>[0];
  signerName: string;
  usages: string[];
}

/** Creates the CSR and waits for its certificate, as client-go's csr.RequestCertificate + WaitForCertificate. */
async function requestCertificate(client: Client, opts: BootstrapOptions, clock: Clock, ask: CertificateAsk): Promise<{ certPem: string; keyPem: string }> {
  const { keyPem, csrPem } = await createCertificateRequest(ask.subject);
  const csrs = client.resource('certificatesigningrequests.certificates.k8s.io');
  // Named after the key, as upstream names node-csr-*: a retry with the same key finds its request.
  const publicKey = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' });
  const name = `node-csr-${createHash('sha512').update(publicKey).update(ask.signerName).digest('base64url').slice(0, 43)}`;
  await csrs.create({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: ask.signerName, usages: ask.usages },
  });
  const deadline = clock.now() + (opts.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const csr = await csrs.get(name);
    const certPem = certificateOf(csr);
    if (certPem) return { certPem, keyPem };
    if (clock.now() >= deadline) throw new Error(`timed out waiting for the certificate of certificate signing request ${name}`);
    await clock.sleep(opts.pollIntervalMs ?? 1000, opts.signal);
  }
}

/** The issued certificate, undefined while pending; a Denied or Failed request is an error, as upstream words it. */
export function certificateOf(csr: CertificateSigningRequest): string | undefined {
  for (const c of csr.status?.conditions ?? []) {
    if (c.type === CSR_DENIED) throw new Error(`certificate signing request is denied, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`);
    if (c.type === CSR_FAILED) throw new Error(`certificate signing request failed, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`);
  }
  return csr.status?.certificate ? Buffer.from(csr.status.certificate, 'base64').toString('utf8') : undefined;
}

/** The pair on disk when it parses, matches, was signed by the CA, covers sans, and has more than a fifth of its life left. */
async function readUsable(p: { certFile: string; keyFile: string }, caPem: string, now: number, sans: string[] = []): Promise<CertKeyFiles | undefined> {
  try {
    const certPem = await readFile(p.certFile, 'utf8');
    const keyPem = await readFile(p.keyFile, 'utf8');
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    if (!cert.checkPrivateKey(createPrivateKey(keyPem)) || !cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return undefined;
    const from = Date.parse(cert.validFrom);
    const to = Date.parse(cert.validTo);
    if (now < from || to - now < (to - from) * RENEW_WHEN_REMAINING) return undefined;
    const covered = (s: string) => (isIP(s) ? cert.checkIP(s) : cert.checkHost(s, { wildcards: false })) !== undefined;
    if (!sans.every(covered)) return undefined;
    return { ...p, certPem, keyPem };
  } catch {
    return undefined;
  }
}

async function writePair(p: { certFile: string; keyFile: string }, pair: { certPem: string; keyPem: string }): Promise<CertKeyFiles> {
  await writeFileAtomic(p.keyFile, pair.keyPem, 0o600);
  await writeFileAtomic(p.certFile, pair.certPem, 0o600);
  return { ...p, ...pair };
}
