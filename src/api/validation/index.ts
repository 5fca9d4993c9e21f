// The validation entry points the registry calls by (group, kind), for every served kind: upstream's
// strategies' Validate, ValidateUpdate and the status strategies' ValidateUpdate.
import type { FieldError } from '../field.js';
import {
  validateControllerRevision,
  validateControllerRevisionUpdate,
  validateDaemonSet,
  validateDaemonSetStatusUpdate,
  validateDaemonSetUpdate,
  validateDeployment,
  validateDeploymentStatusUpdate,
  validateDeploymentUpdate,
  validateReplicaSet,
  validateReplicaSetStatusUpdate,
  validateReplicaSetUpdate,
  validateStatefulSet,
  validateStatefulSetStatusUpdate,
  validateStatefulSetUpdate,
} from './apps.js';
import {
  validatePodTemplate,
  validatePodTemplateUpdate,
  validateReplicationController,
  validateReplicationControllerStatusUpdate,
  validateReplicationControllerUpdate,
} from './replicationcontroller.js';
import {
  coreEventView,
  eventsV1View,
  validateConfigMap,
  validateConfigMapUpdate,
  validateEndpoints,
  validateEventCreate,
  validateEventUpdate,
  validateNamespace,
  validateNamespaceStatusUpdate,
  validateNode,
  validateNodeUpdate,
  validateSecret,
  validateSecretUpdate,
  validateService,
  validateServiceAccount,
  validateServiceStatusUpdate,
  validateServiceUpdate,
} from './core.js';
import { validateResourceQuota, validateResourceQuotaStatusUpdate, validateResourceQuotaUpdate } from './resourcequota.js';
import { validateCronJob, validateCronJobUpdate } from './cronjob.js';
import { validateObjectMetaUpdate, type Obj } from './meta.js';
import { validateEndpointSlice, validateEndpointSliceUpdate, validateLease, validateLeaseUpdate, validatePriorityClass, validatePriorityClassUpdate } from './other.js';
import { validateNetworkPolicy, validateNetworkPolicyUpdate } from './networkpolicy.js';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatusUpdate, validatePodDisruptionBudgetUpdate } from './policy.js';
import { validatePodCreate, validatePodStatusUpdate, validatePodUpdate } from './pod.js';
import { validateJob, validateJobStatusUpdate, validateJobUpdate } from './batch.js';
import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatusUpdate, validateHorizontalPodAutoscalerUpdate } from './autoscaling.js';
import {
  validateIPAddress,
  validateIPAddressUpdate,
  validateServiceCIDR,
  validateServiceCIDRStatusUpdate,
  validateServiceCIDRUpdate,
} from './servicecidr.js';
import { validateClusterRole, validateClusterRoleBinding, validateClusterRoleBindingUpdate, validateRole, validateRoleBinding, validateRoleBindingUpdate } from './rbac.js';
import {
  validateMutatingWebhookConfiguration,
  validateMutatingWebhookConfigurationUpdate,
  validateValidatingWebhookConfiguration,
  validateValidatingWebhookConfigurationUpdate,
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
  validateValidatingAdmissionPolicyBindingUpdate,
  validateValidatingAdmissionPolicyUpdate,
} from './admissionregistration.js';
import { validateCertificateSigningRequestCreate, validateCertificateSigningRequestStatusUpdate, validateCertificateSigningRequestUpdate } from './certificates.js';

import {
  validateIngress,
  validateIngressClass,
  validateIngressClassUpdate,
  validateIngressUpdate,
  validateLimitRange,
  validateLimitRangeUpdate,
  validateRuntimeClass,
  validateRuntimeClassUpdate,
} from './admissionkinds.js';

export { validateNamespaceFinalizeUpdate } from './core.js';
export { systemPriorityClasses, HIGHEST_USER_DEFINABLE_PRIORITY, SYSTEM_CRITICAL_PRIORITY } from './other.js';

interface KindValidation {
  create: (obj: Obj) => FieldError[];
  update: (obj: Obj, old: Obj) => FieldError[];
  /** The status subresource's update; metadata-only when the kind has no status rules of its own. */
  status?: (obj: Obj, old: Obj) => FieldError[];
}

const metaUpdate = (obj: Obj, old: Obj) => validateObjectMetaUpdate(obj.metadata, old.metadata);
/** Upstream's update validation for kinds whose spec is freely mutable: metadata rules, then the create rules. */
const thenCreate = (create: (obj: Obj) => FieldError[]) => (obj: Obj, old: Obj) => [...metaUpdate(obj, old), ...create(obj)];


const kinds: Record<string, KindValidation> = {
  '/ReplicationController': { create: validateReplicationController, update: validateReplicationControllerUpdate, status: validateReplicationControllerStatusUpdate },
  '/PodTemplate': { create: validatePodTemplate, update: validatePodTemplateUpdate },
  'apps/DaemonSet': { create: validateDaemonSet, update: validateDaemonSetUpdate, status: validateDaemonSetStatusUpdate },
  'apps/StatefulSet': { create: validateStatefulSet, update: validateStatefulSetUpdate, status: validateStatefulSetStatusUpdate },
  'apps/ControllerRevision': { create: validateControllerRevision, update: validateControllerRevisionUpdate },
  'batch/Job': { create: validateJob, update: validateJobUpdate, status: validateJobStatusUpdate },
  'batch/CronJob': { create: validateCronJob, update: validateCronJobUpdate },
  'policy/PodDisruptionBudget': { create: validatePodDisruptionBudget, update: validatePodDisruptionBudgetUpdate, status: validatePodDisruptionBudgetStatusUpdate },
  'autoscaling/HorizontalPodAutoscaler': {
    create: validateHorizontalPodAutoscaler,
    update: validateHorizontalPodAutoscalerUpdate,
    status: validateHorizontalPodAutoscalerStatusUpdate,
  },
  '/Pod': { create: validatePodCreate, update: validatePodUpdate, status: validatePodStatusUpdate },
  '/Namespace': { create: validateNamespace, update: metaUpdate, status: validateNamespaceStatusUpdate },
  '/Node': { create: validateNode, update: (obj, old) => [...validateNode(obj), ...validateNodeUpdate(obj, old)], status: validateNodeUpdate },
  '/Event': {
    create: (obj) => validateEventCreate(coreEventView(obj), true),
    update: (obj, old) => validateEventUpdate(coreEventView(obj), coreEventView(old), true),
  },
  '/ConfigMap': { create: validateConfigMap, update: validateConfigMapUpdate },
  '/Secret': { create: validateSecret, update: validateSecretUpdate },
  '/Service': { create: validateService, update: validateServiceUpdate, status: validateServiceStatusUpdate },
  '/ResourceQuota': { create: validateResourceQuota, update: validateResourceQuotaUpdate, status: validateResourceQuotaStatusUpdate },
  '/ServiceAccount': { create: validateServiceAccount, update: thenCreate(validateServiceAccount) },
  '/Endpoints': { create: validateEndpoints, update: thenCreate(validateEndpoints) },
  'coordination.k8s.io/Lease': { create: validateLease, update: validateLeaseUpdate },
  'apps/Deployment': { create: validateDeployment, update: validateDeploymentUpdate, status: validateDeploymentStatusUpdate },
  'apps/ReplicaSet': { create: validateReplicaSet, update: validateReplicaSetUpdate, status: validateReplicaSetStatusUpdate },
  'discovery.k8s.io/EndpointSlice': { create: validateEndpointSlice, update: validateEndpointSliceUpdate },
  'networking.k8s.io/NetworkPolicy': { create: validateNetworkPolicy, update: validateNetworkPolicyUpdate },
  'events.k8s.io/Event': {
    create: (obj) => validateEventCreate(eventsV1View(obj), false),
    update: (obj, old) => validateEventUpdate(eventsV1View(obj), eventsV1View(old), false),
  },
  'networking.k8s.io/ServiceCIDR': { create: validateServiceCIDR, update: validateServiceCIDRUpdate, status: validateServiceCIDRStatusUpdate },
  'networking.k8s.io/IPAddress': { create: validateIPAddress, update: validateIPAddressUpdate },
  'scheduling.k8s.io/PriorityClass': { create: validatePriorityClass, update: validatePriorityClassUpdate },
  'rbac.authorization.k8s.io/Role': { create: validateRole, update: thenCreate(validateRole) },
  'rbac.authorization.k8s.io/ClusterRole': { create: validateClusterRole, update: thenCreate(validateClusterRole) },
  'rbac.authorization.k8s.io/RoleBinding': { create: validateRoleBinding, update: validateRoleBindingUpdate },
  'rbac.authorization.k8s.io/ClusterRoleBinding': { create: validateClusterRoleBinding, update: validateClusterRoleBindingUpdate },
  'admissionregistration.k8s.io/MutatingWebhookConfiguration': { create: validateMutatingWebhookConfiguration, update: validateMutatingWebhookConfigurationUpdate },
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration': { create: validateValidatingWebhookConfiguration, update: validateValidatingWebhookConfigurationUpdate },
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy': { create: validateValidatingAdmissionPolicy, update: validateValidatingAdmissionPolicyUpdate },
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding': {
    create: validateValidatingAdmissionPolicyBinding,
    update: validateValidatingAdmissionPolicyBindingUpdate,
  },
  '/LimitRange': { create: validateLimitRange, update: validateLimitRangeUpdate },
  'node.k8s.io/RuntimeClass': { create: validateRuntimeClass, update: validateRuntimeClassUpdate },
  'networking.k8s.io/IngressClass': { create: validateIngressClass, update: validateIngressClassUpdate },
  'networking.k8s.io/Ingress': { create: validateIngress, update: validateIngressUpdate, status: metaUpdate },
  'certificates.k8s.io/CertificateSigningRequest': {
    create: validateCertificateSigningRequestCreate,
    update: validateCertificateSigningRequestUpdate,
    status: validateCertificateSigningRequestStatusUpdate,
  },
};

function lookup(group: string, kind: string): KindValidation {
  const v = kinds[`${group}/${kind}`];
  if (!v) throw new Error(`no validation for ${kind}${group ? `.${group}` : ''}`);
  return v;
}

/** Validation of a new object (after defaulting, admission and name generation). */
export function validateCreate(group: string, kind: string, obj: object): FieldError[] {
  return lookup(group, kind).create(obj as Obj);
}

/** Validation of an update of the main resource against the stored object. */
export function validateUpdate(group: string, kind: string, obj: object, old: object): FieldError[] {
  return lookup(group, kind).update(obj as Obj, old as Obj);
}

/** Validation of an update through the status subresource. */
export function validateStatusUpdate(group: string, kind: string, obj: object, old: object): FieldError[] {
  const v = lookup(group, kind);
  return (v.status ?? metaUpdate)(obj as Obj, old as Obj);
}
