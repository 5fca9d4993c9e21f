// NodeResourcesBalancedAllocation: prefers nodes whose cpu and memory would be used in similar
// proportions after placing the pod: score = (1 - std(fractions)) * 100. BestEffort pods are not
// scored (upstream issue 129138: they would all pile onto one node).
import type { Pod } from '../../../api/types.js';
import { CycleState, ReadOnlyState, StateKey } from '../../framework/cycle-state.js';
import { MAX_NODE_SCORE, type Plugin, type PreScorePlugin, type ScorePlugin } from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { NodeInfo } from '../../framework/types.js';
import { DEFAULT_RESOURCES, podRequestList, requestedWith, scoredAllocatable, type ResourceSpec } from '../helper/resource-allocation.js';

export const NAME = 'NodeResourcesBalancedAllocation';

export interface BalancedAllocationArgs {
  resources?: ResourceSpec[];
}

/** The pod's requests of the scored resources. */
const preScoreKey = new StateKey<ReadOnlyState<number[]>>(`PreScore${NAME}`);

/** (1 - standard deviation of the requested/allocatable fractions, each capped at 1) * 100, truncated. */
export function balancedResourceScore(fractions: readonly number[]): number {
  let std = 0;
  if (fractions.length === 2) std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  else if (fractions.length > 2) {
    const mean = fractions.reduce((a, f) => a + f, 0) / fractions.length;
    std = Math.sqrt(fractions.reduce((acc, f) => acc + (f - mean) * (f - mean), 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

export class BalancedAllocation implements PreScorePlugin, ScorePlugin {
  readonly name = NAME;
  private readonly resources: readonly ResourceSpec[];
  // Reused per node: scoring is synchronous, so one buffer serves every call.
  private readonly fractions: number[] = [];

  constructor(args: BalancedAllocationArgs = {}) {
    this.resources = args.resources ?? DEFAULT_RESOURCES;
  }

  preScore(state: CycleState, pod: Pod): Result {
    const reqs = podRequestList(pod, this.resources, true);
    if (reqs.every((r) => r === 0)) return Status.of(Code.Skip);
    state.write(preScoreKey, new ReadOnlyState(reqs));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const reqs = state.read(preScoreKey)?.value ?? podRequestList(pod, this.resources, true);
    if (reqs.every((r) => r === 0)) return 0;
    const fractions = this.fractions;
    fractions.length = 0;
    for (let i = 0; i < this.resources.length; i++) {
      const name = this.resources[i]!.name;
      const alloc = scoredAllocatable(nodeInfo, name, reqs[i]!);
      if (alloc > 0) fractions.push(Math.min(1, requestedWith(nodeInfo, name, reqs[i]!, true) / alloc));
    }
    return balancedResourceScore(fractions);
  }
}

export const factory = (args: unknown): Plugin => new BalancedAllocation(args as BalancedAllocationArgs | undefined);
