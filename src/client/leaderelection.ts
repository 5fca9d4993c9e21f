// Leader election on coordination.k8s.io/v1 Leases, as client-go's tools/leaderelection: candidates
// poll the lease every retryPeriod; the holder renews it and steps down when it cannot renew within
// renewDeadline; others take over once leaseDuration has passed since they last saw it change.
// Expiry is judged on the local clock from when the record was last observed to change, so clock
// skew between candidates does not matter. Writes are compare-and-swap on resourceVersion.
import { microTime } from '../api/time.js';
import type { Lease, LeaseSpec } from 'kubernetes-types/coordination/v1.js';
import { hasStatusCode } from '../api/errors.js';
import { realClock, type Clock } from '../util/clock.js';

export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** Milliseconds since the epoch. */
  acquireTime: number;
  renewTime: number;
  leaderTransitions: number;
}

/** Where the record lives (client-go's resourcelock.Interface). get() throws a 404 StatusError when there is none. */
export interface ResourceLock {
  readonly identity: string;
  get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; raw: string }>;
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  describe(): string;
}

/** The slice of a namespaced ResourceClient<Lease> the lock needs. */
export interface LeaseClient {
  get(name: string, opts?: object, signal?: AbortSignal): Promise<Lease>;
  create(lease: Lease, opts?: { signal?: AbortSignal }): Promise<Lease>;
  update(lease: Lease, opts?: { signal?: AbortSignal }): Promise<Lease>;
}

/** MicroTime as the API serializes it: RFC 3339 with microseconds. */
const parseTime = (s: string | undefined) => (s ? Date.parse(s) : 0);

function recordFromSpec(spec: LeaseSpec): LeaderElectionRecord {
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: parseTime(spec.acquireTime),
    renewTime: parseTime(spec.renewTime),
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

function specFromRecord(r: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: microTime(r.acquireTime),
    renewTime: microTime(r.renewTime),
    leaseTransitions: r.leaderTransitions,
  };
}

export class LeaseLock implements ResourceLock {
  // The last lease read or written: its resourceVersion makes the next update a compare-and-swap.
  private lease?: Lease;

  constructor(
    private readonly client: LeaseClient,
    private readonly namespace: string,
    private readonly name: string,
    readonly identity: string,
  ) {}

  async get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; raw: string }> {
    this.lease = await this.client.get(this.name, {}, signal);
    const record = recordFromSpec(this.lease.spec ?? {});
    return { record, raw: JSON.stringify(record) };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.lease = await this.client.create(
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.name, namespace: this.namespace }, spec: specFromRecord(record) },
      { signal },
    );
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    if (!this.lease) throw new Error('lease not initialized, call get or create first');
    this.lease = await this.client.update({ ...this.lease, spec: specFromRecord(record) }, { signal });
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }
}

export interface LeaderCallbacks {
  /** Runs while leading; the signal aborts when leadership is lost or the election is cancelled. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Always called when run() ends, leader or not. */
  onStoppedLeading(): void;
  /** A different holder was observed (including this candidate). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectionConfig {
  lock: ResourceLock;
  callbacks: LeaderCallbacks;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the lease up (holder '' and a 1 s duration) when run()'s signal aborts, so a successor need not wait. */
  releaseOnCancel?: boolean;
  clock?: Clock;
  /** Source of jitter for retries, in [0, 1). */
  random?: () => number;
  /** Failed lock reads and writes (expected while another candidate leads or the server is away). */
  onError?: (err: unknown) => void;
}

export const defaultLeaseDurationMs = 15_000;
export const defaultRenewDeadlineMs = 10_000;
export const defaultRetryPeriodMs = 2_000;
const jitterFactor = 1.2;

export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private observedRecord?: LeaderElectionRecord;
  private observedRaw = '';
  private observedTime = 0;
  private reportedLeader = '';

  constructor(private readonly config: LeaderElectionConfig) {
    this.leaseDurationMs = config.leaseDurationMs ?? defaultLeaseDurationMs;
    this.renewDeadlineMs = config.renewDeadlineMs ?? defaultRenewDeadlineMs;
    this.retryPeriodMs = config.retryPeriodMs ?? defaultRetryPeriodMs;
    this.clock = config.clock ?? realClock;
    this.random = config.random ?? Math.random;
    if (this.leaseDurationMs <= this.renewDeadlineMs) throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadlineMs <= jitterFactor * this.retryPeriodMs) throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (this.leaseDurationMs < 1) throw new Error('leaseDuration must be greater than zero');
    if (this.renewDeadlineMs < 1) throw new Error('renewDeadline must be greater than zero');
    if (this.retryPeriodMs < 1) throw new Error('retryPeriod must be greater than zero');
    if (!config.lock.identity) throw new Error('Lock identity is empty');
  }

  isLeader(): boolean {
    return this.observedRecord?.holderIdentity === this.config.lock.identity;
  }

  /** The last observed holder ('' before any observation). */
  getLeader(): string {
    return this.observedRecord?.holderIdentity ?? '';
  }

  /** Campaigns until leading, leads until the lease is lost or the signal aborts, then returns. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      if (!(await this.acquire(signal))) return;
      const leading = new AbortController();
      const stop = () => leading.abort();
      signal.addEventListener('abort', stop, { once: true });
      // The leader's work runs beside the renew loop, as upstream's goroutine.
      void Promise.resolve()
        .then(() => this.config.callbacks.onStartedLeading(leading.signal))
        .catch((err: unknown) => this.config.onError?.(err));
      await this.renew(leading.signal);
      signal.removeEventListener('abort', stop);
      leading.abort();
      if (this.config.releaseOnCancel && signal.aborted) await this.release();
    } finally {
      this.config.callbacks.onStoppedLeading();
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      const ok = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (ok) return true;
      if (!(await this.sleep(this.retryPeriodMs * (1 + this.random() * jitterFactor), signal))) return false;
    }
    return false;
  }

  /** Renews every retryPeriod; a renewal that keeps failing for renewDeadline ends leadership. */
  private async renew(leading: AbortSignal): Promise<void> {
    while (!leading.aborted) {
      const deadline = this.clock.now() + this.renewDeadlineMs;
      let renewed: boolean;
      for (;;) {
        renewed = await this.tryAcquireOrRenew(leading, deadline);
        if (renewed || this.clock.now() + this.retryPeriodMs >= deadline) break;
        if (!(await this.sleep(this.retryPeriodMs, leading))) return;
      }
      this.maybeReportTransition();
      if (!renewed) return;
      if (!(await this.sleep(this.retryPeriodMs, leading))) return;
    }
  }

  /** Gives the lease up if held: an empty holder lets any candidate take it at once. */
  private async release(): Promise<void> {
    if (!this.isLeader() || !this.observedRecord) return;
    const now = this.clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaderTransitions: this.observedRecord.leaderTransitions,
    };
    const call = this.deadline(undefined, now + this.renewDeadlineMs);
    try {
      await this.config.lock.update(record, call.signal);
      this.setObserved(record);
    } catch (err) {
      this.config.onError?.(err);
    } finally {
      call.cancel();
    }
  }

  private async tryAcquireOrRenew(parent: AbortSignal, deadline = this.clock.now() + this.renewDeadlineMs): Promise<boolean> {
    const call = this.deadline(parent, deadline);
    try {
      return await this.attempt(call.signal);
    } catch (err) {
      this.config.onError?.(err);
      return false;
    } finally {
      call.cancel();
    }
  }

  private async attempt(signal: AbortSignal): Promise<boolean> {
    const { lock } = this.config;
    const now = this.clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: lock.identity,
      leaseDurationSeconds: Math.floor(this.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaderTransitions: 0,
    };

    // 1. The leader updates optimistically, trusting the record it wrote last.
    if (this.isLeader() && this.isLeaseValid(now)) {
      record.acquireTime = this.observedRecord!.acquireTime;
      record.leaderTransitions = this.observedRecord!.leaderTransitions;
      try {
        await lock.update(record, signal);
        this.setObserved(record);
        return true;
      } catch (err) {
        this.config.onError?.(err);
      }
    }

    // 2. Read the record, creating it if there is none.
    let current: { record: LeaderElectionRecord; raw: string };
    try {
      current = await lock.get(signal);
    } catch (err) {
      if (!hasStatusCode(err, 404)) throw err;
      await lock.create(record, signal);
      this.setObserved(record);
      return true;
    }

    // 3. Note when the record last changed; keep off a lease another holder still has.
    if (this.observedRaw !== current.raw) {
      this.setObserved(current.record);
      this.observedRaw = current.raw;
    }
    if (current.record.holderIdentity && this.isLeaseValid(now) && !this.isLeader()) return false;

    // 4. Take or renew it.
    if (this.isLeader()) {
      record.acquireTime = current.record.acquireTime;
      record.leaderTransitions = current.record.leaderTransitions;
    } else {
      record.leaderTransitions = current.record.leaderTransitions + 1;
    }
    await lock.update(record, signal);
    this.setObserved(record);
    return true;
  }

  private isLeaseValid(now: number): boolean {
    return this.observedTime + (this.observedRecord?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  private setObserved(record: LeaderElectionRecord): void {
    this.observedRecord = record;
    this.observedTime = this.clock.now();
  }

  private maybeReportTransition(): void {
    const holder = this.getLeader();
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    try {
      this.config.callbacks.onNewLeader?.(holder);
    } catch (err) {
      this.config.onError?.(err);
    }
  }

  /** Resolves false instead of rejecting when the signal aborts. */
  private async sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** A signal for one round of lock calls: aborts with the parent or at the deadline. */
  private deadline(parent: AbortSignal | undefined, at: number): { signal: AbortSignal; cancel: () => void } {
    const ac = new AbortController();
    const onAbort = () => ac.abort(parent!.reason);
    parent?.addEventListener('abort', onAbort, { once: true });
    const timer = this.clock.setTimer(at - this.clock.now(), () => ac.abort(new Error('renew deadline exceeded')));
    return {
      signal: ac.signal,
      cancel: () => {
        timer.cancel();
        parent?.removeEventListener('abort', onAbort);
      },
    };
  }
}
