// Objects every cluster has from its first start: the system namespaces, the built-in priority
// classes, the default ServiceCIDR `kubernetes` (from --service-cluster-ip-range), the
// default/kubernetes Service at the range's first address (its endpoints are the lease endpoint
// reconciler's, endpointreconciler.ts), and kube-system/kube-dns at its tenth. Created only when
// missing, so restarts and several API servers agree.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { KubeObject } from '../api/meta.js';
import type { Secret } from '../api/types.js';
import { writeFileAtomic } from '../util/file.js';
import {
  CLUSTER_INFO_CONFIGMAP,
  DEFAULT_NODE_TOKEN_GROUP,
  JWS_SIGNATURE_PREFIX,
  KUBE_PUBLIC_NAMESPACE,
  bootstrapTokenSecret,
  computeDetachedSignature,
  formatBootstrapToken,
  generateBootstrapToken,
  parseBootstrapToken,
  type BootstrapToken,
} from './authn/bootstraptoken.js';
import { applyDefaults } from '../api/defaults/index.js';
import { rfc3339 } from '../api/time.js';
import { systemPriorityClassObjects } from './admission/plugins/priority.js';
import { hasStatusCode } from '../api/errors.js';
import { defaultServiceCIDRName, indexedAddress } from './registry/service/ipallocator.js';
import type { Registries } from './registry/registries.js';

const systemUser = { name: 'system:apiserver', groups: ['system:masters'] };

const namespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

async function ensure(registries: Registries, group: string, resource: string, namespace: string, obj: KubeObject): Promise<void> {
  const reg = registries.of(group, resource);
  try {
    await reg.get(namespace, obj.metadata!.name!);
    return;
  } catch (err) {
    if (!hasStatusCode(err, 404)) throw err;
  }
  applyDefaults(group, reg.info.kind, obj);
  try {
    await reg.create(namespace, obj, { dryRun: false, user: systemUser, subresource: '' });
  } catch (err) {
    // Another API server made it first.
    if (!hasStatusCode(err, 409)) throw err;
  }
}

export interface ServerEndpoint {
  ip: string;
  port: number;
}

/** The default --service-cluster-ip-range, as upstream's. */
export const defaultServiceClusterIPRange = '10.96.0.0/12';

/** The cluster DNS Service's address: the tenth of the range, as kubeadm derives clusterDNS. */
export const clusterDNSIP = (serviceClusterIPRange: string): string => indexedAddress(serviceClusterIPRange, 10);

/** The default ServiceCIDR as upstream's defaultservicecidr controller makes it, Ready from the start. */
async function ensureDefaultServiceCIDR(registries: Registries, cidrs: string[]): Promise<void> {
  await ensure(registries, 'networking.k8s.io', 'servicecidrs', '', {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'ServiceCIDR',
    metadata: { name: defaultServiceCIDRName },
    spec: { cidrs },
  });
  await registries.of('networking.k8s.io', 'servicecidrs').update(
    '',
    defaultServiceCIDRName,
    (current) => {
      const conditions = (current?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Ready' && c.status === 'True')) return current!;
      const ready = { type: 'Ready', status: 'True', lastTransitionTime: rfc3339(Date.now()), reason: '', message: 'Kubernetes default Service CIDR is ready' };
      return { ...current!, status: { conditions: [...conditions.filter((c) => c.type !== 'Ready'), ready] } };
    },
    { dryRun: false, user: systemUser, subresource: 'status' },
  );
}

export interface BootstrapOptions {
  /** --service-cluster-ip-range: one CIDR, or two of different families. */
  serviceClusterIPRange?: string;
}

const serviceCIDRs = (opts: BootstrapOptions) => (opts.serviceClusterIPRange ?? defaultServiceClusterIPRange).split(',');

/** The kubernetes Service's address: the first of the range (its serving certificate names it). */
export const kubernetesServiceIP = (opts: BootstrapOptions = {}): string => indexedAddress(serviceCIDRs(opts)[0]!, 1);

/**
 * The Services the cluster itself provides, made again when deleted (the API server runs this every
 * 10 s, as upstream's kubernetes service controller; kube-dns as the addon manager keeps CoreDNS's):
 * default/kubernetes at the range's first address, port https 443 to the secure port, and
 * kube-system/kube-dns at its tenth. An existing one is left as it is: servers of one cluster may
 * listen on different ports, and would take turns rewriting it.
 */
export async function ensureClusterServices(registries: Registries, securePort: number, opts: BootstrapOptions = {}): Promise<void> {
  const cidr = serviceCIDRs(opts)[0]!;
  await ensure(registries, '', 'services', 'default', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: indexedAddress(cidr, 1), ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: securePort }] },
  });
  // Selectorless: each node's DNS keeps its own EndpointSlice, and Local sends a pod's queries to its node.
  await ensure(registries, '', 'services', 'kube-system', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kube-dns', labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' } },
    spec: {
      type: 'ClusterIP',
      clusterIP: clusterDNSIP(cidr),
      internalTrafficPolicy: 'Local',
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      ],
    },
  });
}

/** The identity this server uses towards kubelets, whose APIs ask the server before serving it (SubjectAccessReview). */
export const APISERVER_KUBELET_CLIENT = 'kube-apiserver-kubelet-client';

export async function bootstrapObjects(registries: Registries, endpoint: ServerEndpoint, opts: BootstrapOptions = {}): Promise<void> {
  for (const name of namespaces) {
    await ensure(registries, '', 'namespaces', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  for (const pc of systemPriorityClassObjects()) await ensure(registries, 'scheduling.k8s.io', 'priorityclasses', '', pc as unknown as KubeObject);

  await ensureDefaultServiceCIDR(registries, serviceCIDRs(opts));
  await ensureClusterServices(registries, endpoint.port, opts);
  // The kubernetes Service's endpoints are the lease endpoint reconciler's (endpointreconciler.ts).
}

export interface JoinTokenOptions {
  dataDir: string;
  /** The server URL and CA a joining node is told about in cluster-info. */
  server: string;
  caPem: string;
}

/** The file `kite server` leaves the join token in, for `kite agent --token`. */
export const joinTokenFile = (dataDir: string): string => join(dataDir, 'join-token');

/**
 * The cluster's join token, made at first start as kubeadm init makes its default token (but without
 * an expiry: kite has no `token create` to make another), and cluster-info in kube-public carrying the
 * CA and server URL, signed with that token. The signature is kept here rather than by upstream's
 * bootstrapsigner controller, since the join token is the only one kite creates; its server URL is
 * rewritten at every start.
 */
export async function ensureJoinToken(registries: Registries, opts: JoinTokenOptions): Promise<BootstrapToken> {
  const secrets = registries.of('', 'secrets');
  let token = parseBootstrapToken((await readFile(joinTokenFile(opts.dataDir), 'utf8').catch(() => '')).trim());
  if (token) {
    try {
      await secrets.get('kube-system', bootstrapTokenSecret(token).metadata!.name!);
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
      token = undefined;
    }
  }
  if (!token) {
    token = generateBootstrapToken();
    const secret: Secret = bootstrapTokenSecret(token, {
      description: "The default bootstrap token generated by 'kite server'.",
      extraGroups: [DEFAULT_NODE_TOKEN_GROUP],
    });
    await secrets.create('kube-system', secret as KubeObject, { dryRun: false, user: systemUser, subresource: '' });
    await writeFileAtomic(joinTokenFile(opts.dataDir), `${formatBootstrapToken(token)}\n`, 0o600);
  }
  const kubeconfig = clusterInfoKubeconfig(opts.server, opts.caPem);
  await registries.of('', 'configmaps').update(
    KUBE_PUBLIC_NAMESPACE,
    CLUSTER_INFO_CONFIGMAP,
    (current) => {
      const data: Record<string, string> = { ...(current?.data as Record<string, string> | undefined), kubeconfig };
      data[`${JWS_SIGNATURE_PREFIX}${token.id}`] = computeDetachedSignature(kubeconfig, token);
      return { apiVersion: 'v1', kind: 'ConfigMap', ...current, metadata: { ...current?.metadata, name: CLUSTER_INFO_CONFIGMAP }, data };
    },
    { dryRun: false, user: systemUser, subresource: '', allowCreate: true },
  );
  return token;
}

/** The kubeconfig cluster-info holds: one unnamed cluster with the CA and server, no users. */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: '', cluster: { 'certificate-authority-data': Buffer.from(caPem).toString('base64'), server } }],
    contexts: [],
    'current-context': '',
    preferences: {},
    users: [],
  });
}
