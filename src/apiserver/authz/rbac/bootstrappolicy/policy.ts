// Upstream 1.33's bootstrap policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): the default
// ClusterRoles and their bindings, the controllers' roles (those kite runs), the namespaced roles
// and bindings; every object labelled kubernetes.io/bootstrapping=rbac-defaults and annotated
// autoupdate=true. Lists are sorted as upstream's rule builder sorts them. The `system:kite:*`
// objects at the end are kite's own additions (see docs/architecture.md).
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject } from '../../../../api/types.js';
import { rbacGroup } from '../../../../api/validation/rbac.js';
import { APISERVER_KUBELET_CLIENT } from '../../../bootstrap.js';

export const bootstrappingLabel = 'kubernetes.io/bootstrapping';
export const autoUpdateAnnotation = 'rbac.authorization.kubernetes.io/autoupdate';

const sorted = (vs: readonly string[]) => [...vs].sort();

/** A resource rule; names narrow it to those objects. */
function rule(verbs: readonly string[], apiGroups: readonly string[], resources: readonly string[], resourceNames?: readonly string[]): PolicyRule {
  return { apiGroups: sorted(apiGroups), resources: sorted(resources), ...(resourceNames && { resourceNames: sorted(resourceNames) }), verbs: sorted(verbs) };
}
const urls = (verbs: readonly string[], nonResourceURLs: readonly string[]): PolicyRule => ({ nonResourceURLs: sorted(nonResourceURLs), verbs: sorted(verbs) });

const read = ['get', 'list', 'watch'];
const readWrite = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const write = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const legacy = '';
const events = rule(['create', 'update', 'patch'], [legacy, 'events.k8s.io'], ['events']);

const meta = (name: string, labels: Record<string, string> = {}, namespace?: string) => ({
  name,
  ...(namespace && { namespace }),
  labels: { [bootstrappingLabel]: 'rbac-defaults', ...labels },
  annotations: { [autoUpdateAnnotation]: 'true' },
});

const clusterRole = (name: string, rules: PolicyRule[], labels?: Record<string, string>): ClusterRole => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'ClusterRole',
  metadata: meta(name, labels),
  rules,
});

const aggregated = (name: string, to: string, labels?: Record<string, string>): ClusterRole => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'ClusterRole',
  metadata: meta(name, labels),
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${to}`]: 'true' } }] },
});

export const group = (name: string): Subject => ({ apiGroup: rbacGroup, kind: 'Group', name });
export const user = (name: string): Subject => ({ apiGroup: rbacGroup, kind: 'User', name });
export const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

const clusterRoleBinding = (name: string, role: string, subjects: Subject[]): ClusterRoleBinding => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: meta(name),
  roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: role },
  ...(subjects.length > 0 && { subjects }),
});

const role = (namespace: string, name: string, rules: PolicyRule[]): Role => ({ apiVersion: `${rbacGroup}/v1`, kind: 'Role', metadata: meta(name, {}, namespace), rules });

const roleBinding = (namespace: string, name: string, roleName: string, subjects: Subject[], kind = 'Role'): RoleBinding => ({
  apiVersion: `${rbacGroup}/v1`,
  kind: 'RoleBinding',
  metadata: meta(name, {}, namespace),
  roleRef: { apiGroup: rbacGroup, kind, name: roleName },
  subjects,
});

const aggregateTo = (to: string) => ({ [`rbac.authorization.k8s.io/aggregate-to-${to}`]: 'true' });
const leaderLease = (name: string) => [rule(['create'], ['coordination.k8s.io'], ['leases']), rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], [name])];
const reviews = [rule(['create'], ['authentication.k8s.io'], ['tokenreviews']), rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])];
const approver = (signer: string) => [rule(['approve'], ['certificates.k8s.io'], ['signers'], [signer])];

export const clusterRoles: readonly ClusterRole[] = [
  clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
  clusterRole('system:discovery', [
    urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/']),
  ]),
  clusterRole('system:monitoring', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])]),
  clusterRole('system:basic-user', [
    rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
  ]),
  clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
  aggregated('admin', 'admin'),
  aggregated('edit', 'edit', aggregateTo('admin')),
  aggregated('view', 'view', aggregateTo('edit')),
  clusterRole(
    'system:aggregate-to-admin',
    [rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']), rule(readWrite, ['rbac.authorization.k8s.io'], ['roles', 'rolebindings'])],
    aggregateTo('admin'),
  ),
  clusterRole(
    'system:aggregate-to-edit',
    [
      rule(read, [legacy], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      rule(['impersonate'], [legacy], ['serviceaccounts']),
      rule(write, [legacy], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
      rule(['create'], [legacy], ['pods/eviction']),
      rule(write, [legacy], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
      rule(['create'], [legacy], ['serviceaccounts/token']),
      rule(write, ['apps'], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
      rule(write, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(write, ['batch'], ['jobs', 'cronjobs']),
      rule(write, ['extensions'], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets', 'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies']),
      rule(write, ['policy'], ['poddisruptionbudgets']),
      rule(write, ['networking.k8s.io'], ['networkpolicies', 'ingresses']),
      rule(readWrite, ['coordination.k8s.io'], ['leases']),
    ],
    aggregateTo('edit'),
  ),
  clusterRole(
    'system:aggregate-to-view',
    [
      rule(read, [legacy], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
      rule(read, [legacy], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
      rule(read, [legacy], ['namespaces']),
      rule(read, ['discovery.k8s.io'], ['endpointslices']),
      rule(read, ['apps'], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
      rule(read, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(read, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
      rule(read, ['extensions'], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses', 'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies']),
      rule(read, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(read, ['networking.k8s.io'], ['networkpolicies', 'ingresses', 'ingresses/status']),
    ],
    aggregateTo('view'),
  ),
  clusterRole('system:heapster', [rule(read, [legacy], ['events', 'pods', 'nodes', 'namespaces']), rule(read, ['extensions'], ['deployments'])]),
  clusterRole('system:node', [
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(read, [legacy], ['services']),
    rule(['create', 'get', 'list', 'watch'], [legacy], ['nodes']),
    rule(['update', 'patch'], [legacy], ['nodes/status']),
    rule(['update', 'patch'], [legacy], ['nodes']),
    rule(['create', 'update', 'patch'], [legacy], ['events']),
    rule(read, [legacy], ['pods']),
    rule(['create', 'delete'], [legacy], ['pods']),
    rule(['update', 'patch'], [legacy], ['pods/status']),
    rule(['create'], [legacy], ['pods/eviction']),
    rule(read, [legacy], ['secrets', 'configmaps']),
    rule(['get'], [legacy], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['get'], [legacy], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
    rule(['get'], ['storage.k8s.io'], ['volumeattachments']),
    rule(['create'], [legacy], ['serviceaccounts/token']),
    rule(['get', 'update', 'patch'], [legacy], ['persistentvolumeclaims/status']),
    rule(read, ['storage.k8s.io'], ['csidrivers']),
    rule(['get', 'create', 'update', 'patch', 'delete'], ['storage.k8s.io'], ['csinodes']),
    rule(read, ['node.k8s.io'], ['runtimeclasses']),
  ]),
  clusterRole('system:node-problem-detector', [rule(['get'], [legacy], ['nodes']), rule(['patch'], [legacy], ['nodes/status']), events]),
  clusterRole('system:kubelet-api-admin', [
    rule(read, [legacy], ['nodes']),
    rule(['proxy'], [legacy], ['nodes']),
    rule(['*'], [legacy], ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log']),
  ]),
  clusterRole('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests'])]),
  clusterRole('system:auth-delegator', reviews),
  clusterRole('system:kube-aggregator', [rule(read, [legacy], ['services', 'endpoints'])]),
  clusterRole('system:kube-controller-manager', [
    events,
    ...leaderLease('kube-controller-manager'),
    rule(['create'], [legacy], ['secrets', 'serviceaccounts']),
    rule(['delete'], [legacy], ['secrets']),
    rule(['get'], [legacy], ['configmaps', 'namespaces', 'secrets', 'serviceaccounts']),
    rule(['update'], [legacy], ['secrets', 'serviceaccounts']),
    ...reviews,
    rule(['list', 'watch'], ['*'], ['*']),
    rule(['create'], [legacy], ['serviceaccounts/token']),
  ]),
  clusterRole('system:kube-dns', [rule(['list', 'watch'], [legacy], ['endpoints', 'services'])]),
  clusterRole('system:persistent-volume-provisioner', [
    rule(['get', 'list', 'watch', 'create', 'delete'], [legacy], ['persistentvolumes']),
    rule(['get', 'list', 'watch', 'update'], [legacy], ['persistentvolumeclaims']),
    rule(read, ['storage.k8s.io'], ['storageclasses']),
    rule(['watch'], [legacy], ['events']),
    events,
  ]),
  clusterRole('system:certificates.k8s.io:certificatesigningrequests:nodeclient', [rule(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/nodeclient'])]),
  clusterRole('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [rule(['create'], ['certificates.k8s.io'], ['certificatesigningrequests/selfnodeclient'])]),
  clusterRole('system:certificates.k8s.io:kube-apiserver-client-approver', approver('kubernetes.io/kube-apiserver-client')),
  clusterRole('system:certificates.k8s.io:kube-apiserver-client-kubelet-approver', approver('kubernetes.io/kube-apiserver-client-kubelet')),
  clusterRole('system:certificates.k8s.io:kubelet-serving-approver', approver('kubernetes.io/kubelet-serving')),
  clusterRole('system:certificates.k8s.io:legacy-unknown-approver', approver('kubernetes.io/legacy-unknown')),
  clusterRole('system:service-account-issuer-discovery', [urls(['get'], ['/.well-known/openid-configuration', '/openid/v1/jwks'])]),
  clusterRole('system:kube-scheduler', [
    events,
    ...leaderLease('kube-scheduler'),
    rule(read, [legacy], ['nodes']),
    rule(['get', 'list', 'watch', 'delete'], [legacy], ['pods']),
    rule(['create'], [legacy], ['pods/binding', 'bindings']),
    rule(['patch', 'update'], [legacy], ['pods/status']),
    rule(read, [legacy], ['replicationcontrollers', 'services']),
    rule(read, ['apps', 'extensions'], ['replicasets']),
    rule(read, ['apps'], ['statefulsets']),
    rule(read, ['policy'], ['poddisruptionbudgets']),
    rule(read, [legacy], ['persistentvolumeclaims', 'persistentvolumes']),
    ...reviews,
    rule(read, ['storage.k8s.io'], ['csinodes']),
    rule(read, [legacy], ['namespaces']),
    rule(read, ['storage.k8s.io'], ['csidrivers']),
    rule(read, ['storage.k8s.io'], ['csistoragecapacities']),
  ]),
  clusterRole('system:volume-scheduler', [
    rule(['get', 'list', 'watch', 'update', 'patch'], [legacy], ['persistentvolumes']),
    rule(read, ['storage.k8s.io'], ['storageclasses']),
    rule(['get', 'list', 'watch', 'update', 'patch'], [legacy], ['persistentvolumeclaims']),
  ]),
  clusterRole('system:node-proxier', [
    rule(['list', 'watch'], [legacy], ['services', 'endpoints']),
    rule(read, [legacy], ['nodes']),
    events,
    rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
  ]),
];

export const clusterRoleBindings: readonly ClusterRoleBinding[] = [
  clusterRoleBinding('cluster-admin', 'cluster-admin', [group('system:masters')]),
  clusterRoleBinding('system:monitoring', 'system:monitoring', [group('system:monitoring')]),
  clusterRoleBinding('system:discovery', 'system:discovery', [group('system:authenticated')]),
  clusterRoleBinding('system:basic-user', 'system:basic-user', [group('system:authenticated')]),
  clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
  clusterRoleBinding('system:node-proxier', 'system:node-proxier', [user('system:kube-proxy')]),
  clusterRoleBinding('system:kube-controller-manager', 'system:kube-controller-manager', [user('system:kube-controller-manager')]),
  clusterRoleBinding('system:kube-dns', 'system:kube-dns', [serviceAccount('kube-system', 'kube-dns')]),
  clusterRoleBinding('system:kube-scheduler', 'system:kube-scheduler', [user('system:kube-scheduler')]),
  clusterRoleBinding('system:volume-scheduler', 'system:volume-scheduler', [user('system:kube-scheduler')]),
  // Bound to nobody since 1.8: the Node authorizer applies these rules to kubelets.
  clusterRoleBinding('system:node', 'system:node', []),
  clusterRoleBinding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
];

/** The controllers' roles (controller_policy.go), each bound to its service account in kube-system. */
const controllerRules: Record<string, PolicyRule[]> = {
  'certificate-controller': [
    rule(['get', 'list', 'watch', 'delete'], ['certificates.k8s.io'], ['certificatesigningrequests']),
    rule(['update'], ['certificates.k8s.io'], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
    rule(['approve'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet']),
    rule(['sign'], ['certificates.k8s.io'], ['signers'], ['kubernetes.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client-kubelet', 'kubernetes.io/kubelet-serving', 'kubernetes.io/legacy-unknown']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    events,
  ],
  'clusterrole-aggregation-controller': [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [rbacGroup], ['clusterroles'])],
  'cronjob-controller': [
    rule(['get', 'list', 'watch', 'update'], ['batch'], ['cronjobs']),
    rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['cronjobs/status']),
    rule(['update'], ['batch'], ['cronjobs/finalizers']),
    rule(['list', 'watch', 'delete'], [legacy], ['pods']),
    events,
  ],
  'daemon-set-controller': [
    rule(read, ['apps', 'extensions'], ['daemonsets']),
    rule(['update'], ['apps', 'extensions'], ['daemonsets/status']),
    rule(['update'], ['apps', 'extensions'], ['daemonsets/finalizers']),
    rule(['list', 'watch'], [legacy], ['nodes']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [legacy], ['pods']),
    rule(['create'], [legacy], ['pods/binding']),
    rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], ['apps'], ['controllerrevisions']),
    events,
  ],
  'deployment-controller': [
    rule(['get', 'list', 'watch', 'update'], ['apps', 'extensions'], ['deployments']),
    rule(['update'], ['apps', 'extensions'], ['deployments/status']),
    rule(['update'], ['apps', 'extensions'], ['deployments/finalizers']),
    rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps', 'extensions'], ['replicasets']),
    rule(['get', 'list', 'watch', 'update'], [legacy], ['pods']),
    events,
  ],
  'disruption-controller': [
    rule(read, ['apps', 'extensions'], ['deployments']),
    rule(read, ['apps', 'extensions'], ['replicasets']),
    rule(read, [legacy], ['replicationcontrollers']),
    rule(read, ['policy'], ['poddisruptionbudgets']),
    rule(read, ['apps'], ['statefulsets']),
    rule(['update'], ['policy'], ['poddisruptionbudgets/status']),
    rule(['patch', 'update'], [legacy], ['pods/status']),
    rule(['get'], ['*'], ['*/scale']),
    events,
  ],
  'endpoint-controller': [
    rule(read, [legacy], ['services', 'pods']),
    rule(['get', 'list', 'create', 'update', 'delete', 'watch'], [legacy], ['endpoints']),
    rule(['create'], [legacy], ['endpoints/restricted']),
    events,
  ],
  'endpointslice-controller': [
    rule(read, [legacy], ['services', 'pods', 'nodes']),
    rule(['update'], [legacy], ['services/finalizers']),
    rule(['get', 'list', 'create', 'update', 'delete', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
    events,
  ],
  'generic-garbage-collector': [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), events],
  'horizontal-pod-autoscaler': [
    rule(read, ['autoscaling'], ['horizontalpodautoscalers']),
    rule(['update'], ['autoscaling'], ['horizontalpodautoscalers/status']),
    rule(['get', 'update'], ['*'], ['*/scale']),
    rule(['list', 'watch'], [legacy], ['pods']),
    rule(['list', 'watch'], ['metrics.k8s.io'], ['pods']),
    rule(read, ['custom.metrics.k8s.io'], ['*']),
    rule(read, ['external.metrics.k8s.io'], ['*']),
    events,
  ],
  'job-controller': [
    rule(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['jobs/status']),
    rule(['update'], ['batch'], ['jobs/finalizers']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [legacy], ['pods']),
    events,
  ],
  'namespace-controller': [
    rule(['get', 'list', 'watch', 'delete'], [legacy], ['namespaces']),
    rule(['update'], [legacy], ['namespaces/finalize', 'namespaces/status']),
    rule(['get', 'list', 'watch', 'delete', 'deletecollection'], ['*'], ['*']),
  ],
  'node-controller': [
    rule(['get', 'list', 'update', 'delete', 'patch', 'watch'], [legacy], ['nodes']),
    rule(['patch', 'update'], [legacy], ['nodes/status']),
    rule(['patch', 'update'], [legacy], ['pods/status']),
    rule(['list', 'watch', 'delete', 'get'], [legacy], ['pods']),
    events,
  ],
  'pod-garbage-collector': [rule(['list', 'watch', 'delete'], [legacy], ['pods']), rule(read, [legacy], ['nodes']), rule(['patch'], [legacy], ['pods/status'])],
  'replicaset-controller': [
    rule(['get', 'list', 'watch', 'update'], ['apps', 'extensions'], ['replicasets']),
    rule(['update'], ['apps', 'extensions'], ['replicasets/status']),
    rule(['update'], ['apps', 'extensions'], ['replicasets/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [legacy], ['pods']),
    events,
  ],
  'replication-controller': [
    rule(['get', 'list', 'watch', 'update'], [legacy], ['replicationcontrollers']),
    rule(['update'], [legacy], ['replicationcontrollers/status']),
    rule(['update'], [legacy], ['replicationcontrollers/finalizers']),
    rule(['list', 'watch', 'patch', 'create', 'delete'], [legacy], ['pods']),
    events,
  ],
  'resourcequota-controller': [rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [legacy], ['resourcequotas/status']), events],
  'root-ca-cert-publisher': [rule(['create', 'update'], [legacy], ['configmaps']), events],
  'service-account-controller': [rule(['create'], [legacy], ['serviceaccounts']), events],
  'validatingadmissionpolicy-status-controller': [
    rule(['get', 'list', 'watch'], ['admissionregistration.k8s.io'], ['validatingadmissionpolicies']),
    rule(['get', 'patch', 'update'], ['admissionregistration.k8s.io'], ['validatingadmissionpolicies/status']),
    events,
  ],
  'service-cidrs-controller': [
    rule(['get', 'list', 'watch', 'patch', 'update'], ['networking.k8s.io'], ['servicecidrs']),
    rule(['patch', 'update'], ['networking.k8s.io'], ['servicecidrs/finalizers']),
    rule(['patch', 'update'], ['networking.k8s.io'], ['servicecidrs/status']),
    rule(read, ['networking.k8s.io'], ['ipaddresses']),
    events,
  ],
  'statefulset-controller': [
    rule(['list', 'watch'], [legacy], ['pods']),
    rule(read, ['apps'], ['statefulsets']),
    rule(['update'], ['apps'], ['statefulsets/status']),
    rule(['update'], ['apps'], ['statefulsets/finalizers']),
    rule(['get', 'create', 'delete', 'update', 'patch'], [legacy], ['pods']),
    rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], ['apps'], ['controllerrevisions']),
    rule(['get', 'create', 'list', 'watch'], [legacy], ['persistentvolumeclaims']),
    rule(['update', 'delete'], [legacy], ['persistentvolumeclaims']),
    rule(['update'], [legacy], ['pods/finalizers']),
    events,
  ],
  'ttl-after-finished-controller': [rule(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs']), events],
};

export const controllerRoles: readonly ClusterRole[] = Object.entries(controllerRules).map(([sa, rules]) => clusterRole(`system:controller:${sa}`, rules));
export const controllerRoleBindings: readonly ClusterRoleBinding[] = Object.keys(controllerRules).map((sa) =>
  clusterRoleBinding(`system:controller:${sa}`, `system:controller:${sa}`, [serviceAccount('kube-system', sa)]),
);

export const namespaceRoles: readonly Role[] = [
  role('kube-public', 'system:controller:bootstrap-signer', [rule(read, [legacy], ['configmaps']), rule(['update'], [legacy], ['configmaps'], ['cluster-info']), events]),
  role('kube-system', 'extension-apiserver-authentication-reader', [rule(read, [legacy], ['configmaps'], ['extension-apiserver-authentication'])]),
  ...['kube-controller-manager', 'kube-scheduler'].map((c) =>
    role('kube-system', `system::leader-locking-${c}`, [
      rule(['watch', 'get', 'list', 'create', 'update'], ['coordination.k8s.io'], ['leases']),
      rule(['watch', 'get', 'list', 'create', 'update'], ['coordination.k8s.io'], ['leasecandidates']),
    ]),
  ),
  role('kube-system', 'system:controller:bootstrap-signer', [rule(read, [legacy], ['secrets'])]),
  role('kube-system', 'system:controller:cloud-provider', [rule(['create', 'get', 'list', 'watch'], [legacy], ['configmaps'])]),
  role('kube-system', 'system:controller:token-cleaner', [rule(['delete', 'get', 'list', 'watch'], [legacy], ['secrets']), events]),
];

export const namespaceRoleBindings: readonly RoleBinding[] = [
  roleBinding('kube-public', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [serviceAccount('kube-system', 'bootstrap-signer')]),
  roleBinding('kube-system', 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader', [user('system:kube-controller-manager'), user('system:kube-scheduler')]),
  roleBinding('kube-system', 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', [
    user('system:kube-controller-manager'),
    serviceAccount('kube-system', 'kube-controller-manager'),
  ]),
  roleBinding('kube-system', 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', [user('system:kube-scheduler'), serviceAccount('kube-system', 'kube-scheduler')]),
  roleBinding('kube-system', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [serviceAccount('kube-system', 'bootstrap-signer')]),
  roleBinding('kube-system', 'system:controller:cloud-provider', 'system:controller:cloud-provider', [serviceAccount('kube-system', 'cloud-provider')]),
  roleBinding('kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', [serviceAccount('kube-system', 'token-cleaner')]),
];

// ---- kite's additions ----
// What kubeadm adds for joining nodes, and what kite's node agent needs beyond the kubelet's rights:
// its cluster DNS and service proxy run with the node's credentials (upstream runs them as their own
// service accounts), so the node group may read what they watch and write its DNS EndpointSlice.

export const kiteClusterRoles: readonly ClusterRole[] = [
  clusterRole('system:kite:node-agent', [
    rule(['list', 'watch'], [legacy], ['pods', 'namespaces', 'nodes']),
    rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
    rule(['list', 'watch'], ['networking.k8s.io'], ['networkpolicies']),
  ]),
  // The pod timeline: whoever may view pods may read their timelines (view, and through it edit and
  // admin); the components that record steps may send them.
  clusterRole('system:kite:aggregate-to-view-podtimelines', [rule(read, ['timeline.kite.dev'], ['podtimelines'])], aggregateTo('view')),
  clusterRole('system:kite:pod-timeline-recorder', [rule(['create'], ['timeline.kite.dev'], ['podtimelinestepbatches'])]),
];

export const kiteClusterRoleBindings: readonly ClusterRoleBinding[] = [
  clusterRoleBinding('system:kite:node-agent', 'system:kite:node-agent', [group('system:nodes')]),
  // Kubelets (only for their own pods: the batch handler checks), the scheduler, and the EndpointSlice
  // controller under its own service account or the controller manager's shared identity. `kite sim`
  // uses an admin kubeconfig and needs no binding.
  clusterRoleBinding('system:kite:pod-timeline-recorder', 'system:kite:pod-timeline-recorder', [
    group('system:nodes'),
    user('system:kube-scheduler'),
    user('system:kube-controller-manager'),
    serviceAccount('kube-system', 'endpointslice-controller'),
  ]),
  // kubeadm's kubeadm:kubelet-bootstrap, kubeadm:node-autoapprove-bootstrap and -certificate-rotation.
  clusterRoleBinding('system:kite:node-bootstrapper', 'system:node-bootstrapper', [group('system:bootstrappers')]),
  clusterRoleBinding('system:kite:node-autoapprove-bootstrap', 'system:certificates.k8s.io:certificatesigningrequests:nodeclient', [group('system:bootstrappers')]),
  clusterRoleBinding('system:kite:node-autoapprove-certificate-rotation', 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', [group('system:nodes')]),
  // kite's approver also approves a node's own serving certificate (upstream leaves that to the operator).
  clusterRoleBinding('system:kite:kubelet-serving-approver', 'system:certificates.k8s.io:kubelet-serving-approver', [serviceAccount('kube-system', 'certificate-controller')]),
  // kubeadm's kube-apiserver-kubelet-client: kubelets ask this server whether its client may use their API (logs, exec, metrics).
  clusterRoleBinding('kube-apiserver-kubelet-client', 'system:kubelet-api-admin', [user(APISERVER_KUBELET_CLIENT)]),
];

export const kiteRoles: readonly Role[] = [
  // kubeadm's kubeadm:bootstrap-signer-clusterinfo: joining nodes read cluster-info before they have credentials.
  role('kube-public', 'system:kite:bootstrap-signer-clusterinfo', [rule(['get'], [legacy], ['configmaps'], ['cluster-info'])]),
  role('kube-system', 'system:kite:node-dns', [rule(['get', 'create', 'update', 'patch', 'delete'], ['discovery.k8s.io'], ['endpointslices'])]),
];

export const kiteRoleBindings: readonly RoleBinding[] = [
  roleBinding('kube-public', 'system:kite:bootstrap-signer-clusterinfo', 'system:kite:bootstrap-signer-clusterinfo', [user('system:anonymous')]),
  roleBinding('kube-system', 'system:kite:node-dns', 'system:kite:node-dns', [group('system:nodes')]),
];
