// Pods and what makes them: Pod, Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision,
// ReplicationController, PodTemplate.
import type { ControllerRevision, DaemonSet, Deployment, Pod, PodTemplate, ReplicaSet, ReplicationController, StatefulSet } from '../../api/types.js';
import { formatReady, formatRestarts, summarizePod } from '../../api/pod/status.js';
import { labelSelectorAsSelector } from '../../api/labels.js';
import {
  age,
  ageColumn,
  column,
  containerCells,
  containersColumn,
  formatLabels,
  formatLabelSelector,
  imagesColumn,
  nameColumn,
  printer,
  templateCells,
  templateColumns,
  wide,
  type TableRowCondition,
} from './printer.js';

const podDone: Record<string, TableRowCondition[] | undefined> = {
  Succeeded: [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }],
  Failed: [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }],
};

export const podPrinter = printer<Pod>(
  [
    nameColumn,
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    ageColumn,
    wide('IP', 'string', 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.'),
    wide(
      'Node',
      'string',
      'NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.',
    ),
    wide(
      'Nominated Node',
      'string',
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
    ),
    wide(
      'Readiness Gates',
      'string',
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    ),
  ],
  (pod, now) => {
    const summary = summarizePod(pod);
    const conditions = pod.status?.conditions ?? [];
    const gates = pod.spec?.readinessGates ?? [];
    const gatesTrue = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length;
    return {
      cells: [
        pod.metadata.name,
        formatReady(summary),
        summary.reason,
        formatRestarts(summary, now),
        age(pod, now),
        // podIPs[0], not podIP: what upstream prints for dual-stack pods too.
        pod.status?.podIPs?.[0]?.ip || '<none>',
        pod.spec?.nodeName || '<none>',
        pod.status?.nominatedNodeName || '<none>',
        gates.length > 0 ? `${gatesTrue}/${gates.length}` : '<none>',
      ],
      conditions: podDone[pod.status?.phase ?? ''],
    };
  },
);

export const deploymentPrinter = printer<Deployment>(
  [
    nameColumn,
    column('Ready', 'string', 'Number of the pod with ready state'),
    column('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
    column('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
    ...templateColumns(
      "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
    ),
  ],
  (d, now) => {
    let selector: string;
    try {
      selector = labelSelectorAsSelector(d.spec?.selector).toString();
    } catch {
      selector = '<invalid>';
    }
    const status = d.status ?? {};
    // spec.replicas defaults to 1, as decoding with defaults would give upstream's printer.
    return {
      cells: [
        d.metadata.name,
        `${status.readyReplicas ?? 0}/${d.spec?.replicas ?? 1}`,
        status.updatedReplicas ?? 0,
        status.availableReplicas ?? 0,
        ...templateCells(d, now, d.spec?.template?.spec?.containers, selector),
      ],
    };
  },
);

export const replicaSetPrinter = printer<ReplicaSet>(
  [
    nameColumn,
    column(
      'Desired',
      'integer',
      'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
    ),
    column(
      'Current',
      'integer',
      'Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
    ),
    column('Ready', 'integer', 'readyReplicas is the number of pods targeted by this ReplicaSet with a Ready Condition.'),
    ...templateColumns(
      "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
  ],
  (rs, now) => ({
    cells: [
      rs.metadata.name,
      rs.spec?.replicas ?? 1,
      rs.status?.replicas ?? 0,
      rs.status?.readyReplicas ?? 0,
      ...templateCells(rs, now, rs.spec?.template?.spec?.containers, formatLabelSelector(rs.spec?.selector)),
    ],
  }),
);

export const daemonSetPrinter = printer<DaemonSet>(
  [
    nameColumn,
    column(
      'Desired',
      'integer',
      'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/',
    ),
    column(
      'Current',
      'integer',
      'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/',
    ),
    column('Ready', 'integer', 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.'),
    column('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod'),
    column(
      'Available',
      'integer',
      'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
    ),
    column(
      'Node Selector',
      'string',
      "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
    ),
    ...templateColumns(
      "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
  ],
  (ds, now) => {
    const s = ds.status;
    return {
      cells: [
        ds.metadata.name,
        s?.desiredNumberScheduled ?? 0,
        s?.currentNumberScheduled ?? 0,
        s?.numberReady ?? 0,
        s?.updatedNumberScheduled ?? 0,
        s?.numberAvailable ?? 0,
        formatLabels(ds.spec?.template?.spec?.nodeSelector),
        ...templateCells(ds, now, ds.spec?.template?.spec?.containers, formatLabelSelector(ds.spec?.selector)),
      ],
    };
  },
);

export const statefulSetPrinter = printer<StatefulSet>(
  [nameColumn, column('Ready', 'string', 'Number of the pod with ready state'), ageColumn, containersColumn, imagesColumn],
  (ss, now) => ({
    // spec.replicas defaults to 1, as decoding with defaults would give upstream's printer.
    cells: [ss.metadata.name, `${ss.status?.readyReplicas ?? 0}/${ss.spec?.replicas ?? 1}`, age(ss, now), ...containerCells(ss.spec?.template?.spec?.containers)],
  }),
);

/** formatResourceName with its kind: "daemonset.apps/web", "statefulset.apps/db". */
function controllerName(cr: ControllerRevision): string {
  const ref = cr.metadata?.ownerReferences?.find((o) => o.controller === true);
  if (!ref) return '<none>';
  const slash = ref.apiVersion.indexOf('/');
  const group = slash < 0 ? '' : ref.apiVersion.slice(0, slash);
  const kind = group ? `${ref.kind}.${group}` : ref.kind;
  return kind ? `${kind.toLowerCase()}/${ref.name}` : ref.name;
}

export const controllerRevisionPrinter = printer<ControllerRevision>(
  [nameColumn, column('Controller', 'string', 'Controller of the object'), column('Revision', 'string', 'Revision indicates the revision of the state represented by Data.'), ageColumn],
  (cr, now) => ({ cells: [cr.metadata.name, controllerName(cr), cr.revision ?? 0, age(cr, now)] }),
);

export const replicationControllerPrinter = printer<ReplicationController>(
  [
    nameColumn,
    column(
      'Desired',
      'integer',
      'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller',
    ),
    column(
      'Current',
      'integer',
      'Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller',
    ),
    column('Ready', 'integer', 'The number of ready replicas for this replication controller.'),
    ...templateColumns(
      'Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    ),
  ],
  (rc, now) => ({
    cells: [
      rc.metadata.name,
      rc.spec?.replicas ?? 1,
      rc.status?.replicas ?? 0,
      rc.status?.readyReplicas ?? 0,
      ...templateCells(rc, now, rc.spec?.template?.spec?.containers, formatLabels(rc.spec?.selector)),
    ],
  }),
);

export const podTemplatePrinter = printer<PodTemplate>(
  [
    nameColumn,
    column('Containers', 'string', 'Names of each container in the template.'),
    column('Images', 'string', 'Images referenced by each container in the template.'),
    column('Pod Labels', 'string', 'The labels for the pod template.'),
  ],
  (pt) => ({ cells: [pt.metadata.name, ...containerCells(pt.template?.spec?.containers), formatLabels(pt.template?.metadata?.labels)] }),
);
