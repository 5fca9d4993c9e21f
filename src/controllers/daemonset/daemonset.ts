// The DaemonSet controller, as upstream's pkg/controller/daemon (daemon_controller.go, update.go):
// for each DaemonSet, one pod on every node that should run it (pinned there by node affinity; the
// scheduler binds it), none elsewhere; a ControllerRevision per template; RollingUpdate replaces
// old pods within maxUnavailable (deleting first) or maxSurge (creating first), OnDelete waits for
// the user; status counts what it found. Expectations keep a burst of events from acting twice.
import { isDeepStrictEqual } from 'node:util';
import type { ControllerRevision, DaemonSet, DaemonSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import { StatusError, hasStatusCode } from '../../api/errors.js';
import { labelSelectorAsSelector, type Selector } from '../../api/labels.js';
import { findResource } from '../../api/resources.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, type Indexer } from '../../client/indexer.js';
import { type EventBroadcaster, type EventRecorder } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { ControllerExpectations } from '../kit/expectations.js';
import {
  ControllerHistory,
  controllerRevisionsResource,
  findEqualRevisions,
  hashControllerRevision,
  newControllerRevision,
  nextRevision,
  POD_REVISION_LABEL,
  revisionsToTruncate,
  sortControllerRevisions,
  templatePatch,
  type RevisionParent,
} from '../kit/history.js';
import { involvedObject, NAMESPACE_TERMINATING_CAUSE, RealPodControl, type PodControl } from '../kit/podcontrol.js';
import { isPodReady } from '../kit/pods.js';
import { getControllerOf, newControllerRef, PodControllerRefManager, recheckDeletionTimestamp, resolveControllerRef } from '../kit/refmanager.js';
import { isPodAvailable } from '../kit/pods.js';
import { slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE } from '../kit/slowstart.js';
import {
  allowsSurge,
  daemonPodTemplate,
  isPodUpdated,
  nodeShouldRunDaemonPod,
  replaceNodeNameNodeAffinity,
  sortByCreationTimestampAndPhase,
  surgeCount,
  targetNodeName,
  templateGeneration,
  unavailableCount,
} from './util.js';

/** Upstream's BurstReplicas for DaemonSets. */
export const BURST_REPLICAS = 250;
const STATUS_UPDATE_RETRIES = 1;
export const SELECTING_ALL_REASON = 'SelectingAll';
export const FAILED_DAEMON_POD_REASON = 'FailedDaemonPod';
export const SUCCEEDED_DAEMON_POD_REASON = 'SucceededDaemonPod';
/** Upstream's failedPodsBackoff: 1 s doubling to 15 min, per DaemonSet and node. */
const FAILED_POD_BACKOFF_MS = 1000;
const FAILED_POD_BACKOFF_MAX_MS = 15 * 60 * 1000;
const API_VERSION = 'apps/v1';
const KIND = 'DaemonSet';

const podsResource = findResource('', 'v1', 'pods')!;
const nodesResource = findResource('', 'v1', 'nodes')!;
const daemonSetsResource = findResource('apps', 'v1', 'daemonsets')!;

export interface DaemonSetControllerOptions extends ControllerOptions {
  /** Upstream's --concurrent-daemonset-syncs (default 2). */
  workers?: number;
  burstReplicas?: number;
  /** Pod writes and their events; default RealPodControl with this controller's own recorder. */
  podControl?: PodControl;
  /** The recorder of the controller's own events (SelectingAll, FailedDaemonPod); default its own. */
  recorder?: EventRecorder;
}

const asParent = (ds: DaemonSet): RevisionParent & DaemonSet => ({ ...ds, apiVersion: API_VERSION, kind: KIND });

export class DaemonSetController {
  private readonly daemonSets: Indexer<DaemonSet>;
  private readonly pods: Indexer<Pod>;
  private readonly nodes: Indexer<Node>;
  private readonly revisions: Indexer<ControllerRevision>;
  private readonly controller: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly podControl: PodControl;
  private readonly recorder: EventRecorder;
  private readonly history: ControllerHistory;
  readonly expectations: ControllerExpectations;
  private readonly burstReplicas: number;
  /** Failed-pod deletion back-off: key → when the next deletion may happen and the delay after it. */
  private readonly failedPodsBackoff = new Map<string, { until: number; delay: number }>();

  constructor(private readonly opts: DaemonSetControllerOptions) {
    const dsInformer = opts.informers.informerFor<DaemonSet>(daemonSetsResource);
    const podInformer = opts.informers.informerFor<Pod>(podsResource);
    const nodeInformer = opts.informers.informerFor<Node>(nodesResource);
    const revInformer = opts.informers.informerFor<ControllerRevision>(controllerRevisionsResource);
    this.daemonSets = dsInformer.indexer;
    this.pods = podInformer.indexer;
    this.nodes = nodeInformer.indexer;
    this.revisions = revInformer.indexer;
    this.burstReplicas = opts.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new ControllerExpectations(opts.clock);
    this.history = new ControllerHistory(opts.client);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'daemonset-controller'));
    this.podControl = opts.podControl ?? new RealPodControl(opts.client, this.recorder);
    this.controller = new QueueController({
      name: 'daemonset',
      clock: opts.clock,
      logger: opts.logger,
      sources: [dsInformer, podInformer, nodeInformer, revInformer],
      workers: opts.workers ?? 2,
      sync: (key) => this.syncDaemonSet(key),
    });
    dsInformer.addEventHandler({
      onAdd: (ds) => this.enqueue(ds),
      onUpdate: (old, cur) => {
        if (old.metadata?.uid !== cur.metadata?.uid) this.deleteDaemonSet(old);
        this.enqueue(cur);
      },
      onDelete: (obj) => this.deleteDaemonSet(obj),
    });
    podInformer.addEventHandler({ onAdd: (pod) => this.addPod(pod), onUpdate: (old, cur) => this.updatePod(old, cur), onDelete: (obj) => this.deletePod(obj) });
    nodeInformer.addEventHandler({
      onAdd: (node) => {
        for (const ds of this.daemonSets.list()) if (nodeShouldRunDaemonPod(node, ds).shouldRun) this.enqueue(ds);
      },
      onUpdate: (old, cur) => {
        if (shouldIgnoreNodeUpdate(old, cur)) return;
        for (const ds of this.daemonSets.list()) {
          const before = nodeShouldRunDaemonPod(old, ds);
          const after = nodeShouldRunDaemonPod(cur, ds);
          if (before.shouldRun !== after.shouldRun || before.shouldContinueRunning !== after.shouldContinueRunning) this.enqueue(ds);
        }
      },
    });
    revInformer.addEventHandler({
      // Its own revisions it has just made; an orphan may be adopted.
      onAdd: (rev) => {
        if (!getControllerOf(rev)) this.enqueueOwner(rev);
      },
      onUpdate: (_old, rev) => this.enqueueOwner(rev),
      onDelete: (obj) => this.enqueueOwner(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj),
    });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  private enqueue(ds: DaemonSet): void {
    this.controller.enqueue(metaNamespaceKeyFunc(ds));
  }

  private deleteDaemonSet(obj: DaemonSet | DeletedFinalStateUnknown<DaemonSet>): void {
    const key = metaNamespaceKeyFunc(obj);
    this.expectations.deleteExpectations(key);
    this.controller.enqueue(key);
  }

  private resolveControllerRef(namespace: string, ref: { kind: string; name: string; uid: string } | undefined): DaemonSet | undefined {
    return resolveControllerRef(this.daemonSets, KIND, namespace, ref);
  }

  private enqueueOwner(obj: Pod | ControllerRevision): void {
    const ds = this.resolveControllerRef(obj.metadata?.namespace ?? '', getControllerOf(obj));
    if (ds) this.enqueue(ds);
    else if (!getControllerOf(obj)) for (const d of this.selectingDaemonSets(obj)) this.enqueue(d);
  }

  /** Upstream's getDaemonSetsForPod: those in the namespace whose selector matches. */
  private selectingDaemonSets(obj: Pod | ControllerRevision): DaemonSet[] {
    const ns = obj.metadata?.namespace ?? '';
    return this.daemonSets.byIndex(namespaceIndex, ns).filter((ds) => {
      try {
        const sel = labelSelectorAsSelector(ds.spec?.selector);
        return !sel.empty() && sel.matches(obj.metadata?.labels);
      } catch {
        return false;
      }
    });
  }

  private addPod(pod: Pod): void {
    if (pod.metadata?.deletionTimestamp) {
      this.deletePod(pod);
      return;
    }
    const ds = this.resolveControllerRef(pod.metadata?.namespace ?? '', getControllerOf(pod));
    if (ds) {
      const key = metaNamespaceKeyFunc(ds);
      this.expectations.creationObserved(key);
      this.controller.enqueue(key);
      return;
    }
    if (!getControllerOf(pod)) for (const d of this.selectingDaemonSets(pod)) this.enqueue(d);
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    if (cur.metadata?.deletionTimestamp && !old.metadata?.deletionTimestamp) {
      this.deletePod(cur);
      return;
    }
    const oldDs = this.resolveControllerRef(old.metadata?.namespace ?? '', getControllerOf(old));
    const curDs = this.resolveControllerRef(cur.metadata?.namespace ?? '', getControllerOf(cur));
    if (oldDs && oldDs !== curDs) this.enqueue(oldDs);
    if (curDs) {
      this.enqueue(curDs);
      const minReady = curDs.spec?.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.controller.enqueueAfter(metaNamespaceKeyFunc(curDs), (minReady + 1) * 1000);
      return;
    }
    if (!getControllerOf(cur) && !isDeepStrictEqual(old.metadata?.labels ?? {}, cur.metadata?.labels ?? {})) for (const d of this.selectingDaemonSets(cur)) this.enqueue(d);
  }

  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    const ds = this.resolveControllerRef(pod.metadata?.namespace ?? '', getControllerOf(pod));
    if (!ds) return;
    const key = metaNamespaceKeyFunc(ds);
    // Seen terminating and then deleted, a pod is observed twice, as upstream: expectations only need to reach zero.
    this.expectations.deletionObserved(key);
    this.controller.enqueue(key);
  }

  /** Upstream's syncDaemonSet. */
  async syncDaemonSet(key: string): Promise<number | void> {
    const ds = this.daemonSets.getByKey(key);
    if (!ds) {
      this.expectations.deleteExpectations(key);
      return;
    }
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(ds.spec?.selector);
    } catch (err) {
      this.opts.logger.error({ err, daemonSet: key }, 'Error converting pod selector to selector');
      return;
    }
    if (selector.empty()) {
      this.recorder.event(involvedObject(asParent(ds)), 'Warning', SELECTING_ALL_REASON, 'This daemon set is selecting all pods. A non-empty selector is required.');
      return;
    }
    // Being deleted: the garbage collector removes its pods; counting them is of no use.
    if (ds.metadata?.deletionTimestamp) return;
    const nodes = this.nodes.list();
    const { current, old, collisionCount } = await this.constructHistory(ds, selector);
    const hash = current.metadata?.labels?.[POD_REVISION_LABEL] ?? '';
    let requeue: number | undefined;
    if (this.expectations.satisfiedExpectations(key)) {
      requeue = await this.manage(ds, nodes, hash, selector, key);
      if (this.expectations.satisfiedExpectations(key) && (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        await this.rollingUpdate(ds, nodes, hash, selector, key);
      }
      await this.cleanupHistory(ds, old, selector);
      return (await this.updateStatus(ds, nodes, hash, selector, collisionCount, true)) ?? requeue;
    }
    return this.updateStatus(ds, nodes, hash, selector, collisionCount, false);
  }

  /** Upstream's constructHistory: the current revision (made or renumbered) and the old ones. */
  private async constructHistory(ds: DaemonSet, selector: Selector): Promise<{ current: ControllerRevision; old: ControllerRevision[]; collisionCount: number }> {
    const parent = asParent(ds);
    const ns = ds.metadata?.namespace ?? '';
    const owned = await this.history.claimControllerRevisions(parent, selector, this.revisions.byIndex(namespaceIndex, ns));
    let collisionCount = ds.status?.collisionCount ?? 0;
    const data = templatePatch(ds.spec?.template);
    const wanted = newControllerRevision(parent, ds.spec?.template?.metadata?.labels, data, 0, collisionCount);
    const equal = sortControllerRevisions(findEqualRevisions(owned, wanted));
    const old = owned.filter((r) => !equal.includes(r));
    const next = nextRevision(old);
    let current: ControllerRevision;
    if (equal.length === 0) {
      // Upstream names a DaemonSet's revisions by ComputeHash (a Go-specific deep hash of the
      // template); kite by the hash of the stored patch, as StatefulSets do: the same form, <ds>-<hash>.
      const hash = hashControllerRevision(data, collisionCount);
      wanted.metadata!.labels![POD_REVISION_LABEL] = hash;
      wanted.metadata!.annotations = ds.metadata?.annotations;
      wanted.revision = next;
      ({ revision: current, collisionCount } = await this.history.createControllerRevision(parent, wanted, collisionCount));
    } else {
      // Duplicates of the current data: keep the newest (upstream's dedupCurHistories).
      current = equal[equal.length - 1]!;
      for (const dup of equal.slice(0, -1)) await this.history.deleteControllerRevision(dup);
      if ((current.revision ?? 0) < next) current = await this.history.updateControllerRevision(current, next);
      if (!current.metadata?.labels?.[POD_REVISION_LABEL]) current.metadata = { ...current.metadata, labels: { ...current.metadata?.labels, [POD_REVISION_LABEL]: hashControllerRevision(data, collisionCount) } };
    }
    return { current, old, collisionCount };
  }

  /** Upstream's getNodesToDaemonPods: the claimed pods by the node they run or are pinned on. */
  private async nodesToDaemonPods(ds: DaemonSet, selector: Selector): Promise<Map<string, Pod[]>> {
    const m = ds.metadata ?? {};
    const manager = new PodControllerRefManager({
      podControl: this.podControl,
      controller: asParent(ds),
      selector,
      controllerApiVersion: API_VERSION,
      controllerKind: KIND,
      canAdopt: recheckDeletionTimestamp(async () => {
        const fresh = await this.opts.client.resource<DaemonSet>(daemonSetsResource).namespace(m.namespace).get(m.name ?? '');
        if (fresh.metadata?.uid !== m.uid) throw new Error(`original DaemonSet ${m.namespace}/${m.name} is gone: got uid ${fresh.metadata?.uid}, wanted ${m.uid}`);
        return fresh;
      }),
    });
    const { claimed, errors } = await manager.claimPods(this.pods.byIndex(namespaceIndex, m.namespace ?? ''));
    if (errors.length) throw new AggregateError(errors, errors.map((e) => e.message).join(', '));
    const byNode = new Map<string, Pod[]>();
    for (const pod of claimed) {
      // Terminal and being deleted: nothing left to do with it.
      const terminal = pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
      if (terminal && pod.metadata?.deletionTimestamp) continue;
      const node = targetNodeName(pod);
      if (node === undefined) continue;
      byNode.set(node, [...(byNode.get(node) ?? []), pod]);
    }
    return byNode;
  }

  /** Failed pods are deleted with a back-off per node; true when this one may go now. */
  private failedPodBackoffAllows(key: string, now: number): { allowed: boolean; delay: number } {
    const entry = this.failedPodsBackoff.get(key);
    if (entry && now < entry.until) return { allowed: false, delay: entry.until - now };
    const delay = entry ? Math.min(entry.delay * 2, FAILED_POD_BACKOFF_MAX_MS) : FAILED_POD_BACKOFF_MS;
    this.failedPodsBackoff.set(key, { until: now + delay, delay });
    return { allowed: true, delay };
  }

  /** Upstream's podsShouldBeOnNode. */
  private podsShouldBeOnNode(node: Node, byNode: Map<string, Pod[]>, ds: DaemonSet, hash: string): { create: string[]; remove: string[]; retryAfter?: number } {
    const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
    const nodeName = node.metadata?.name ?? '';
    const daemonPods = byNode.get(nodeName);
    const create: string[] = [];
    const remove: string[] = [];
    let retryAfter: number | undefined;
    const ref = involvedObject(asParent(ds));
    if (shouldRun && !daemonPods) return { create: [nodeName], remove };
    if (shouldContinueRunning) {
      const running: Pod[] = [];
      for (const pod of daemonPods ?? []) {
        if (pod.metadata?.deletionTimestamp) continue;
        const m = pod.metadata ?? {};
        if (pod.status?.phase === 'Failed') {
          const { allowed, delay } = this.failedPodBackoffAllows(`${ds.metadata?.uid}/${nodeName}`, this.opts.clock.now());
          if (!allowed) {
            retryAfter = Math.min(retryAfter ?? delay, delay);
            continue;
          }
          this.recorder.event(ref, 'Warning', FAILED_DAEMON_POD_REASON, `Found failed daemon pod ${m.namespace}/${m.name} on node ${nodeName}, will try to kill it`);
          remove.push(m.name ?? '');
        } else if (pod.status?.phase === 'Succeeded') {
          this.recorder.event(ref, 'Normal', SUCCEEDED_DAEMON_POD_REASON, `Found succeeded daemon pod ${m.namespace}/${m.name} on node ${nodeName}, will try to delete it`);
          remove.push(m.name ?? '');
        } else running.push(pod);
      }
      const sorted = sortByCreationTimestampAndPhase(running);
      if (!allowsSurge(ds)) {
        // One pod per node: all but the oldest go.
        remove.push(...sorted.slice(1).map((p) => p.metadata?.name ?? ''));
        return { create, remove, retryAfter };
      }
      if (sorted.length <= 1) {
        if (sorted.length === 0 && shouldRun) create.push(nodeName);
        return { create, remove, retryAfter };
      }
      // Surging: at most the oldest new pod and the oldest old one, the old one only until the new is available.
      let oldestNew: Pod | undefined;
      let oldestOld: Pod | undefined;
      for (const pod of sorted) {
        const isNew = pod.metadata?.labels?.[POD_REVISION_LABEL] === hash;
        if (isNew && !oldestNew) oldestNew = pod;
        else if (!isNew && !oldestOld) oldestOld = pod;
        else remove.push(pod.metadata?.name ?? '');
      }
      if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.spec?.minReadySeconds ?? 0, this.opts.clock.now()))) remove.push(oldestOld.metadata?.name ?? '');
      return { create, remove, retryAfter };
    }
    if (daemonPods) for (const pod of daemonPods) if (!pod.metadata?.deletionTimestamp) remove.push(pod.metadata?.name ?? '');
    return { create, remove, retryAfter };
  }

  /** Upstream's manage: create where missing, delete where not wanted; returns a requeue delay. */
  private async manage(ds: DaemonSet, nodes: Node[], hash: string, selector: Selector, key: string): Promise<number | undefined> {
    const byNode = await this.nodesToDaemonPods(ds, selector);
    const create: string[] = [];
    const remove: string[] = [];
    let retryAfter: number | undefined;
    for (const node of nodes) {
      const r = this.podsShouldBeOnNode(node, byNode, ds, hash);
      create.push(...r.create);
      remove.push(...r.remove);
      if (r.retryAfter !== undefined) retryAfter = Math.min(retryAfter ?? r.retryAfter, r.retryAfter);
    }
    // Pods pinned to nodes that no longer exist are never scheduled, so never collected: delete them.
    const names = new Set(nodes.map((n) => n.metadata?.name));
    for (const [node, pods] of byNode) {
      if (names.has(node)) continue;
      for (const pod of pods) if (!pod.spec?.nodeName && !pod.metadata?.deletionTimestamp) remove.push(pod.metadata?.name ?? '');
    }
    await this.syncNodes(ds, remove, create, hash, key);
    return retryAfter;
  }

  /** Upstream's syncNodes: deletes and creates (slow start), with expectations set first. */
  private async syncNodes(ds: DaemonSet, remove: string[], create: string[], hash: string, key: string): Promise<void> {
    const createDiff = Math.min(create.length, this.burstReplicas);
    const deleteDiff = Math.min(remove.length, this.burstReplicas);
    if (createDiff === 0 && deleteDiff === 0) return;
    this.expectations.setExpectations(key, createDiff, deleteDiff);
    const template = daemonPodTemplate(ds, hash);
    const owner = asParent(ds);
    const ref = newControllerRef(ds, API_VERSION, KIND);
    const ns = ds.metadata?.namespace ?? '';
    const errors: Error[] = [];
    let next = 0;
    const { successes, error } = await slowStartBatch(createDiff, SLOW_START_INITIAL_BATCH_SIZE, async () => {
      const nodeName = create[next++]!;
      const podTemplate = structuredClone(template);
      podTemplate.spec = { ...podTemplate.spec!, affinity: replaceNodeNameNodeAffinity(podTemplate.spec?.affinity, nodeName) };
      try {
        await this.podControl.createPods(ns, podTemplate, owner, ref);
      } catch (err) {
        if (err instanceof StatusError && (err.details?.causes ?? []).some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE)) return;
        throw err;
      }
    });
    // Creates that failed or were skipped will never be observed.
    for (let i = successes; i < createDiff; i++) this.expectations.creationObserved(key);
    if (error) errors.push(error);
    const results = await Promise.allSettled(
      remove.slice(0, deleteDiff).map(async (name) => {
        try {
          await this.podControl.deletePod(ns, name, owner);
        } catch (err) {
          this.expectations.deletionObserved(key);
          if (!hasStatusCode(err, 404)) throw err;
        }
      }),
    );
    for (const r of results) if (r.status === 'rejected') errors.push(r.reason as Error);
    if (errors.length) throw errors.length === 1 ? errors[0] : new AggregateError(errors, errors.map((e) => e.message).join(', '));
  }

  /** Upstream's rollingUpdate (update.go): old pods replaced within maxUnavailable, or maxSurge when set. */
  private async rollingUpdate(ds: DaemonSet, nodes: Node[], hash: string, selector: Selector, key: string): Promise<void> {
    const byNode = await this.nodesToDaemonPods(ds, selector);
    let desired = 0;
    for (const node of nodes) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
      desired++;
      if (!byNode.has(node.metadata?.name ?? '')) byNode.set(node.metadata?.name ?? '', []);
    }
    let maxUnavailable = unavailableCount(ds, desired);
    const maxSurge = surgeCount(ds, desired);
    // An impossible 0/0 (no validation said so): one at a time.
    if (desired > 0 && maxUnavailable === 0 && maxSurge === 0) maxUnavailable = 1;
    const generation = templateGeneration(ds);
    const now = this.opts.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const available = (pod: Pod) => isPodAvailable(pod, minReady, now);
    const nodeNames = [...byNode.keys()].sort();
    if (maxSurge === 0) {
      let numUnavailable = 0;
      const allowedReplacement: string[] = [];
      const candidates: string[] = [];
      for (const nodeName of nodeNames) {
        const found = updatedPodsOnNode(byNode.get(nodeName)!, hash, generation);
        if (!found) {
          numUnavailable++;
          continue;
        }
        const { newPod, oldPod } = found;
        if ((!oldPod && !newPod) || (oldPod && newPod)) numUnavailable++;
        else if (newPod) {
          if (!available(newPod)) numUnavailable++;
        } else if (!available(oldPod!)) allowedReplacement.push(oldPod!.metadata?.name ?? '');
        else if (numUnavailable < maxUnavailable) candidates.push(oldPod!.metadata?.name ?? '');
      }
      const remaining = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidates.length);
      await this.syncNodes(ds, [...allowedReplacement, ...candidates.slice(0, remaining)], [], hash, key);
      return;
    }
    let numSurge = 0;
    const allowedNew: string[] = [];
    const candidateNew: string[] = [];
    const oldToDelete: string[] = [];
    for (const nodeName of nodeNames) {
      const found = updatedPodsOnNode(byNode.get(nodeName)!, hash, generation);
      if (!found) {
        numSurge++;
        continue;
      }
      const { newPod, oldPod } = found;
      if (!oldPod) continue; // manage handles it
      if (!newPod) {
        if (!available(oldPod)) {
          const node = this.nodes.getByKey(nodeName);
          if (node && nodeShouldRunDaemonPod(node, ds).shouldRun) allowedNew.push(nodeName);
        } else if (numSurge < maxSurge) candidateNew.push(nodeName);
        continue;
      }
      if (!available(newPod)) {
        numSurge++;
        continue;
      }
      oldToDelete.push(oldPod.metadata?.name ?? '');
    }
    const remaining = Math.min(Math.max(0, maxSurge - numSurge), candidateNew.length);
    await this.syncNodes(ds, oldToDelete, [...allowedNew, ...candidateNew.slice(0, remaining)], hash, key);
  }

  /** Upstream's cleanupHistory: old revisions beyond revisionHistoryLimit that no pod uses. */
  private async cleanupHistory(ds: DaemonSet, old: ControllerRevision[], selector: Selector): Promise<void> {
    const limit = ds.spec?.revisionHistoryLimit ?? 10;
    if (old.length <= limit) return;
    const byNode = await this.nodesToDaemonPods(ds, selector);
    const liveHashes = new Set([...byNode.values()].flat().map((p) => p.metadata?.labels?.[POD_REVISION_LABEL]));
    const inUse = new Set(old.filter((r) => liveHashes.has(r.metadata?.labels?.[POD_REVISION_LABEL])).map((r) => r.metadata?.name ?? ''));
    // Upstream counts live revisions against the limit: len(old) - limit go, live ones skipped.
    for (const rev of revisionsToTruncate(old, inUse, limit - inUse.size)) await this.history.deleteControllerRevision(rev);
  }

  /** Upstream's updateDaemonSetStatus; returns a delay to look again when pods are ready but not yet available. */
  private async updateStatus(ds: DaemonSet, nodes: Node[], hash: string, selector: Selector, collisionCount: number, observed: boolean): Promise<number | undefined> {
    const byNode = await this.nodesToDaemonPods(ds, selector);
    const now = this.opts.clock.now();
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const generation = templateGeneration(ds);
    const s = { desiredNumberScheduled: 0, currentNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0, updatedNumberScheduled: 0, numberAvailable: 0, numberUnavailable: 0 };
    for (const node of nodes) {
      const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
      const pods = byNode.get(node.metadata?.name ?? '') ?? [];
      if (!shouldRun) {
        if (pods.length > 0) s.numberMisscheduled++;
        continue;
      }
      s.desiredNumberScheduled++;
      if (pods.length === 0) continue;
      s.currentNumberScheduled++;
      const pod = sortByCreationTimestampAndPhase(pods)[0]!;
      if (isPodReady(pod)) {
        s.numberReady++;
        if (isPodAvailable(pod, minReady, now)) s.numberAvailable++;
      }
      if (isPodUpdated(pod, hash, generation)) s.updatedNumberScheduled++;
    }
    s.numberUnavailable = s.desiredNumberScheduled - s.numberAvailable;
    const requeue = minReady > 0 && s.numberReady !== s.numberAvailable ? minReady * 1000 : undefined;
    const st: Partial<DaemonSetStatus> = ds.status ?? {};
    const unchanged = (Object.keys(s) as (keyof typeof s)[]).every((k) => (st[k] ?? 0) === s[k]) && (st.observedGeneration ?? 0) >= (ds.metadata?.generation ?? 0) && (st.collisionCount ?? 0) === collisionCount;
    if (unchanged) return requeue;
    const client = this.opts.client.resource<DaemonSet>(daemonSetsResource).namespace(ds.metadata?.namespace);
    let current = ds;
    for (let i = 0; ; i++) {
      const status: DaemonSetStatus = { ...current.status, ...s, ...(collisionCount ? { collisionCount } : {}) };
      if (observed) status.observedGeneration = ds.metadata?.generation;
      // The omitempty counts are absent at zero, as upstream serializes them.
      for (const k of ['updatedNumberScheduled', 'numberAvailable', 'numberUnavailable'] as const) if (!status[k]) delete status[k];
      try {
        await client.updateStatus({ ...structuredClone(current), status });
        return requeue;
      } catch (err) {
        if (i >= STATUS_UPDATE_RETRIES) throw err;
        current = await client.get(ds.metadata?.name ?? '');
      }
    }
  }
}

/** The set of condition types that are True. */
const trueConditions = (node: Node) => new Set((node.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type));

/** Upstream's shouldIgnoreNodeUpdate: only the resourceVersion and conditions changed, the same ones True. */
function shouldIgnoreNodeUpdate(old: Node, cur: Node): boolean {
  if (!isDeepStrictEqual(trueConditions(old), trueConditions(cur))) return false;
  const rest = (n: Node) => ({ ...n, metadata: { ...n.metadata, resourceVersion: '' }, status: { ...n.status, conditions: [] } });
  return isDeepStrictEqual(rest(old), rest(cur));
}

/** Upstream's findUpdatedPodsOnNode: the node's one new and one old pod; undefined when there are more. */
function updatedPodsOnNode(pods: readonly Pod[], hash: string, generation: number | undefined): { newPod?: Pod; oldPod?: Pod } | undefined {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    if (isPodUpdated(pod, hash, generation)) {
      if (newPod) return undefined;
      newPod = pod;
    } else {
      if (oldPod) return undefined;
      oldPod = pod;
    }
  }
  return { newPod, oldPod };
}
