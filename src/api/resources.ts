// The catalog of served resources: the single source for discovery, routing, OpenAPI, printers and clients.

export interface SubresourceInfo {
  name: string; // 'status', 'binding', 'log', ...
  kind: string; // response kind
  group?: string; // response kind's group if it differs ('' for core kinds like Scale in apps: 'autoscaling')
  version?: string;
  verbs: string[];
}

export interface ResourceInfo {
  group: string;
  version: string;
  resource: string; // plural, e.g. 'pods'
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs: string[];
  subresources: SubresourceInfo[];
  /** The Warning every request on a deprecated resource gets (upstream's deprecated-resource warning). */
  deprecationWarning?: string;
}

const rw = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const statusSub = (kind: string): SubresourceInfo => ({ name: 'status', kind, verbs: ['get', 'patch', 'update'] });
const SCALE: SubresourceInfo = { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] };

function res(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<Pick<ResourceInfo, 'shortNames' | 'categories' | 'verbs' | 'subresources' | 'singular' | 'deprecationWarning'>> = {},
): ResourceInfo {
  return {
    group,
    version,
    resource,
    singular: extra.singular ?? kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: extra.shortNames,
    categories: extra.categories,
    verbs: extra.verbs ?? rw,
    subresources: extra.subresources ?? [],
    ...(extra.deprecationWarning ? { deprecationWarning: extra.deprecationWarning } : {}),
  };
}

export const resources: readonly ResourceInfo[] = [
  res('', 'v1', 'namespaces', 'Namespace', false, {
    shortNames: ['ns'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [statusSub('Namespace'), { name: 'finalize', kind: 'Namespace', verbs: ['update'] }],
  }),
  res('', 'v1', 'pods', 'Pod', true, {
    shortNames: ['po'],
    categories: ['all'],
    subresources: [
      statusSub('Pod'),
      { name: 'binding', kind: 'Binding', verbs: ['create'] },
      { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
      { name: 'log', kind: 'Pod', verbs: ['get'] },
      { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
      { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
      { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    ],
  }),
  res('', 'v1', 'nodes', 'Node', false, { shortNames: ['no'], subresources: [statusSub('Node')] }),
  res('', 'v1', 'events', 'Event', true, { shortNames: ['ev'] }),
  res('', 'v1', 'configmaps', 'ConfigMap', true, { shortNames: ['cm'] }),
  res('', 'v1', 'secrets', 'Secret', true),
  res('', 'v1', 'services', 'Service', true, {
    shortNames: ['svc'],
    categories: ['all'],
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    subresources: [statusSub('Service')],
  }),
  res('', 'v1', 'serviceaccounts', 'ServiceAccount', true, {
    shortNames: ['sa'],
    subresources: [{ name: 'token', kind: 'TokenRequest', group: 'authentication.k8s.io', version: 'v1', verbs: ['create'] }],
  }),
  res('', 'v1', 'resourcequotas', 'ResourceQuota', true, { shortNames: ['quota'], subresources: [statusSub('ResourceQuota')] }),
  res('', 'v1', 'limitranges', 'LimitRange', true, { shortNames: ['limits'] }),
  res('', 'v1', 'endpoints', 'Endpoints', true, {
    shortNames: ['ep'],
    singular: 'endpoints',
    deprecationWarning: 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
  }),
  res('', 'v1', 'replicationcontrollers', 'ReplicationController', true, {
    shortNames: ['rc'],
    categories: ['all'],
    subresources: [statusSub('ReplicationController'), SCALE],
  }),
  res('', 'v1', 'podtemplates', 'PodTemplate', true),
  res('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  res('apps', 'v1', 'deployments', 'Deployment', true, {
    shortNames: ['deploy'],
    categories: ['all'],
    subresources: [statusSub('Deployment'), SCALE],
  }),
  res('apps', 'v1', 'replicasets', 'ReplicaSet', true, {
    shortNames: ['rs'],
    categories: ['all'],
    subresources: [statusSub('ReplicaSet'), SCALE],
  }),
  res('apps', 'v1', 'daemonsets', 'DaemonSet', true, {
    shortNames: ['ds'],
    categories: ['all'],
    subresources: [statusSub('DaemonSet')],
  }),
  res('apps', 'v1', 'statefulsets', 'StatefulSet', true, {
    shortNames: ['sts'],
    categories: ['all'],
    subresources: [statusSub('StatefulSet'), SCALE],
  }),
  res('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true),
  res('batch', 'v1', 'jobs', 'Job', true, { categories: ['all'], subresources: [statusSub('Job')] }),
  res('batch', 'v1', 'cronjobs', 'CronJob', true, { shortNames: ['cj'], categories: ['all'], subresources: [statusSub('CronJob')] }),
  res('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, { shortNames: ['pdb'], subresources: [statusSub('PodDisruptionBudget')] }),
  // v2 first: it is the preferred (and stored) version; v1 is a view of the same objects.
  res('autoscaling', 'v2', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, {
    shortNames: ['hpa'],
    categories: ['all'],
    subresources: [statusSub('HorizontalPodAutoscaler')],
  }),
  res('autoscaling', 'v1', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, {
    shortNames: ['hpa'],
    categories: ['all'],
    subresources: [statusSub('HorizontalPodAutoscaler')],
  }),
  res('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  res('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, { shortNames: ['netpol'] }),
  res('networking.k8s.io', 'v1', 'servicecidrs', 'ServiceCIDR', false, { subresources: [statusSub('ServiceCIDR')] }),
  res('networking.k8s.io', 'v1', 'ipaddresses', 'IPAddress', false, { shortNames: ['ip'] }),
  res('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, { shortNames: ['ing'], subresources: [statusSub('Ingress')] }),
  res('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', false),
  res('node.k8s.io', 'v1', 'runtimeclasses', 'RuntimeClass', false),
  res('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  res('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  res('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  res('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  res('admissionregistration.k8s.io', 'v1', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, { categories: ['api-extensions'] }),
  res('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, { categories: ['api-extensions'] }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, {
    categories: ['api-extensions'],
    subresources: [statusSub('ValidatingAdmissionPolicy')],
  }),
  res('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false, { categories: ['api-extensions'] }),
  res('events.k8s.io', 'v1', 'events', 'Event', true, { shortNames: ['ev'] }),
  res('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false, { shortNames: ['pc'] }),
  res('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', false, {
    shortNames: ['csr'],
    subresources: [statusSub('CertificateSigningRequest'), { name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] }],
  }),
];

/**
 * The review kinds of authentication.k8s.io and authorization.k8s.io: create-only and never stored
 * (upstream's Creater-only REST storage); the request is answered with the object and its status.
 */
export const reviewResources: readonly ResourceInfo[] = [
  res('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', false, { verbs: ['create'] }),
  res('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', false, { verbs: ['create'] }),
  res('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false, { verbs: ['create'] }),
  res('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, { verbs: ['create'] }),
  res('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, { verbs: ['create'] }),
  res('authorization.k8s.io', 'v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, { verbs: ['create'] }),
];

/**
 * kite's pod timeline (timeline.kite.dev): PodTimelines are read-only (the API server keeps them
 * from the steps components send), PodTimelineStepBatches create-only and never stored, as the
 * review kinds.
 */
export const timelineResources: readonly ResourceInfo[] = [
  res('timeline.kite.dev', 'v1alpha1', 'podtimelines', 'PodTimeline', true, { shortNames: ['ptl'], verbs: ['get', 'list', 'watch'] }),
  res('timeline.kite.dev', 'v1alpha1', 'podtimelinestepbatches', 'PodTimelineStepBatch', false, { verbs: ['create'] }),
];

/** A review kind's resource, e.g. ('authorization.k8s.io', 'subjectaccessreviews'). */
export function reviewResource(group: string, resource: string): ResourceInfo {
  const r = reviewResources.find((x) => x.group === group && x.resource === resource);
  if (!r) throw new Error(`no review resource ${resource}.${group}`);
  return r;
}

/** Groups in the order discovery lists them ('' is the legacy core group under /api). */
export function groupVersions(): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const r of resources) seen.set(`${r.group}/${r.version}`, { group: r.group, version: r.version });
  return [...seen.values()];
}

export function findResource(group: string, version: string, resource: string): ResourceInfo | undefined {
  return resources.find((r) => r.group === group && r.version === version && r.resource === resource);
}

export function findKind(group: string, kind: string): ResourceInfo | undefined {
  return resources.find((r) => r.group === group && r.kind === kind);
}
