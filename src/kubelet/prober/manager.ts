// The probe manager (upstream's prober_manager.go): a worker for every probe of every regular
// container and sidecar of a pod, the three result caches, and the answers the rest of the kubelet
// asks of them — liveness and startup failures for the runtime planner (ProbeResults), started
// and ready for the status generator (ContainerProbeStatus).
import type { Container, Pod } from '../../api/types.js';
import { isRestartableInitContainer } from '../../api/pod/status.js';
import type { Clock } from '../../util/clock.js';
import type { ProbeResult as PlannerProbeResult, ProbeResults } from '../kuberuntime/planner.js';
import type { ContainerProbeStatus } from '../status/generate.js';
import { probeSpec, type ProbeRunner, type ProbeType } from './prober.js';
import type { Disposable } from '../../util/lifecycle.js';
import { ResultsManager, type ProbeResult } from './results.js';
import type { KubeletTimeline } from '../timeline/timeline.js';
import { ProbeWorker, bareContainerID, type PodStatusProvider, type WorkerContext } from './worker.js';

export interface ProbeManagerConfig {
  statusProvider: PodStatusProvider;
  prober: ProbeRunner;
  clock: Clock;
  /** Jitter of the first probe after a kubelet start; Math.random unless a test pins it. */
  random?: () => number;
  log?: (msg: string, err?: unknown) => void;
  /** Where the probe passes and failures go. */
  timeline?: KubeletTimeline;
}

const PROBE_TYPES: ProbeType[] = ['startup', 'readiness', 'liveness'];

function workerKey(podUID: string, containerName: string, type: ProbeType): string {
  return `${podUID}/${containerName}/${type}`;
}

/** The containers the kubelet probes: regular ones and sidecars (init containers that keep running). */
function probedContainers(pod: Pod): Container[] {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter(isRestartableInitContainer)];
}

export class ProbeManager implements ProbeResults, ContainerProbeStatus {
  readonly livenessResults = new ResultsManager();
  readonly readinessResults = new ResultsManager();
  readonly startupResults = new ResultsManager();
  private readonly workers = new Map<string, ProbeWorker>();
  private readonly startedAt: number;
  private stopped = false;

  constructor(private readonly config: ProbeManagerConfig) {
    this.startedAt = config.clock.now();
  }

  private resultsFor(type: ProbeType): ResultsManager {
    return type === 'liveness' ? this.livenessResults : type === 'readiness' ? this.readinessResults : this.startupResults;
  }

  /** AddPod: starts the workers a pod's probes need; for a pod already probed, only its object is refreshed (deletionTimestamp). */
  addPod(pod: Pod): void {
    if (this.stopped) return;
    const uid = pod.metadata?.uid ?? '';
    for (const c of probedContainers(pod)) {
      for (const type of PROBE_TYPES) {
        if (!probeSpec(c, type)) continue;
        const key = workerKey(uid, c.name, type);
        const existing = this.workers.get(key);
        if (existing) {
          existing.pod = pod;
          continue;
        }
        const ctx: WorkerContext = {
          clock: this.config.clock,
          random: this.config.random ?? Math.random,
          startedAt: this.startedAt,
          statusProvider: this.config.statusProvider,
          prober: this.config.prober,
          results: this.resultsFor(type),
          startupResults: this.startupResults,
          onExit: (w) => {
            if (this.workers.get(key) === w) this.workers.delete(key);
          },
          log: this.config.log ?? (() => {}),
          timeline: this.config.timeline,
        };
        const w = new ProbeWorker(ctx, type, pod, c);
        this.workers.set(key, w);
        w.start();
      }
    }
  }

  /** StopLivenessAndStartup: a terminating pod is not killed for its health any more. */
  stopLivenessAndStartup(pod: Pod): void {
    this.stopWorkers(pod, ['liveness', 'startup']);
  }

  /** RemovePod: stops every worker of the pod and drops their results. */
  removePod(pod: Pod): void {
    this.stopWorkers(pod, PROBE_TYPES);
  }

  /** CleanupPods: stops the workers of every pod not in desiredPods (by UID). */
  cleanupPods(desiredPods: ReadonlySet<string>): void {
    for (const w of [...this.workers.values()]) if (!desiredPods.has(w.podUID)) w.stop();
  }

  stop(): void {
    this.stopped = true;
    for (const w of [...this.workers.values()]) w.stop();
  }

  /**
   * Calls back with a pod's UID whenever a result means its pod must sync now (the kubelet's
   * syncLoopIteration): a liveness failure (to kill the container), and any readiness or startup
   * change (Ready and Started come from these results when the status is generated).
   */
  onSyncNeeded(listener: (podUID: string) => void): Disposable {
    const subs = [
      this.livenessResults.onChange((u) => {
        if (u.result === 'Failure') listener(u.podUID);
      }),
      this.readinessResults.onChange((u) => listener(u.podUID)),
      this.startupResults.onChange((u) => listener(u.podUID)),
    ];
    return { dispose: () => subs.forEach((s) => s.dispose()) };
  }

  workerCount(): number {
    return this.workers.size;
  }

  private stopWorkers(pod: Pod, types: ProbeType[]): void {
    const uid = pod.metadata?.uid ?? '';
    for (const c of probedContainers(pod)) for (const type of types) this.workers.get(workerKey(uid, c.name, type))?.stop();
  }

  // --- what the planner asks (liveness and startup by container ID; Unknown reads as not yet probed) ---

  liveness(containerId: string): PlannerProbeResult | undefined {
    return known(this.livenessResults.get(containerId));
  }

  startup(containerId: string): PlannerProbeResult | undefined {
    return known(this.startupResults.get(containerId));
  }

  // --- what the status generator asks (UpdatePodStatus) ---

  /** Started: the startup probe succeeded (asked only for containers that have one and run). */
  started(containerId: string): boolean {
    return this.startupResults.get(bareContainerID(containerId)) === 'Success';
  }

  /** Ready: the readiness probe succeeded; if not yet, its worker is asked to probe at once. */
  ready(containerId: string, container: Container): boolean {
    const id = bareContainerID(containerId);
    if (this.readinessResults.get(id) === 'Success') return true;
    // The status is being generated right now; the worker reads it once it is stored.
    queueMicrotask(() => this.triggerReadiness(id, container.name));
    return false;
  }

  private triggerReadiness(containerId: string, containerName: string): void {
    for (const w of this.workers.values()) {
      if (w.type !== 'readiness' || w.container.name !== containerName) continue;
      if (w.containerID === containerId || bareContainerID(this.currentContainerID(w)) === containerId) w.trigger();
    }
  }

  private currentContainerID(w: ProbeWorker): string | undefined {
    const status = this.config.statusProvider.getPodStatus(w.podUID);
    return [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])].find((s) => s.name === w.container.name)?.containerID;
  }
}

function known(r: ProbeResult | undefined): PlannerProbeResult | undefined {
  return r === 'Success' || r === 'Failure' ? r : undefined;
}
