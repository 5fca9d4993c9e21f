// CrashLoopBackOff bookkeeping as upstream's flowcontrol.Backoff keyed per pod+container+hash: the
// first restart is immediate, then each restart waits initial, 2×, 4× … up to the cap, measured
// from the moment the container last finished. A container that ran longer than the reset period
// since its last restart starts over at the initial delay.
import type { Container, Pod } from '../../api/types.js';
import { hashContainer } from './labels.js';

export interface BackOffConfig {
  initialMs: number;
  maxMs: number;
  /** Upstream: twice the cap (10 minutes). */
  resetMs: number;
}

interface Entry {
  backoffMs: number;
  lastUpdate: number;
}

/** Read-only view the planner needs. */
export interface BackOffView {
  /** Whether a container that finished at `finishedAt` must still wait at `now`. */
  isInBackOffSince(key: string, finishedAt: number, now: number): boolean;
  /** The current delay for the key (0 when none). */
  get(key: string): number;
}

export class ContainerBackOff implements BackOffView {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly cfg: BackOffConfig) {}

  private expired(eventTime: number, e: Entry): boolean {
    return eventTime - e.lastUpdate > this.cfg.resetMs;
  }

  isInBackOffSince(key: string, finishedAt: number, now: number): boolean {
    const e = this.entries.get(key);
    if (!e || this.expired(finishedAt, e)) return false;
    return now - finishedAt < e.backoffMs;
  }

  get(key: string): number {
    return this.entries.get(key)?.backoffMs ?? 0;
  }

  /** Records a restart at `now` of a container that finished at `finishedAt`. */
  next(key: string, finishedAt: number, now: number): void {
    const e = this.entries.get(key);
    if (!e || this.expired(finishedAt, e)) this.entries.set(key, { backoffMs: this.cfg.initialMs, lastUpdate: now });
    else this.entries.set(key, { backoffMs: Math.min(e.backoffMs * 2, this.cfg.maxMs), lastUpdate: now });
  }

  /** Forgets every key of a pod (the pod is gone). */
  forgetPod(podUID: string): void {
    for (const k of this.entries.keys()) if (k.includes(`_${podUID}_`)) this.entries.delete(k);
  }

  /** Drops entries idle longer than the reset period (upstream's GC). */
  gc(now: number): void {
    for (const [k, e] of this.entries) if (now - e.lastUpdate > this.cfg.resetMs) this.entries.delete(k);
  }
}

/** getStableKey: name_namespace_uid_container_hash. */
export function backOffKey(pod: Pod, container: Container): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}_${pod.metadata?.uid ?? ''}_${container.name}_${hashContainer(container)}`;
}

/** format.Pod: name_namespace(uid). */
export function formatPod(pod: Pod): string {
  return `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;
}
