// One probe worker per (pod, container, probe type) (upstream's prober/worker.go): every
// periodSeconds it reads the container from the pod's latest status, and probes it once it has
// run initialDelaySeconds and — for liveness and readiness — passed its startup probe. A run of
// successThreshold successes or failureThreshold failures changes the cached result; a liveness
// or startup failure holds the worker until the container is replaced (a new container ID resets
// it to the initial result).
import type { Container, ContainerStatus, Pod, PodStatus, Probe } from '../../api/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { ProbeResult, ResultsManager } from './results.js';
import { probeSpec, probeTypeNames, type ProbeRunner, type ProbeType } from './prober.js';
import { containerType, type KubeletTimeline } from '../timeline/timeline.js';

/** What a worker reads from the status manager: the pod's latest status. */
export interface PodStatusProvider {
  getPodStatus(uid: string): PodStatus | undefined;
}

export interface WorkerContext {
  clock: Clock;
  random: () => number;
  /** When the manager (the kubelet) started: workers born within one period of it start at a random point of the period. */
  startedAt: number;
  statusProvider: PodStatusProvider;
  prober: ProbeRunner;
  results: ResultsManager;
  /** Liveness and readiness wait for this container's startup probe to succeed. */
  startupResults: ResultsManager;
  onExit(worker: ProbeWorker): void;
  log(msg: string, err?: unknown): void;
  timeline?: KubeletTimeline;
}

const initialValues: Record<ProbeType, ProbeResult> = { readiness: 'Failure', liveness: 'Success', startup: 'Unknown' };

/** The runtime's prefix ("containerd://") off a status's containerID: results are keyed by the bare ID. */
export function bareContainerID(id: string | undefined): string {
  return (id ?? '').replace(/^[^:]*:\/\//, '');
}

export class ProbeWorker {
  readonly spec: Probe;
  private readonly periodMs: number;
  /** The last container ID seen; '' until the container shows up in the status. */
  containerID = '';
  private lastResult: ProbeResult = 'Unknown';
  private resultRun = 0;
  private onHold = false;
  private timer?: Timer;
  private probing = false;
  /** A tick or a manual trigger arrived while busy (Go's one-slot channels). */
  private pending = false;
  /** Before the first (possibly jittered) probe a trigger only queues. */
  private waitingFirst = true;
  private stopped = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly ctx: WorkerContext,
    readonly type: ProbeType,
    public pod: Pod,
    readonly container: Container,
  ) {
    this.spec = probeSpec(container, type)!;
    this.periodMs = Math.max(1, this.spec.periodSeconds ?? 10) * 1000;
  }

  get podUID(): string {
    return this.pod.metadata?.uid ?? '';
  }

  start(): void {
    const { clock } = this.ctx;
    // After a kubelet restart every worker starts at once; spread their first probes over a period.
    const delay = this.periodMs > clock.now() - this.ctx.startedAt ? Math.floor(this.ctx.random() * this.periodMs) : 0;
    const first = clock.now() + delay;
    this.timer = clock.setTimer(delay, () => {
      this.waitingFirst = false;
      this.armTicker(first + this.periodMs);
      this.tick();
    });
  }

  /** Stops probing and drops this worker's result; safe to call more than once. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.timer?.cancel();
    this.abort.abort();
    if (this.containerID) this.ctx.results.remove(this.containerID);
    this.ctx.onExit(this);
  }

  /** Probe now instead of at the next tick (the manager asks when a started container is not ready yet). */
  trigger(): void {
    if (this.stopped) return;
    if (this.waitingFirst) this.pending = true;
    else this.tick();
  }

  private armTicker(at: number): void {
    if (this.stopped) return;
    this.timer = this.ctx.clock.setTimer(at - this.ctx.clock.now(), () => {
      this.armTicker(at + this.periodMs);
      this.tick();
    });
  }

  private tick(): void {
    if (this.stopped) return;
    if (this.probing) {
      this.pending = true;
      return;
    }
    void this.run();
  }

  private async run(): Promise<void> {
    this.probing = true;
    let keepGoing = true;
    try {
      keepGoing = await this.doProbe();
    } catch (err) {
      this.ctx.log(`probe worker for ${this.container.name} failed`, err);
    }
    this.probing = false;
    if (this.stopped) return;
    if (!keepGoing) return this.stop();
    if (this.pending) {
      this.pending = false;
      void this.run();
    }
  }

  private setResult(result: ProbeResult): void {
    this.ctx.results.set(this.containerID, result, this.podUID);
  }

  /** One round of upstream's doProbe; false ends the worker. */
  async doProbe(): Promise<boolean> {
    const status = this.ctx.statusProvider.getPodStatus(this.podUID);
    if (!status) return true;
    if (status.phase === 'Failed' || status.phase === 'Succeeded') return false;

    const c = findStatus(status.containerStatuses, this.container.name) ?? findStatus(status.initContainerStatuses, this.container.name);
    if (!c) return true;
    const id = bareContainerID(c.containerID);
    if (id !== this.containerID) {
      if (this.containerID) this.ctx.results.remove(this.containerID);
      this.containerID = id;
      this.setResult(initialValues[this.type]);
      this.onHold = false;
      this.resultRun = 0;
      this.lastResult = 'Unknown';
    }
    if (this.onHold) return true;

    if (!c.state?.running) {
      this.setResult('Failure');
      // Stop when the container will not run again.
      const restarts = this.pod.spec?.restartPolicy !== 'Never' || this.container.restartPolicy === 'Always';
      return !c.state?.terminated || restarts;
    }

    // A pod being deleted is not killed for its health any more.
    if (this.pod.metadata?.deletionTimestamp && (this.type === 'liveness' || this.type === 'startup')) {
      this.setResult('Success');
      return false;
    }

    const startedAt = Date.parse(c.state.running.startedAt ?? '');
    if (Number.isFinite(startedAt) && Math.trunc((this.ctx.clock.now() - startedAt) / 1000) < (this.spec.initialDelaySeconds ?? 0)) return true;

    const started = !this.container.startupProbe || this.ctx.startupResults.get(this.containerID) === 'Success';
    if (started ? this.type === 'startup' : this.type !== 'startup') return true;

    const probed = await this.ctx.prober.probe(this.type, this.pod, status, this.container, this.containerID, this.abort.signal);
    if (this.stopped || probed.error !== undefined) return true;

    const result = probed.result;
    if (this.lastResult === result) this.resultRun++;
    else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    const threshold = result === 'Failure' ? (this.spec.failureThreshold ?? 3) : (this.spec.successThreshold ?? 1);
    this.recordStep(result, threshold, probed.output);
    if (this.resultRun < threshold) return true;

    this.setResult(result);
    if ((this.type === 'liveness' || this.type === 'startup') && result === 'Failure') {
      // The container will be restarted; probing it while it is killed only makes noise.
      this.onHold = true;
      this.resultRun = 0;
    }
    return true;
  }

  /** The timeline's view of one probe: every failure counted in a series, the first pass of startup and readiness. */
  private recordStep(result: ProbeResult, threshold: number, output: string | undefined): void {
    const timeline = this.ctx.timeline;
    if (!timeline) return;
    const step = { container: this.container.name, containerType: containerType(this.pod, this.container.name) };
    if (result === 'Failure') {
      const detail = `${probeTypeNames[this.type]} probe failed ${this.resultRun}/${threshold}${output ? `: ${output}` : ''}`;
      timeline.series(this.pod, 'ProbeFailed', { ...step, detail, attributes: { probe: this.type, failures: this.resultRun, threshold, error: output ?? '' } });
    } else if (this.resultRun === threshold && this.type !== 'liveness') {
      const name = this.type === 'startup' ? 'StartupProbePassed' : 'ReadinessProbePassed';
      timeline.once(this.pod, `${name}/${this.container.name}`, name, step);
    }
  }
}

function findStatus(statuses: ContainerStatus[] | undefined, name: string): ContainerStatus | undefined {
  const s = statuses?.find((x) => x.name === name);
  return s?.containerID ? s : undefined;
}
