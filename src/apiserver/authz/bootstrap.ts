// Two narrow rules for joining nodes until RBAC exists, standing in for kubeadm's bindings:
// - anyone (anonymous too) may read kube-public/cluster-info, which a joining node reads before it
//   trusts the server (kubeadm's bootstrap-signer-clusterinfo role);
// - bootstrap-token users may create and read CertificateSigningRequests and nothing else
//   (system:node-bootstrapper); they are denied the rest, so the authenticated-users stand-in after
//   this authorizer never sees them. system:masters sit earlier in the union and keep everything.
import { BOOTSTRAPPERS_GROUP, CLUSTER_INFO_CONFIGMAP, KUBE_PUBLIC_NAMESPACE } from '../authn/bootstraptoken.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from './authorizer.js';

/** The path of the cluster-info ConfigMap: the only resource the anonymous user may reach. */
export const clusterInfoPath = `/api/v1/namespaces/${KUBE_PUBLIC_NAMESPACE}/configmaps/${CLUSTER_INFO_CONFIGMAP}`;

const csrVerbs = new Set(['create', 'get', 'list', 'watch']);

export class ClusterInfoAuthorizer implements Authorizer {
  async authorize(a: AuthorizationAttributes): Promise<AuthorizationResult> {
    const match =
      a.isResourceRequest && a.verb === 'get' && a.apiGroup === '' && a.resource === 'configmaps' && a.subresource === '' && a.namespace === KUBE_PUBLIC_NAMESPACE && a.name === CLUSTER_INFO_CONFIGMAP;
    return { decision: match ? 'allow' : 'noOpinion' };
  }
}

export class BootstrapperAuthorizer implements Authorizer {
  async authorize(a: AuthorizationAttributes): Promise<AuthorizationResult> {
    if (!a.user.groups.includes(BOOTSTRAPPERS_GROUP)) return { decision: 'noOpinion' };
    const csr = a.isResourceRequest && a.apiGroup === 'certificates.k8s.io' && a.resource === 'certificatesigningrequests' && a.subresource === '';
    return { decision: csr && csrVerbs.has(a.verb) ? 'allow' : 'deny' };
  }
}
