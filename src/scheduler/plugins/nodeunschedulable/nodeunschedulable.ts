// NodeUnschedulable: nodes with spec.unschedulable (cordoned) take only pods tolerating the
// node.kubernetes.io/unschedulable:NoSchedule taint.
import type { Taint } from 'kubernetes-types/core/v1.js';
import type { Node, Pod } from '../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import type { EnqueueExtensions, FilterPlugin, Plugin } from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { NodeInfo } from '../../framework/types.js';
import { tolerationsTolerateTaint } from '../../../api/scheduling/taints.js';

export const NAME = 'NodeUnschedulable';
export const ERR_REASON_UNKNOWN_CONDITION = 'node(s) had unknown conditions';
export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';

const unschedulableTaint: Taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

const admits = (pod: Pod, node: Node) => !node.spec?.unschedulable || tolerationsTolerateTaint(pod.spec?.tolerations, unschedulableTaint);

export class NodeUnschedulable implements FilterPlugin, EnqueueExtensions {
  readonly name = NAME;

  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    if (!nodeInfo.node) return Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON_UNKNOWN_CONDITION);
    return admits(pod, nodeInfo.node) ? undefined : Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeTaint },
        queueingHintFn: (pod, _old, node) => (admits(pod, node as Node) ? QueueingHint.Queue : QueueingHint.QueueSkip),
      },
    ];
  }
}

export const factory = (): Plugin => new NodeUnschedulable();
