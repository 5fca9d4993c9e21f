// Pod workers (upstream pkg/kubelet/pod_workers.go): one serial worker per pod UID, driven by an
// explicit state machine — syncing → terminating → terminated — and fed by updates that supersede
// each other while one is queued. Work arrives from the API (create/update/kill), from the runtime
// (PLEG pokes), from back-off expiries and from a periodic resync; whatever arrives while a sync
// runs is coalesced into the next one.
import type { Pod, PodStatus } from '../../api/types.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import type { Clock, Timer } from '../../util/clock.js';

export type UpdateType = 'create' | 'update' | 'sync' | 'kill';
export type WorkerState = 'syncing' | 'terminating' | 'terminated';

export interface PodUpdate {
  type: UpdateType;
  pod: Pod;
  /** For 'kill': a grace period shorter than the pod's own. */
  gracePeriodSeconds?: number;
  /** For 'kill': how the kubelet's terminating status differs (node shutdown, eviction: Failed with a reason). */
  podStatusFn?: PodStatusFn;
  /** For 'kill': called once the pod's containers are stopped (at once if they already are). */
  completed?: () => void;
}

export type PodStatusFn = (status: PodStatus) => PodStatus;

export interface SyncPodResult {
  /** The pod reached a terminal phase: terminate it. */
  isTerminal: boolean;
  /** Sync again at this time (a back-off ends). */
  resyncAt?: number;
  /** Something failed: retry after the error back-off. */
  failed?: boolean;
}

/** What a worker runs in each state (the kubelet's SyncPod, SyncTerminatingPod, SyncTerminatedPod). */
export interface PodSyncer {
  /** `signal` aborts when the pod is to be terminated meanwhile (upstream cancels the sync's context). */
  syncPod(pod: Pod, signal: AbortSignal): Promise<SyncPodResult>;
  /** `signal` aborts when a shorter grace period arrives: termination then starts again with it. */
  syncTerminatingPod(pod: Pod, gracePeriodSeconds: number, signal: AbortSignal, podStatusFn?: PodStatusFn): Promise<void>;
  syncTerminatedPod(pod: Pod): Promise<void>;
}

export interface PodWorkersConfig {
  syncer: PodSyncer;
  clock: Clock;
  /** Backstop resync of a healthy pod (upstream resyncInterval, 1 minute). */
  resyncIntervalMs?: number;
  /** Retry after a failed sync (upstream workerBackOffPeriod, 10 s). */
  backOffPeriodMs?: number;
  log?: (msg: string, err?: unknown) => void;
}

interface Worker {
  uid: string;
  state: WorkerState;
  pod: Pod;
  /** A sync is wanted (the latest pod is in `pod`). */
  pending: boolean;
  running: boolean;
  gracePeriodSeconds?: number;
  /** syncTerminatedPod has run for a pod the API server is deleting. */
  finished: boolean;
  /** Aborts the syncPod under way, so a deletion does not wait for it (e.g. a long postStart hook). */
  syncAbort?: AbortController;
  /** Aborts the syncTerminatingPod under way when a shorter grace period arrives. */
  terminateAbort?: AbortController;
  podStatusFn?: PodStatusFn;
  /** Waiting for the pod to be terminated. */
  completed: (() => void)[];
  timer?: Timer;
  timerAt?: number;
}

/** The grace period for terminating: the deletion's, else the spec's, else 30 s. */
function gracePeriodOf(pod: Pod): number {
  return pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

export class PodWorkers {
  private readonly workers = new Map<string, Worker>();
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;
  private readonly resyncIntervalMs: number;
  private readonly backOffPeriodMs: number;

  constructor(private readonly config: PodWorkersConfig) {
    this.resyncIntervalMs = config.resyncIntervalMs ?? 60_000;
    this.backOffPeriodMs = config.backOffPeriodMs ?? 10_000;
  }

  /** Delivers a pod update; a newer one replaces any not yet started. */
  updatePod(update: PodUpdate): void {
    if (this.stopped) return update.completed?.();
    const uid = update.pod.metadata?.uid ?? '';
    let w = this.workers.get(uid);
    if (!w) {
      if (update.type === 'sync' && !update.pod.spec) return;
      w = { uid, state: 'syncing', pod: update.pod, pending: false, running: false, finished: false, completed: [] };
      this.workers.set(uid, w);
    }
    w.pod = update.pod;
    if (update.type === 'kill') {
      w.podStatusFn = update.podStatusFn ?? w.podStatusFn;
      if (update.completed) w.completed.push(update.completed);
    }
    if (w.state === 'syncing' && (update.type === 'kill' || update.pod.metadata?.deletionTimestamp || isPodPhaseTerminal(update.pod.status?.phase))) {
      w.state = 'terminating';
      w.syncAbort?.abort();
    }
    if (w.state === 'terminating') {
      const grace = Math.min(update.gracePeriodSeconds ?? gracePeriodOf(update.pod), w.gracePeriodSeconds ?? Infinity);
      // As upstream, a shorter grace period cancels the kill under way (kubectl delete --grace-period=1 during a 30 s one).
      if (w.gracePeriodSeconds !== undefined && grace < w.gracePeriodSeconds) w.terminateAbort?.abort();
      w.gracePeriodSeconds = grace;
    }
    if (w.state === 'terminated') this.complete(w);
    // A terminated pod is touched again only to clean it up once the API server deletes it.
    if (w.state === 'terminated' && (w.finished || !update.pod.metadata?.deletionTimestamp)) return;
    this.kick(w);
  }

  /** The runtime saw something change for this pod: sync it now. */
  poke(uid: string): void {
    const w = this.workers.get(uid);
    if (w && w.state !== 'terminated') this.kick(w);
  }

  /** The pod is gone from the API server and terminated here: drop its worker. */
  forgetPod(uid: string): void {
    const w = this.workers.get(uid);
    if (!w || w.running || w.state !== 'terminated') return;
    w.timer?.cancel();
    this.workers.delete(uid);
  }

  state(uid: string): WorkerState | undefined {
    return this.workers.get(uid)?.state;
  }

  /** UIDs of pods with a worker, in any state. */
  knownPods(): string[] {
    return [...this.workers.keys()];
  }

  /** ShouldPodContentBeRemoved (container GC): deleted and terminated, or never seen (the caller knows the API is synced). */
  shouldPodContentBeRemoved(uid: string): boolean {
    const w = this.workers.get(uid);
    return !w || (w.state === 'terminated' && !!w.pod.metadata?.deletionTimestamp);
  }

  /** ShouldPodRuntimeBeRemoved: terminated, or never seen. */
  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const w = this.workers.get(uid);
    return !w || w.state === 'terminated';
  }

  /** Pods whose containers may be running (syncing or terminating): what admission counts. */
  activePods(): Pod[] {
    return [...this.workers.values()].filter((w) => w.state !== 'terminated').map((w) => w.pod);
  }

  start(): void {
    this.stopped = false;
  }

  /** Cancels every timer and waits for syncs under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.workers.values()) w.timer?.cancel();
    await this.idle();
    for (const w of this.workers.values()) this.complete(w);
  }

  /** Resolves once no worker is running (for tests). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }

  private complete(w: Worker): void {
    for (const done of w.completed.splice(0)) done();
  }

  private kick(w: Worker): void {
    w.pending = true;
    if (w.running || this.stopped) return;
    w.running = true;
    const p = this.run(w).finally(() => {
      w.running = false;
      this.inflight.delete(p);
      if (w.pending && !this.stopped) this.kick(w);
    });
    this.inflight.add(p);
  }

  private schedule(w: Worker, at: number): void {
    if (this.stopped) return;
    if (w.timer && w.timerAt !== undefined && w.timerAt <= at) return;
    w.timer?.cancel();
    w.timerAt = at;
    w.timer = this.config.clock.setTimer(Math.max(0, at - this.config.clock.now()), () => {
      w.timer = undefined;
      w.timerAt = undefined;
      if (w.state !== 'terminated' || !w.finished) this.kick(w);
    });
  }

  private async run(w: Worker): Promise<void> {
    while (w.pending && !this.stopped) {
      w.pending = false;
      w.timer?.cancel();
      w.timer = undefined;
      w.timerAt = undefined;
      const pod = w.pod;
      try {
        switch (w.state) {
          case 'syncing': {
            w.syncAbort = new AbortController();
            const r = await this.config.syncer.syncPod(pod, w.syncAbort.signal).finally(() => (w.syncAbort = undefined));
            // Terminating was asked for while it ran: that comes first.
            if (w.state !== 'syncing') {
              w.pending = true;
              break;
            }
            if (r.isTerminal) {
              w.state = 'terminating';
              w.gracePeriodSeconds ??= gracePeriodOf(w.pod);
              w.pending = true;
              break;
            }
            const now = this.config.clock.now();
            this.schedule(w, r.failed ? now + this.backOffPeriodMs : now + this.resyncIntervalMs);
            if (r.resyncAt !== undefined) this.schedule(w, r.resyncAt);
            break;
          }
          case 'terminating': {
            w.terminateAbort = new AbortController();
            const { signal } = w.terminateAbort;
            await this.config.syncer
              .syncTerminatingPod(pod, w.gracePeriodSeconds ?? gracePeriodOf(pod), signal, w.podStatusFn)
              .catch((err: unknown) => {
                if (!signal.aborted) throw err;
              })
              .finally(() => (w.terminateAbort = undefined));
            // Cancelled for a shorter grace period: terminate again with it.
            if (!signal.aborted) {
              w.state = 'terminated';
              this.complete(w);
            }
            w.pending = true;
            break;
          }
          case 'terminated':
            await this.config.syncer.syncTerminatedPod(w.pod);
            if (w.pod.metadata?.deletionTimestamp) w.finished = true;
            break;
        }
      } catch (err) {
        this.config.log?.(`sync of pod ${pod.metadata?.namespace}/${pod.metadata?.name} failed`, err);
        this.schedule(w, this.config.clock.now() + this.backOffPeriodMs);
      }
    }
  }
}
