// Cluster events that can make an unschedulable pod schedulable. Each plugin declares the events
// that could resolve its own rejections (EventsToRegister), optionally with a hint that looks at the
// change; the queue moves a pod back only for events its rejecting plugins care about.
import type { Node, Pod } from '../../api/types.js';

/** Bit flags, as upstream's framework.ActionType. */
export const ActionType = {
  Add: 1,
  Delete: 1 << 1,
  UpdateNodeAllocatable: 1 << 2,
  UpdateNodeLabel: 1 << 3,
  UpdateNodeTaint: 1 << 4,
  UpdateNodeCondition: 1 << 5,
  UpdateNodeAnnotation: 1 << 6,
  UpdatePodLabel: 1 << 7,
  UpdatePodScaleDown: 1 << 8,
  UpdatePodTolerations: 1 << 9,
  UpdatePodSchedulingGatesEliminated: 1 << 10,
  /** Any update of the resource. */
  Update: ((1 << 11) - 1) & ~3,
  All: (1 << 11) - 1,
} as const;

/** 'Pod' events are about pods bound to nodes; '*' matches every resource. */
export type EventResource = 'Pod' | 'Node' | '*';

export interface ClusterEvent {
  resource: EventResource;
  actionType: number;
  /** For logs. */
  label?: string;
}

export enum QueueingHint {
  /** The event may make the pod schedulable: move it. */
  Queue = 'Queue',
  /** The event cannot help the pod: leave it. */
  QueueSkip = 'QueueSkip',
}

/** Decides whether an event helps a pod this plugin rejected; oldObj is undefined for adds, newObj for deletes. */
export type QueueingHintFn = (pod: Pod, oldObj: Pod | Node | undefined, newObj: Pod | Node | undefined) => QueueingHint;

export interface ClusterEventWithHint {
  event: ClusterEvent;
  queueingHintFn?: QueueingHintFn;
}

export function eventMatches(registered: ClusterEvent, incoming: ClusterEvent): boolean {
  if (registered.resource !== '*' && incoming.resource !== '*' && registered.resource !== incoming.resource) return false;
  return (registered.actionType & incoming.actionType) !== 0;
}

export const NodeAdd: ClusterEvent = { resource: 'Node', actionType: ActionType.Add, label: 'NodeAdd' };
export const AssignedPodAdd: ClusterEvent = { resource: 'Pod', actionType: ActionType.Add, label: 'AssignedPodAdd' };
export const AssignedPodDelete: ClusterEvent = { resource: 'Pod', actionType: ActionType.Delete, label: 'AssignedPodDelete' };

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** What changed between two versions of a node, as the update action bits (0: nothing scheduling-relevant). */
export function nodeUpdateActions(oldNode: Node, newNode: Node): number {
  let a = 0;
  if (!same(oldNode.status?.allocatable, newNode.status?.allocatable)) a |= ActionType.UpdateNodeAllocatable;
  if (!same(oldNode.metadata?.labels, newNode.metadata?.labels)) a |= ActionType.UpdateNodeLabel;
  // spec.unschedulable acts as a taint (node.kubernetes.io/unschedulable).
  if (!same(oldNode.spec?.taints, newNode.spec?.taints) || Boolean(oldNode.spec?.unschedulable) !== Boolean(newNode.spec?.unschedulable)) {
    a |= ActionType.UpdateNodeTaint;
  }
  const conds = (n: Node) => (n.status?.conditions ?? []).map((c) => [c.type, c.status]);
  if (!same(conds(oldNode), conds(newNode))) a |= ActionType.UpdateNodeCondition;
  if (!same(oldNode.metadata?.annotations, newNode.metadata?.annotations)) a |= ActionType.UpdateNodeAnnotation;
  return a;
}

/** What changed on an assigned pod that could help others: labels (affinity, spread) and shrinking requests. */
export function assignedPodUpdateActions(oldPod: Pod, newPod: Pod): number {
  let a = 0;
  if (!same(oldPod.metadata?.labels, newPod.metadata?.labels)) a |= ActionType.UpdatePodLabel;
  const reqs = (p: Pod) => (p.spec?.containers ?? []).map((c) => c.resources?.requests);
  if (!same(reqs(oldPod), reqs(newPod))) a |= ActionType.UpdatePodScaleDown;
  return a;
}
