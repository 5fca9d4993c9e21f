// Re-exports of the kubernetes-types kinds the project uses, under one import path.
export type { Pod, PodSpec, PodStatus, Container, ContainerStatus, PodCondition, Namespace, Node, NodeStatus, Event as CoreEvent, ConfigMap, Secret, Service, ServicePort, ServiceAccount, Endpoints, ResourceQuota, LimitRange, ReplicationController, PodTemplate, PodTemplateSpec, Binding, EnvVar, Volume, ContainerPort, Probe, ResourceRequirements, ObjectReference } from 'kubernetes-types/core/v1.js';
export type { Lease } from 'kubernetes-types/coordination/v1.js';
export type { Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision } from 'kubernetes-types/apps/v1.js';
export type { Job, CronJob } from 'kubernetes-types/batch/v1.js';
export type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
export type { HorizontalPodAutoscaler } from 'kubernetes-types/autoscaling/v2.js';
export type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
export type { NetworkPolicy, Ingress, IngressClass } from 'kubernetes-types/networking/v1.js';
// networking.k8s.io/v1 ServiceCIDR and IPAddress (GA in 1.33) have v1alpha1's shape, which is all kubernetes-types 1.30 has.
export type { ServiceCIDR, IPAddress } from 'kubernetes-types/networking/v1alpha1.js';
export type { PriorityClass } from 'kubernetes-types/scheduling/v1.js';
export type { Event as EventsV1Event } from 'kubernetes-types/events/v1.js';
export type { CertificateSigningRequest, CertificateSigningRequestCondition } from 'kubernetes-types/certificates/v1.js';
export type { RuntimeClass } from 'kubernetes-types/node/v1.js';
export type { Role, RoleBinding, ClusterRole, ClusterRoleBinding, PolicyRule, Subject } from 'kubernetes-types/rbac/v1.js';
export type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-types/admissionregistration/v1.js';
