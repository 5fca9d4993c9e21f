// Kubelet admission as upstream's predicateAdmitHandler (pkg/kubelet/lifecycle/predicate.go): a
// pod arriving on the node must fit what the node has left after the pods already admitted —
// resources and pod count, node affinity/selector, node name, host ports, and NoExecute taints —
// judged with the scheduler's own helpers. A rejected pod is Failed with "Pod was rejected: ..."
// and never runs a container.
import type { Node, Pod, PodStatus } from '../../api/types.js';
import { podRequests } from '../../scheduler/framework/resource.js';
import { NodeInfo, PodInfo, podHostPorts } from '../../scheduler/framework/types.js';
import { RequiredNodeAffinity } from '../../api/scheduling/node-affinity.js';
import { findMatchingUntoleratedTaint } from '../../api/scheduling/taints.js';
import { ERR_REASON_POD as NODE_AFFINITY_REASON, NAME as NODE_AFFINITY } from '../../scheduler/plugins/nodeaffinity/nodeaffinity.js';
import { ERR_REASON as NODE_NAME_REASON, NAME as NODE_NAME } from '../../scheduler/plugins/nodename/nodename.js';
import { ERR_REASON as NODE_PORTS_REASON, NAME as NODE_PORTS, fitsPorts } from '../../scheduler/plugins/nodeports/nodeports.js';
import { NAME as TAINT_TOLERATION } from '../../scheduler/plugins/tainttoleration/tainttoleration.js';

/** tainttoleration.ErrReasonNotMatch. */
export const TAINT_TOLERATION_REASON = "node(s) had taints that the pod didn't tolerate";

export type AdmitResult = { admit: true } | { admit: false; reason: string; message: string };

/** InsufficientResourceError: cpu in millicores, memory and storage in bytes, pods by count. */
function insufficient(resource: string, requested: number, used: number, capacity: number): AdmitResult {
  return { admit: false, reason: `OutOf${resource}`, message: `Node didn't have enough resource: ${resource}, requested: ${requested}, used: ${used}, capacity: ${capacity}` };
}

function predicateFailure(name: string, desc: string): AdmitResult {
  return { admit: false, reason: name, message: `Predicate ${name} failed: ${desc}` };
}

/** Whether `pod` may run beside `admitted` (the node's active pods) on `node`: the first failure wins. */
export function admitPod(pod: Pod, node: Node, admitted: readonly Pod[]): AdmitResult {
  const info = new NodeInfo(node);
  for (const p of admitted) if (p.metadata?.uid !== pod.metadata?.uid) info.addPod(new PodInfo(p));

  const alloc = info.allocatable;
  const used = info.requested;
  if (info.pods.length + 1 > alloc.allowedPodNumber) return insufficient('pods', 1, info.pods.length, alloc.allowedPodNumber);
  const req = podRequests(pod);
  const checks: [string, number, number, number][] = [
    ['cpu', req.milliCPU, used.milliCPU, alloc.milliCPU],
    ['memory', req.memory, used.memory, alloc.memory],
    ['ephemeral-storage', req.ephemeralStorage, used.ephemeralStorage, alloc.ephemeralStorage],
    ...[...req.scalar].map(([name, want]): [string, number, number, number] => [name, want, used.scalar.get(name) ?? 0, alloc.scalar.get(name) ?? 0]),
  ];
  for (const [name, want, inUse, capacity] of checks) if (want > 0 && want > capacity - inUse) return insufficient(name, want, inUse, capacity);

  if (!new RequiredNodeAffinity(pod).match(node)) return predicateFailure(NODE_AFFINITY, NODE_AFFINITY_REASON);
  if (pod.spec?.nodeName && pod.spec.nodeName !== node.metadata?.name) return predicateFailure(NODE_NAME, NODE_NAME_REASON);
  if (!fitsPorts(podHostPorts(pod), info.usedPorts)) return predicateFailure(NODE_PORTS, NODE_PORTS_REASON);
  // The kubelet only cares about NoExecute: NoSchedule was the scheduler's business.
  if (findMatchingUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations, (t) => t.effect === 'NoExecute')) return predicateFailure(TAINT_TOLERATION, TAINT_TOLERATION_REASON);
  return { admit: true };
}

/** The status of a rejected pod (kubelet rejectPod): Failed, with the reason and "Pod was rejected: " + message. */
export function rejectedPodStatus(pod: Pod, result: Extract<AdmitResult, { admit: false }>): PodStatus {
  return { ...pod.status, phase: 'Failed', reason: result.reason, message: `Pod was rejected: ${result.message}` };
}
