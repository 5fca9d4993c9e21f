// NodePorts: a pod asking for hostPorts fits only nodes where none of them (ip, protocol, port) is
// taken; 0.0.0.0 conflicts with every address.
import type { Pod } from '../../../api/types.js';
import { CycleState, ReadOnlyState, StateKey } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import type { EnqueueExtensions, FilterPlugin, Plugin, PreFilterPlugin, PreFilterResult } from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import { HostPortInfo, podHostPorts, type NodeInfo } from '../../framework/types.js';

export const NAME = 'NodePorts';
export const ERR_REASON = "node(s) didn't have free ports for the requested pod ports";

type Ports = ReturnType<typeof podHostPorts>;

/** The host ports the pod wants. */
const preFilterKey = new StateKey<ReadOnlyState<Ports>>(`PreFilter${NAME}`);

export function fitsPorts(wanted: Ports, used: HostPortInfo): boolean {
  if (used.size === 0) return true;
  for (const p of wanted) if (used.conflicts(p.hostIP, p.protocol, p.hostPort)) return false;
  return true;
}

export class NodePorts implements PreFilterPlugin, FilterPlugin, EnqueueExtensions {
  readonly name = NAME;

  preFilter(state: CycleState, pod: Pod): { result?: PreFilterResult; status?: Result } {
    const ports = podHostPorts(pod);
    if (ports.length === 0) return { status: Status.of(Code.Skip) };
    state.write(preFilterKey, new ReadOnlyState(ports));
    return {};
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    const ports = state.read(preFilterKey)?.value ?? podHostPorts(pod);
    return fitsPorts(ports, nodeInfo.usedPorts) ? undefined : Status.of(Code.Unschedulable, ERR_REASON);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        // Only the deletion of a pod holding one of the wanted ports frees it.
        event: { resource: 'Pod', actionType: ActionType.Delete },
        queueingHintFn: (pod, deleted) => {
          const used = new HostPortInfo();
          for (const p of podHostPorts(deleted as Pod)) used.add(p.hostIP, p.protocol, p.hostPort);
          return fitsPorts(podHostPorts(pod), used) ? QueueingHint.QueueSkip : QueueingHint.Queue;
        },
      },
      { event: { resource: 'Node', actionType: ActionType.Add | ActionType.Update } },
    ];
  }
}

export const factory = (): Plugin => new NodePorts();
