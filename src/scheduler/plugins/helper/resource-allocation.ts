// The allocatable and requested-with-this-pod amounts the resource scorers compare, as upstream's
// resourceAllocationScorer.calculateResourceAllocatableRequest, as two functions so scoring a node
// allocates nothing.
import type { Pod } from '../../../api/types.js';
import { podRequests } from '../../framework/resource.js';
import type { NodeInfo } from '../../framework/types.js';

/** A scored resource and its weight (both scorers default to cpu and memory, weight 1). */
export interface ResourceSpec {
  name: string;
  weight: number;
}

export const DEFAULT_RESOURCES: readonly ResourceSpec[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

/** The pod's request of each resource; useRequested false applies the non-zero cpu/memory defaults. */
export function podRequestList(pod: Pod, resources: readonly ResourceSpec[], useRequested: boolean): number[] {
  const r = podRequests(pod, !useRequested);
  return resources.map((s) => r.get(s.name));
}

/** The node's allocatable of a scored resource; 0 means "do not score it" (an extended resource the pod does not request, or the node lacks). */
export function scoredAllocatable(nodeInfo: NodeInfo, name: string, podRequest: number): number {
  switch (name) {
    case 'cpu':
      return nodeInfo.allocatable.milliCPU;
    case 'memory':
      return nodeInfo.allocatable.memory;
    case 'ephemeral-storage':
      return nodeInfo.allocatable.ephemeralStorage;
    default:
      return podRequest === 0 ? 0 : (nodeInfo.allocatable.scalar.get(name) ?? 0);
  }
}

/** What the node would have requested with the pod; useRequested false counts the non-zero defaults for cpu and memory. */
export function requestedWith(nodeInfo: NodeInfo, name: string, podRequest: number, useRequested: boolean): number {
  const requested = useRequested ? nodeInfo.requested : nodeInfo.nonZeroRequested;
  switch (name) {
    case 'cpu':
      return requested.milliCPU + podRequest;
    case 'memory':
      return requested.memory + podRequest;
    default:
      return nodeInfo.requested.get(name) + podRequest;
  }
}
