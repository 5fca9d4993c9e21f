// NodeName: a pod that names a node in spec.nodeName fits only that node.
import type { Node, Pod } from '../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import type { EnqueueExtensions, FilterPlugin, Plugin } from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { NodeInfo } from '../../framework/types.js';

export const NAME = 'NodeName';
export const ERR_REASON = "node(s) didn't match the requested node name";

const fits = (pod: Pod, node: Node | undefined) => !pod.spec?.nodeName || pod.spec.nodeName === node?.metadata?.name;

export class NodeName implements FilterPlugin, EnqueueExtensions {
  readonly name = NAME;

  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    return fits(pod, nodeInfo.node) ? undefined : Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: 'Node', actionType: ActionType.Add },
        queueingHintFn: (pod, _old, node) => (fits(pod, node as Node) ? QueueingHint.Queue : QueueingHint.QueueSkip),
      },
    ];
  }
}

export const factory = (): Plugin => new NodeName();
