// The Deployment controller, as upstream's pkg/controller/deployment (deployment_controller.go,
// sync.go, rolling.go, recreate.go, progress.go): for each Deployment, claim the ReplicaSets its
// selector matches, find or create the ReplicaSet of the current template (named
// `<deployment>-<pod-template-hash>`), move replicas from the old ReplicaSets to it within
// maxSurge / maxUnavailable (RollingUpdate) or after all old pods are gone (Recreate), keep the
// revision annotations, delete ReplicaSets beyond revisionHistoryLimit, and report counts and the
// Progressing / Available conditions in status. The pods themselves are the ReplicaSet
// controller's.
import type { Deployment, DeploymentStatus, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { isNothing, labelSelectorAsSelector, type Selector } from '../../api/labels.js';
import { findResource } from '../../api/resources.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, type Indexer } from '../../client/indexer.js';
import { type EventBroadcaster, type EventRecorder } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { involvedObject } from '../kit/podcontrol.js';
import { BaseControllerRefManager, getControllerOf, newControllerRef, recheckDeletionTimestamp, resolveControllerRef } from '../kit/refmanager.js';
import { planNewReplicaSet, planOldReplicaSets, planScale, type Resize } from './planner.js';
import {
  actualReplicaCount,
  byRevision,
  calculateStatus,
  computeHash,
  DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
  deploymentComplete,
  deploymentProgressing,
  deploymentReplicas,
  deploymentTimedOut,
  desiredReplicasAnnotation,
  equalIgnoreHash,
  FAILED_RS_CREATE_REASON,
  filterActiveReplicaSets,
  findNewReplicaSet,
  findOldReplicaSets,
  FOUND_NEW_RS_REASON,
  getDeploymentCondition,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  maxRevision,
  maxSurge,
  NEW_RS_AVAILABLE_REASON,
  NEW_RS_REASON,
  newDeploymentCondition,
  newRSNewReplicas,
  PAUSED_DEPLOY_REASON,
  removeDeploymentCondition,
  replicaFailures,
  replicasAnnotationsNeedUpdate,
  RESUMED_DEPLOY_REASON,
  RS_UPDATED_REASON,
  sameDeploymentStatus,
  setDeploymentCondition,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  TIMED_OUT_REASON,
} from './util.js';

const API_VERSION = 'apps/v1';
const KIND = 'Deployment';
const deploymentsResource = findResource('apps', 'v1', 'deployments')!;
const replicaSetsResource = findResource('apps', 'v1', 'replicasets')!;
const podsResource = findResource('', 'v1', 'pods')!;

export interface DeploymentControllerOptions extends ControllerOptions {
  /** Upstream's --concurrent-deployment-syncs (default 5). */
  workers?: number;
}

const replicasOf = (rs: ReplicaSet | undefined): number => rs?.spec?.replicas ?? 0;
const typed = (d: Deployment): Deployment => ({ ...d, apiVersion: API_VERSION, kind: KIND });

export class DeploymentController {
  private readonly deployments: Indexer<Deployment>;
  private readonly replicaSets: Indexer<ReplicaSet>;
  private readonly pods: Indexer<Pod>;
  private readonly controller: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly recorder: EventRecorder;

  constructor(private readonly opts: DeploymentControllerOptions) {
    const dInformer = opts.informers.informerFor<Deployment>(deploymentsResource);
    const rsInformer = opts.informers.informerFor<ReplicaSet>(replicaSetsResource);
    const podInformer = opts.informers.informerFor<Pod>(podsResource);
    this.deployments = dInformer.indexer;
    this.replicaSets = rsInformer.indexer;
    this.pods = podInformer.indexer;
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'deployment-controller'));
    this.controller = new QueueController({
      name: 'deployment',
      clock: opts.clock,
      logger: opts.logger,
      sources: [dInformer, rsInformer, podInformer],
      workers: opts.workers ?? 5,
      sync: (key) => this.syncDeployment(key),
    });
    dInformer.addEventHandler({
      onAdd: (d) => this.enqueue(d),
      onUpdate: (_old, cur) => this.enqueue(cur),
      onDelete: (obj) => this.controller.enqueue(metaNamespaceKeyFunc(obj)),
    });
    rsInformer.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (old, cur) => this.updateReplicaSet(old, cur),
      onDelete: (obj) => this.deleteReplicaSet(obj),
    });
    podInformer.addEventHandler({ onDelete: (obj) => this.deletePod(obj) });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  private enqueue(d: Deployment): void {
    this.controller.enqueue(metaNamespaceKeyFunc(d));
  }

  private now(): number {
    return this.opts.clock.now();
  }

  // ---- event handlers (upstream's add/update/deleteReplicaSet, deletePod)

  private resolveControllerRef(namespace: string, ref: { kind: string; name: string; uid: string } | undefined): Deployment | undefined {
    return resolveControllerRef(this.deployments, KIND, namespace, ref);
  }

  /** The Deployments whose selector matches an orphan ReplicaSet (upstream's getDeploymentsForReplicaSet). */
  private deploymentsForReplicaSet(rs: ReplicaSet): Deployment[] {
    const ns = rs.metadata?.namespace ?? '';
    return this.deployments.byIndex(namespaceIndex, ns).filter((d) => {
      try {
        const s = labelSelectorAsSelector(d.spec?.selector);
        return !isNothing(s) && !s.empty() && s.matches(rs.metadata?.labels);
      } catch {
        return false;
      }
    });
  }

  private addReplicaSet(rs: ReplicaSet): void {
    if (rs.metadata?.deletionTimestamp) {
      this.deleteReplicaSet(rs);
      return;
    }
    const ref = getControllerOf(rs);
    if (ref) {
      const d = this.resolveControllerRef(rs.metadata?.namespace ?? '', ref);
      if (d) this.enqueue(d);
      return;
    }
    for (const d of this.deploymentsForReplicaSet(rs)) this.enqueue(d);
  }

  private updateReplicaSet(old: ReplicaSet, cur: ReplicaSet): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    const ns = cur.metadata?.namespace ?? '';
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    if (oldRef && oldRef.uid !== curRef?.uid) {
      const d = this.resolveControllerRef(ns, oldRef);
      if (d) this.enqueue(d);
    }
    if (curRef) {
      const d = this.resolveControllerRef(ns, curRef);
      if (d) this.enqueue(d);
      return;
    }
    for (const d of this.deploymentsForReplicaSet(cur)) this.enqueue(d);
  }

  private deleteReplicaSet(obj: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>): void {
    const rs = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    const d = this.resolveControllerRef(rs.metadata?.namespace ?? '', getControllerOf(rs));
    if (d) this.enqueue(d);
  }

  /** A Recreate Deployment waits for its old pods to go: each deletion may be the last. */
  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    const ns = pod.metadata?.namespace ?? '';
    const rsRef = getControllerOf(pod);
    if (rsRef?.kind !== 'ReplicaSet') return;
    const rs = this.replicaSets.getByKey(`${ns}/${rsRef.name}`);
    if (!rs || rs.metadata?.uid !== rsRef.uid) return;
    const d = this.resolveControllerRef(ns, getControllerOf(rs));
    if (d?.spec?.strategy?.type === 'Recreate') this.enqueue(d);
  }

  // ---- clients

  private rsClient(ns: string | undefined) {
    return this.opts.client.resource<ReplicaSet>(replicaSetsResource).namespace(ns);
  }

  private dClient(ns: string | undefined) {
    return this.opts.client.resource<Deployment>(deploymentsResource).namespace(ns);
  }

  private event(d: Deployment, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event(involvedObject(typed(d)), type, reason, message);
  }

  /** Writes d's status (and annotations, which a Deployment's status write keeps); d takes the result. */
  private async updateStatus(d: Deployment): Promise<void> {
    const updated = await this.dClient(d.metadata?.namespace).updateStatus(d);
    d.metadata = updated.metadata;
    d.status = updated.status;
  }

  // ---- sync

  /** Upstream's syncDeployment; returns a delay when the progress deadline needs a look later. */
  async syncDeployment(key: string): Promise<number | void> {
    const cached = this.deployments.getByKey(key);
    if (!cached) return;
    const d = structuredClone(cached);
    const sel = d.spec?.selector;
    if (!sel || (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0)) {
      this.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) {
        d.status = { ...d.status, observedGeneration: d.metadata?.generation };
        await this.updateStatus(d);
      }
      return;
    }
    const rsList = await this.replicaSetsForDeployment(d, labelSelectorAsSelector(sel));
    if (d.metadata?.deletionTimestamp) return this.syncStatusOnly(d, rsList);
    await this.checkPausedConditions(d);
    if (d.spec?.paused) return this.sync(d, rsList);
    if (await this.isScalingEvent(d, rsList)) return this.sync(d, rsList);
    if (d.spec?.strategy?.type === 'Recreate') return this.rolloutRecreate(d, rsList);
    return this.rolloutRolling(d, rsList);
  }

  /** Upstream's getReplicaSetsForDeployment: adopt matching orphans, release what no longer matches. */
  private async replicaSetsForDeployment(d: Deployment, selector: Selector): Promise<ReplicaSet[]> {
    const m = d.metadata ?? {};
    const manager = new BaseControllerRefManager(
      typed(d),
      selector,
      recheckDeletionTimestamp(async () => {
        const fresh = await this.dClient(m.namespace).get(m.name ?? '');
        if (fresh.metadata?.uid !== m.uid) throw new Error(`original Deployment ${m.namespace}/${m.name} is gone: got uid ${fresh.metadata?.uid}, wanted ${m.uid}`);
        return fresh;
      }),
    );
    const rsc = this.rsClient(m.namespace);
    const claimed: ReplicaSet[] = [];
    const errors: Error[] = [];
    for (const rs of this.replicaSets.byIndex(namespaceIndex, m.namespace ?? '')) {
      const rm = rs.metadata ?? {};
      try {
        const ours = await manager.claimObject(rs, {
          match: (x) => selector.matches(x.metadata?.labels),
          adopt: async (x) => {
            try {
              await manager.canAdopt();
            } catch (err) {
              throw new Error(`can't adopt ReplicaSet ${rm.namespace}/${rm.name} (${rm.uid}): ${(err as Error).message}`, { cause: err });
            }
            await rsc.patch(x.metadata?.name ?? '', 'strategic', { metadata: { ownerReferences: [newControllerRef(d, API_VERSION, KIND)], uid: rm.uid } });
          },
          release: async (x) => {
            try {
              await rsc.patch(x.metadata?.name ?? '', 'strategic', { metadata: { ownerReferences: [{ $patch: 'delete', uid: m.uid }], uid: rm.uid } });
            } catch (err) {
              if (!hasStatusCode(err, 404, 422)) throw err;
            }
          },
        });
        if (ours) claimed.push(rs);
      } catch (err) {
        errors.push(err as Error);
      }
    }
    if (errors.length) throw new AggregateError(errors, errors.map((e) => e.message).join(', '));
    return claimed;
  }

  /** Upstream's checkPausedConditions: Progressing Unknown DeploymentPaused / DeploymentResumed. */
  private async checkPausedConditions(d: Deployment): Promise<void> {
    if (!hasProgressDeadline(d)) return;
    const cond = getDeploymentCondition(d.status, 'Progressing');
    if (cond?.reason === TIMED_OUT_REASON) return; // a reported lack of progress stays
    const pausedCondExists = cond?.reason === PAUSED_DEPLOY_REASON;
    const status: DeploymentStatus = (d.status ??= {});
    if (d.spec?.paused && !pausedCondExists) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'Unknown', PAUSED_DEPLOY_REASON, 'Deployment is paused', this.now()));
    } else if (!d.spec?.paused && pausedCondExists) {
      setDeploymentCondition(status, newDeploymentCondition('Progressing', 'Unknown', RESUMED_DEPLOY_REASON, 'Deployment is resumed', this.now()));
    } else return;
    await this.updateStatus(d);
  }

  /** Upstream's isScalingEvent: an active ReplicaSet was sized for another replicas count. */
  private async isScalingEvent(d: Deployment, rsList: ReplicaSet[]): Promise<boolean> {
    const { newRS, oldRSs } = await this.allReplicaSetsAndSyncRevision(d, rsList, false);
    return filterActiveReplicaSets([...oldRSs, newRS]).some((rs) => {
      const desired = desiredReplicasAnnotation(rs);
      return desired !== undefined && desired !== deploymentReplicas(d);
    });
  }

  /**
   * Upstream's getAllReplicaSetsAndSyncRevision: all the old ReplicaSets and the new one
   * (created when asked and missing), with the revision annotations brought up to date.
   */
  private async allReplicaSetsAndSyncRevision(d: Deployment, rsList: ReplicaSet[], createIfNotExisted: boolean): Promise<{ newRS?: ReplicaSet; oldRSs: ReplicaSet[] }> {
    const oldRSs = findOldReplicaSets(d, rsList);
    const newRS = await this.getNewReplicaSet(d, rsList, oldRSs, createIfNotExisted);
    return { newRS, oldRSs };
  }

  /** Upstream's getNewReplicaSet. */
  private async getNewReplicaSet(d: Deployment, rsList: ReplicaSet[], oldRSs: ReplicaSet[], createIfNotExisted: boolean): Promise<ReplicaSet | undefined> {
    const existing = findNewReplicaSet(d, rsList);
    const newRevision = String(maxRevision(oldRSs) + 1);
    const ns = d.metadata?.namespace;
    if (existing) {
      const copy = structuredClone(existing);
      const annotationsUpdated = setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyNeedsUpdate = (copy.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      if (annotationsUpdated || minReadyNeedsUpdate) {
        copy.spec!.minReadySeconds = d.spec?.minReadySeconds;
        const updated = await this.rsClient(ns).update(copy);
        // Later looks in this sync see the written copy, not the cache's.
        rsList[rsList.indexOf(existing)] = updated;
        return updated;
      }
      let needsUpdate = setDeploymentRevision(d, copy.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '');
      if (hasProgressDeadline(d) && !getDeploymentCondition(d.status, 'Progressing')) {
        setDeploymentCondition((d.status ??= {}), newDeploymentCondition('Progressing', 'True', FOUND_NEW_RS_REASON, `Found new replica set "${copy.metadata?.name}"`, this.now()));
        needsUpdate = true;
      }
      if (needsUpdate) await this.updateStatus(d);
      return copy;
    }
    if (!createIfNotExisted) return undefined;

    const template = structuredClone(d.spec!.template);
    const hash = computeHash(template, d.status?.collisionCount);
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY]: hash } };
    const selector = structuredClone(d.spec!.selector);
    selector.matchLabels = { ...selector.matchLabels, [DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY]: hash };
    const newRS: ReplicaSet = {
      apiVersion: API_VERSION,
      kind: 'ReplicaSet',
      metadata: { name: `${d.metadata?.name}-${hash}`, namespace: ns, ownerReferences: [newControllerRef(d, API_VERSION, KIND)], labels: template.metadata.labels },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds, selector, template },
    };
    newRS.spec!.replicas = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
    setNewReplicaSetAnnotations(d, newRS, newRevision, false);

    let createdRS: ReplicaSet;
    let alreadyExists = false;
    try {
      createdRS = await this.rsClient(ns).create(newRS);
    } catch (err) {
      if (hasStatusCode(err, 409)) {
        alreadyExists = true;
        const rs = this.replicaSets.getByKey(`${ns}/${newRS.metadata!.name}`);
        // The same template under our name and ours: a stale cache, not a collision.
        if (rs && getControllerOf(rs)?.uid === d.metadata?.uid && equalIgnoreHash(d.spec?.template, rs.spec?.template)) createdRS = rs;
        else {
          // A hash collision: the next hash takes collisionCount into account.
          d.status = { ...d.status, collisionCount: (d.status?.collisionCount ?? 0) + 1 };
          await this.updateStatus(d);
          throw err;
        }
      } else {
        if (hasProgressDeadline(d)) {
          const msg = `Failed to create new replica set "${newRS.metadata!.name}": ${(err as Error).message}`;
          setDeploymentCondition((d.status ??= {}), newDeploymentCondition('Progressing', 'False', FAILED_RS_CREATE_REASON, msg, this.now()));
          await this.updateStatus(d).catch(() => {});
          this.event(d, 'Warning', FAILED_RS_CREATE_REASON, msg);
        }
        throw err;
      }
    }
    if (!alreadyExists && replicasOf(createdRS) > 0) {
      this.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${createdRS.metadata?.name} from 0 to ${replicasOf(createdRS)}`);
    }
    let needsUpdate = setDeploymentRevision(d, newRevision);
    if (!alreadyExists && hasProgressDeadline(d)) {
      setDeploymentCondition((d.status ??= {}), newDeploymentCondition('Progressing', 'True', NEW_RS_REASON, `Created new replica set "${createdRS.metadata?.name}"`, this.now()));
      needsUpdate = true;
    }
    if (needsUpdate) await this.updateStatus(d);
    return createdRS;
  }

  // ---- scaling

  /** Upstream's scaleReplicaSet: writes the size and replicas annotations when either changed; records a scale. */
  private async scaleReplicaSet(rs: ReplicaSet, newScale: number, d: Deployment): Promise<ReplicaSet> {
    const sizeNeedsUpdate = replicasOf(rs) !== newScale;
    const max = deploymentReplicas(d) + maxSurge(d);
    if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, deploymentReplicas(d), max)) return rs;
    const oldScale = replicasOf(rs);
    const copy = structuredClone(rs);
    copy.spec = { ...copy.spec!, replicas: newScale };
    setReplicasAnnotations(copy, deploymentReplicas(d), max);
    const updated = await this.rsClient(rs.metadata?.namespace).update(copy);
    if (sizeNeedsUpdate) {
      this.event(d, 'Normal', 'ScalingReplicaSet', `Scaled ${oldScale < newScale ? 'up' : 'down'} replica set ${rs.metadata?.name} from ${oldScale} to ${newScale}`);
    }
    return updated;
  }

  /** Applies planned resizes in order (each on the latest copy of its ReplicaSet); true when any changed a size. */
  private async apply(steps: Resize[], rss: (ReplicaSet | undefined)[], d: Deployment, evenIfSameSize = false): Promise<boolean> {
    let scaled = false;
    for (const step of steps) {
      const i = rss.findIndex((rs) => rs?.metadata?.name === step.name);
      const rs = rss[i];
      if (!rs || (!evenIfSameSize && replicasOf(rs) === step.replicas)) continue;
      if (replicasOf(rs) !== step.replicas) scaled = true;
      rss[i] = await this.scaleReplicaSet(rs, step.replicas, d);
    }
    return scaled;
  }

  /** Upstream's sync: a resize or a paused Deployment; no rollout. */
  private async sync(d: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSetsAndSyncRevision(d, rsList, false);
    const all = [...oldRSs, newRS];
    await this.apply(planScale(d, newRS, oldRSs), all, d, true);
    const fresh = all.slice(0, oldRSs.length) as ReplicaSet[];
    const freshNew = all[oldRSs.length];
    if (d.spec?.paused) await this.cleanupDeployment(fresh, d);
    await this.syncDeploymentStatus([...fresh, freshNew], freshNew, d);
  }

  private async syncStatusOnly(d: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRS, oldRSs } = await this.allReplicaSetsAndSyncRevision(d, rsList, false);
    await this.syncDeploymentStatus([...oldRSs, newRS], newRS, d);
  }

  private async syncDeploymentStatus(allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment): Promise<void> {
    const status = calculateStatus(allRSs, newRS, d, this.now());
    if (sameDeploymentStatus(d.status, status)) return;
    d.status = status;
    await this.updateStatus(d);
  }

  /** Upstream's rolloutRolling. */
  private async rolloutRolling(d: Deployment, rsList: ReplicaSet[]): Promise<number | void> {
    const { newRS, oldRSs } = await this.allReplicaSetsAndSyncRevision(d, rsList, true);
    const all: (ReplicaSet | undefined)[] = [...oldRSs, newRS];
    const newAt = oldRSs.length;
    if (newRS && (await this.apply(planNewReplicaSet(all, newRS, d), all, d))) return this.syncRolloutStatus(all, all[newAt], d);
    const olds = () => all.slice(0, newAt) as ReplicaSet[];
    if (await this.apply(planOldReplicaSets(all, filterActiveReplicaSets(olds()), all[newAt], d), all, d)) return this.syncRolloutStatus(all, all[newAt], d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanupDeployment(olds(), d);
    return this.syncRolloutStatus(all, all[newAt], d);
  }

  /** Upstream's rolloutRecreate: old ReplicaSets to 0, wait for their pods to go, then the new one to full size. */
  private async rolloutRecreate(d: Deployment, rsList: ReplicaSet[]): Promise<number | void> {
    let { newRS, oldRSs } = await this.allReplicaSetsAndSyncRevision(d, rsList, false);
    let all: (ReplicaSet | undefined)[] = [...oldRSs, newRS];
    const active = filterActiveReplicaSets(oldRSs);
    if (await this.apply(active.map((rs) => ({ name: rs.metadata?.name ?? '', replicas: 0 })), all, d)) return this.syncRolloutStatus(all, newRS, d);
    if (this.oldPodsRunning(newRS, oldRSs, rsList)) return this.syncRolloutStatus(all, newRS, d);
    if (!newRS) {
      ({ newRS, oldRSs } = await this.allReplicaSetsAndSyncRevision(d, rsList, true));
      all = [...oldRSs, newRS];
    }
    if (newRS) await this.apply([{ name: newRS.metadata?.name ?? '', replicas: deploymentReplicas(d) }], all, d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanupDeployment(oldRSs, d);
    return this.syncRolloutStatus(all, all[all.length - 1], d);
  }

  /** Upstream's oldPodsRunning: old ReplicaSets still report pods, or pods of theirs are not finished. */
  private oldPodsRunning(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[], rsList: ReplicaSet[]): boolean {
    if (actualReplicaCount(oldRSs) > 0) return true;
    const oldUids = new Set(rsList.filter((rs) => rs.metadata?.uid !== newRS?.metadata?.uid).map((rs) => rs.metadata?.uid));
    const ns = newRS?.metadata?.namespace ?? rsList[0]?.metadata?.namespace ?? '';
    return this.pods.byIndex(namespaceIndex, ns).some((pod) => {
      const ref = getControllerOf(pod);
      const phase = pod.status?.phase;
      return ref !== undefined && oldUids.has(ref.uid) && phase !== 'Failed' && phase !== 'Succeeded';
    });
  }

  /** Upstream's cleanupDeployment: delete the oldest empty ReplicaSets beyond revisionHistoryLimit. */
  private async cleanupDeployment(oldRSs: ReplicaSet[], d: Deployment): Promise<void> {
    if (!hasRevisionHistoryLimit(d)) return;
    const cleanable = oldRSs.filter((rs) => !rs.metadata?.deletionTimestamp);
    const diff = cleanable.length - (d.spec?.revisionHistoryLimit ?? 0);
    if (diff <= 0) return;
    cleanable.sort(byRevision);
    for (const rs of cleanable.slice(0, diff)) {
      if ((rs.status?.replicas ?? 0) !== 0 || replicasOf(rs) !== 0 || (rs.metadata?.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      try {
        await this.rsClient(rs.metadata?.namespace).delete(rs.metadata?.name ?? '');
      } catch (err) {
        if (!hasStatusCode(err, 404)) throw err;
      }
    }
  }

  /** Upstream's syncRolloutStatus: counts, Progressing (with its deadline) and ReplicaFailure; a delay to check the deadline. */
  private async syncRolloutStatus(allRSs: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment): Promise<number | void> {
    const now = this.now();
    const status = calculateStatus(allRSs, newRS, d, now);
    if (!hasProgressDeadline(d)) removeDeploymentCondition(status, 'Progressing');
    const current = getDeploymentCondition(d.status, 'Progressing');
    const isComplete = status.replicas === status.updatedReplicas && current?.reason === NEW_RS_AVAILABLE_REASON;
    if (hasProgressDeadline(d) && !isComplete) {
      const rsName = newRS?.metadata?.name;
      if (deploymentComplete(d, status)) {
        const msg = rsName ? `ReplicaSet "${rsName}" has successfully progressed.` : `Deployment "${d.metadata?.name}" has successfully progressed.`;
        setDeploymentCondition(status, newDeploymentCondition('Progressing', 'True', NEW_RS_AVAILABLE_REASON, msg, now));
      } else if (deploymentProgressing(d, status)) {
        const msg = rsName ? `ReplicaSet "${rsName}" is progressing.` : `Deployment "${d.metadata?.name}" is progressing.`;
        const cond = newDeploymentCondition('Progressing', 'True', RS_UPDATED_REASON, msg, now);
        // Progress moves lastUpdateTime even with the same reason; lastTransitionTime stays while True.
        if (current) {
          if (current.status === 'True') cond.lastTransitionTime = current.lastTransitionTime;
          removeDeploymentCondition(status, 'Progressing');
        }
        setDeploymentCondition(status, cond);
      } else if (deploymentTimedOut(d, status, now)) {
        const msg = rsName ? `ReplicaSet "${rsName}" has timed out progressing.` : `Deployment "${d.metadata?.name}" has timed out progressing.`;
        setDeploymentCondition(status, newDeploymentCondition('Progressing', 'False', TIMED_OUT_REASON, msg, now));
      }
    }
    const failures = replicaFailures(allRSs, newRS);
    if (failures.length) setDeploymentCondition(status, failures[0]!);
    else removeDeploymentCondition(status, 'ReplicaFailure');
    if (sameDeploymentStatus(d.status, status)) return this.requeueStuckDeployment(d, status);
    d.status = status;
    await this.updateStatus(d);
  }

  /** Upstream's requeueStuckDeployment: look again when the progress deadline would pass. */
  private requeueStuckDeployment(d: Deployment, status: DeploymentStatus): number | void {
    const cond = getDeploymentCondition(d.status, 'Progressing');
    if (!hasProgressDeadline(d) || !cond) return;
    if (deploymentComplete(d, status) || cond.reason === TIMED_OUT_REASON) return;
    const after = Date.parse(cond.lastUpdateTime ?? '') + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 - this.now();
    // Conditions carry whole seconds; a second more makes sure the deadline has passed.
    return Math.max(after, 0) + 1000;
  }
}
