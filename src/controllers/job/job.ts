// The Job controller, as upstream's pkg/controller/job/job_controller.go (1.33): for each Job it
// claims the pods its selector matches, creates pods (with the batch.kubernetes.io/job-tracking
// finalizer) up to parallelism and the completions left, honouring the pod-failure back-off,
// counts finished pods through status.uncountedTerminatedPods before it removes their finalizers
// (so no pod is counted twice or lost), and decides the Job's end: FailureTarget or
// SuccessCriteriaMet first, Failed or Complete once no pod is left terminating.
import type { Job, JobCondition, JobStatus } from 'kubernetes-types/batch/v1.js';
import type { Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { isDeepStrictEqual } from 'node:util';
import { JOB_COMPLETION_INDEX_ANNOTATION, JOB_CONTROLLER_NAME, JOB_INDEX_FAILURE_COUNT_ANNOTATION, JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION, JOB_TRACKING_FINALIZER } from '../../api/batch.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import { labelSelectorAsSelector, type Selector } from '../../api/labels.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, splitMetaNamespaceKey, type Indexer } from '../../client/indexer.js';
import { type EventBroadcaster, type EventRecorder } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import { ItemExponentialFailureRateLimiter } from '../../client/workqueue.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { ControllerExpectations } from '../kit/expectations.js';
import { involvedObject, NAMESPACE_TERMINATING_CAUSE, RealPodControl, type PodControl } from '../kit/podcontrol.js';
import { filterActivePods, isPodReady, sortActivePods } from '../kit/pods.js';
import { getControllerOf, newControllerRef, PodControllerRefManager, recheckDeletionTimestamp, resolveControllerRef } from '../kit/refmanager.js';
import { slowStartBatch, SLOW_START_INITIAL_BATCH_SIZE } from '../kit/slowstart.js';
import { BackoffStore, finishedTime, remainingTime, remainingTimePerIndex, type BackoffRecord } from './backoff.js';
import {
  addCompletionIndexEnv,
  byCompletionIndex,
  completionIndex,
  firstPendingIndexes,
  indexAbsoluteFailureCount,
  indexesOf,
  indexFailureCount,
  indexIgnoredFailureCount,
  OrderedIntervals,
  podGenerateNameWithIndex,
  UNKNOWN_INDEX,
} from './indexes.js';
import { matchPodFailurePolicy, matchSuccessPolicy } from './policies.js';
import { isJobFinished } from './util.js';

/** Upstream's syncJobBatchPeriod: pod events and status updates are synced together, this late. */
export const SYNC_JOB_BATCH_PERIOD_MS = 1000;
/** Upstream's MaxUncountedPods: keeps status.uncountedTerminatedPods under about 20 KB. */
export const MAX_UNCOUNTED_PODS = 500;
/** Upstream's MaxPodCreateDeletePerSync. */
export const MAX_POD_CREATE_DELETE_PER_SYNC = 500;
/** Upstream's DefaultJobApiBackOff and MaxJobApiBackOff: the retry of a failed sync. */
const API_BACKOFF_MS = 1000;
const MAX_API_BACKOFF_MS = 60_000;
const API_VERSION = 'batch/v1';
const KIND = 'Job';

const podsResource = findResource('', 'v1', 'pods')!;
const jobsResource = findResource('batch', 'v1', 'jobs')!;

export interface JobControllerOptions extends ControllerOptions {
  /** Upstream's --concurrent-job-syncs (default 5). */
  workers?: number;
  /** Pod writes and their events; default RealPodControl on this controller's recorder. */
  podControl?: PodControl;
  /** The Job's own events; default one recording through the client as job-controller. */
  recorder?: EventRecorder;
}

/** Upstream's uidTrackingExpectations: pods whose finalizer removal the informer has yet to show. */
class FinalizerExpectations {
  private readonly uids = new Map<string, Set<string>>();

  expectFinalizersRemoved(key: string, uids: readonly string[]): void {
    const set = this.uids.get(key) ?? new Set<string>();
    for (const uid of uids) set.add(uid);
    this.uids.set(key, set);
  }

  finalizerRemovalObserved(key: string, uid: string): void {
    this.uids.get(key)?.delete(uid);
  }

  expectedUIDs(key: string): Set<string> {
    return new Set(this.uids.get(key) ?? []);
  }

  deleteExpectations(key: string): void {
    this.uids.delete(key);
  }
}

/** What one sync learnt and decided (upstream's syncJobCtx). */
interface SyncJobCtx {
  job: Job;
  pods: Pod[];
  activePods: Pod[];
  finishedCondition?: JobCondition;
  succeeded: number;
  failed: number;
  prevSucceededIndexes: OrderedIntervals;
  succeededIndexes: OrderedIntervals;
  failedIndexes?: OrderedIntervals;
  newBackoffRecord: BackoffRecord;
  expectedRmFinalizers: Set<string>;
  uncounted: { succeeded: Set<string>; failed: Set<string> };
  podsWithDelayedDeletionPerIndex: Map<number, Pod>;
  terminating: number;
  ready: number;
}

const uid = (pod: Pod) => pod.metadata?.uid ?? '';
export const hasJobTrackingFinalizer = (pod: Pod) => (pod.metadata?.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
const isIndexedJob = (job: Job) => job.spec?.completionMode === 'Indexed';
const hasBackoffLimitPerIndex = (job: Job) => job.spec?.backoffLimitPerIndex != null;
const jobSuspended = (job: Job) => job.spec?.suspend === true;
const completionsOf = (job: Job) => job.spec?.completions ?? 0;
/** Being deleted but not yet terminal (upstream's IsPodTerminating). */
const isPodTerminating = (pod: Pod) => !isPodPhaseTerminal(pod.status?.phase) && pod.metadata?.deletionTimestamp != null;

/** A Job whose spec.managedBy names another controller is not ours to sync. */
function managedByExternalController(job: Job): string | undefined {
  const by = job.spec?.managedBy;
  return by != null && by !== JOB_CONTROLLER_NAME ? by : undefined;
}

/** Upstream's onlyReplaceFailedPods: podReplacementPolicy Failed, or any pod-failure policy. */
export function onlyReplaceFailedPods(job: Job): boolean {
  return job.spec?.podReplacementPolicy === 'Failed' || job.spec?.podFailurePolicy != null;
}

/** Failed; or, unless only failed pods are replaced, being deleted before it succeeded. */
export function isPodFailed(pod: Pod, job: Job): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(job)) return false;
  return pod.metadata?.deletionTimestamp != null && pod.status?.phase !== 'Succeeded';
}

export function newCondition(type: string, status: string, reason: string, message: string, now: number): JobCondition {
  const t = rfc3339(now);
  return { type, status, lastProbeTime: t, lastTransitionTime: t, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

/**
 * Upstream's ensureJobConditionStatus: updates the condition of that type if it differs, or
 * appends it (never a new False one). Returns the list and whether it changed.
 */
export function ensureJobConditionStatus(list: JobCondition[], type: string, status: string, reason: string, message: string, now: number): [JobCondition[], boolean] {
  const i = list.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = list[i]!;
    if (c.status === status && (c.reason ?? '') === reason && (c.message ?? '') === message) return [list, false];
    const next = [...list];
    next[i] = newCondition(type, status, reason, message, now);
    return [next, true];
  }
  if (status !== 'False') return [[...list, newCondition(type, status, reason, message, now)], true];
  return [list, false];
}

const findCondition = (job: Job, type: string) => job.status?.conditions?.find((c) => c.type === type);
const successCriteriaMetCondition = (job: Job) => {
  const c = findCondition(job, 'SuccessCriteriaMet');
  return c?.status === 'True' ? c : undefined;
};
const isSuccessCriteriaMet = (c: JobCondition | undefined) => c?.type === 'SuccessCriteriaMet' && c.status === 'True';

/** Upstream's pastBackoffLimitOnFailure: for restartPolicy OnFailure, the restarts of running pods count. */
export function pastBackoffLimitOnFailure(job: Job, pods: readonly Pod[]): boolean {
  if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase !== 'Running' && phase !== 'Pending') continue;
    for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) restarts += cs.restartCount ?? 0;
  }
  const limit = job.spec?.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/**
 * The active pods to delete: for an Indexed Job every duplicate of an index (the best-ranked one
 * stays), every pod without a valid index or beyond completions; then the lowest-ranked until
 * rmAtLeast.
 */
export function activePodsForRemoval(job: Job, pods: readonly Pod[], rmAtLeast: number): Pod[] {
  const rm: Pod[] = [];
  let left: Pod[] = [];
  if (isIndexedJob(job)) {
    const sorted = byCompletionIndex(pods);
    const completions = completionsOf(job);
    let i = 0;
    while (i < sorted.length) {
      const ix = completionIndex(sorted[i]!);
      if (ix >= completions) {
        rm.push(...sorted.slice(i));
        break;
      }
      let j = i;
      while (j < sorted.length && completionIndex(sorted[j]!) === ix) j++;
      const group = sorted.slice(i, j);
      if (ix === UNKNOWN_INDEX) rm.push(...group);
      else if (group.length === 1) left.push(group[0]!);
      else {
        const ranked = sortActivePods(group);
        rm.push(...ranked.slice(0, -1));
        left.push(ranked[ranked.length - 1]!);
      }
      i = j;
    }
  } else {
    left = [...pods];
  }
  if (rm.length < rmAtLeast) rm.push(...sortActivePods(left).slice(0, rmAtLeast - rm.length));
  return rm;
}

/** The pods with a tracking finalizer not yet counted (and, Indexed, with a valid index) that pass filter. */
function validPodsWithFilter(ctx: SyncJobCtx, uncounted: ReadonlySet<string> | undefined, filter: (p: Pod) => boolean): Pod[] {
  const indexed = isIndexedJob(ctx.job);
  return ctx.pods.filter((p) => {
    if (!hasJobTrackingFinalizer(p) || uncounted?.has(uid(p)) || ctx.expectedRmFinalizers.has(uid(p))) return false;
    if (indexed) {
      const ix = completionIndex(p);
      if (ix === UNKNOWN_INDEX || ix >= completionsOf(ctx.job)) return false;
    }
    return filter(p);
  });
}

/** Upstream's isIndexFailed: the index is out of retries (or a FailIndex rule matched). */
function isIndexFailed(job: Job, pod: Pod): boolean {
  let counted = false;
  if (isPodFailed(pod, job)) {
    if (job.spec?.podFailurePolicy) {
      const m = matchPodFailurePolicy(job.spec.podFailurePolicy, pod);
      if (m.action === 'FailIndex') return true;
      counted = m.countFailed;
    } else {
      counted = true;
    }
  }
  return counted && indexFailureCount(pod) >= (job.spec?.backoffLimitPerIndex ?? 0);
}

/** The failed-index counts a replacement of podBeingReplaced starts with. */
function newIndexFailureCounts(job: Job, podBeingReplaced: Pod | undefined): [number, number] {
  if (!podBeingReplaced) return [0, 0];
  let failures = indexFailureCount(podBeingReplaced);
  let ignored = indexIgnoredFailureCount(podBeingReplaced);
  if (matchPodFailurePolicy(job.spec?.podFailurePolicy, podBeingReplaced).countFailed) failures++;
  else ignored++;
  return [failures, ignored];
}

/** The status as the API shows it: Go's omitempty drops zero counters, empty lists and strings. */
function wireStatus(status: JobStatus): JobStatus {
  const s: JobStatus = { ...status };
  for (const k of ['active', 'succeeded', 'failed'] as const) if (!s[k]) delete s[k];
  if (!s.completedIndexes) delete s.completedIndexes;
  if (!s.conditions?.length) delete s.conditions;
  const u = { ...s.uncountedTerminatedPods };
  if (!u.succeeded?.length) delete u.succeeded;
  if (!u.failed?.length) delete u.failed;
  s.uncountedTerminatedPods = u;
  return s;
}

export class JobController {
  private readonly jobs: Indexer<Job>;
  private readonly pods: Indexer<Pod>;
  private readonly controller: QueueController;
  private readonly orphans: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly recorder: EventRecorder;
  private readonly podControl: PodControl;
  readonly expectations: ControllerExpectations;
  private readonly finalizerExpectations = new FinalizerExpectations();
  private readonly backoffStore = new BackoffStore();

  constructor(private readonly opts: JobControllerOptions) {
    const jobInformer = opts.informers.informerFor<Job>(jobsResource);
    const podInformer = opts.informers.informerFor<Pod>(podsResource);
    this.jobs = jobInformer.indexer;
    this.pods = podInformer.indexer;
    this.expectations = new ControllerExpectations(opts.clock);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'job-controller'));
    this.podControl = opts.podControl ?? new RealPodControl(opts.client, this.recorder);
    const rateLimiter = () => new ItemExponentialFailureRateLimiter<string>(API_BACKOFF_MS, MAX_API_BACKOFF_MS);
    this.controller = new QueueController({
      name: 'job',
      clock: opts.clock,
      logger: opts.logger,
      sources: [jobInformer, podInformer],
      workers: opts.workers ?? 5,
      rateLimiter: rateLimiter(),
      sync: (key) => this.syncJob(key),
    });
    this.orphans = new QueueController({
      name: 'job_orphan_pod',
      clock: opts.clock,
      logger: opts.logger,
      sources: [jobInformer, podInformer],
      rateLimiter: rateLimiter(),
      sync: (key) => this.syncOrphanPod(key),
    });
    jobInformer.addEventHandler({
      onAdd: (job) => this.controller.enqueue(metaNamespaceKeyFunc(job)),
      onUpdate: (old, cur) => this.updateJob(old, cur),
      onDelete: (obj) => {
        this.controller.enqueue(metaNamespaceKeyFunc(obj));
        this.cleanupPodFinalizers(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj);
      },
    });
    podInformer.addEventHandler({ onAdd: (pod) => this.addPod(pod), onUpdate: (old, cur) => this.updatePod(old, cur), onDelete: (obj) => this.deletePod(obj, true) });
  }

  start(): void {
    this.controller.start();
    this.orphans.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.controller.stop(), this.orphans.stop()]);
    await this.events?.stop();
  }

  private enqueueBatched(job: Job, delay = SYNC_JOB_BATCH_PERIOD_MS): void {
    this.controller.enqueueAfter(metaNamespaceKeyFunc(job), Math.max(delay, SYNC_JOB_BATCH_PERIOD_MS));
  }

  private enqueueOrphanPod(pod: Pod): void {
    this.orphans.enqueue(metaNamespaceKeyFunc(pod));
  }

  private updateJob(old: Job, cur: Job): void {
    const key = metaNamespaceKeyFunc(cur);
    // A spec change syncs at once; status updates (mostly caused by pod events) are batched.
    if (cur.metadata?.generation === old.metadata?.generation) this.enqueueBatched(cur);
    else this.controller.enqueue(key);
    // A backup: the Job is not marked finished before its pods' finalizers are gone.
    if (isJobFinished(cur)) this.cleanupPodFinalizers(cur);
    const start = Date.parse(cur.status?.startTime ?? '');
    const ads = cur.spec?.activeDeadlineSeconds;
    if (Number.isFinite(start) && ads != null && old.spec?.activeDeadlineSeconds !== ads) {
      this.controller.enqueueAfter(key, Math.max(0, ads * 1000 - (this.opts.clock.now() - start)));
    }
  }

  /** The Job a controller reference names, if it still is that one. */
  private resolveControllerRef(namespace: string, ref: { kind: string; name: string; uid: string }): Job | undefined {
    return resolveControllerRef(this.jobs, KIND, namespace, ref);
  }

  /** The Jobs in the pod's namespace whose selector matches it (upstream's GetPodJobs). */
  private podJobs(pod: Pod): Job[] {
    const ns = pod.metadata?.namespace ?? '';
    const matching = this.jobs.list().filter((job) => {
      if (job.metadata?.namespace !== ns) return false;
      try {
        const selector = labelSelectorAsSelector(job.spec?.selector);
        return !selector.empty() && selector.matches(pod.metadata?.labels);
      } catch {
        return false;
      }
    });
    if (matching.length > 1) this.opts.logger.error({ labels: pod.metadata?.labels }, 'user error! more than one job is selecting pods with labels');
    return matching;
  }

  private addPod(pod: Pod): void {
    if (pod.metadata?.deletionTimestamp) {
      // Seen for the first time already being deleted: not a creation.
      this.deletePod(pod, false);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const job = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
      if (!job) return;
      this.expectations.creationObserved(metaNamespaceKeyFunc(job));
      this.enqueueBatched(job);
      return;
    }
    if (hasJobTrackingFinalizer(pod)) this.enqueueOrphanPod(pod);
    for (const job of this.podJobs(pod)) this.enqueueBatched(job);
  }

  private updatePod(old: Pod, cur: Pod): void {
    if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
    if (cur.metadata?.deletionTimestamp) {
      // Graceful deletion: replace the pod now, not when the kubelet is done with it.
      this.deletePod(cur, false);
      return;
    }
    const finalizerRemoved = !hasJobTrackingFinalizer(cur);
    const ns = cur.metadata?.namespace ?? '';
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = !isDeepStrictEqual(curRef, oldRef);
    const observe = (job: Job) => {
      if (finalizerRemoved) this.finalizerExpectations.finalizerRemovalObserved(metaNamespaceKeyFunc(job), uid(cur));
      this.enqueueBatched(job);
    };
    if (refChanged && oldRef) {
      const job = this.resolveControllerRef(ns, oldRef);
      if (job) observe(job);
    }
    if (curRef) {
      const job = this.resolveControllerRef(ns, curRef);
      if (job) observe(job);
      return;
    }
    if (hasJobTrackingFinalizer(cur)) this.enqueueOrphanPod(cur);
    const labelChanged = !isDeepStrictEqual(cur.metadata?.labels ?? {}, old.metadata?.labels ?? {});
    if (labelChanged || refChanged) for (const job of this.podJobs(cur)) this.enqueueBatched(job);
  }

  /** `final`: the pod left storage (else it is only marked for deletion). */
  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>, final: boolean): void {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    const ref = getControllerOf(pod);
    const hasFinalizer = hasJobTrackingFinalizer(pod);
    if (!ref) {
      // Perhaps a Job's pod whose reference the garbage collector removed.
      if (hasFinalizer) this.enqueueOrphanPod(pod);
      return;
    }
    const job = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
    if (!job || isJobFinished(job)) {
      // syncJob will not remove this finalizer.
      if (hasFinalizer) this.enqueueOrphanPod(pod);
      return;
    }
    const key = metaNamespaceKeyFunc(job);
    this.expectations.deletionObserved(key);
    if (final || !hasFinalizer) this.finalizerExpectations.finalizerRemovalObserved(key, uid(pod));
    this.enqueueBatched(job);
  }

  /** The Job's own pods that still carry the tracking finalizer go to the orphan queue. */
  private cleanupPodFinalizers(job: Job): void {
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(job.spec?.selector);
    } catch (err) {
      this.opts.logger.error({ err }, 'parsing deleted job selector');
      return;
    }
    for (const pod of this.pods.byIndex(namespaceIndex, job.metadata?.namespace ?? '')) {
      if (!selector.matches(pod.metadata?.labels)) continue;
      if (getControllerOf(pod)?.uid === job.metadata?.uid && hasJobTrackingFinalizer(pod)) this.enqueueOrphanPod(pod);
    }
  }

  /** Removes the tracking finalizer of a pod no (unfinished) Job of ours owns. */
  async syncOrphanPod(key: string): Promise<void> {
    const pod = this.pods.getByKey(key);
    if (!pod) return;
    const ref = getControllerOf(pod);
    if (ref) {
      // Owned by something other than a batch/v1 Job: not ours to touch.
      if (ref.kind !== KIND || ref.apiVersion !== API_VERSION) return;
      const job = this.resolveControllerRef(pod.metadata?.namespace ?? '', ref);
      if (job && managedByExternalController(job)) return;
      // Adopted by a Job that still counts it.
      if (job && !isJobFinished(job)) return;
    }
    if (!hasJobTrackingFinalizer(pod)) return;
    const { namespace, name } = splitMetaNamespaceKey(key);
    try {
      await this.podControl.patchPod(namespace, name, removeTrackingFinalizerPatch());
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
    }
  }

  /** The pods this Job manages, after adoption (which adds the finalizer) and release. */
  private async podsForJob(job: Job): Promise<Pod[]> {
    let selector: Selector;
    try {
      selector = labelSelectorAsSelector(job.spec?.selector);
    } catch (err) {
      throw new Error(`couldn't convert Job selector: ${(err as Error).message}`, { cause: err });
    }
    const m = job.metadata ?? {};
    const manager = new PodControllerRefManager({
      podControl: this.podControl,
      controller: { ...job, apiVersion: API_VERSION, kind: KIND },
      selector,
      controllerApiVersion: API_VERSION,
      controllerKind: KIND,
      canAdopt: recheckDeletionTimestamp(async () => {
        const fresh = await this.opts.client.resource<Job>(jobsResource).namespace(m.namespace).get(m.name ?? '');
        if (fresh.metadata?.uid !== m.uid) throw new Error(`original Job ${m.namespace}/${m.name} is gone: got uid ${fresh.metadata?.uid}, wanted ${m.uid}`);
        return fresh;
      }),
      finalizers: [JOB_TRACKING_FINALIZER],
    });
    const { claimed, errors } = await manager.claimPods(this.pods.byIndex(namespaceIndex, m.namespace ?? ''));
    if (errors.length) throw new AggregateError(errors, errors.map((e) => e.message).join(', '));
    // Pods adopted just now carry the finalizer in storage, not yet in the cache.
    return claimed.map((p) => {
      const adopted = !(p.metadata?.ownerReferences ?? []).some((r) => r.uid === m.uid);
      return adopted && !hasJobTrackingFinalizer(p) ? { ...p, metadata: { ...p.metadata, finalizers: [...(p.metadata?.finalizers ?? []), JOB_TRACKING_FINALIZER] } } : p;
    });
  }

  /** Upstream's syncJob. */
  async syncJob(key: string): Promise<void> {
    const shared = this.jobs.getByKey(key);
    if (!shared) {
      this.expectations.deleteExpectations(key);
      this.finalizerExpectations.deleteExpectations(key);
      this.backoffStore.removeBackoffRecord(key);
      return;
    }
    if (managedByExternalController(shared)) return;
    // A finished Job is never reopened.
    if (isJobFinished(shared)) {
      this.backoffStore.removeBackoffRecord(key);
      return;
    }
    const mode = shared.spec?.completionMode;
    if (mode != null && mode !== 'NonIndexed' && mode !== 'Indexed') {
      this.recorder.event(involvedObject({ ...shared, apiVersion: API_VERSION, kind: KIND }), 'Warning', 'UnknownCompletionMode', 'Skipped Job sync because completion mode is unknown');
      return;
    }
    const job: Job = structuredClone(shared);
    const status = (job.status ??= {});
    status.uncountedTerminatedPods ??= {};
    const now = this.opts.clock.now();

    // Before the pods are read: a pod arriving after this check waits for the next sync.
    const satisfiedExpectations = this.expectations.satisfiedExpectations(key);
    const pods = await this.podsForJob(job);
    const activePods = filterActivePods(pods);
    const ctx: SyncJobCtx = {
      job,
      pods,
      activePods,
      succeeded: 0,
      failed: 0,
      prevSucceededIndexes: new OrderedIntervals(),
      succeededIndexes: new OrderedIntervals(),
      newBackoffRecord: { key, failuresAfterLastSuccess: 0 },
      expectedRmFinalizers: this.finalizerExpectations.expectedUIDs(key),
      uncounted: { succeeded: new Set(status.uncountedTerminatedPods.succeeded ?? []), failed: new Set(status.uncountedTerminatedPods.failed ?? []) },
      podsWithDelayedDeletionPerIndex: new Map(),
      terminating: pods.filter(isPodTerminating).length,
      ready: activePods.filter(isPodReady).length,
    };
    let active = activePods.length;
    const newSucceededPods = validPodsWithFilter(ctx, ctx.uncounted.succeeded, (p) => p.status?.phase === 'Succeeded');
    const newFailedPods = validPodsWithFilter(ctx, ctx.uncounted.failed, (p) => isPodFailed(p, job));
    const nonIgnoredFailed = newFailedPods.filter((p) => matchPodFailurePolicy(job.spec?.podFailurePolicy, p).countFailed).length;
    ctx.succeeded = (status.succeeded ?? 0) + newSucceededPods.length + ctx.uncounted.succeeded.size;
    ctx.failed = (status.failed ?? 0) + nonIgnoredFailed + ctx.uncounted.failed.size;

    // First start; a suspended Job has not started.
    if (!status.startTime && !jobSuspended(job)) status.startTime = rfc3339(now);
    ctx.newBackoffRecord = this.backoffStore.newBackoffRecord(key, newSucceededPods, newFailedPods);

    // With SuccessCriteriaMet already set the outcome is decided: the failure policy is not consulted again.
    ctx.finishedCondition = successCriteriaMetCondition(job);
    if (!ctx.finishedCondition) {
      const target = findCondition(job, 'FailureTarget');
      if (target?.status === 'True') ctx.finishedCondition = newCondition('Failed', 'True', target.reason ?? '', target.message ?? '', now);
      else {
        const message = failJobMessage(job, pods);
        if (message) ctx.finishedCondition = newCondition('FailureTarget', 'True', 'PodFailurePolicy', message, now);
      }
    }
    if (!ctx.finishedCondition) {
      const ads = job.spec?.activeDeadlineSeconds;
      if (ctx.failed > (job.spec?.backoffLimit ?? 6) || pastBackoffLimitOnFailure(job, pods)) {
        ctx.finishedCondition = newCondition('FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', now);
      } else if (this.pastActiveDeadline(job)) {
        ctx.finishedCondition = newCondition('FailureTarget', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline', now);
      } else if (ads != null && !jobSuspended(job)) {
        this.controller.enqueueAfter(key, Math.max(0, ads * 1000 - (now - Date.parse(status.startTime!))));
      }
    }
    if (isIndexedJob(job)) {
      const completions = completionsOf(job);
      ctx.prevSucceededIndexes = OrderedIntervals.parse(status.completedIndexes, completions);
      const newlySucceeded = pods.filter((p) => {
        const ix = completionIndex(p);
        return p.status?.phase === 'Succeeded' && ix !== UNKNOWN_INDEX && ix < completions && hasJobTrackingFinalizer(p);
      });
      ctx.succeededIndexes = ctx.prevSucceededIndexes.withOrderedIndexes(indexesOf(newlySucceeded));
      ctx.succeeded = ctx.succeededIndexes.total();
      if (hasBackoffLimitPerIndex(job)) {
        const prevFailed = status.failedIndexes != null ? OrderedIntervals.parse(status.failedIndexes, completions) : new OrderedIntervals();
        const newlyFailed = pods.filter((p) => {
          const ix = completionIndex(p);
          return ix !== UNKNOWN_INDEX && ix < completions && hasJobTrackingFinalizer(p) && isIndexFailed(job, p);
        });
        ctx.failedIndexes = prevFailed.withOrderedIndexes(indexesOf(newlyFailed));
        if (!ctx.finishedCondition) {
          const maxFailed = job.spec?.maxFailedIndexes;
          const failedTotal = ctx.failedIndexes.total();
          if (maxFailed != null && failedTotal > maxFailed) {
            ctx.finishedCondition = newCondition('FailureTarget', 'True', 'MaxFailedIndexesExceeded', 'Job has exceeded the specified maximal number of failed indexes', now);
          } else if (failedTotal > 0 && failedTotal + ctx.succeededIndexes.total() >= completions) {
            ctx.finishedCondition = newCondition('FailureTarget', 'True', 'FailedIndexes', 'Job has failed indexes', now);
          }
        }
        ctx.podsWithDelayedDeletionPerIndex = podsWithDelayedDeletionPerIndex(ctx);
      }
      if (!ctx.finishedCondition) {
        const message = matchSuccessPolicy(job.spec?.successPolicy, completions, ctx.succeededIndexes);
        if (message) ctx.finishedCondition = newCondition('SuccessCriteriaMet', 'True', 'SuccessPolicy', message, now);
      }
    }

    let suspendCondChanged = false;
    let manageJobErr: Error | undefined;
    if (ctx.finishedCondition) {
      // Finished: the remaining active pods go (their finalizers are removed by the tracking below).
      const { deletedReady, deleted, error } = await this.deleteActivePods(job, ctx.activePods);
      // Pods left, or some not yet in the cache: not finished yet.
      if (deleted !== active || !satisfiedExpectations) ctx.finishedCondition = undefined;
      active -= deleted;
      ctx.terminating += deleted;
      ctx.ready -= deletedReady;
      manageJobErr = error;
    } else {
      let manageJobCalled = false;
      if (satisfiedExpectations && !job.metadata?.deletionTimestamp) {
        const managed = await this.manageJob(job, ctx, key);
        active = managed.active;
        manageJobErr = managed.error;
        manageJobCalled = true;
      }
      // Without completions, any success (once nothing runs) completes the Job.
      const completions = job.spec?.completions;
      const complete = completions == null ? ctx.succeeded > 0 && active === 0 : ctx.succeeded >= completions && active === 0;
      if (complete) {
        ctx.finishedCondition = newCondition('SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', now);
      } else if (manageJobCalled) {
        // Conditions and events only when manageJob ran in this sync.
        let changed: boolean;
        if (jobSuspended(job)) {
          [status.conditions, changed] = ensureJobConditionStatus(status.conditions ?? [], 'Suspended', 'True', 'JobSuspended', 'Job suspended', now);
          if (changed) this.jobEvent(job, 'Normal', 'Suspended', 'Job suspended');
        } else {
          [status.conditions, changed] = ensureJobConditionStatus(status.conditions ?? [], 'Suspended', 'False', 'JobResumed', 'Job resumed', now);
          if (changed) {
            this.jobEvent(job, 'Normal', 'Resumed', 'Job resumed');
            // activeDeadlineSeconds counts the time continuously active: it starts again.
            status.startTime = rfc3339(now);
          }
        }
        suspendCondChanged = changed;
      }
    }

    const needsStatusUpdate = suspendCondChanged || active !== (status.active ?? 0) || ctx.ready !== status.ready || ctx.terminating !== status.terminating;
    status.active = active;
    status.ready = ctx.ready;
    status.terminating = ctx.terminating;
    try {
      await this.trackJobStatusAndRemoveFinalizers(ctx, needsStatusUpdate);
    } catch (err) {
      throw new Error(`tracking status: ${(err as Error).message}`, { cause: err });
    }
    if (manageJobErr) throw manageJobErr;
  }

  private pastActiveDeadline(job: Job): boolean {
    const ads = job.spec?.activeDeadlineSeconds;
    const start = Date.parse(job.status?.startTime ?? '');
    if (ads == null || !Number.isFinite(start) || jobSuspended(job)) return false;
    return this.opts.clock.now() - start >= ads * 1000;
  }

  private jobEvent(job: Job, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event(involvedObject({ ...job, apiVersion: API_VERSION, kind: KIND }), type, reason, message);
  }

  /** Upstream's manageJob: creates or deletes pods toward the active count wanted; returns that count. */
  private async manageJob(job: Job, ctx: SyncJobCtx, key: string): Promise<{ active: number; error?: Error }> {
    const active = ctx.activePods.length;
    const parallelism = job.spec?.parallelism ?? 1;
    const deleteSome = async (pods: Pod[]) => {
      this.expectations.expectDeletions(key, pods.length);
      const { deletedReady, deleted, error } = await this.deleteJobPods(job, key, pods);
      ctx.terminating += deleted;
      ctx.ready -= deletedReady;
      return { active: active - deleted, error };
    };
    if (jobSuspended(job)) return deleteSome(activePodsForRemoval(job, ctx.activePods, active));

    let wantActive: number;
    const completions = job.spec?.completions;
    // Without completions: parallelism until the first success, then whatever still runs.
    if (completions == null) wantActive = ctx.succeeded > 0 ? active : parallelism;
    else wantActive = Math.max(0, Math.min(completions - ctx.succeeded, parallelism));

    const podsToDelete = activePodsForRemoval(job, ctx.activePods, Math.max(0, active - wantActive)).slice(0, MAX_POD_CREATE_DELETE_PER_SYNC);
    // Deletion or creation in one sync, never both; deletion first.
    if (podsToDelete.length) return deleteSome(podsToDelete);

    const terminating = onlyReplaceFailedPods(job) ? ctx.terminating : 0;
    let diff = wantActive - terminating - active;
    if (diff <= 0) return { active };
    const now = this.opts.clock.now();
    if (!hasBackoffLimitPerIndex(job)) {
      const wait = remainingTime(ctx.newBackoffRecord, now);
      if (wait > 0) {
        this.enqueueBatched(job, wait);
        // Upstream reports 0 active here; the pods still running are reported as they are.
        return { active };
      }
    }
    diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
    let indexesToAdd: number[] = [];
    if (isIndexedJob(job)) {
      let nonPending = ctx.succeededIndexes.withOrderedIndexes(indexesOf(ctx.activePods));
      if (onlyReplaceFailedPods(job)) nonPending = nonPending.withOrderedIndexes(indexesOf(ctx.pods.filter(isPodTerminating)));
      if (ctx.failedIndexes) nonPending = nonPending.merge(ctx.failedIndexes);
      indexesToAdd = firstPendingIndexes(nonPending, diff, completionsOf(job));
      if (hasBackoffLimitPerIndex(job)) {
        const waits = indexesToAdd.map((ix) => remainingTimePerIndex(now, ctx.podsWithDelayedDeletionPerIndex.get(ix)));
        const ready = indexesToAdd.filter((_, i) => waits[i] === 0);
        if (ready.length === 0 && indexesToAdd.length > 0) {
          this.enqueueBatched(job, Math.min(...waits));
          return { active };
        }
        indexesToAdd = ready;
      }
      diff = indexesToAdd.length;
    }
    if (diff === 0) return { active };

    this.expectations.expectCreations(key, diff);
    this.opts.logger.debug({ job: key, need: wantActive, creating: diff }, 'Too few pods running');
    const template: PodTemplateSpec = structuredClone(job.spec?.template ?? {});
    if (isIndexedJob(job)) addCompletionIndexEnv(template);
    const meta = (template.metadata ??= {});
    if (!(meta.finalizers ?? []).includes(JOB_TRACKING_FINALIZER)) meta.finalizers = [...(meta.finalizers ?? []), JOB_TRACKING_FINALIZER];
    const owner = { ...job, apiVersion: API_VERSION, kind: KIND };
    const ref = newControllerRef(job, API_VERSION, KIND);
    const jobName = job.metadata?.name ?? '';
    let next = 0;
    const { successes, error } = await slowStartBatch(diff, SLOW_START_INITIAL_BATCH_SIZE, async () => {
      const ix = indexesToAdd[next++];
      let podTemplate = template;
      let generateName = '';
      if (ix !== undefined) {
        podTemplate = structuredClone(template);
        const m = podTemplate.metadata!;
        m.annotations = { ...m.annotations, [JOB_COMPLETION_INDEX_ANNOTATION]: String(ix) };
        m.labels = { ...m.labels, [JOB_COMPLETION_INDEX_ANNOTATION]: String(ix) };
        podTemplate.spec = { ...podTemplate.spec!, hostname: `${jobName}-${ix}` };
        generateName = podGenerateNameWithIndex(jobName, ix);
        if (hasBackoffLimitPerIndex(job)) {
          const [failures, ignored] = newIndexFailureCounts(job, ctx.podsWithDelayedDeletionPerIndex.get(ix));
          m.annotations[JOB_INDEX_FAILURE_COUNT_ANNOTATION] = String(failures);
          if (ignored > 0) m.annotations[JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION] = String(ignored);
        }
      }
      try {
        if (generateName) await this.podControl.createPodsWithGenerateName(job.metadata?.namespace ?? '', podTemplate, owner, ref, generateName);
        else await this.podControl.createPods(job.metadata?.namespace ?? '', podTemplate, owner, ref);
      } catch (err) {
        // The namespace is going away: the other creates would fail the same way.
        if (err instanceof StatusError && (err.details?.causes ?? []).some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE)) return;
        throw err;
      }
    });
    // Creates that failed or were never tried will not be observed.
    for (let i = successes; i < diff; i++) this.expectations.creationObserved(key);
    return { active: active + successes, error };
  }

  /** Deletes the active pods of a finished Job, keeping their finalizers for the tracking to remove. */
  private async deleteActivePods(job: Job, pods: readonly Pod[]): Promise<{ deletedReady: number; deleted: number; error?: Error }> {
    const owner = { ...job, apiVersion: API_VERSION, kind: KIND };
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        try {
          await this.podControl.deletePod(job.metadata?.namespace ?? '', pod.metadata?.name ?? '', owner);
        } catch (err) {
          if (!hasStatusCode(err, 404)) throw err;
        }
      }),
    );
    return tally(pods, results);
  }

  /** Removes the tracking finalizer, then deletes (suspend, too many pods). */
  private async deleteJobPods(job: Job, key: string, pods: readonly Pod[]): Promise<{ deletedReady: number; deleted: number; error?: Error }> {
    const owner = { ...job, apiVersion: API_VERSION, kind: KIND };
    const ns = job.metadata?.namespace ?? '';
    const results = await Promise.allSettled(
      pods.map(async (pod) => {
        const name = pod.metadata?.name ?? '';
        try {
          if (hasJobTrackingFinalizer(pod)) {
            try {
              await this.podControl.patchPod(ns, name, removeTrackingFinalizerPatch());
            } catch (err) {
              throw new Error(`removing completion finalizer: ${(err as Error).message}`, { cause: err });
            }
          }
          await this.podControl.deletePod(ns, name, owner);
        } catch (err) {
          // The informer will not report this deletion.
          this.expectations.deletionObserved(key);
          const cause = (err as Error).cause ?? err;
          if (!hasStatusCode(err, 404) && !hasStatusCode(cause, 404)) throw err;
        }
      }),
    );
    return tally(pods, results);
  }

  /**
   * Upstream's trackJobStatusAndRemoveFinalizers: records finished pods in uncountedTerminatedPods
   * (flushed first), removes their finalizers, moves those removed into the counters, then sets
   * the final condition once nothing is left uncounted or terminating.
   */
  private async trackJobStatusAndRemoveFinalizers(ctx: SyncJobCtx, needsFlush: boolean): Promise<void> {
    const job = ctx.job;
    const indexed = isIndexedJob(job);
    const completions = completionsOf(job);
    const status = job.status!;
    const uncounted = status.uncountedTerminatedPods!;
    uncounted.succeeded = [...(uncounted.succeeded ?? [])];
    uncounted.failed = [...(uncounted.failed ?? [])];
    const pods = indexed ? byCompletionIndex(ctx.pods) : ctx.pods;
    const uidsWithFinalizer = new Set(pods.filter((p) => hasJobTrackingFinalizer(p) && !ctx.expectedRmFinalizers.has(uid(p))).map(uid));
    if (cleanUncountedPodsWithoutFinalizers(status, uidsWithFinalizer)) needsFlush = true;

    const podsToRemoveFinalizer: Pod[] = [];
    const newSucceededIndexes: number[] = [];
    let reachedMaxUncountedPods = false;
    for (const pod of pods) {
      if (!hasJobTrackingFinalizer(pod) || ctx.expectedRmFinalizers.has(uid(pod))) continue; // counted before
      const considerFailed = isPodFailed(pod, job);
      if (!canRemoveFinalizer(ctx, pod, considerFailed)) continue;
      podsToRemoveFinalizer.push(pod);
      if (pod.status?.phase === 'Succeeded' && !ctx.uncounted.failed.has(uid(pod))) {
        if (indexed) {
          // The index is enough not to count a success twice.
          const ix = completionIndex(pod);
          if (ix !== UNKNOWN_INDEX && ix < completions && !ctx.prevSucceededIndexes.has(ix)) {
            newSucceededIndexes.push(ix);
            needsFlush = true;
          }
        } else if (!ctx.uncounted.succeeded.has(uid(pod))) {
          needsFlush = true;
          uncounted.succeeded.push(uid(pod));
        }
      } else if (considerFailed || (ctx.finishedCondition && !isSuccessCriteriaMet(ctx.finishedCondition))) {
        // A finished (failed) Job counts every pod not yet terminated as failed.
        const ix = completionIndex(pod);
        if (!ctx.uncounted.failed.has(uid(pod)) && (!indexed || (ix !== UNKNOWN_INDEX && ix < completions))) {
          if (matchPodFailurePolicy(job.spec?.podFailurePolicy, pod).countFailed) {
            needsFlush = true;
            uncounted.failed.push(uid(pod));
          }
        }
      }
      if (newSucceededIndexes.length + uncounted.succeeded.length + uncounted.failed.length >= MAX_UNCOUNTED_PODS) {
        // The rest waits for the next sync, which the status and pod updates trigger.
        reachedMaxUncountedPods = true;
        break;
      }
    }
    if (indexed) {
      ctx.succeededIndexes = ctx.succeededIndexes.withOrderedIndexes([...new Set(newSucceededIndexes)].sort((a, b) => a - b));
      const completed = ctx.succeededIndexes.toString();
      if (completed !== (status.completedIndexes ?? '')) needsFlush = true;
      status.succeeded = ctx.succeededIndexes.total();
      status.completedIndexes = completed;
      const failedIndexes = ctx.failedIndexes?.toString();
      if (status.failedIndexes !== failedIndexes) {
        if (failedIndexes === undefined) delete status.failedIndexes;
        else status.failedIndexes = failedIndexes;
        needsFlush = true;
      }
    }
    const now = this.opts.clock.now();
    const fc = ctx.finishedCondition;
    if (fc?.type === 'FailureTarget') {
      // The interim condition is written before any finalizer goes; Failed follows once all pods are gone.
      status.conditions = [...(status.conditions ?? []), fc];
      needsFlush = true;
      ctx.finishedCondition = newCondition('Failed', 'True', fc.reason ?? '', fc.message ?? '', now);
    } else if (isSuccessCriteriaMet(fc)) {
      if (!successCriteriaMetCondition(job)) {
        status.conditions = [...(status.conditions ?? []), fc!];
        needsFlush = true;
      }
      ctx.finishedCondition = newCondition('Complete', 'True', fc!.reason ?? '', fc!.message ?? '', now);
    }
    needsFlush = await this.flushUncountedAndRemoveFinalizers(ctx, podsToRemoveFinalizer, uidsWithFinalizer, needsFlush);
    const jobFinished = !reachedMaxUncountedPods && this.enactJobFinished(ctx);
    if (jobFinished) needsFlush = true;
    if (needsFlush) {
      ctx.job = await this.updateStatus(ctx.job);
      if (jobFinished) this.recordJobFinished(ctx.job, ctx.finishedCondition!);
    }
  }

  /** Flushes the new uncounted pods, removes finalizers, and flushes again if some removals failed. */
  private async flushUncountedAndRemoveFinalizers(ctx: SyncJobCtx, podsToRemoveFinalizer: Pod[], uidsWithFinalizer: Set<string>, needsFlush: boolean): Promise<boolean> {
    if (needsFlush) {
      try {
        ctx.job = await this.updateStatus(ctx.job);
      } catch (err) {
        throw new Error(`adding uncounted pods to status: ${(err as Error).message}`, { cause: err });
      }
      this.backoffStore.updateBackoffRecord(ctx.newBackoffRecord);
      needsFlush = false;
    }
    let rmErr: Error | undefined;
    if (podsToRemoveFinalizer.length) {
      const key = metaNamespaceKeyFunc(ctx.job);
      this.finalizerExpectations.expectFinalizersRemoved(key, podsToRemoveFinalizer.map(uid));
      const results = await Promise.allSettled(
        podsToRemoveFinalizer.map(async (pod) => {
          try {
            await this.podControl.patchPod(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', removeTrackingFinalizerPatch());
          } catch (err) {
            // No update will show this removal.
            this.finalizerExpectations.finalizerRemovalObserved(key, uid(pod));
            if (!hasStatusCode(err, 404)) throw err;
          }
        }),
      );
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') uidsWithFinalizer.delete(uid(podsToRemoveFinalizer[i]!));
        else rmErr ??= new Error(`removing tracking finalizer: ${(r.reason as Error).message}`, { cause: r.reason });
      });
    }
    // Some removals failed: record the partial progress.
    if (cleanUncountedPodsWithoutFinalizers(ctx.job.status!, uidsWithFinalizer)) needsFlush = true;
    if (rmErr && needsFlush) {
      try {
        await this.updateStatus(ctx.job);
      } catch (err) {
        throw new Error(`removing uncounted pods from status: ${(err as Error).message}`, { cause: err });
      }
    }
    if (rmErr) throw rmErr;
    return needsFlush;
  }

  /** Sets the final condition (and completionTime) once nothing is uncounted or terminating. */
  private enactJobFinished(ctx: SyncJobCtx): boolean {
    const fc = ctx.finishedCondition;
    if (!fc) return false;
    const status = ctx.job.status!;
    const u = status.uncountedTerminatedPods;
    if ((u?.succeeded?.length ?? 0) + (u?.failed?.length ?? 0) > 0) return false;
    if (ctx.terminating > 0) return false;
    [status.conditions] = ensureJobConditionStatus(status.conditions ?? [], fc.type, fc.status, fc.reason ?? '', fc.message ?? '', this.opts.clock.now());
    if (fc.type === 'Complete') status.completionTime = fc.lastTransitionTime;
    return true;
  }

  private recordJobFinished(job: Job, fc: JobCondition): void {
    if (fc.type === 'Complete') {
      const completions = job.spec?.completions;
      if (completions != null && (job.status?.succeeded ?? 0) > completions) {
        this.jobEvent(job, 'Warning', 'TooManySucceededPods', 'Too many succeeded pods running after completion count reached');
      }
      this.jobEvent(job, 'Normal', 'Completed', 'Job completed');
    } else {
      this.jobEvent(job, 'Warning', fc.reason ?? '', fc.message ?? '');
    }
  }

  private async updateStatus(job: Job): Promise<Job> {
    const updated = await this.opts.client
      .resource<Job>(jobsResource)
      .namespace(job.metadata?.namespace)
      .updateStatus({ ...job, apiVersion: API_VERSION, kind: KIND, status: wireStatus(job.status ?? {}) });
    const status = (updated.status ??= {});
    status.uncountedTerminatedPods ??= {};
    return updated;
  }
}

function tally(pods: readonly Pod[], results: PromiseSettledResult<void>[]): { deletedReady: number; deleted: number; error?: Error } {
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  return { deletedReady: pods.filter(isPodReady).length, deleted: pods.length - failed.length, error: failed[0]?.reason as Error | undefined };
}

/** A strategic merge patch that takes the tracking finalizer (only) off a pod. */
function removeTrackingFinalizerPatch(): object {
  return { metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER] } };
}

/** The message of the first failed pod that matches a FailJob rule. */
function failJobMessage(job: Job, pods: readonly Pod[]): string | undefined {
  if (!job.spec?.podFailurePolicy) return undefined;
  for (const pod of pods) {
    if (!isPodFailed(pod, job)) continue;
    const message = matchPodFailurePolicy(job.spec.podFailurePolicy, pod).failJobMessage;
    if (message) return message;
  }
  return undefined;
}

/** Moves the uncounted pods whose finalizer is gone into the counters; true when something moved. */
function cleanUncountedPodsWithoutFinalizers(status: JobStatus, uidsWithFinalizer: ReadonlySet<string>): boolean {
  const u = (status.uncountedTerminatedPods ??= {});
  let updated = false;
  const succeeded = (u.succeeded ?? []).filter((x) => uidsWithFinalizer.has(x));
  if (succeeded.length !== (u.succeeded ?? []).length) {
    updated = true;
    status.succeeded = (status.succeeded ?? 0) + (u.succeeded ?? []).length - succeeded.length;
    u.succeeded = succeeded;
  }
  const failed = (u.failed ?? []).filter((x) => uidsWithFinalizer.has(x));
  if (failed.length !== (u.failed ?? []).length) {
    updated = true;
    status.failed = (status.failed ?? 0) + (u.failed ?? []).length - failed.length;
    u.failed = failed;
  }
  return updated;
}

/**
 * Upstream's canRemoveFinalizer: when the Job is being deleted or finished, the pod succeeded, or
 * it failed — unless (backoffLimitPerIndex) it is the failed pod its index's replacement still
 * needs to take its failure count from.
 */
function canRemoveFinalizer(ctx: SyncJobCtx, pod: Pod, considerFailed: boolean): boolean {
  if (ctx.job.metadata?.deletionTimestamp || ctx.finishedCondition || pod.status?.phase === 'Succeeded') return true;
  if (!considerFailed) return false;
  if (hasBackoffLimitPerIndex(ctx.job)) {
    const ix = completionIndex(pod);
    if (ix !== UNKNOWN_INDEX && ctx.podsWithDelayedDeletionPerIndex.get(ix)?.metadata?.uid === uid(pod)) return false;
  }
  return true;
}

/**
 * Upstream's getPodsWithDelayedDeletionPerIndex: for each index that neither runs, succeeded nor
 * failed for good, its last failed pod, kept until the replacement carries its failure count.
 */
function podsWithDelayedDeletionPerIndex(ctx: SyncJobCtx): Map<number, Pod> {
  const activeIndexes = new Set(indexesOf(ctx.activePods));
  const result = new Map<number, Pod>();
  for (const pod of validPodsWithFilter(ctx, undefined, (p) => isPodFailed(p, ctx.job))) {
    const ix = completionIndex(pod);
    if (ctx.succeededIndexes.has(ix) || ctx.failedIndexes?.has(ix) || activeIndexes.has(ix)) continue;
    const last = result.get(ix);
    if (!last || (indexAbsoluteFailureCount(last) <= indexAbsoluteFailureCount(pod) && finishedTime(pod) >= finishedTime(last))) result.set(ix, pod);
  }
  return result;
}
