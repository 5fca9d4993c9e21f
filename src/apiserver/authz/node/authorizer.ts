// The Node authorizer (plugin/pkg/auth/authorizer/node), for kubelets (`system:node:<name>` in
// system:nodes): secrets, configmaps, PVCs and service-account tokens only of pods bound to the node,
// reads of its own Node and Lease only, its pods' status, mirror pods and evictions (NodeRestriction
// narrows the writes); anything else is judged by the system:node ClusterRole's rules. Upstream keeps
// a graph of pods, volumes and nodes; kite indexes the pods of the watch cache by spec.nodeName,
// rebuilt when the pods changed and a decision needs it.
import type { PolicyRule, Pod } from '../../../api/types.js';
import { NODES_GROUP, NODE_USER_PREFIX } from '../../../api/certificates.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authorizer.js';
import { ruleAllows } from '../rbac/rule.js';

export interface NodePodSource {
  /** Grows whenever the pods change. */
  version(): number;
  pods(): readonly Pod[];
}

const nodeLeaseNamespace = 'kube-node-lease';
const allow: AuthorizationResult = { decision: 'allow' };
const noOpinion = (reason?: string): AuthorizationResult => ({ decision: 'noOpinion', reason });

type Kind = 'secret' | 'configmap' | 'pvc' | 'serviceaccount' | 'pod';

/** Every object a pod makes its node reach: `kind/namespace/name`. */
export function podReferences(pod: Pod): string[] {
  const ns = pod.metadata?.namespace ?? '';
  const refs = new Set<string>([`pod/${ns}/${pod.metadata?.name}`, `serviceaccount/${ns}/${pod.spec?.serviceAccountName || 'default'}`]);
  const add = (kind: Kind, name: string | undefined) => name && refs.add(`${kind}/${ns}/${name}`);
  const spec = pod.spec;
  for (const s of spec?.imagePullSecrets ?? []) add('secret', s.name);
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])]) {
    for (const e of c.env ?? []) {
      add('secret', e.valueFrom?.secretKeyRef?.name);
      add('configmap', e.valueFrom?.configMapKeyRef?.name);
    }
    for (const e of c.envFrom ?? []) {
      add('secret', e.secretRef?.name);
      add('configmap', e.configMapRef?.name);
    }
  }
  for (const v of spec?.volumes ?? []) {
    add('secret', v.secret?.secretName);
    add('configmap', v.configMap?.name);
    add('pvc', v.persistentVolumeClaim?.claimName);
    for (const p of v.projected?.sources ?? []) {
      add('secret', p.secret?.name);
      add('configmap', p.configMap?.name);
    }
    for (const ref of [v.csi?.nodePublishSecretRef, v.cephfs?.secretRef, v.flexVolume?.secretRef, v.iscsi?.secretRef, v.rbd?.secretRef, v.scaleIO?.secretRef, v.storageos?.secretRef]) add('secret', ref?.name);
    add('secret', v.azureFile?.secretName);
  }
  return [...refs];
}

/** The value of an `=`/`==` requirement on field in a field selector. */
function selectorValue(selector: string | undefined, field: string): string | undefined {
  for (const req of (selector ?? '').split(',')) {
    const m = /^\s*([^!=\s]+)\s*==?\s*(.*?)\s*$/.exec(req);
    if (m?.[1] === field) return m[2];
  }
  return undefined;
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  private byNode = new Map<string, Set<string>>();
  private indexVersion = -1;

  constructor(
    private readonly source: NodePodSource,
    private readonly nodeRules: readonly PolicyRule[],
  ) {}

  private related(node: string, kind: Kind, namespace: string, name: string): boolean {
    const v = this.source.version();
    if (v !== this.indexVersion) {
      const byNode = new Map<string, Set<string>>();
      for (const pod of this.source.pods()) {
        const n = pod.spec?.nodeName;
        if (!n) continue;
        let refs = byNode.get(n);
        if (!refs) byNode.set(n, (refs = new Set()));
        for (const r of podReferences(pod)) refs.add(r);
      }
      this.byNode = byNode;
      this.indexVersion = v;
    }
    return this.byNode.get(node)?.has(`${kind}/${namespace}/${name}`) ?? false;
  }

  async authorize(a: AuthorizationAttributes): Promise<AuthorizationResult> {
    if (!a.user.groups.includes(NODES_GROUP)) return noOpinion();
    const node = a.user.name.startsWith(NODE_USER_PREFIX) ? a.user.name.slice(NODE_USER_PREFIX.length) : '';
    if (!node) return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);
    // Upstream's RequestInfo names the object of a list or watch narrowed to one name.
    const name = a.name || ((a.verb === 'list' || a.verb === 'watch') && selectorValue(a.fieldSelector, 'metadata.name')) || '';
    if (a.isResourceRequest) {
      const group = a.apiGroup;
      if (group === '' && a.resource === 'secrets') return this.readNamespaced(node, 'secret', a, name);
      if (group === '' && a.resource === 'configmaps') return this.readNamespaced(node, 'configmap', a, name);
      if (group === '' && a.resource === 'persistentvolumeclaims') return this.get(node, 'pvc', a, name);
      if (group === '' && a.resource === 'serviceaccounts') return this.createToken(node, a, name);
      if (group === 'coordination.k8s.io' && a.resource === 'leases') return this.lease(node, a, name);
      if (group === '' && a.resource === 'nodes') return this.node(node, a, name);
      if (group === '' && a.resource === 'pods') return this.pod(node, a, name);
    }
    return this.nodeRules.some((r) => ruleAllows(a, r)) ? allow : noOpinion();
  }

  private check(node: string, kind: Kind, namespace: string, name: string): AuthorizationResult {
    if (!name) return noOpinion('No Object name found');
    return this.related(node, kind, namespace, name) ? allow : noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private readNamespaced(node: string, kind: Kind, a: AuthorizationAttributes, name: string): AuthorizationResult {
    if (!['get', 'list', 'watch'].includes(a.verb)) return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return this.check(node, kind, a.namespace, name);
  }

  private get(node: string, kind: Kind, a: AuthorizationAttributes, name: string): AuthorizationResult {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return this.check(node, kind, a.namespace, name);
  }

  private createToken(node: string, a: AuthorizationAttributes, name: string): AuthorizationResult {
    if (a.verb !== 'create' || !name) return noOpinion('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return this.related(node, 'serviceaccount', a.namespace, name) ? allow : noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private lease(node: string, a: AuthorizationAttributes, name: string): AuthorizationResult {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== nodeLeaseNamespace) return noOpinion(`can only access leases in the ${JSON.stringify(nodeLeaseNamespace)} system namespace`);
    // A create names no object yet; NodeRestriction checks the name.
    if (a.verb !== 'create' && name !== node) return noOpinion('can only access node lease with the same name as the requesting node');
    return allow;
  }

  private node(node: string, a: AuthorizationAttributes, name: string): AuthorizationResult {
    if (a.subresource === '' && ['create', 'update', 'patch'].includes(a.verb)) return allow;
    if (a.subresource === '' && ['get', 'list', 'watch'].includes(a.verb)) {
      if (name === node) return allow;
      return noOpinion(name === '' ? `node '${node}' cannot read all nodes, only its own Node object` : `node '${node}' cannot read '${name}', only its own Node object`);
    }
    if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return allow;
    return noOpinion();
  }

  private pod(node: string, a: AuthorizationAttributes, name: string): AuthorizationResult {
    switch (a.subresource) {
      case '':
        if (a.verb === 'get') return this.get(node, 'pod', a, name);
        if (a.verb === 'list' || a.verb === 'watch') {
          if (selectorValue(a.fieldSelector, 'spec.nodeName') === node) return allow;
          if (name) return this.check(node, 'pod', a.namespace, name);
          return noOpinion('can only list/watch pods with spec.nodeName field selector');
        }
        // Mirror pods; NodeRestriction limits them to pods bound to this node.
        if (a.verb === 'create' || a.verb === 'delete') return allow;
        break;
      case 'status':
        if (a.verb === 'update' || a.verb === 'patch') return allow;
        break;
      case 'eviction':
        if (a.verb === 'create') return allow;
        break;
    }
    return noOpinion();
  }
}
