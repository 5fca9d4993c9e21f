// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`. kubectl prints the columns as given and
// hides priority > 0 ones unless -o wide, so every cell is always computed here.
import { rfc3339 } from '../../api/time.js';
import { apiVersionOf, type KubeObject, type ObjectMeta, type StoredObject } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import { creationTimestampDoc, nameColumn, column, type Printer, type TableColumnDefinition, type TableRowCondition } from './printer.js';
import {
  controllerRevisionPrinter,
  daemonSetPrinter,
  deploymentPrinter,
  podPrinter,
  podTemplatePrinter,
  replicaSetPrinter,
  replicationControllerPrinter,
  statefulSetPrinter,
} from './workloads.js';
import { cronJobPrinter } from './cronjob.js';
import { leasePrinter, namespacePrinter, nodePrinter, priorityClassPrinter, runtimeClassPrinter } from './cluster.js';
import { clusterRoleBindingPrinter, roleBindingPrinter } from './rbac.js';
import { validatingAdmissionPolicyBindingPrinter, validatingAdmissionPolicyPrinter, webhookConfigurationPrinter } from './admission.js';
import { configMapPrinter, resourceQuotaPrinter, secretPrinter, serviceAccountPrinter } from './config.js';
import { endpointSlicePrinter, endpointsPrinter, ingressClassPrinter, ingressPrinter, ipAddressPrinter, networkPolicyPrinter, serviceCIDRPrinter, servicePrinter } from './network.js';
import { eventPrinter, eventsV1Printer } from './events.js';
import { certificateSigningRequestPrinter } from './certificates.js';
import { jobPrinter } from './batch.js';
import { horizontalPodAutoscalerPrinter } from './autoscaling.js';
import { podDisruptionBudgetPrinter } from './policy.js';
import { podTimelinePrinter } from './timeline.js';

export type { TableColumnDefinition, TableRowCondition } from './printer.js';

/** What a row carries besides its cells (the `includeObject` query parameter). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ObjectMeta;
}

export interface TableRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
  object?: PartialObjectMetadata | KubeObject;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  /** The caller fills resourceVersion and continue, as for the list it converts. */
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface TableOptions {
  includeObject: IncludeObject;
  /** ms since the epoch, for the AGE-like cells. */
  now: number;
  /** TableOptions.noHeaders: upstream sets it on every watch event after the first. */
  noHeaders?: boolean;
}

const printers = new Map<string, Printer>([
  ['/Pod', podPrinter],
  ['/Node', nodePrinter],
  ['/Namespace', namespacePrinter],
  ['/Event', eventPrinter],
  ['/ConfigMap', configMapPrinter],
  ['/Secret', secretPrinter],
  ['/Service', servicePrinter],
  ['/ServiceAccount', serviceAccountPrinter],
  ['/Endpoints', endpointsPrinter],
  ['coordination.k8s.io/Lease', leasePrinter],
  ['/ReplicationController', replicationControllerPrinter],
  ['/PodTemplate', podTemplatePrinter],
  ['apps/Deployment', deploymentPrinter],
  ['apps/DaemonSet', daemonSetPrinter],
  ['apps/StatefulSet', statefulSetPrinter],
  ['apps/ControllerRevision', controllerRevisionPrinter],
  ['apps/ReplicaSet', replicaSetPrinter],
  ['batch/CronJob', cronJobPrinter],
  ['discovery.k8s.io/EndpointSlice', endpointSlicePrinter],
  ['networking.k8s.io/NetworkPolicy', networkPolicyPrinter],
  ['networking.k8s.io/ServiceCIDR', serviceCIDRPrinter],
  ['networking.k8s.io/IPAddress', ipAddressPrinter],
  ['events.k8s.io/Event', eventsV1Printer],
  ['scheduling.k8s.io/PriorityClass', priorityClassPrinter],
  ['certificates.k8s.io/CertificateSigningRequest', certificateSigningRequestPrinter],
  ['batch/Job', jobPrinter],
  ['autoscaling/HorizontalPodAutoscaler', horizontalPodAutoscalerPrinter],
  ['policy/PodDisruptionBudget', podDisruptionBudgetPrinter],
  ['/ResourceQuota', resourceQuotaPrinter],
  ['networking.k8s.io/Ingress', ingressPrinter],
  ['networking.k8s.io/IngressClass', ingressClassPrinter],
  ['node.k8s.io/RuntimeClass', runtimeClassPrinter],
  ['rbac.authorization.k8s.io/RoleBinding', roleBindingPrinter],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', clusterRoleBindingPrinter],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', webhookConfigurationPrinter],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicy', validatingAdmissionPolicyPrinter],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding', validatingAdmissionPolicyBindingPrinter],
  ['timeline.kite.dev/PodTimeline', podTimelinePrinter],
]);

/** Kinds without a printer of their own: NAME and CREATED AT, as upstream's default table convertor. */
const defaultPrinter: Printer = {
  columns: [nameColumn, column('Created At', 'date', creationTimestampDoc)],
  print: (obj) => {
    const created = obj.metadata.creationTimestamp ? Date.parse(obj.metadata.creationTimestamp) : NaN;
    // RFC 3339 in UTC without fractional seconds, as Go's time.RFC3339; the zero time when unset.
    const createdAt = Number.isNaN(created) ? '0001-01-01T00:00:00Z' : rfc3339(created);
    return { cells: [obj.metadata.name, createdAt] };
  },
};

export function printerFor(resource: Pick<ResourceInfo, 'group' | 'kind'>): Printer {
  return printers.get(`${resource.group}/${resource.kind}`) ?? defaultPrinter;
}

function rowObject(resource: ResourceInfo, obj: StoredObject, include: IncludeObject): TableRow['object'] {
  switch (include) {
    case 'None':
      return undefined;
    case 'Object':
      return { ...obj, apiVersion: apiVersionOf(resource.group, resource.version), kind: resource.kind };
    case 'Metadata':
      return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
  }
}

/** The Table of these objects (one row each, in order) for a list, a get or one watch event. */
export function toTable(resource: ResourceInfo, objects: readonly StoredObject[], opts: TableOptions): Table {
  const p = printerFor(resource);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {},
    columnDefinitions: opts.noHeaders ? [] : [...p.columns],
    rows: objects.map((obj) => {
      const { cells, conditions } = p.print(obj, opts.now);
      const row: TableRow = { cells };
      if (conditions) row.conditions = conditions;
      const object = rowObject(resource, obj, opts.includeObject);
      if (object) row.object = object;
      return row;
    }),
  };
}
