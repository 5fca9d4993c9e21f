// The ReplicaSet controller, as upstream's pkg/controller/replicaset/replica_set.go: for each
// ReplicaSet, claim the pods its selector matches (adopt orphans, release what no longer matches),
// create or delete pods until the active ones number spec.replicas, and report what it found in
// status. Expectations keep a burst of watch events from acting twice on a lagging cache. As
// upstream, the same sync serves ReplicationControllers (replicationcontroller/): a ReplicatedKind
// says which resource it manages and how its selector reads.
import { isDeepStrictEqual } from 'node:util';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ReplicaSet, ReplicaSetCondition, ReplicaSetStatus } from 'kubernetes-types/apps/v1.js';
import { findResource, type ResourceInfo } from '../../api/resources.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import { isNothing, labelSelectorAsSelector, selectorFromSet, type Selector } from '../../api/labels.js';
import { rfc3339 } from '../../api/time.js';
import type { Client } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, splitMetaNamespaceKey, type Indexer } from '../../client/indexer.js';
import { clientEventSink, EventBroadcaster } from '../../client/record/recorder.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';
import { ControllerExpectations, UIDTrackingControllerExpectations } from '../kit/expectations.js';
import { FAILED_CREATE_POD_REASON, FAILED_DELETE_POD_REASON, NAMESPACE_TERMINATING_CAUSE, RealPodControl, type PodControl } from '../kit/podcontrol.js';
import { filterActivePods, isPodActive, isPodAvailable, isPodReady, sortActivePodsWithRanks } from '../kit/pods.js';
import { slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE } from '../kit/slowstart.js';
import { getControllerOf, newControllerRef, PodControllerRefManager, recheckDeletionTimestamp, resolveControllerRef } from '../kit/refmanager.js';

/** Upstream's BurstReplicas: at most this many creates or deletes per sync. */
export const BURST_REPLICAS = 500;
/** Upstream's statusUpdateRetries. */
const STATUS_UPDATE_RETRIES = 1;
const CONTROLLER_UID_INDEX = 'controllerUID';

const podsResource = findResource('', 'v1', 'pods')!;

/**
 * The kind a controller built on this sync manages. Its objects are read as ReplicaSets (upstream's
 * adapter converts them): every field the sync reads has the same name and meaning, but the selector.
 */
export interface ReplicatedKind {
  resource: ResourceInfo;
  apiVersion: string;
  kind: string;
  /** The work queue's name. */
  queueName: string;
  /** The source component of its events. */
  component: string;
  /** The pod selector of an object; throws when it cannot be parsed. */
  selector(obj: ReplicaSet): Selector;
}

export const replicaSetKind: ReplicatedKind = {
  resource: findResource('apps', 'v1', 'replicasets')!,
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  queueName: 'replicaset',
  component: 'replicaset-controller',
  selector: (rs) => labelSelectorAsSelector(rs.spec?.selector),
};

export interface ReplicaSetControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** Upstream's --concurrent-replicaset-syncs (default 5). */
  workers?: number;
  burstReplicas?: number;
  /** Pod writes and their events; default RealPodControl with this controller's own event recorder. */
  podControl?: PodControl;
}

const podKey = (pod: Pod) => metaNamespaceKeyFunc(pod);

export class ReplicaSetController {
  private readonly replicaSets: Indexer<ReplicaSet>;
  private readonly pods: Indexer<Pod>;
  private readonly controller: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly podControl: PodControl;
  readonly expectations: UIDTrackingControllerExpectations;
  private readonly burstReplicas: number;

  constructor(
    private readonly opts: ReplicaSetControllerOptions,
    private readonly kind: ReplicatedKind = replicaSetKind,
  ) {
    const rsInformer = opts.informers.informerFor<ReplicaSet>(kind.resource);
    const podInformer = opts.informers.informerFor<Pod>(podsResource);
    rsInformer.indexer.addIndexers({ [CONTROLLER_UID_INDEX]: (rs: ReplicaSet) => (getControllerOf(rs) ? [getControllerOf(rs)!.uid] : []) });
    this.replicaSets = rsInformer.indexer;
    this.pods = podInformer.indexer;
    this.burstReplicas = opts.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new UIDTrackingControllerExpectations(new ControllerExpectations(opts.clock));
    if (opts.podControl) this.podControl = opts.podControl;
    else {
      this.events = new EventBroadcaster({ sink: clientEventSink(opts.client), clock: opts.clock, logger: opts.logger });
      this.podControl = new RealPodControl(opts.client, this.events.newRecorder({ component: kind.component }));
    }
    this.controller = new QueueController({
      name: kind.queueName,
      clock: opts.clock,
      logger: opts.logger,
      sources: [rsInformer, podInformer],
      workers: opts.workers ?? 5,
      sync: (key) => this.syncReplicaSet(key),
    });
    rsInformer.addEventHandler({
      onAdd: (rs) => this.enqueue(rs),
      onUpdate: (old, cur) => {
        // A ReplicaSet deleted and recreated under the same name between two events.
        if (old.metadata?.uid !== cur.metadata?.uid) this.deleteRS(old);
        this.enqueue(cur);
      },
      onDelete: (obj) => this.deleteRS(obj),
    });
    podInformer.addEventHandler({ onAdd: (pod) => this.addPod(pod), onUpdate: (old, cur) => this.updatePod(old, cur), onDelete: (obj) => this.deletePod(obj) });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  private enqueue(rs: ReplicaSet): void {
    this.controller.enqueue(metaNamespaceKeyFunc(rs));
  }

  private deleteRS(obj: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>): void {
    const key = metaNamespaceKeyFunc(obj);
    // Expectations of a deleted ReplicaSet must not hold back one recreated under its name.
    this.expectations.deleteExpectations(key);
    this.controller.enqueue(key);
  }

  /** The ReplicaSet a controller reference names, if it still is that one. */
  private resolveControllerRef(namespace: string, ref: { kind: string; name: string; uid: string }): ReplicaSet | undefined {
    return resolveControllerRef(this.replicaSets, this.kind.kind, namespace, ref);
  }

  /** The ReplicaSets in the pod's namespace whose selector matches it (upstream's GetPodReplicaSets). */
  private podReplicaSets(pod: Pod): ReplicaSet[] {
    const ns = pod.metadata?.namespace ?? '';
    const matching = this.replicaSets.list().filter((rs) => {
      if (rs.metadata?.namespace !== ns) return false;
      let selector: Selector;
      try {
        selector = this.kind.selector(rs);
      } catch {
        return false; // an invalid selector matches no pods
      }
      return !isNothing(selector) && !selector.empty() && selector.matches(pod.metadata?.labels);
    });
    if (matching.length > 1) this.opts.logger.error({ pod: podKey(pod), kind: this.kind.kind }, 'user error! more than one controller is selecting pods with labels');
    return matching;
  }

  private addPod(pod: Pod): void {
    if (pod.metadata?.deletionTimestamp) {
      // Restarted with a pod already being deleted: count it as a deletion.
      this.deletePod(pod);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const rs = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
      if (!rs) return;
      const key = metaNamespaceKeyFunc(rs);
      this.expectations.expectations.creationObserved(key);
      this.controller.enqueue(key);
      return;
    }
    // An orphan: whoever selects it may adopt it.
    for (const rs of this.podReplicaSets(pod)) this.enqueue(rs);
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    const labelChanged = !isDeepStrictEqual(old.metadata?.labels ?? {}, cur.metadata?.labels ?? {});
    if (cur.metadata?.deletionTimestamp) {
      // Graceful deletion: the pod counts as gone now, not when it leaves storage.
      this.deletePod(cur);
      if (labelChanged) this.deletePod(old);
      return;
    }
    const ns = cur.metadata?.namespace ?? '';
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = !isDeepStrictEqual(curRef, oldRef);
    if (refChanged && oldRef) {
      const rs = this.resolveControllerRef(ns, oldRef);
      if (rs) this.enqueue(rs);
    }
    if (curRef) {
      const rs = this.resolveControllerRef(ns, curRef);
      if (!rs) return;
      this.enqueue(rs);
      // Available only minReadySeconds after ready: look again then.
      const minReady = rs.spec?.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0) this.controller.enqueueAfter(metaNamespaceKeyFunc(rs), (minReady + 1) * 1000);
      return;
    }
    if (labelChanged || refChanged) for (const rs of this.podReplicaSets(cur)) this.enqueue(rs);
  }

  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    const ref = getControllerOf(pod);
    if (!ref) return;
    const rs = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
    if (!rs) return;
    const key = metaNamespaceKeyFunc(rs);
    this.expectations.deletionObserved(key, podKey(pod));
    this.controller.enqueue(key);
  }

  /** Upstream's syncReplicaSet; returns a delay when it must look again (minReadySeconds). */
  async syncReplicaSet(key: string): Promise<number | void> {
    const rs = this.replicaSets.getByKey(key);
    if (!rs) {
      this.expectations.deleteExpectations(key);
      return;
    }
    const needsSync = this.expectations.satisfiedExpectations(key);
    let selector: Selector;
    try {
      selector = this.kind.selector(rs);
    } catch (err) {
      // A user error retrying cannot fix.
      this.opts.logger.error({ err, replicaSet: key }, 'Error converting pod selector to selector');
      return;
    }
    const { namespace } = splitMetaNamespaceKey(key);
    const all = this.pods.byIndex(namespaceIndex, namespace);
    const claimed = await this.claimPods(rs, selector, filterActivePods(all));

    let manageErr: Error | undefined;
    if (needsSync && !rs.metadata?.deletionTimestamp) manageErr = await this.manageReplicas(claimed, rs, key);

    const status = calculateStatus(rs, claimed, manageErr, this.opts.clock.now());
    const updated = await this.updateStatus(rs, status);
    if (manageErr) throw manageErr;
    const minReady = updated.spec?.minReadySeconds ?? 0;
    const st: Partial<ReplicaSetStatus> = updated.status ?? {};
    if (minReady > 0 && (st.readyReplicas ?? 0) === updated.spec?.replicas && (st.availableReplicas ?? 0) !== updated.spec?.replicas) return minReady * 1000;
  }

  private async claimPods(rs: ReplicaSet, selector: Selector, pods: Pod[]): Promise<Pod[]> {
    const m = rs.metadata ?? {};
    const { apiVersion, kind } = this.kind;
    const manager = new PodControllerRefManager({
      podControl: this.podControl,
      controller: { ...rs, apiVersion, kind },
      selector,
      controllerApiVersion: apiVersion,
      controllerKind: kind,
      // Adopt only if the ReplicaSet read fresh is still this one and not being deleted.
      canAdopt: recheckDeletionTimestamp(async () => {
        const fresh = await this.opts.client.resource<ReplicaSet>(this.kind.resource).namespace(m.namespace).get(m.name ?? '');
        if (fresh.metadata?.uid !== m.uid) throw new Error(`original ${kind} ${m.namespace}/${m.name} is gone: got uid ${fresh.metadata?.uid}, wanted ${m.uid}`);
        return fresh;
      }),
    });
    const { claimed, errors } = await manager.claimPods(pods);
    if (errors.length) throw new AggregateError(errors, errors.map((e) => e.message).join(', '));
    return claimed;
  }

  /** Creates or deletes pods toward spec.replicas; returns the error that ended it, if any. */
  private async manageReplicas(pods: Pod[], rs: ReplicaSet, key: string): Promise<Error | undefined> {
    const want = rs.spec?.replicas ?? 1;
    let diff = pods.length - want;
    const owner = { ...rs, apiVersion: this.kind.apiVersion, kind: this.kind.kind };
    const exp = this.expectations.expectations;
    if (diff < 0) {
      diff = Math.min(-diff, this.burstReplicas);
      // Raised before the first create: its watch event may arrive before create() returns.
      exp.expectCreations(key, diff);
      this.opts.logger.debug({ replicaSet: key, need: want, creating: diff }, 'Too few replicas');
      const ref = newControllerRef(rs, this.kind.apiVersion, this.kind.kind);
      const { successes, error } = await slowStartBatch(diff, SLOW_START_INITIAL_BATCH_SIZE, async () => {
        try {
          await this.podControl.createPods(rs.metadata?.namespace ?? '', rs.spec!.template!, owner, ref);
        } catch (err) {
          // The namespace is going away: the pods would not be created anyway.
          if (err instanceof StatusError && (err.details?.causes ?? []).some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE)) return;
          throw err;
        }
      });
      // The creates not attempted or failed will never be observed.
      for (let i = successes; i < diff; i++) exp.creationObserved(key);
      return error;
    }
    if (diff > 0) {
      diff = Math.min(diff, this.burstReplicas);
      this.opts.logger.debug({ replicaSet: key, need: want, deleting: diff }, 'Too many replicas');
      const doomed = this.podsToDelete(pods, this.indirectlyRelatedPods(rs), diff);
      // By key, so a pod seen terminating and then deleted counts once.
      this.expectations.expectDeletions(key, doomed.map(podKey));
      const results = await Promise.allSettled(
        doomed.map(async (pod) => {
          try {
            await this.podControl.deletePod(rs.metadata?.namespace ?? '', pod.metadata?.name ?? '', owner);
          } catch (err) {
            // No watch event will lower it.
            this.expectations.deletionObserved(key, podKey(pod));
            if (!hasStatusCode(err, 404)) throw err;
          }
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      return failed?.reason as Error | undefined;
    }
    return undefined;
  }

  /**
   * The pods every ReplicaSet with the same controller (a Deployment's) selects, each once; none
   * for a ReplicaSet without a controller, as upstream.
   */
  private indirectlyRelatedPods(rs: ReplicaSet): Pod[] {
    const ref = getControllerOf(rs);
    if (!ref) return [];
    const byUid = new Map<string, Pod>();
    for (const sibling of this.replicaSets.byIndex(CONTROLLER_UID_INDEX, ref.uid)) {
      let selector: Selector;
      try {
        selector = this.kind.selector(sibling);
      } catch {
        continue; // an invalid selector matches no pods
      }
      for (const pod of this.pods.byIndex(namespaceIndex, sibling.metadata?.namespace ?? '')) {
        if (selector.matches(pod.metadata?.labels) && !byUid.has(pod.metadata?.uid ?? '')) byUid.set(pod.metadata?.uid ?? '', pod);
      }
    }
    return [...byUid.values()];
  }

  /** Upstream's getPodsToDelete: the lowest ranked first; rank = related active pods on the same node. */
  private podsToDelete(pods: Pod[], related: Pod[], diff: number): Pod[] {
    if (diff >= pods.length) return pods;
    const onNode = new Map<string, number>();
    for (const pod of related) {
      if (!isPodActive(pod)) continue;
      const node = pod.spec?.nodeName ?? '';
      onNode.set(node, (onNode.get(node) ?? 0) + 1);
    }
    const ranks = pods.map((pod) => onNode.get(pod.spec?.nodeName ?? '') ?? 0);
    return sortActivePodsWithRanks(pods, ranks, this.opts.clock.now()).slice(0, diff);
  }

  /** Upstream's updateReplicaSetStatus: writes status only when it changed, retrying once on a fresh read. */
  private async updateStatus(rs: ReplicaSet, status: ReplicaSetStatus): Promise<ReplicaSet> {
    const generation = rs.metadata?.generation ?? 0;
    if (sameStatus(rs.status ?? { replicas: 0 }, status) && (rs.status?.observedGeneration ?? 0) === generation) return rs;
    const client = this.opts.client.resource<ReplicaSet>(this.kind.resource).namespace(rs.metadata?.namespace);
    let current = rs;
    for (let i = 0; ; i++) {
      const next = { ...structuredClone(current), status: { ...status, observedGeneration: generation } };
      try {
        return await client.updateStatus(next);
      } catch (err) {
        if (i >= STATUS_UPDATE_RETRIES) throw err;
        current = await client.get(rs.metadata?.name ?? '');
      }
    }
  }
}

const COUNTS = ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'] as const;

function sameStatus(a: ReplicaSetStatus, b: ReplicaSetStatus): boolean {
  return COUNTS.every((k) => (a[k] ?? 0) === (b[k] ?? 0)) && isDeepStrictEqual(a.conditions ?? [], b.conditions ?? []);
}

/** Upstream's calculateStatus: counts of the claimed active pods, and ReplicaFailure while manageReplicas fails. */
export function calculateStatus(rs: ReplicaSet, pods: readonly Pod[], manageErr: Error | undefined, now: number): ReplicaSetStatus {
  const templateLabels = selectorFromSet(rs.spec?.template?.metadata?.labels);
  const minReady = rs.spec?.minReadySeconds ?? 0;
  let conditions = rs.status?.conditions ?? [];
  const failure = conditions.find((c) => c.type === 'ReplicaFailure');
  if (manageErr && !failure) {
    const diff = pods.length - (rs.spec?.replicas ?? 1);
    const reason = diff < 0 ? FAILED_CREATE_POD_REASON : diff > 0 ? FAILED_DELETE_POD_REASON : '';
    const cond: ReplicaSetCondition = { type: 'ReplicaFailure', status: 'True', lastTransitionTime: rfc3339(now), reason, message: manageErr.message };
    conditions = [...conditions, cond];
  } else if (!manageErr && failure) {
    conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  }
  const status: ReplicaSetStatus = {
    ...rs.status,
    replicas: pods.length,
    fullyLabeledReplicas: pods.filter((p) => templateLabels.matches(p.metadata?.labels)).length,
    readyReplicas: pods.filter(isPodReady).length,
    availableReplicas: pods.filter((p) => isPodAvailable(p, minReady, now)).length,
  };
  if (conditions.length) status.conditions = conditions;
  else delete status.conditions;
  return status;
}
