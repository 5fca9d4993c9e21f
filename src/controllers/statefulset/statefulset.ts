// The StatefulSet controller, as upstream's pkg/controller/statefulset (stateful_set.go,
// stateful_set_control.go): pods with stable names <set>-<ordinal>; OrderedReady creates them one
// at a time in ordinal order, each waiting for its predecessors to be Running and Ready, and
// deletes in reverse; Parallel does both at once. RollingUpdate replaces the pods at or above the
// partition whose revision is not the update revision, highest ordinal first, one at a time;
// OnDelete waits for the user. Revisions are ControllerRevisions; status reports both revisions.
// Pods are named, so a create is its own guard (AlreadyExists): no expectations, as upstream.
import { isDeepStrictEqual } from 'node:util';
import type { ControllerRevision, StatefulSet, StatefulSetStatus } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { labelSelectorAsSelector, type Selector } from '../../api/labels.js';
import { findResource } from '../../api/resources.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, type Indexer } from '../../client/indexer.js';
import { type EventBroadcaster, type EventRecorder } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import {
  ControllerHistory,
  controllerRevisionsResource,
  findEqualRevisions,
  newControllerRevision,
  nextRevision,
  revisionsToTruncate,
  sortControllerRevisions,
  templatePatch,
  type RevisionParent,
} from '../kit/history.js';
import { involvedObject, RealPodControl } from '../kit/podcontrol.js';
import { isPodReady } from '../kit/pods.js';
import { getControllerOf, PodControllerRefManager, recheckDeletionTimestamp, resolveControllerRef } from '../kit/refmanager.js';
import {
  claimTemplateNames,
  identityMatches,
  isCreated,
  isFailed,
  isHealthy,
  isMemberOf,
  isRunningAndAvailable,
  isRunningAndReady,
  isSucceeded,
  isTerminating,
  newStatefulSetPod,
  ordinalOf,
  POD_INDEX_LABEL,
  POD_NAME_LABEL,
  podRevision,
  revisionTemplate,
  startOrdinal,
} from './pods.js';

const API_VERSION = 'apps/v1';
const KIND = 'StatefulSet';
/** The event telling that the volumeClaimTemplates' claims are not made (kite serves no PersistentVolumeClaims yet). */
export const VOLUME_CLAIMS_NOT_SERVED_REASON = 'VolumeClaimTemplatesNotProvisioned';

const podsResource = findResource('', 'v1', 'pods')!;
const statefulSetsResource = findResource('apps', 'v1', 'statefulsets')!;

export interface StatefulSetControllerOptions extends ControllerOptions {
  /** Upstream's --concurrent-statefulset-syncs (default 5). */
  workers?: number;
}

const asParent = (set: StatefulSet): RevisionParent & StatefulSet => ({ ...set, apiVersion: API_VERSION, kind: KIND });

export class StatefulSetController {
  private readonly sets: Indexer<StatefulSet>;
  private readonly pods: Indexer<Pod>;
  private readonly revisions: Indexer<ControllerRevision>;
  private readonly controller: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly recorder: EventRecorder;
  private readonly history: ControllerHistory;

  constructor(private readonly opts: StatefulSetControllerOptions) {
    const setInformer = opts.informers.informerFor<StatefulSet>(statefulSetsResource);
    const podInformer = opts.informers.informerFor<Pod>(podsResource);
    const revInformer = opts.informers.informerFor<ControllerRevision>(controllerRevisionsResource);
    this.sets = setInformer.indexer;
    this.pods = podInformer.indexer;
    this.revisions = revInformer.indexer;
    this.history = new ControllerHistory(opts.client);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'statefulset-controller'));
    this.controller = new QueueController({
      name: 'statefulset',
      clock: opts.clock,
      logger: opts.logger,
      sources: [setInformer, podInformer, revInformer],
      workers: opts.workers ?? 5,
      sync: (key) => this.sync(key),
    });
    setInformer.addEventHandler({ onAdd: (s) => this.enqueue(s), onUpdate: (_o, s) => this.enqueue(s), onDelete: (obj) => this.controller.enqueue(metaNamespaceKeyFunc(obj)) });
    const onPod = (pod: Pod) => this.enqueueFor(pod);
    podInformer.addEventHandler({
      onAdd: onPod,
      onUpdate: (old, cur) => {
        if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
        if (!isDeepStrictEqual(getControllerOf(old), getControllerOf(cur))) this.enqueueFor(old);
        this.enqueueFor(cur);
        const set = this.ownerOf(cur);
        const minReady = set?.spec?.minReadySeconds ?? 0;
        if (set && minReady > 0 && !isPodReady(old) && isPodReady(cur)) this.controller.enqueueAfter(metaNamespaceKeyFunc(set), (minReady + 1) * 1000);
      },
      onDelete: (obj) => onPod(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj),
    });
    revInformer.addEventHandler({ onAdd: (r) => this.enqueueFor(r), onDelete: (obj) => this.enqueueFor(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj) });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  private enqueue(set: StatefulSet): void {
    this.controller.enqueue(metaNamespaceKeyFunc(set));
  }

  private ownerOf(obj: Pod | ControllerRevision): StatefulSet | undefined {
    return resolveControllerRef(this.sets, KIND, obj.metadata?.namespace ?? '', getControllerOf(obj));
  }

  /** The owner, or for an orphan every set whose selector matches it (they may adopt it). */
  private enqueueFor(obj: Pod | ControllerRevision): void {
    const owner = this.ownerOf(obj);
    if (owner) return this.enqueue(owner);
    if (getControllerOf(obj)) return;
    for (const set of this.sets.byIndex(namespaceIndex, obj.metadata?.namespace ?? '')) {
      try {
        const sel = labelSelectorAsSelector(set.spec?.selector);
        if (!sel.empty() && sel.matches(obj.metadata?.labels)) this.enqueue(set);
      } catch {
        // an invalid selector matches nothing
      }
    }
  }

  /** Upstream's sync: claim pods, then updateStatefulSet; returns a delay to look again (minReadySeconds). */
  async sync(key: string): Promise<number | void> {
    const set = this.sets.getByKey(key);
    if (!set) return;
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(set.spec?.selector);
    } catch (err) {
      this.opts.logger.error({ err, statefulSet: key }, 'error converting StatefulSet selector');
      return;
    }
    const revisions = sortControllerRevisions(await this.history.claimControllerRevisions(asParent(set), selector, this.revisions.byIndex(namespaceIndex, set.metadata?.namespace ?? '')));
    const pods = await this.claimPods(set, selector);
    const { current, update, collisionCount } = await this.revisionsOf(set, revisions);
    const { status, requeue } = await this.updateStatefulSet(set, current, update, collisionCount, pods);
    await this.updateStatus(set, status);
    // Old revisions beyond the limit that neither revision nor a live pod uses.
    const inUse = new Set([current.metadata?.name ?? '', update.metadata?.name ?? '', ...pods.map(podRevision)]);
    const all = revisions.some((r) => r.metadata?.name === update.metadata?.name) ? revisions : [...revisions, update];
    for (const rev of revisionsToTruncate(all, inUse, set.spec?.revisionHistoryLimit ?? 10)) await this.history.deleteControllerRevision(rev);
    return requeue;
  }

  private async claimPods(set: StatefulSet, selector: Selector): Promise<Pod[]> {
    const m = set.metadata ?? {};
    const manager = new PodControllerRefManager({
      podControl: new RealPodControl(this.opts.client, this.recorder),
      controller: asParent(set),
      selector,
      controllerApiVersion: API_VERSION,
      controllerKind: KIND,
      canAdopt: recheckDeletionTimestamp(async () => {
        const fresh = await this.opts.client.resource<StatefulSet>(statefulSetsResource).namespace(m.namespace).get(m.name ?? '');
        if (fresh.metadata?.uid !== m.uid) throw new Error(`original StatefulSet ${m.namespace}/${m.name} is gone: got uid ${fresh.metadata?.uid}, wanted ${m.uid}`);
        return fresh;
      }),
    });
    // Only pods named after the set are its members.
    const { claimed, errors } = await manager.claimPods(this.pods.byIndex(namespaceIndex, m.namespace ?? ''), (pod) => isMemberOf(set, pod));
    if (errors.length) throw new AggregateError(errors, errors.map((e) => e.message).join(', '));
    return claimed;
  }

  /** Upstream's getStatefulSetRevisions: the update revision (made, reused or renumbered) and the current one. */
  private async revisionsOf(set: StatefulSet, revisions: ControllerRevision[]): Promise<{ current: ControllerRevision; update: ControllerRevision; collisionCount: number }> {
    const parent = asParent(set);
    let collisionCount = set.status?.collisionCount ?? 0;
    const wanted = newControllerRevision(parent, set.spec?.template?.metadata?.labels, templatePatch(set.spec?.template), nextRevision(revisions), collisionCount);
    const equal = findEqualRevisions(revisions, wanted);
    let update: ControllerRevision;
    if (equal.length > 0 && equal[equal.length - 1] === revisions[revisions.length - 1]) update = revisions[revisions.length - 1]!;
    else if (equal.length > 0) update = await this.history.updateControllerRevision(equal[equal.length - 1]!, wanted.revision);
    else ({ revision: update, collisionCount } = await this.history.createControllerRevision(parent, wanted, collisionCount));
    const current = revisions.find((r) => r.metadata?.name === set.status?.currentRevision) ?? update;
    return { current, update, collisionCount };
  }

  /** Upstream's updateStatefulSet (the pods of one pass); returns the status it computed. */
  private async updateStatefulSet(
    set: StatefulSet,
    current: ControllerRevision,
    update: ControllerRevision,
    collisionCount: number,
    pods: Pod[],
  ): Promise<{ status: StatefulSetStatus; requeue?: number }> {
    const now = this.opts.clock.now();
    const minReady = set.spec?.minReadySeconds ?? 0;
    const replicaCount = set.spec?.replicas ?? 1;
    const start = startOrdinal(set);
    const currentName = current.metadata?.name ?? '';
    const updateName = update.metadata?.name ?? '';
    const status: StatefulSetStatus = { replicas: 0, collisionCount, currentRevision: currentName, updateRevision: updateName, observedGeneration: set.metadata?.generation };
    const count = (list: readonly Pod[]) => {
      status.replicas = 0;
      status.readyReplicas = 0;
      status.availableReplicas = 0;
      status.currentReplicas = 0;
      status.updatedReplicas = 0;
      for (const pod of list) {
        if (isCreated(pod)) status.replicas++;
        if (isRunningAndReady(pod)) {
          status.readyReplicas!++;
          if (isRunningAndAvailable(pod, minReady, now)) status.availableReplicas!++;
        }
        if (isCreated(pod) && !isTerminating(pod)) {
          if (podRevision(pod) === currentName) status.currentReplicas!++;
          if (podRevision(pod) === updateName) status.updatedReplicas!++;
        }
      }
    };
    count(pods);
    const done = () => ({ status: completeRollingUpdate(set, status), requeue: minReady > 0 && (status.availableReplicas ?? 0) < (status.readyReplicas ?? 0) ? minReady * 1000 : undefined });
    if (set.metadata?.deletionTimestamp) return done();

    const replicas: (Pod | undefined)[] = new Array<Pod | undefined>(replicaCount).fill(undefined);
    const condemned: Pod[] = [];
    for (const pod of pods) {
      const ord = ordinalOf(pod);
      if (ord >= start && ord < start + replicaCount) replicas[ord - start] = pod;
      else if (ord >= 0) condemned.push(pod);
    }
    condemned.sort((a, b) => ordinalOf(a) - ordinalOf(b));
    const currentTemplate = revisionTemplate(current);
    const updateTemplate = revisionTemplate(update);
    // Upstream's newVersionedStatefulSetPod: below the partition (or the current count), the current revision.
    const versionedPod = (ordinal: number): Pod => {
      const ru = set.spec?.updateStrategy?.rollingUpdate;
      const rolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
      const belowPartition = ru?.partition !== undefined ? ordinal < start + ru.partition : ordinal < start + (set.status?.currentReplicas ?? 0);
      return rolling && belowPartition ? newStatefulSetPod(set, currentTemplate, ordinal, currentName) : newStatefulSetPod(set, updateTemplate, ordinal, updateName);
    };
    for (let i = 0; i < replicaCount; i++) replicas[i] ??= versionedPod(start + i);

    const monotonic = (set.spec?.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
    const unhealthy = [...replicas, ...condemned].find((p) => p && (!isHealthy(p) || !isRunningAndAvailable(p, minReady, now)));
    const errors: Error[] = [];
    let requeue: number | undefined;

    for (let i = 0; i < replicaCount; i++) {
      let replica = replicas[i]!;
      if ((isFailed(replica) || isSucceeded(replica)) && !isTerminating(replica)) {
        // A pod that ended is replaced under the same name once it is gone.
        await this.deletePod(set, replica);
        if (monotonic) return done();
        continue;
      }
      if (!isCreated(replica)) {
        try {
          await this.createPod(set, replica);
        } catch (err) {
          errors.push(err as Error);
        }
        // Counted in status once the informer has it, as upstream.
        if (monotonic) break;
        continue;
      }
      if (isTerminating(replica) && monotonic) return done();
      if (!isRunningAndReady(replica) && monotonic) return done();
      if (!isRunningAndAvailable(replica, minReady, now) && monotonic) {
        requeue = minReady * 1000;
        return { status: completeRollingUpdate(set, status), requeue };
      }
      if (!identityMatches(set, replica) && !isTerminating(replica)) {
        // Upstream's updateIdentity: the labels of its name and ordinal back in place.
        const name = replica.metadata?.name ?? '';
        replica = { ...replica, metadata: { ...replica.metadata, labels: { ...replica.metadata?.labels, [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinalOf(replica)) } } };
        await this.opts.client.resource<Pod>(podsResource).namespace(set.metadata?.namespace).update(replica);
      }
    }
    if (errors.length) throw errors[0];
    if (replicas.some((r) => r && !isCreated(r)) && monotonic) return done();

    // Scale down: highest ordinal first, in OrderedReady only once every predecessor is healthy.
    for (let target = condemned.length - 1; target >= 0; target--) {
      const pod = condemned[target]!;
      if (isTerminating(pod)) {
        if (monotonic) return done();
        continue;
      }
      if (monotonic && pod !== unhealthy && (!isRunningAndReady(pod) || !isRunningAndAvailable(pod, minReady, now))) return done();
      await this.deletePod(set, pod);
      if (monotonic) return done();
    }

    if (set.spec?.updateStrategy?.type === 'OnDelete') return done();
    // Rolling update: the highest ordinal at or above the partition not at the update revision goes; one at a time.
    const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
    for (let target = replicaCount - 1; target >= partition; target--) {
      const pod = replicas[target]!;
      if (podRevision(pod) !== updateName && !isTerminating(pod)) {
        await this.deletePod(set, pod);
        status.currentReplicas = (status.currentReplicas ?? 0) - 1;
        return done();
      }
      if (!isHealthy(pod) || !isRunningAndAvailable(pod, minReady, now)) return done();
    }
    return done();
  }

  /** Upstream's StatefulPodControl.CreateStatefulPod, with its events. */
  private async createPod(set: StatefulSet, pod: Pod): Promise<void> {
    const ref = involvedObject(asParent(set));
    const what = `Pod ${pod.metadata?.name} in StatefulSet ${set.metadata?.name}`;
    try {
      await this.opts.client.resource<Pod>(podsResource).namespace(set.metadata?.namespace).create(pod);
    } catch (err) {
      // Someone (a lagging cache's earlier self) created it: the next sync sees it.
      if (hasStatusCode(err, 409)) throw err;
      this.recorder.event(ref, 'Warning', 'FailedCreate', `create ${what} failed error: ${(err as Error).message}`);
      throw err;
    }
    this.recorder.event(ref, 'Normal', 'SuccessfulCreate', `create ${what} successful`);
    const claims = claimTemplateNames(set);
    if (claims.length) {
      const pvcs = claims.map((c) => `${c}-${pod.metadata?.name}`).join(', ');
      this.recorder.event(ref, 'Warning', VOLUME_CLAIMS_NOT_SERVED_REASON, `PersistentVolumeClaims are not served yet: ${pvcs} not created; ${pod.metadata?.name} mounts an emptyDir in their place (data is not kept when the pod is replaced)`);
    }
  }

  private async deletePod(set: StatefulSet, pod: Pod): Promise<void> {
    const ref = involvedObject(asParent(set));
    const what = `Pod ${pod.metadata?.name} in StatefulSet ${set.metadata?.name}`;
    try {
      await this.opts.client.resource<Pod>(podsResource).namespace(set.metadata?.namespace).delete(pod.metadata?.name ?? '', { preconditions: { uid: pod.metadata?.uid } });
    } catch (err) {
      if (hasStatusCode(err, 404)) return;
      this.recorder.event(ref, 'Warning', 'FailedDelete', `delete ${what} failed error: ${(err as Error).message}`);
      throw err;
    }
    this.recorder.event(ref, 'Normal', 'SuccessfulDelete', `delete ${what} successful`);
  }

  /** Writes status when it changed (upstream's updateStatefulSetStatus, retrying once on a fresh read). */
  private async updateStatus(set: StatefulSet, status: StatefulSetStatus): Promise<void> {
    const merged: StatefulSetStatus = { ...set.status, ...status };
    // The omitempty counts are absent at zero, as upstream serializes them; collisionCount (a pointer) stays.
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (!merged[k]) delete merged[k];
    if (isDeepStrictEqual(set.status ?? {}, merged)) return;
    const client = this.opts.client.resource<StatefulSet>(statefulSetsResource).namespace(set.metadata?.namespace);
    let current = set;
    for (let i = 0; ; i++) {
      try {
        await client.updateStatus({ ...structuredClone(current), status: merged });
        return;
      } catch (err) {
        if (i >= 1) throw err;
        current = await client.get(set.metadata?.name ?? '');
      }
    }
  }
}

/** Upstream's completeRollingUpdate: once every pod is updated and ready, the update revision is current. */
function completeRollingUpdate(set: StatefulSet, status: StatefulSetStatus): StatefulSetStatus {
  if ((set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && status.updatedReplicas === status.replicas && status.readyReplicas === status.replicas) {
    return { ...status, currentReplicas: status.updatedReplicas, currentRevision: status.updateRevision };
  }
  return status;
}

