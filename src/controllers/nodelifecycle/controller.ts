// The node lifecycle controller (upstream 1.33's pkg/controller/nodelifecycle): every
// --node-monitor-period it judges each node's health from its status heartbeats and its Lease in
// kube-node-lease, as this controller observed them; a node silent past the grace period gets its
// kubelet conditions set Unknown, its pods Ready=False, and (through a rate-limited queue per zone)
// the NoExecute unreachable / not-ready taint the taint eviction controller acts on. Node events
// also drive the NoSchedule taints that mirror the node's conditions and spec.unschedulable.
import type { NodeCondition, Taint } from 'kubernetes-types/core/v1.js';
import type { Lease, Node, Pod } from '../../api/types.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import { zoneKey } from '../../api/topology.js';
import { waitForCacheSync, type EventSource } from '../../client/factory.js';
import { metaNamespaceKeyFunc, splitMetaNamespaceKey, unwrapDeleted } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import type { EventRecorder } from '../../client/record/recorder.js';
import { Periodic } from '../../util/periodic.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { controllerEvents, type ControllerEvents } from '../kit/events.js';
import { addPodNodeNameIndexer, POD_NODE_NAME_INDEX } from '../kit/pods.js';
import {
  assessNodeHealth,
  computeZoneState,
  noScheduleTaintDiff,
  nodeCondition,
  notReadyTaintTemplate,
  swapTaints,
  taintExists,
  unreachableTaintTemplate,
  zoneTaintingRate,
  type NodeHealthData,
  type ZoneState,
} from './health.js';
import { RateLimitedTimedQueue, type TryResult } from './ratelimitedqueue.js';

/** kube-controller-manager's node lifecycle flags, durations in ms. */
export interface NodeLifecycleConfig {
  /** --node-monitor-period: how often node health is checked. */
  nodeMonitorPeriodMs: number;
  /** --node-monitor-grace-period: silence before a node is Unknown. */
  nodeMonitorGracePeriodMs: number;
  /** --node-startup-grace-period: how long a new node may go without posting status. */
  nodeStartupGracePeriodMs: number;
  /** --node-eviction-rate: nodes per second tainted in a healthy zone. */
  nodeEvictionRate: number;
  /** --secondary-node-eviction-rate: nodes per second in a partially disrupted large zone. */
  secondaryNodeEvictionRate: number;
  /** --large-cluster-size-threshold: above this many nodes a zone is large. */
  largeClusterSizeThreshold: number;
  /** --unhealthy-zone-threshold: the share of not-Ready nodes (at least 3) that disrupts a zone. */
  unhealthyZoneThreshold: number;
}

export const defaultNodeLifecycleConfig: NodeLifecycleConfig = {
  nodeMonitorPeriodMs: 5_000,
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

/** scheduler.NodeEvictionPeriod: how often the taint queues are drained. */
export const nodeEvictionPeriodMs = 100;
/** Attempts at a node's status write, re-reading the node between them (NodeHealthUpdateRetry). */
const nodeHealthUpdateRetry = 5;
/** Attempts at a taint patch on conflicts (retry.DefaultBackoff's steps). */
const taintUpdateRetry = 5;
/** A node with this label is left out of its zone's disruption count. */
const labelNodeExcludeDisruption = 'node.kubernetes.io/exclude-disruption';

export interface NodeLifecycleControllerOptions extends ControllerOptions {
  config?: Partial<NodeLifecycleConfig>;
}

export class NodeLifecycleController {
  private readonly config: NodeLifecycleConfig;
  private readonly nodes: Lister<Node>;
  private readonly leases: Lister<Lease>;
  private readonly pods: Lister<Pod>;
  private readonly sources: readonly EventSource<never>[];
  private readonly events: ControllerEvents;
  private readonly recorder: EventRecorder;
  private readonly nodeUpdates: QueueController<string>;
  private readonly podUpdates: QueueController<string>;
  private readonly monitor: Periodic;
  private readonly tainting: Periodic;
  private readonly health = new Map<string, NodeHealthData>();
  private readonly knownNodes = new Map<string, Node>();
  private readonly zoneStates = new Map<string, ZoneState>();
  private readonly zoneTainters = new Map<string, RateLimitedTimedQueue>();
  private readonly nodesToRetry = new Set<string>();
  private readonly abort = new AbortController();
  private running?: Promise<void>;

  constructor(private readonly opts: NodeLifecycleControllerOptions) {
    this.config = { ...defaultNodeLifecycleConfig, ...opts.config };
    const { informers, clock, logger } = opts;
    const nodesInfo = findResource('', 'v1', 'nodes')!;
    const leasesInfo = findResource('coordination.k8s.io', 'v1', 'leases')!;
    const podsInfo = findResource('', 'v1', 'pods')!;
    const nodeInformer = informers.informerFor<Node>(nodesInfo);
    const podInformer = informers.informerFor<Pod>(podsInfo);
    this.sources = [nodeInformer, podInformer, informers.informerFor<Lease>(leasesInfo)];
    addPodNodeNameIndexer(informers);
    this.nodes = informers.lister<Node>(nodesInfo);
    this.leases = informers.lister<Lease>(leasesInfo);
    this.pods = informers.lister<Pod>(podsInfo);
    this.events = controllerEvents(opts, 'node-controller');
    this.recorder = this.events.recorder;

    this.nodeUpdates = new QueueController<string>({ name: 'node-lifecycle', clock, logger, sources: this.sources, workers: opts.workers ?? 8, sync: (name) => this.doNoScheduleTaintingPass(name) });
    this.podUpdates = new QueueController<string>({ name: 'node-lifecycle-pods', clock, logger, sources: this.sources, workers: 4, sync: (key) => this.processPod(key) });
    nodeInformer.addEventHandler({
      onAdd: (node) => this.nodeUpdates.enqueue(node.metadata?.name ?? ''),
      onUpdate: (_old, node) => this.nodeUpdates.enqueue(node.metadata?.name ?? ''),
      onDelete: (obj) => this.nodesToRetry.delete(unwrapDeleted(obj).metadata?.name ?? ''),
    });
    const podChanged = (old: Pod | undefined, pod: Pod) => {
      // Only a pod newly bound to a node needs a look (upstream's podUpdated).
      if (pod.spec?.nodeName && old?.spec?.nodeName !== pod.spec.nodeName) this.podUpdates.enqueue(metaNamespaceKeyFunc(pod));
    };
    podInformer.addEventHandler({
      onAdd: (pod) => podChanged(undefined, pod),
      onUpdate: (old, pod) => podChanged(old, pod),
    });

    const onError = (what: string) => (err: unknown) => logger.error({ err }, what);
    this.monitor = new Periodic({ clock, periodMs: this.config.nodeMonitorPeriodMs, run: () => this.monitorNodeHealth(), onError: onError('Error monitoring node health') });
    this.tainting = new Periodic({ clock, periodMs: nodeEvictionPeriodMs, run: () => this.doNoExecuteTaintingPass(), onError: onError('NoExecute tainting pass failed') });
  }

  start(): void {
    this.nodeUpdates.start();
    this.podUpdates.start();
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([this.nodeUpdates.stop(), this.podUpdates.stop()]);
    await this.running;
    await Promise.all([this.monitor.stop(), this.tainting.stop()]);
    await this.events.events?.stop();
  }

  private async run(): Promise<void> {
    const { logger } = this.opts;
    logger.info({ controller: 'taint' }, 'Starting node controller');
    if (!(await waitForCacheSync(this.abort.signal, ...this.sources))) return;
    this.tainting.start();
    // wait.Until: the first health check at once, then every period.
    await this.monitorNodeHealth().catch((err: unknown) => logger.error({ err }, 'Error monitoring node health'));
    if (!this.abort.signal.aborted) this.monitor.start();
  }

  /** The node lifecycle controller's zone states, by zone key (for tests and logs). */
  zoneState(zone: string): ZoneState | undefined {
    return this.zoneStates.get(zone);
  }

  /** Nodes waiting in a zone's taint queue. */
  queuedForTainting(zone: string): string[] {
    return this.zoneTainters.get(zone)?.pending().map((v) => v.value) ?? [];
  }

  /** One health check of every node (monitorNodeHealth). */
  async monitorNodeHealth(): Promise<void> {
    const nodes = this.nodes.list();
    const names = new Set(nodes.map((n) => n.metadata?.name ?? ''));
    for (const node of nodes) {
      const name = node.metadata?.name ?? '';
      this.addTainterForNewZone(node);
      if (this.knownNodes.has(name)) continue;
      this.opts.logger.info({ node: name }, 'Controller observed a new Node');
      this.nodeEvent(node, 'RegisteredNode', `Node ${name} event: Registered Node ${name} in Controller`);
      this.knownNodes.set(name, node);
      await this.markNodeAsReachable(node).catch((err: unknown) => this.opts.logger.error({ err, node: name }, 'Failed to remove taints from node'));
    }
    for (const [name, known] of [...this.knownNodes]) {
      if (names.has(name)) continue;
      this.opts.logger.info({ node: name }, 'Controller observed a Node deletion');
      this.nodeEvent(known, 'RemovingNode', `Node ${name} event: Removing Node ${name} from Controller`);
      this.knownNodes.delete(name);
      this.health.delete(name);
    }

    const zoneReady = new Map<string, (NodeCondition | undefined)[]>();
    for (const node of nodes) {
      if (this.abort.signal.aborted) return;
      await this.monitorNode(node, zoneReady);
    }
    await this.handleDisruption(zoneReady, nodes);
  }

  private async monitorNode(listed: Node, zoneReady: Map<string, (NodeCondition | undefined)[]>): Promise<void> {
    const { logger, client, clock } = this.opts;
    const name = listed.metadata?.name ?? '';
    let node = listed;
    let observedReady: NodeCondition | undefined;
    let currentReady: NodeCondition | undefined;
    for (let attempt = 0; ; attempt++) {
      const a = assessNodeHealth(node, this.leases.namespace('kube-node-lease').get(name), this.health.get(name), clock.now(), this.config);
      this.health.set(name, a.health);
      observedReady = a.observedReady;
      currentReady = a.currentReady;
      if (!a.conditions) break;
      try {
        await client.resource<Node>('', 'v1', 'nodes').updateStatus({ ...node, status: { ...node.status, conditions: a.conditions } });
        this.health.set(name, a.healthAfterWrite!);
        break;
      } catch (err) {
        logger.error({ err, node: name }, 'Error updating node');
        if (attempt + 1 >= nodeHealthUpdateRetry) {
          logger.error({ node: name }, 'Update health of Node from Controller error, Skipping - no pods will be evicted');
          return;
        }
      }
      try {
        node = await client.resource<Node>('', 'v1', 'nodes').get(name);
      } catch (err) {
        if (!hasStatusCode(err, 404)) logger.error({ err, node: name }, 'Failed while getting a Node to retry updating node health');
        return;
      }
    }
    if (node.metadata?.labels?.[labelNodeExcludeDisruption] === undefined) {
      const zone = zoneKey(node);
      zoneReady.set(zone, [...(zoneReady.get(zone) ?? []), currentReady]);
    }
    if (currentReady) {
      await this.processTaintBaseEviction(node, observedReady);
      const becameNotReady = currentReady.status !== 'True' && observedReady.status === 'True';
      if (becameNotReady) this.nodeEvent(node, 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      if (becameNotReady || (this.nodesToRetry.has(name) && observedReady.status !== 'True')) {
        if (!(await this.markPodsNotReady(this.pods.byIndex(POD_NODE_NAME_INDEX, name), name))) {
          this.nodesToRetry.add(name);
          return;
        }
      }
    }
    this.nodesToRetry.delete(name);
  }

  private async processTaintBaseEviction(node: Node, observedReady: NodeCondition): Promise<void> {
    const name = node.metadata?.name ?? '';
    const taints = node.spec?.taints;
    switch (observedReady.status) {
      case 'False':
      case 'Unknown': {
        const [wanted, opposite] = observedReady.status === 'False' ? [notReadyTaintTemplate, unreachableTaintTemplate] : [unreachableTaintTemplate, notReadyTaintTemplate];
        // The other NoExecute taint swaps at once; a node not yet tainted waits its turn in the zone's queue.
        if (taintExists(taints, opposite)) {
          if (!(await this.swapNodeControllerTaint(name, [wanted], [opposite], node))) this.opts.logger.error({ node: name }, 'Failed to instantly swap taints. Will try again in the next cycle');
          return;
        }
        const tainter = this.zoneTainters.get(zoneKey(node));
        if (!tainter) return;
        if (!taintExists(taints, wanted)) tainter.remove(name);
        if (tainter.add(name, node.metadata?.uid ?? '')) this.opts.logger.info({ node: name }, `Node is ${observedReady.status === 'False' ? 'NotReady' : 'unresponsive'}. Adding it to the Taint queue`);
        return;
      }
      case 'True':
        try {
          if (await this.markNodeAsReachable(node)) this.opts.logger.info({ node: name }, 'Node is healthy again, removed all taints');
        } catch (err) {
          this.opts.logger.error({ err, node: name }, 'Failed to remove taints from node. Will retry in next iteration');
        }
    }
  }

  /** Takes the NoExecute unreachable and not-ready taints off and the node out of its zone's queue; true if taints went. */
  private async markNodeAsReachable(node: Node): Promise<boolean> {
    const name = node.metadata?.name ?? '';
    let removed = false;
    if (taintExists(node.spec?.taints, unreachableTaintTemplate) || taintExists(node.spec?.taints, notReadyTaintTemplate)) {
      removed = await this.patchTaints(name, node, (taints) => swapTaints(taints, [], [unreachableTaintTemplate, notReadyTaintTemplate], this.opts.clock.now()));
    }
    this.zoneTainters.get(zoneKey(node))?.remove(name);
    return removed;
  }

  private addTainterForNewZone(node: Node): void {
    const zone = zoneKey(node);
    if (this.zoneStates.has(zone)) return;
    this.zoneStates.set(zone, 'Initial');
    this.zoneTainters.set(zone, new RateLimitedTimedQueue(this.opts.clock, this.config.nodeEvictionRate));
  }

  /** handleDisruption: zone states decide each zone's tainting rate; with every zone down, no NoExecute tainting at all. */
  private async handleDisruption(zoneReady: Map<string, (NodeCondition | undefined)[]>, nodes: Node[]): Promise<void> {
    const { logger, clock } = this.opts;
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, ready] of zoneReady) {
      const { state } = computeZoneState(ready, this.config.unhealthyZoneThreshold);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.zoneStates.has(zone)) {
        logger.error({ zone }, 'Setting initial state for unseen zone');
        this.zoneStates.set(zone, 'Initial');
      }
    }
    let allWasFullyDisrupted = true;
    for (const [zone, state] of [...this.zoneStates]) {
      if (!zoneReady.has(zone)) {
        this.zoneStates.delete(zone);
        continue;
      }
      if (state !== 'FullDisruption') {
        allWasFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWasFullyDisrupted) return;
    if (allAreFullyDisrupted) {
      logger.info('Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      for (const node of nodes) {
        await this.markNodeAsReachable(node).catch((err: unknown) => logger.error({ err, node: node.metadata?.name }, 'Failed to remove taints from Node'));
      }
      for (const zone of this.zoneStates.keys()) {
        this.tainter(zone).swapLimiter(0);
        this.zoneStates.set(zone, 'FullDisruption');
      }
      return;
    }
    if (allWasFullyDisrupted) {
      logger.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
      // The nodes were silent because of the disruption, not on their own: start their clocks afresh.
      const now = clock.now();
      for (const node of nodes) {
        const name = node.metadata?.name ?? '';
        const h = this.health.get(name);
        if (h) this.health.set(name, { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
      }
    }
    for (const [zone, state] of this.zoneStates) {
      const next = newStates.get(zone)!;
      if (!allWasFullyDisrupted && state === next) continue;
      if (!allWasFullyDisrupted) logger.info({ zone, newState: next }, 'Controller detected that zone is now in new state');
      this.tainter(zone).swapLimiter(zoneTaintingRate(next, zoneReady.get(zone)!.length, this.config));
      this.zoneStates.set(zone, next);
    }
  }

  private tainter(zone: string): RateLimitedTimedQueue {
    let q = this.zoneTainters.get(zone);
    if (!q) this.zoneTainters.set(zone, (q = new RateLimitedTimedQueue(this.opts.clock, this.config.nodeEvictionRate)));
    return q;
  }

  /** Drains each zone's taint queue at its rate: unreachable for Ready Unknown, not-ready for False. */
  async doNoExecuteTaintingPass(): Promise<void> {
    for (const tainter of [...this.zoneTainters.values()]) {
      await tainter.try(async (value): Promise<TryResult> => {
        const node = this.nodes.get(value.value);
        if (!node) return { done: true };
        const ready = nodeCondition(node, 'Ready');
        if (!ready) return { done: false, retryAfterMs: 50 };
        let add: Taint;
        let remove: Taint;
        if (ready.status === 'False') [add, remove] = [notReadyTaintTemplate, unreachableTaintTemplate];
        else if (ready.status === 'Unknown') [add, remove] = [unreachableTaintTemplate, notReadyTaintTemplate];
        else return { done: true };
        return (await this.swapNodeControllerTaint(value.value, [add], [remove], node)) ? { done: true } : { done: false, retryAfterMs: 0 };
      });
    }
  }

  /** The NoSchedule taints that mirror the node's conditions and spec.unschedulable (TaintNodesByCondition). */
  private async doNoScheduleTaintingPass(name: string): Promise<void> {
    const node = this.nodes.get(name);
    if (!node) return;
    const { add, remove } = noScheduleTaintDiff(node);
    if (add.length === 0 && remove.length === 0) return;
    if (!(await this.swapNodeControllerTaint(name, add, remove, node))) throw new Error(`failed to swap taints of node ${name}`);
  }

  /** A pod newly bound to a node that is not Ready is marked not Ready (processPod). */
  private async processPod(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pod = this.pods.namespace(namespace).get(name);
    const nodeName = pod?.spec?.nodeName;
    if (!pod || !nodeName || !this.health.has(nodeName)) return;
    const node = this.nodes.get(nodeName);
    const ready = node && nodeCondition(node, 'Ready');
    if (!ready || ready.status === 'True') return;
    if (!(await this.markPodsNotReady([pod], nodeName))) throw new Error(`unable to mark pod ${key} NotReady`);
  }

  /** SwapNodeControllerTaint: true on success, errors logged. */
  private async swapNodeControllerTaint(name: string, add: readonly Taint[], remove: readonly Taint[], node: Node): Promise<boolean> {
    try {
      await this.patchTaints(name, node, (taints) => swapTaints(taints, add, remove, this.opts.clock.now()));
      return true;
    } catch (err) {
      this.opts.logger.error({ err, node: name }, 'Failed to swap node controller taints');
      return false;
    }
  }

  /**
   * Writes the node's taints as upstream's PatchNodeTaints: a strategic merge patch of spec.taints
   * (a list replaced whole) with the resourceVersion it was computed from, re-read and retried on
   * conflict. The first attempt works from the cached node. True if a patch was sent.
   */
  private async patchTaints(name: string, cached: Node, change: (taints: Taint[] | undefined) => Taint[] | undefined): Promise<boolean> {
    const nodes = this.opts.client.resource<Node>('', 'v1', 'nodes');
    let node = cached;
    for (let attempt = 1; ; attempt++) {
      const taints = change(node.spec?.taints);
      if (!taints) return false;
      try {
        await nodes.patch(name, 'strategic', { metadata: { resourceVersion: node.metadata?.resourceVersion }, spec: { taints: taints.length > 0 ? taints : null } });
        return true;
      } catch (err) {
        if (!hasStatusCode(err, 409) || attempt >= taintUpdateRetry) throw err;
      }
      node = await nodes.get(name);
    }
  }

  /**
   * MarkPodsNotReady: each pod's Ready condition set False (a status update, as upstream) with the
   * Warning NodeNotReady event. False if a write failed (a pod gone meanwhile is no failure).
   */
  private async markPodsNotReady(pods: readonly Pod[], nodeName: string): Promise<boolean> {
    const { client, clock, logger } = this.opts;
    let ok = true;
    for (const pod of pods) {
      if (pod.spec?.nodeName !== nodeName) continue;
      const conditions = pod.status?.conditions ?? [];
      const i = conditions.findIndex((c) => c.type === 'Ready');
      if (i < 0 || conditions[i]!.status === 'False') continue;
      const next = [...conditions];
      next[i] = { ...conditions[i]!, status: 'False', lastTransitionTime: rfc3339(clock.now()) };
      logger.info({ pod: metaNamespaceKeyFunc(pod) }, 'Updating ready status of pod to false');
      try {
        await client.resource<Pod>('', 'v1', 'pods').namespace(pod.metadata?.namespace).updateStatus({ ...pod, status: { ...pod.status, conditions: next } });
      } catch (err) {
        if (hasStatusCode(err, 404)) continue;
        logger.info({ err, pod: metaNamespaceKeyFunc(pod) }, 'Failed to update status for pod');
        ok = false;
      }
      // Recorded after the write, as upstream, so the pod still existed.
      this.recorder.event({ kind: 'Pod', apiVersion: 'v1', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid }, 'Warning', 'NodeNotReady', 'Node is not ready');
    }
    return ok;
  }

  /** RecordNodeEvent ("Node <n> event: ...") and RecordNodeStatusChange ("Node <n> status is now: ..."), on the Node by its UID. */
  private nodeEvent(node: Node, reason: string, message: string): void {
    this.recorder.event({ kind: 'Node', apiVersion: 'v1', name: node.metadata?.name, uid: node.metadata?.uid ?? '' }, 'Normal', reason, message);
  }
}
