// What the scheduler needs from the API server, narrowed to one interface so the whole loop can be
// tested against an in-memory fake (testing/fake-client.ts); schedulerClientFrom adapts the typed Client.
import type { Client } from '../client/client.js';
import type { ListerWatcher } from '../client/informer.js';
import type { EventsV1Event, Namespace, Node, Pod, PodCondition, PodDisruptionBudget, ReplicaSet, Service } from '../api/types.js';

export interface PodStatusPatch {
  conditions?: PodCondition[];
  /** null clears it. */
  nominatedNodeName?: string | null;
}

export interface SchedulerClient {
  pods: ListerWatcher<Pod>;
  nodes: ListerWatcher<Node>;
  namespaces: ListerWatcher<Namespace>;
  /** For the default topology spreading selector; without them pods get no default spreading. */
  services?: ListerWatcher<Service>;
  replicaSets?: ListerWatcher<ReplicaSet>;
  /** For preemption, which prefers victims whose eviction a budget allows; without them none counts as violating one. */
  podDisruptionBudgets?: ListerWatcher<PodDisruptionBudget>;
  /** POST pods/binding. */
  bind(pod: Pod, nodeName: string): Promise<void>;
  /** Strategic-merge patch of pods/status (conditions merge by type). */
  patchPodStatus(namespace: string, name: string, patch: PodStatusPatch): Promise<void>;
  /** Graceful deletion (preemption victims). */
  deletePod(namespace: string, name: string, uid?: string): Promise<void>;
  createEvent(ev: EventsV1Event): Promise<void>;
  /** Merge patch of an events.k8s.io/v1 Event (series updates). */
  patchEvent(namespace: string, name: string, patch: Partial<EventsV1Event>): Promise<void>;
}

export function schedulerClientFrom(client: Client): SchedulerClient {
  const pods = client.resource('pods');
  const events = client.resource('events.events.k8s.io');
  return {
    pods,
    nodes: client.resource('nodes'),
    namespaces: client.resource('namespaces'),
    services: client.resource('services'),
    replicaSets: client.resource('replicasets.apps'),
    podDisruptionBudgets: client.resource('poddisruptionbudgets.policy'),
    bind: (pod, nodeName) => client.bind(pod, nodeName),
    async patchPodStatus(namespace, name, patch) {
      await pods.namespace(namespace).patch(name, 'strategic', { status: patch }, { subresource: 'status' });
    },
    async deletePod(namespace, name, uid) {
      await pods.namespace(namespace).delete(name, uid ? { preconditions: { uid } } : undefined);
    },
    async createEvent(ev) {
      await events.namespace(ev.metadata?.namespace ?? 'default').create(ev);
    },
    async patchEvent(namespace, name, patch) {
      await events.namespace(namespace).patch(name, 'merge', patch);
    },
  };
}
