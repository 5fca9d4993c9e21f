// The object type of every served resource, by the name upstream prints a GroupResource with
// ("pods", "leases.coordination.k8s.io"), so clients and registries are typed from a resource's
// name alone: `client.resource('pods')` is a client of Pods.
import { resources, type ResourceInfo } from './resources.js';
import type {
  CertificateSigningRequest,
  ConfigMap,
  ControllerRevision,
  CronJob,
  DaemonSet,
  CoreEvent,
  Deployment,
  EndpointSlice,
  Endpoints,
  EventsV1Event,
  HorizontalPodAutoscaler,
  IPAddress,
  Job,
  Lease,
  Namespace,
  NetworkPolicy,
  Node,
  Pod,
  PodDisruptionBudget,
  PodTemplate,
  PriorityClass,
  ReplicaSet,
  ReplicationController,
  Secret,
  Service,
  ServiceAccount,
  ServiceCIDR,
  StatefulSet,
  ClusterRole,
  ClusterRoleBinding,
  Ingress,
  IngressClass,
  LimitRange,
  MutatingWebhookConfiguration,
  ResourceQuota,
  Role,
  RoleBinding,
  RuntimeClass,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidatingWebhookConfiguration,
} from './types.js';

export interface ResourceTypes {
  namespaces: Namespace;
  pods: Pod;
  nodes: Node;
  events: CoreEvent;
  configmaps: ConfigMap;
  secrets: Secret;
  services: Service;
  serviceaccounts: ServiceAccount;
  endpoints: Endpoints;
  replicationcontrollers: ReplicationController;
  podtemplates: PodTemplate;
  'leases.coordination.k8s.io': Lease;
  'deployments.apps': Deployment;
  'replicasets.apps': ReplicaSet;
  'daemonsets.apps': DaemonSet;
  'statefulsets.apps': StatefulSet;
  'controllerrevisions.apps': ControllerRevision;
  'jobs.batch': Job;
  'cronjobs.batch': CronJob;
  'poddisruptionbudgets.policy': PodDisruptionBudget;
  /** autoscaling/v2, the stored and preferred version. */
  'horizontalpodautoscalers.autoscaling': HorizontalPodAutoscaler;
  'endpointslices.discovery.k8s.io': EndpointSlice;
  'networkpolicies.networking.k8s.io': NetworkPolicy;
  'servicecidrs.networking.k8s.io': ServiceCIDR;
  'ipaddresses.networking.k8s.io': IPAddress;
  'events.events.k8s.io': EventsV1Event;
  'priorityclasses.scheduling.k8s.io': PriorityClass;
  'certificatesigningrequests.certificates.k8s.io': CertificateSigningRequest;
  resourcequotas: ResourceQuota;
  limitranges: LimitRange;
  'ingresses.networking.k8s.io': Ingress;
  'ingressclasses.networking.k8s.io': IngressClass;
  'runtimeclasses.node.k8s.io': RuntimeClass;
  'roles.rbac.authorization.k8s.io': Role;
  'rolebindings.rbac.authorization.k8s.io': RoleBinding;
  'clusterroles.rbac.authorization.k8s.io': ClusterRole;
  'clusterrolebindings.rbac.authorization.k8s.io': ClusterRoleBinding;
  'mutatingwebhookconfigurations.admissionregistration.k8s.io': MutatingWebhookConfiguration;
  'validatingwebhookconfigurations.admissionregistration.k8s.io': ValidatingWebhookConfiguration;
  'validatingadmissionpolicies.admissionregistration.k8s.io': ValidatingAdmissionPolicy;
  'validatingadmissionpolicybindings.admissionregistration.k8s.io': ValidatingAdmissionPolicyBinding;
}

export type ResourceName = keyof ResourceTypes;

/** A served resource's name as ResourceTypes keys it: the resource, then ".group" outside the core group. */
export function qualifiedResourceName(info: Pick<ResourceInfo, 'group' | 'resource'>): string {
  return info.group ? `${info.resource}.${info.group}` : info.resource;
}

/** The served resource (its preferred version: the first the catalog lists) that a name stands for. */
export function resourceNamed(name: ResourceName): ResourceInfo {
  const info = resources.find((r) => qualifiedResourceName(r) === name);
  if (!info) throw new Error(`no served resource is named "${name}"`);
  return info;
}
