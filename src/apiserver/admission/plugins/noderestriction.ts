// NodeRestriction, as upstream's: a kubelet (system:node:<name> in system:nodes) may change only what
// belongs to its node — its own Node (no taint changes, no kubernetes.io / k8s.io labels beyond the
// kubelet's own, none under node-restriction.kubernetes.io), mirror pods bound to itself, the
// status and deletion of its pods, and its Lease in kube-node-lease. Other users pass untouched.
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { isDeepStrictEqual } from 'node:util';
import { notFound } from '../../../api/errors.js';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../../api/certificates.js';
import type { UserInfo } from '../../authn/user.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'NodeRestriction';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const NODE_LEASE_NAMESPACE = 'kube-node-lease';
const NODE_RESTRICTION_LABEL_NAMESPACE = 'node-restriction.kubernetes.io';

/** The labels a kubelet sets on its own Node (upstream's kubeletapis.IsKubeletLabel). */
const kubeletLabels = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const kubeletLabelNamespaces = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** The node a user is, as upstream's NodeIdentifier: in system:nodes; '' when its name names none. */
export function nodeIdentity(user: UserInfo): { isNode: boolean; nodeName: string } {
  if (!user.groups.includes(NODES_GROUP)) return { isNode: false, nodeName: '' };
  return { isNode: true, nodeName: user.name.startsWith(NODE_USER_PREFIX) ? user.name.slice(NODE_USER_PREFIX.length) : '' };
}

const labelNamespace = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (namespace: string, domain: string) => namespace === domain || namespace.endsWith(`.${domain}`);

function isKubeletLabel(key: string): boolean {
  return kubeletLabels.has(key) || kubeletLabelNamespaces.some((d) => inDomain(labelNamespace(key), d));
}

/** The labels a node may not add, remove or change, sorted. */
export function forbiddenLabels(labels: Record<string, string> = {}, old: Record<string, string> = {}): string[] {
  const modified = new Set<string>();
  for (const [k, v] of Object.entries(labels)) if (!Object.hasOwn(old, k) || old[k] !== v) modified.add(k);
  for (const [k, v] of Object.entries(old)) if (!Object.hasOwn(labels, k) || labels[k] !== v) modified.add(k);
  return [...modified]
    .filter((key) => {
      const ns = labelNamespace(key);
      if (inDomain(ns, NODE_RESTRICTION_LABEL_NAMESPACE)) return true;
      return (inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io')) && !isKubeletLabel(key);
    })
    .sort();
}

export class NodeRestriction implements MutatingAdmissionPlugin {
  readonly name = pluginName;

  constructor(private readonly deps: { lookups: AdmissionLookups }) {}

  handles(a: AdmissionAttributes): boolean {
    return nodeIdentity(a.user).isNode;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const { nodeName } = nodeIdentity(a.user);
    if (!nodeName) throw admissionForbidden(a, `could not determine node from user ${JSON.stringify(a.user.name)}`);
    const { group, resource } = a.resource;
    if (group === '' && resource === 'pods') return this.admitPod(nodeName, a);
    if (group === '' && resource === 'nodes') return admitNode(nodeName, a);
    if (group === 'coordination.k8s.io' && resource === 'leases') return admitLease(nodeName, a);
  }

  private async admitPod(nodeName: string, a: AdmissionAttributes): Promise<void> {
    const q = JSON.stringify(nodeName);
    if (a.subresource === 'status') {
      if (a.operation !== 'UPDATE') throw admissionForbidden(a, `unexpected operation ${JSON.stringify(a.operation)}`);
      const old = a.oldObject as Pod;
      if (old.spec?.nodeName !== nodeName) throw admissionForbidden(a, `node ${q} can only update pod status for pods with spec.nodeName set to itself`);
      if (!isDeepStrictEqual(old.metadata?.labels ?? {}, a.object?.metadata?.labels ?? {})) throw admissionForbidden(a, `node ${q} cannot update labels through pod status`);
      return;
    }
    if (a.subresource !== '') throw admissionForbidden(a, `unexpected pod subresource ${JSON.stringify(a.subresource)}, only 'status' and 'eviction' are allowed`);
    if (a.operation === 'CREATE') return this.admitPodCreate(nodeName, a.object as Pod, a);
    if (a.operation === 'DELETE') {
      const existing = (a.oldObject as Pod | undefined) ?? (await this.deps.lookups.get('pods', a.namespace, a.name));
      if (!existing) throw notFound({ group: '', resource: 'pods' }, a.name);
      if (existing.spec?.nodeName !== nodeName) throw admissionForbidden(a, `node ${q} can only delete pods with spec.nodeName set to itself`);
      return;
    }
    throw admissionForbidden(a, `unexpected operation ${JSON.stringify(a.operation)}, node ${q} can only create and delete mirror pods`);
  }

  private async admitPodCreate(nodeName: string, pod: Pod, a: AdmissionAttributes): Promise<void> {
    const q = JSON.stringify(nodeName);
    if (!Object.hasOwn(pod.metadata?.annotations ?? {}, MIRROR_POD_ANNOTATION)) {
      throw admissionForbidden(a, `pod does not have ${JSON.stringify(MIRROR_POD_ANNOTATION)} annotation, node ${q} can only create mirror pods`);
    }
    if (pod.spec?.nodeName !== nodeName) throw admissionForbidden(a, `node ${q} can only create pods with spec.nodeName set to itself`);
    const owners = pod.metadata?.ownerReferences ?? [];
    if (owners.length > 1) throw admissionForbidden(a, `node ${q} can only create pods with a single owner reference set to itself`);
    const owner = owners[0];
    if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== nodeName) {
      throw admissionForbidden(a, `node ${q} can only create pods with an owner reference set to itself`);
    }
    if (!owner.controller) throw admissionForbidden(a, `node ${q} can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion) throw admissionForbidden(a, `node ${q} must not set blockOwnerDeletion on an owner reference`);
    const node = await this.deps.lookups.get('nodes', '', nodeName);
    if (!node) throw notFound({ group: '', resource: 'nodes' }, nodeName);
    if (owner.uid !== node.metadata?.uid) throw admissionForbidden(a, `node ${nodeName} UID mismatch: expected ${owner.uid} got ${node.metadata?.uid ?? ''}`);
    // A mirror pod may reference no other API object.
    const spec = pod.spec;
    if (spec.serviceAccountName) throw admissionForbidden(a, `node ${q} can not create pods that reference a service account`);
    const containers = [...(spec.initContainers ?? []), ...spec.containers, ...((spec.ephemeralContainers ?? []) as typeof spec.containers)];
    const volumes = spec.volumes ?? [];
    const env = containers.flatMap((c) => [...(c.env ?? []).map((e) => e.valueFrom ?? {}), ...(c.envFrom ?? [])]);
    const projected = volumes.flatMap((v) => v.projected?.sources ?? []);
    const secrets =
      (spec.imagePullSecrets ?? []).length > 0 ||
      env.some((e) => 'secretKeyRef' in e || 'secretRef' in e) ||
      projected.some((s) => s.secret) ||
      volumes.some((v) => v.secret || v.azureFile || v.cephfs?.secretRef || v.cinder?.secretRef || v.flexVolume?.secretRef || v.iscsi?.secretRef || v.rbd?.secretRef || v.scaleIO?.secretRef || v.storageos?.secretRef || v.csi?.nodePublishSecretRef);
    if (secrets) throw admissionForbidden(a, `node ${q} can not create pods that reference secrets`);
    if (env.some((e) => 'configMapKeyRef' in e || 'configMapRef' in e) || projected.some((s) => s.configMap) || volumes.some((v) => v.configMap)) {
      throw admissionForbidden(a, `node ${q} can not create pods that reference configmaps`);
    }
    if (projected.some((s) => 'clusterTrustBundle' in s)) throw admissionForbidden(a, `node ${q} can not create pods that reference clustertrustbundles`);
    if (volumes.some((v) => v.persistentVolumeClaim)) throw admissionForbidden(a, `node ${q} can not create pods that reference persistentvolumeclaims`);
  }
}

function admitNode(nodeName: string, a: AdmissionAttributes): void {
  const q = JSON.stringify(nodeName);
  // On create the name is the object's.
  const requested = a.name || a.object?.metadata?.name || '';
  if (requested !== nodeName) throw admissionForbidden(a, `node ${q} is not allowed to modify node ${JSON.stringify(requested)}`);
  const node = a.object as Node | undefined;
  if (a.operation === 'CREATE' && node) {
    if (node.spec?.configSource) throw admissionForbidden(a, `node ${q} is not allowed to create pods with a non-nil configSource`);
    const labels = forbiddenLabels(node.metadata?.labels);
    if (labels.length) throw admissionForbidden(a, `node ${q} is not allowed to set the following labels: ${labels.join(', ')}`);
  }
  if (a.operation === 'UPDATE' && node) {
    const old = a.oldObject as Node;
    if (node.spec?.configSource && !isDeepStrictEqual(node.spec.configSource, old.spec?.configSource)) {
      throw admissionForbidden(a, `node ${q} is not allowed to update configSource to a new non-nil configSource`);
    }
    if (!isDeepStrictEqual(node.spec?.taints ?? [], old.spec?.taints ?? [])) throw admissionForbidden(a, `node ${q} is not allowed to modify taints`);
    const labels = forbiddenLabels(node.metadata?.labels, old.metadata?.labels);
    if (labels.length) throw admissionForbidden(a, `is not allowed to modify labels: ${labels.join(', ')}`);
  }
}

function admitLease(nodeName: string, a: AdmissionAttributes): void {
  if (a.namespace !== NODE_LEASE_NAMESPACE) throw admissionForbidden(a, `can only access leases in the ${JSON.stringify(NODE_LEASE_NAMESPACE)} system namespace`);
  const name = a.operation === 'CREATE' ? (a.object?.metadata?.name ?? '') : a.name;
  if (name !== nodeName) throw admissionForbidden(a, 'can only access node lease with the same name as the requesting node');
}
