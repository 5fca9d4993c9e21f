// Probe results by container ID (upstream's prober/results): one cache per probe type. The pod
// workers read liveness and startup results to kill containers, the status side reads readiness
// and startup results; every change is announced so the kubelet can sync the pod at once.
import type { Disposable } from '../../util/lifecycle.js';

export type ProbeResult = 'Success' | 'Failure' | 'Unknown';

export interface ResultUpdate {
  containerID: string;
  result: ProbeResult;
  podUID: string;
}

export class ResultsManager {
  private readonly cache = new Map<string, ProbeResult>();
  private readonly listeners = new Set<(update: ResultUpdate) => void>();

  get(containerID: string): ProbeResult | undefined {
    return this.cache.get(containerID);
  }

  /** Stores the result; listeners hear of it only when it differs from the cached one. */
  set(containerID: string, result: ProbeResult, podUID: string): void {
    if (this.cache.get(containerID) === result) return;
    this.cache.set(containerID, result);
    for (const l of [...this.listeners]) l({ containerID, result, podUID });
  }

  remove(containerID: string): void {
    this.cache.delete(containerID);
  }

  onChange(listener: (update: ResultUpdate) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }
}
