// Pods and the controllers that own them: Pod, Deployment, ReplicaSet.
import type { Deployment, Pod, ReplicaSet } from '../../api/types.js';
import { formatReady, formatRestarts, summarizePod } from '../../api/pod/status.js';
import { labelSelectorAsSelector } from '../../api/labels.js';
import {
  age,
  ageColumn,
  column,
  containerCells,
  containersColumn,
  formatLabelSelector,
  imagesColumn,
  nameColumn,
  printer,
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
    ageColumn,
    containersColumn,
    imagesColumn,
    wide(
      'Selector',
      'string',
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
        age(d, now),
        ...containerCells(d.spec?.template?.spec?.containers),
        selector,
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
    ageColumn,
    containersColumn,
    imagesColumn,
    wide(
      'Selector',
      'string',
      "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
    ),
  ],
  (rs, now) => ({
    cells: [
      rs.metadata.name,
      rs.spec?.replicas ?? 1,
      rs.status?.replicas ?? 0,
      rs.status?.readyReplicas ?? 0,
      age(rs, now),
      ...containerCells(rs.spec?.template?.spec?.containers),
      formatLabelSelector(rs.spec?.selector),
    ],
  }),
);
