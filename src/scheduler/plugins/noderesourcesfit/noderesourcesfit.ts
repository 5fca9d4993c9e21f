// NodeResourcesFit: Filter checks the pod's requests (init-container rule, sidecars, overhead,
// extended resources) and the pods count against what the node has left; Score (LeastAllocated)
// prefers nodes with more room, counting non-zero defaults so BestEffort pods spread too.
import type { Node, Pod } from '../../../api/types.js';
import { CycleState, ReadOnlyState, StateKey } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import {
  MAX_NODE_SCORE,
  type EnqueueExtensions,
  type FilterPlugin,
  type Plugin,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type ScorePlugin,
} from '../../framework/interface.js';
import { podRequests, Resource } from '../../framework/resource.js';
import { Code, Status, type Result } from '../../framework/status.js';
import { NodeInfo } from '../../framework/types.js';
import { DEFAULT_RESOURCES, podRequestList, requestedWith, scoredAllocatable, type ResourceSpec } from '../helper/resource-allocation.js';

export const NAME = 'NodeResourcesFit';
export const REASON_TOO_MANY_PODS = 'Too many pods';
export const insufficientReason = (resource: string): string => `Insufficient ${resource}`;

export interface NodeResourcesFitArgs {
  /** LeastAllocated's resources and weights (default cpu and memory, 1 each). */
  resources?: ResourceSpec[];
}

/** The pod's requests. */
const preFilterKey = new StateKey<ReadOnlyState<Resource>>(`PreFilter${NAME}`);
/** The pod's non-zero requests of the scored resources. */
const preScoreKey = new StateKey<ReadOnlyState<number[]>>(`PreScore${NAME}`);

export interface InsufficientResource {
  resourceName: string;
  reason: string;
  /** The pod asks for more than the node's whole allocatable: preemption cannot help. */
  unresolvable: boolean;
}

const fitsAll: InsufficientResource[] = [];

function insufficient(out: InsufficientResource[], name: string, want: number, have: number, inUse: number): void {
  if (want > 0 && want > have - inUse) out.push({ resourceName: name, reason: insufficientReason(name), unresolvable: want > have });
}

/** What the node lacks for a pod requesting `req` (upstream's fitsRequest). */
export function fitsRequest(req: Resource, nodeInfo: NodeInfo): InsufficientResource[] {
  const a = nodeInfo.allocatable;
  const u = nodeInfo.requested;
  // The common case, without allocating: everything fits.
  if (
    nodeInfo.pods.length < a.allowedPodNumber &&
    req.milliCPU <= a.milliCPU - u.milliCPU &&
    req.memory <= a.memory - u.memory &&
    req.ephemeralStorage <= a.ephemeralStorage - u.ephemeralStorage &&
    req.scalar.size === 0
  ) {
    return fitsAll;
  }
  const out: InsufficientResource[] = [];
  if (nodeInfo.pods.length + 1 > nodeInfo.allocatable.allowedPodNumber) {
    out.push({ resourceName: 'pods', reason: REASON_TOO_MANY_PODS, unresolvable: false });
  }
  if (req.isZero()) return out;
  const alloc = nodeInfo.allocatable;
  const used = nodeInfo.requested;
  insufficient(out, 'cpu', req.milliCPU, alloc.milliCPU, used.milliCPU);
  insufficient(out, 'memory', req.memory, alloc.memory, used.memory);
  insufficient(out, 'ephemeral-storage', req.ephemeralStorage, alloc.ephemeralStorage, used.ephemeralStorage);
  if (req.scalar.size > 0) for (const [name, want] of req.scalar) insufficient(out, name, want, alloc.scalar.get(name) ?? 0, used.scalar.get(name) ?? 0);
  return out;
}

/** ((allocatable - requested) * 100) / allocatable, 0 when over-committed (integer math, as upstream). */
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

export class NodeResourcesFit implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  readonly name = NAME;
  private readonly resources: readonly ResourceSpec[];

  constructor(args: NodeResourcesFitArgs = {}) {
    this.resources = args.resources ?? DEFAULT_RESOURCES;
  }

  preFilter(state: CycleState, pod: Pod): { result?: PreFilterResult; status?: Result } {
    state.write(preFilterKey, new ReadOnlyState(podRequests(pod)));
    return {};
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    const req = state.read(preFilterKey)?.value ?? podRequests(pod);
    const insufficient = fitsRequest(req, nodeInfo);
    if (insufficient.length === 0) return undefined;
    const code = insufficient.some((r) => r.unresolvable) ? Code.UnschedulableAndUnresolvable : Code.Unschedulable;
    return new Status(code, insufficient.map((r) => r.reason));
  }

  preScore(state: CycleState, pod: Pod): Result {
    state.write(preScoreKey, new ReadOnlyState(podRequestList(pod, this.resources, false)));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const reqs = state.read(preScoreKey)?.value ?? podRequestList(pod, this.resources, false);
    let total = 0;
    let weights = 0;
    for (let i = 0; i < this.resources.length; i++) {
      const spec = this.resources[i]!;
      const alloc = scoredAllocatable(nodeInfo, spec.name, reqs[i]!);
      if (alloc === 0) continue;
      total += leastRequestedScore(requestedWith(nodeInfo, spec.name, reqs[i]!, false), alloc) * spec.weight;
      weights += spec.weight;
    }
    return weights === 0 ? 0 : Math.trunc(total / weights);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    // Whether the pod could fit the node if it ran nothing else.
    const couldFit = (pod: Pod, node: Node) => fitsRequest(podRequests(pod), new NodeInfo(node)).length === 0;
    return [
      { event: { resource: 'Pod', actionType: ActionType.Delete | ActionType.UpdatePodScaleDown } },
      {
        event: { resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeAllocatable | ActionType.UpdateNodeTaint | ActionType.UpdateNodeLabel },
        queueingHintFn: (pod, _old, node) => (couldFit(pod, node as Node) ? QueueingHint.Queue : QueueingHint.QueueSkip),
      },
    ];
  }
}

export const factory = (args: unknown): Plugin => new NodeResourcesFit(args as NodeResourcesFitArgs | undefined);
