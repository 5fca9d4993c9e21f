// applyDefaults: upstream's v1 defaulters for every served kind, applied in place to a decoded object.
// The API server calls it on every decoded body, before admission and validation; first it puts
// the zero values Go's decoder would have left where the body holds nulls.
import { findKind } from '../resources.js';
import { zeroNulls } from '../zero.js';
import { defaultDaemonSet, defaultDeployment, defaultPodTemplateObject, defaultReplicaSet, defaultReplicationController, defaultStatefulSet } from './apps.js';
import { child, defaultPod, defaultResourceList, isObj, type Obj } from './podspec.js';
import { defaultCronJob } from './cronjob.js';
import { defaultHorizontalPodAutoscaler } from './autoscaling.js';
import { defaultJob } from './batch.js';
import { defaultNetworkPolicy } from './networkpolicy.js';
import {
  defaultMutatingWebhookConfiguration,
  defaultValidatingAdmissionPolicy,
  defaultValidatingAdmissionPolicyBinding,
  defaultValidatingWebhookConfiguration,
} from './admissionregistration.js';

export { imageTag } from './podspec.js';


function defaultService(svc: Obj): void {
  const spec = child(svc, 'spec');
  if (!spec.sessionAffinity) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig?.clientIP?.timeoutSeconds == null) {
    // Three hours, upstream's DefaultClientIPServiceAffinitySeconds.
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  if (!spec.type) spec.type = 'ClusterIP';
  for (const p of Array.isArray(spec.ports) ? spec.ports : []) {
    if (!isObj(p)) continue;
    if (!p.protocol) p.protocol = 'TCP';
    if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
  }
  const externallyAccessible =
    spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0);
  if (externallyAccessible && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (spec.internalTrafficPolicy == null && ['NodePort', 'LoadBalancer', 'ClusterIP'].includes(spec.type)) spec.internalTrafficPolicy = 'Cluster';
  if (spec.type === 'LoadBalancer') {
    if (spec.allocateLoadBalancerNodePorts == null) spec.allocateLoadBalancerNodePorts = true;
    for (const ing of Array.isArray(svc.status?.loadBalancer?.ingress) ? svc.status.loadBalancer.ingress : []) {
      if (isObj(ing) && ing.ip && ing.ipMode == null) ing.ipMode = 'VIP';
    }
  }
  // The IP families are the service registry's to settle (upstream's initIPFamilyFields): they
  // depend on the families the cluster's ServiceCIDRs serve.
}

/** SetDefaults_Namespace labels the namespace with its name; spec.finalizers ["kubernetes"] is the registry's (on create). */
function defaultNamespace(ns: Obj): void {
  const name = ns.metadata?.name;
  if (typeof name === 'string' && name !== '') {
    const meta = child(ns, 'metadata');
    child(meta, 'labels')['kubernetes.io/metadata.name'] = name;
  }
  const status = child(ns, 'status');
  if (!status.phase) status.phase = 'Active';
}

function defaultNode(node: Obj): void {
  const status = node.status;
  if (!isObj(status)) return;
  defaultResourceList(status.capacity);
  defaultResourceList(status.allocatable);
  if (status.allocatable == null && isObj(status.capacity)) status.allocatable = { ...status.capacity };
}

/** Secret type Opaque; stringData is merged into data as upstream's v1 conversion does on decode. */
function defaultSecret(secret: Obj): void {
  if (!secret.type) secret.type = 'Opaque';
  if (isObj(secret.stringData)) {
    const data = child(secret, 'data');
    for (const [k, v] of Object.entries(secret.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  }
  delete secret.stringData;
}

function defaultEndpoints(ep: Obj): void {
  for (const ss of Array.isArray(ep.subsets) ? ep.subsets : []) {
    for (const p of Array.isArray(ss?.ports) ? ss.ports : []) if (isObj(p) && !p.protocol) p.protocol = 'TCP';
  }
}

function defaultEndpointSlice(slice: Obj): void {
  for (const p of Array.isArray(slice.ports) ? slice.ports : []) {
    if (!isObj(p)) continue;
    if (p.name == null) p.name = '';
    if (p.protocol == null) p.protocol = 'TCP';
  }
}

/** rbac/v1's SetDefaults_Subject and the roleRef's group: users and groups are RBAC's, service accounts core's. */
function defaultBinding(b: Obj): void {
  if (isObj(b.roleRef) && !b.roleRef.apiGroup) b.roleRef.apiGroup = 'rbac.authorization.k8s.io';
  for (const s of Array.isArray(b.subjects) ? b.subjects : []) {
    if (isObj(s) && !s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = 'rbac.authorization.k8s.io';
  }
}

function defaultPriorityClass(pc: Obj): void {
  if (pc.preemptionPolicy == null) pc.preemptionPolicy = 'PreemptLowerPriority';
}

const defaulters: Record<string, (obj: Obj) => void> = {
  '/Pod': defaultPod,
  '/Service': defaultService,
  '/Namespace': defaultNamespace,
  '/Node': defaultNode,
  '/Secret': defaultSecret,
  '/Endpoints': defaultEndpoints,
  '/ReplicationController': defaultReplicationController,
  '/PodTemplate': defaultPodTemplateObject,
  'apps/Deployment': defaultDeployment,
  'apps/ReplicaSet': defaultReplicaSet,
  'apps/DaemonSet': defaultDaemonSet,
  'apps/StatefulSet': defaultStatefulSet,
  'batch/CronJob': defaultCronJob,
  'batch/Job': defaultJob,
  'discovery.k8s.io/EndpointSlice': defaultEndpointSlice,
  'networking.k8s.io/NetworkPolicy': defaultNetworkPolicy,
  'scheduling.k8s.io/PriorityClass': defaultPriorityClass,
  'rbac.authorization.k8s.io/RoleBinding': defaultBinding,
  'rbac.authorization.k8s.io/ClusterRoleBinding': defaultBinding,
  'autoscaling/HorizontalPodAutoscaler': defaultHorizontalPodAutoscaler,
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': defaultMutatingWebhookConfiguration,
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': defaultValidatingWebhookConfiguration,
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': defaultValidatingAdmissionPolicy,
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': defaultValidatingAdmissionPolicyBinding,
};

/**
 * Applies upstream's v1 defaults for (group, kind) to `obj` in place, after zeroing its nulls. Kinds
 * without defaulters (ConfigMap, ServiceAccount, Event, Lease, events.k8s.io Event) get only that.
 */
export function applyDefaults(group: string, kind: string, obj: Record<string, unknown>): void {
  const served = findKind(group, kind);
  if (served) zeroNulls(group, served.version, kind, obj);
  defaulters[`${group}/${kind}`]?.(obj);
}
