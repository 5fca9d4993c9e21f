// The status manager (upstream pkg/kubelet/status): the only writer of pod.status. It keeps the
// latest generated status per pod UID and writes it with a strategic merge patch on pods/status
// when it differs from what was last written, one write at a time per pod, retrying failures with
// back-off. A terminal phase never goes back. Once a pod the API server is deleting has terminated
// on this node, it deletes the pod with grace 0 and a UID precondition (the last word on deletion).
import { hasStatusCode } from '../../api/errors.js';
import type { Pod, PodStatus } from '../../api/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Client } from '../../client/client.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';

/** The two calls the status manager makes. */
export interface PodStatusClient {
  /** A strategic merge patch to pods/{name}/status; resolves with the updated pod. */
  patchPodStatus(namespace: string, name: string, patch: unknown): Promise<Pod>;
  /** DELETE with gracePeriodSeconds 0 and a UID precondition. */
  deletePod(namespace: string, name: string, uid: string): Promise<void>;
}

/** The real client behind PodStatusClient. */
export function podStatusClient(client: Client): PodStatusClient {
  const pods = (ns: string) => client.resource('pods').namespace(ns);
  return {
    patchPodStatus: (ns, name, patch) => pods(ns).patch(name, 'strategic', patch, { subresource: 'status' }),
    deletePod: async (ns, name, uid) => {
      await pods(ns).delete(name, { gracePeriodSeconds: 0, preconditions: { uid } });
    },
  };
}

export interface StatusManagerConfig {
  client: PodStatusClient;
  clock: Clock;
  /** Failed writes retry after this, doubling up to retryMaxMs. */
  retryInitialMs?: number;
  retryMaxMs?: number;
  log?: (msg: string, err?: unknown) => void;
  /** Told of each status the API server accepted (the timeline's Ready and StatusFinal). */
  onWritten?: (pod: Pod, status: PodStatus) => void;
}

interface Entry {
  pod: Pod;
  /** What the kubelet wants the API to show. */
  status: PodStatus;
  /** What the API server last accepted from us (or showed us). */
  written?: PodStatus;
  terminated: boolean;
  deleted: boolean;
  writing: boolean;
  retryMs: number;
  timer?: Timer;
}

/**
 * The patch that turns `old` into `status`: changed fields set, dropped fields null. conditions,
 * podIPs and hostIPs merge by key on the server, so every condition is sent whole; the container
 * status lists have no merge key and are replaced.
 */
export function statusPatch(uid: string, old: PodStatus | undefined, status: PodStatus): unknown {
  const diff: Record<string, unknown> = {};
  const o = (old ?? {}) as Record<string, unknown>;
  const n = status as Record<string, unknown>;
  for (const k of new Set([...Object.keys(o), ...Object.keys(n)])) {
    if (n[k] === undefined) {
      if (o[k] !== undefined) diff[k] = null;
    } else if (JSON.stringify(o[k]) !== JSON.stringify(n[k])) diff[k] = n[k];
  }
  if (diff.conditions) {
    // Conditions merge by type on the server: a field a condition no longer has (a reason once it is
    // True) is sent as null, or the server would keep the old one.
    diff.conditions = (status.conditions ?? []).map((c) => {
      const before = old?.conditions?.find((b) => b.type === c.type) as unknown as Record<string, unknown> | undefined;
      const cleared = Object.keys(before ?? {}).filter((k) => (c as unknown as Record<string, unknown>)[k] === undefined);
      return { ...c, ...Object.fromEntries(cleared.map((k) => [k, null])) };
    });
    diff['$setElementOrder/conditions'] = (status.conditions ?? []).map((c) => ({ type: c.type }));
  }
  // podIPs and hostIPs merge by ip: an address the pod no longer has (a new sandbox) must be deleted.
  for (const key of ['podIPs', 'hostIPs'] as const) {
    if (!Array.isArray(diff[key])) continue;
    const now = status[key] ?? [];
    const gone = (old?.[key] ?? []).filter((a) => !now.some((b) => b.ip === a.ip));
    diff[key] = [...now, ...gone.map((a) => ({ ip: a.ip, $patch: 'delete' }))];
    diff[`$setElementOrder/${key}`] = now.map((a) => ({ ip: a.ip }));
  }
  return { metadata: { uid }, status: diff };
}

export class StatusManager {
  private readonly entries = new Map<string, Entry>();
  private readonly retryInitialMs: number;
  private readonly retryMaxMs: number;
  private stopped = false;
  private readonly inflight = new Set<Promise<void>>();

  constructor(private readonly config: StatusManagerConfig) {
    this.retryInitialMs = config.retryInitialMs ?? 500;
    this.retryMaxMs = config.retryMaxMs ?? 30_000;
  }

  /** The status last set for a pod (what the kubelet believes), if any. */
  getPodStatus(uid: string): PodStatus | undefined {
    return this.entries.get(uid)?.status;
  }

  /** Records the kubelet's status for a pod and writes it if it changed. */
  setPodStatus(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata?.uid ?? '';
    let e = this.entries.get(uid);
    if (!e) {
      e = { pod, status, written: pod.status, terminated: false, deleted: false, writing: false, retryMs: this.retryInitialMs };
      this.entries.set(uid, e);
    }
    // A terminal phase is final, whoever asks otherwise.
    for (const terminal of [e.status, pod.status]) {
      if (isPodPhaseTerminal(terminal?.phase) && status.phase !== terminal?.phase) {
        status = { ...status, phase: terminal?.phase, reason: status.reason ?? terminal?.reason, message: status.message ?? terminal?.message };
      }
    }
    e.pod = pod;
    e.status = status;
    this.sync(e);
  }

  /** The pod's metadata changed (e.g. deletionTimestamp set): re-check whether it can be deleted. */
  updatePod(pod: Pod): void {
    const e = this.entries.get(pod.metadata?.uid ?? '');
    if (!e) return;
    e.pod = pod;
    this.sync(e);
  }

  /** The pod worker is done with the pod: once it is being deleted, delete it for good. */
  podTerminated(pod: Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const e = this.entries.get(uid) ?? { pod, status: pod.status ?? {}, written: pod.status, terminated: false, deleted: false, writing: false, retryMs: this.retryInitialMs };
    this.entries.set(uid, e);
    e.pod = pod;
    e.terminated = true;
    this.sync(e);
  }

  /** The pod is gone from the API: forget it. */
  removePod(uid: string): void {
    this.entries.get(uid)?.timer?.cancel();
    this.entries.delete(uid);
  }

  start(): void {
    this.stopped = false;
  }

  /** Cancels retries and waits for writes under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const e of this.entries.values()) e.timer?.cancel();
    await Promise.all([...this.inflight]);
  }

  /** Resolves once no write is under way (for tests). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }

  private sync(e: Entry): void {
    if (this.stopped || e.writing || e.timer || e.deleted) return;
    const needsWrite = JSON.stringify(e.status) !== JSON.stringify(e.written);
    const canDelete = e.terminated && Boolean(e.pod.metadata?.deletionTimestamp) && !needsWrite;
    if (!needsWrite && !canDelete) return;
    e.writing = true;
    const p = (needsWrite ? this.write(e) : this.delete(e)).finally(() => {
      e.writing = false;
      this.inflight.delete(p);
      if (this.entries.get(e.pod.metadata?.uid ?? '') === e) this.sync(e);
    });
    this.inflight.add(p);
  }

  private async write(e: Entry): Promise<void> {
    const { namespace = '', name = '', uid = '' } = e.pod.metadata ?? {};
    const status = e.status;
    try {
      const updated = await this.config.client.patchPodStatus(namespace, name, statusPatch(uid, e.written, status));
      e.written = status;
      e.retryMs = this.retryInitialMs;
      this.config.onWritten?.(e.pod, status);
      if (updated?.metadata) e.pod = { ...e.pod, metadata: { ...e.pod.metadata, ...updated.metadata } };
    } catch (err) {
      // Gone, or replaced by a pod of the same name (UID precondition): nothing left to write to.
      if (hasStatusCode(err, 404) || (hasStatusCode(err, 409) && /uid|UID/.test(err.message))) {
        e.deleted = true;
        return;
      }
      this.config.log?.(`status update of pod ${namespace}/${name} failed`, err);
      this.retryLater(e);
    }
  }

  private async delete(e: Entry): Promise<void> {
    const { namespace = '', name = '', uid = '' } = e.pod.metadata ?? {};
    try {
      await this.config.client.deletePod(namespace, name, uid);
      e.deleted = true;
    } catch (err) {
      if (hasStatusCode(err, 404, 409)) {
        e.deleted = true;
        return;
      }
      this.config.log?.(`deleting pod ${namespace}/${name} failed`, err);
      this.retryLater(e);
    }
  }

  private retryLater(e: Entry): void {
    const delay = e.retryMs;
    e.retryMs = Math.min(e.retryMs * 2, this.retryMaxMs);
    e.timer = this.config.clock.setTimer(delay, () => {
      e.timer = undefined;
      this.sync(e);
    });
  }
}
