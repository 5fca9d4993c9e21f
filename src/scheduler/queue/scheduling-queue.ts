// The scheduling queue (upstream's PriorityQueue): activeQ (ready, ordered by the QueueSort plugin),
// backoffQ (failed recently, ordered by when their backoff ends), and the unschedulable pool (waiting
// for a cluster event that could help, or for the 5-minute flush). Pods rejected by PreEnqueue
// (scheduling gates) wait in the pool until the pod itself changes.
import type { Node, Pod } from '../../api/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import { eventMatches, QueueingHint, type ClusterEvent, type ClusterEventWithHint } from '../framework/events.js';
import type { NominatingInfo, PodNominator, QueuedPodInfo } from '../framework/interface.js';
import type { Status } from '../framework/status.js';
import { PodInfo, podUID } from '../framework/types.js';
import { every } from '../../util/periodic.js';
import { Heap } from './heap.js';

export interface SchedulingQueueOptions {
  clock: Clock;
  /** activeQ order: the profile's QueueSort plugin. */
  less: (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;
  /** The PreEnqueue verdict for the pod (its profile's plugins); a Status keeps it out of activeQ. */
  preEnqueue: (pod: Pod) => Status | undefined;
  /** Plugin name → the events that may resolve its rejections. */
  eventsToRegister: Map<string, ClusterEventWithHint[]>;
  /** Called when PreEnqueue rejects a pod (to report PodScheduled=False SchedulingGated); `newly` when it was not gated before. */
  onGated?: (pod: Pod, status: Status, newly: boolean) => void;
  /** Called when a pod enters activeQ for the first time (`first`) or after PreEnqueue held it (`ungated`). */
  onActivated?: (pInfo: QueuedPodInfo, first: boolean, ungated: boolean) => void;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Pods unschedulable this long are retried even without an event. */
  podMaxInUnschedulablePodsDurationMs?: number;
}

export const DEFAULT_INITIAL_BACKOFF_MS = 1_000;
export const DEFAULT_MAX_BACKOFF_MS = 10_000;
export const DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS = 5 * 60_000;
const backoffFlushIntervalMs = 1_000;
const unschedulableFlushIntervalMs = 30_000;

const keyOf = (p: QueuedPodInfo) => podUID(p.podInfo.pod);

// Fields that change without changing what the scheduler decides.
function schedulingRelevant(pod: Pod): string {
  const { resourceVersion: _rv, generation: _g, managedFields: _m, ...meta } = pod.metadata ?? {};
  return JSON.stringify([meta, pod.spec]);
}

export class SchedulingQueue implements PodNominator {
  private readonly activeQ: Heap<QueuedPodInfo>;
  private readonly backoffQ: Heap<QueuedPodInfo>;
  private readonly unschedulable = new Map<string, QueuedPodInfo>();
  private readonly inFlight = new Set<string>();
  private readonly nominated = new Map<string, { node: string; podInfo: PodInfo }>();
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxUnschedulableMs: number;
  private schedulingCycle = 0;
  // The cycle in which the last move request arrived: pods failing in an earlier-started cycle
  // might have missed the event that helps them, so they go to backoffQ instead of the pool.
  private moveRequestCycle = -1;
  private waiters: ((p: QueuedPodInfo | undefined) => void)[] = [];
  private timers: Timer[] = [];
  private closed = false;

  constructor(private readonly opts: SchedulingQueueOptions) {
    this.activeQ = new Heap(keyOf, opts.less);
    this.backoffQ = new Heap(keyOf, (a, b) => this.backoffExpiry(a) < this.backoffExpiry(b));
    this.initialBackoffMs = opts.initialBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS;
    this.maxBackoffMs = opts.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS;
    this.maxUnschedulableMs = opts.podMaxInUnschedulablePodsDurationMs ?? DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION_MS;
  }

  /** Starts the periodic flushes of backoffQ (1 s) and of long-unschedulable pods (30 s). */
  run(): void {
    this.timers.push(
      every(this.opts.clock, backoffFlushIntervalMs, () => this.flushBackoffQCompleted()),
      every(this.opts.clock, unschedulableFlushIntervalMs, () => this.flushUnschedulablePodsLeftover()),
    );
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) t.cancel();
    this.timers = [];
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** A new unscheduled pod. */
  add(pod: Pod): void {
    const now = this.opts.clock.now();
    const pInfo: QueuedPodInfo = {
      podInfo: new PodInfo(pod),
      timestamp: now,
      attempts: 0,
      unschedulablePlugins: new Set(),
      pendingPlugins: new Set(),
    };
    this.updateNominated(pod);
    // A pod is in one sub-queue at a time.
    this.backoffQ.delete(podUID(pod));
    this.unschedulable.delete(podUID(pod));
    this.moveToActiveQ(pInfo);
  }

  update(oldPod: Pod, newPod: Pod): void {
    const uid = podUID(newPod);
    this.updateNominated(newPod);
    for (const q of [this.activeQ, this.backoffQ]) {
      const existing = q.get(uid);
      if (existing) {
        existing.podInfo = new PodInfo(newPod);
        q.addOrUpdate(existing);
        return;
      }
    }
    const pInfo = this.unschedulable.get(uid);
    if (pInfo) {
      if (schedulingRelevant(oldPod) === schedulingRelevant(newPod)) {
        pInfo.podInfo.pod = newPod;
        return;
      }
      pInfo.podInfo = new PodInfo(newPod);
      this.unschedulable.delete(uid);
      if (pInfo.gatingPlugin) this.moveToActiveQ(pInfo);
      else if (this.isBackingOff(pInfo)) this.backoffQ.addOrUpdate(pInfo);
      else this.moveToActiveQ(pInfo);
      return;
    }
    // Being scheduled right now: let a failure of this attempt retry soon.
    if (this.inFlight.has(uid)) this.moveRequestCycle = this.schedulingCycle;
    else this.add(newPod);
  }

  delete(pod: Pod): void {
    const uid = podUID(pod);
    this.activeQ.delete(uid);
    this.backoffQ.delete(uid);
    this.unschedulable.delete(uid);
    this.nominated.delete(uid);
  }

  /** The next pod to schedule; waits while activeQ is empty; undefined once closed. */
  pop(): Promise<QueuedPodInfo | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const p = this.activeQ.pop();
    if (p) return Promise.resolve(this.startAttempt(p));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The pod's attempt is over (scheduled, bound or requeued). */
  done(uid: string): void {
    this.inFlight.delete(uid);
  }

  /** The number of the current scheduling cycle (incremented by each pop). */
  currentSchedulingCycle(): number {
    return this.schedulingCycle;
  }

  /**
   * Puts back a pod whose attempt failed. Pods rejected by plugins wait in the unschedulable pool
   * for a helpful event; pods that failed with an error, or whose attempt overlapped a move request,
   * go to backoffQ. Returns where it went (undefined when it was already queued).
   */
  addUnschedulableIfNotPresent(pInfo: QueuedPodInfo, podSchedulingCycle: number): 'backoff' | 'unschedulable' | undefined {
    const uid = keyOf(pInfo);
    this.inFlight.delete(uid);
    if (this.activeQ.has(uid) || this.backoffQ.has(uid) || this.unschedulable.has(uid)) return undefined;
    pInfo.timestamp = this.opts.clock.now();
    const rejected = pInfo.unschedulablePlugins.size > 0 || pInfo.pendingPlugins.size > 0;
    if (!rejected || this.moveRequestCycle >= podSchedulingCycle) {
      this.backoffQ.addOrUpdate(pInfo);
      return 'backoff';
    }
    this.unschedulable.set(uid, pInfo);
    return 'unschedulable';
  }

  /** Moves the unschedulable pods that the event may help to activeQ (or backoffQ while backing off). */
  moveAllToActiveOrBackoffQueue(event: ClusterEvent, oldObj?: Pod | Node, newObj?: Pod | Node): void {
    if (event.actionType === 0) return;
    for (const [uid, pInfo] of this.unschedulable) {
      if (pInfo.gatingPlugin || !this.podMatchesEvent(pInfo, event, oldObj, newObj)) continue;
      this.unschedulable.delete(uid);
      if (this.isBackingOff(pInfo)) this.backoffQ.addOrUpdate(pInfo);
      else this.moveToActiveQ(pInfo);
    }
    this.moveRequestCycle = this.schedulingCycle;
  }

  /** Moves pods whose backoff ended from backoffQ to activeQ. */
  flushBackoffQCompleted(): void {
    const now = this.opts.clock.now();
    for (let p = this.backoffQ.peek(); p && this.backoffExpiry(p) <= now; p = this.backoffQ.peek()) {
      this.backoffQ.pop();
      this.moveToActiveQ(p);
    }
  }

  /** Retries pods that stayed unschedulable longer than podMaxInUnschedulablePodsDuration. */
  flushUnschedulablePodsLeftover(): void {
    const now = this.opts.clock.now();
    for (const [uid, pInfo] of this.unschedulable) {
      if (pInfo.gatingPlugin || now - pInfo.timestamp < this.maxUnschedulableMs) continue;
      this.unschedulable.delete(uid);
      if (this.isBackingOff(pInfo)) this.backoffQ.addOrUpdate(pInfo);
      else this.moveToActiveQ(pInfo);
    }
  }

  // ---- nominated pods (PodNominator) ----

  nominatedPodsForNode(nodeName: string): readonly PodInfo[] {
    if (this.nominated.size === 0) return [];
    const out: PodInfo[] = [];
    for (const n of this.nominated.values()) if (n.node === nodeName) out.push(n.podInfo);
    return out;
  }

  /** Records (Override) or keeps (Noop) the pod's nominated node, as set by PostFilter. */
  addNominatedPod(podInfo: PodInfo, info: NominatingInfo | undefined): void {
    const uid = podUID(podInfo.pod);
    if (info?.mode === 'Override') {
      if (info.nominatedNodeName) this.nominated.set(uid, { node: info.nominatedNodeName, podInfo });
      else this.nominated.delete(uid);
    }
  }

  deleteNominatedPodIfExists(pod: Pod): void {
    this.nominated.delete(podUID(pod));
  }

  /** Pods in each sub-queue, for tests and debugging. */
  pendingPods(): { active: Pod[]; backoff: Pod[]; unschedulable: Pod[] } {
    const pods = (l: QueuedPodInfo[]) => l.map((p) => p.podInfo.pod);
    return { active: pods(this.activeQ.list()), backoff: pods(this.backoffQ.list()), unschedulable: pods([...this.unschedulable.values()]) };
  }

  // ---- internals ----

  private updateNominated(pod: Pod): void {
    const node = pod.status?.nominatedNodeName;
    if (node && !pod.spec?.nodeName) this.nominated.set(podUID(pod), { node, podInfo: new PodInfo(pod) });
    else this.nominated.delete(podUID(pod));
  }

  private startAttempt(p: QueuedPodInfo): QueuedPodInfo {
    p.attempts++;
    this.schedulingCycle++;
    this.inFlight.add(keyOf(p));
    return p;
  }

  /** Runs PreEnqueue; a rejected pod is parked in the pool until it changes. */
  private moveToActiveQ(pInfo: QueuedPodInfo): void {
    const s = this.opts.preEnqueue(pInfo.podInfo.pod);
    const wasGated = pInfo.gatingPlugin !== undefined;
    if (s) {
      pInfo.gatingPlugin = s.plugin;
      this.unschedulable.set(keyOf(pInfo), pInfo);
      this.opts.onGated?.(pInfo.podInfo.pod, s, !wasGated);
      return;
    }
    pInfo.gatingPlugin = undefined;
    // Upstream's InitialAttemptTimestamp: the SLI excludes the time a pod was gated.
    const first = pInfo.initialAttemptTimestamp === undefined;
    if (first) pInfo.initialAttemptTimestamp = this.opts.clock.now();
    this.opts.onActivated?.(pInfo, first, wasGated);
    const waiter = this.waiters.shift();
    if (waiter) waiter(this.startAttempt(pInfo));
    else this.activeQ.addOrUpdate(pInfo);
  }

  private podMatchesEvent(pInfo: QueuedPodInfo, event: ClusterEvent, oldObj?: Pod | Node, newObj?: Pod | Node): boolean {
    const plugins = [...pInfo.unschedulablePlugins, ...pInfo.pendingPlugins];
    // Failed by an error rather than a plugin's rejection: any event may help.
    if (plugins.length === 0) return true;
    for (const name of plugins) {
      for (const reg of this.opts.eventsToRegister.get(name) ?? []) {
        if (!eventMatches(reg.event, event)) continue;
        if (!reg.queueingHintFn || reg.queueingHintFn(pInfo.podInfo.pod, oldObj, newObj) === QueueingHint.Queue) return true;
      }
    }
    return false;
  }

  /** initialBackoff doubled per attempt after the first, capped at maxBackoff. */
  backoffDuration(pInfo: QueuedPodInfo): number {
    let d = this.initialBackoffMs;
    for (let i = 1; i < pInfo.attempts; i++) {
      if (d > this.maxBackoffMs - d) return this.maxBackoffMs;
      d += d;
    }
    return d;
  }

  private backoffExpiry(pInfo: QueuedPodInfo): number {
    return pInfo.timestamp + this.backoffDuration(pInfo);
  }

  private isBackingOff(pInfo: QueuedPodInfo): boolean {
    return this.backoffExpiry(pInfo) > this.opts.clock.now();
  }
}
