// Joining nodes read kube-public/cluster-info before they trust the server, anonymously: the
// anonymous authenticator admits that one path, and RBAC's system:kite:bootstrap-signer-clusterinfo
// Role (kubeadm's bootstrap-signer-clusterinfo) allows it.
import { CLUSTER_INFO_CONFIGMAP, KUBE_PUBLIC_NAMESPACE } from '../authn/bootstraptoken.js';

/** The path of the cluster-info ConfigMap: the only resource the anonymous user may reach. */
export const clusterInfoPath = `/api/v1/namespaces/${KUBE_PUBLIC_NAMESPACE}/configmaps/${CLUSTER_INFO_CONFIGMAP}`;
