// Runs one probe of a container and reports it (upstream's prober.probe): up to three attempts
// while the action errors, then Unhealthy (or ProbeWarning) events in upstream's words. The
// result is Success or Failure; an error means the probe could not run and the worker discards it.
import type { Container, Pod, PodStatus, Probe } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { CONTAINER_PROBE_WARNING, CONTAINER_UNHEALTHY } from '../events.js';
import { type EventRecorder } from '../../client/record/recorder.js';
import { containerRef } from '../../api/pod/reference.js';
import { formatPod } from '../kuberuntime/backoff.js';
import { execProbe, expandCommandOnlyStatic, type CommandRunner } from './exec.js';
import { grpcProbe } from './grpc.js';
import { httpProbe, probeRequest } from './http.js';
import { ProbeError, resolveContainerPort, type ProbeOutcome } from './probe.js';
import { tcpProbe } from './tcp.js';

export type ProbeType = 'liveness' | 'readiness' | 'startup';

/** How upstream's probeType prints ("Liveness probe failed: ..."). */
export const probeTypeNames: Record<ProbeType, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };

export function probeSpec(container: Container, type: ProbeType): Probe | undefined {
  return type === 'liveness' ? container.livenessProbe : type === 'readiness' ? container.readinessProbe : container.startupProbe;
}

export interface ProbeRunResult {
  result: 'Success' | 'Failure';
  /** Set when the probe errored: the worker throws the result away. */
  error?: string;
  /** What a failed probe said (the Unhealthy event's text after "probe failed: "). */
  output?: string;
}

/** What the worker calls; the Prober below, or a script in tests. */
export interface ProbeRunner {
  probe(type: ProbeType, pod: Pod, status: PodStatus, container: Container, containerID: string, signal?: AbortSignal): Promise<ProbeRunResult>;
}

export interface ProberConfig {
  runner: CommandRunner;
  recorder: EventRecorder;
  clock: Clock;
}

const MAX_PROBE_RETRIES = 3;

export class Prober implements ProbeRunner {
  constructor(private readonly config: ProberConfig) {}

  async probe(type: ProbeType, pod: Pod, status: PodStatus, container: Container, containerID: string, signal?: AbortSignal): Promise<ProbeRunResult> {
    const spec = probeSpec(container, type);
    if (!spec) return { result: 'Success' };
    let outcome: ProbeOutcome = { result: 'unknown', output: '' };
    for (let i = 0; i < MAX_PROBE_RETRIES; i++) {
      outcome = await this.runProbe(spec, pod, status, container, containerID, signal);
      if (outcome.error === undefined) break;
    }
    // A probe cut short by the worker stopping says nothing about the container.
    if (signal?.aborted) return { result: 'Failure', error: 'probe canceled' };
    const ref = containerRef(pod, container);
    const name = probeTypeNames[type];
    if (outcome.error !== undefined) {
      this.config.recorder.event(ref, 'Warning', CONTAINER_UNHEALTHY, `${name} probe errored and resulted in ${outcome.result} state: ${outcome.error}`);
      return { result: 'Failure', error: outcome.error };
    }
    switch (outcome.result) {
      case 'success':
        return { result: 'Success' };
      case 'warning':
        this.config.recorder.event(ref, 'Warning', CONTAINER_PROBE_WARNING, `${name} probe warning: ${outcome.output}`);
        return { result: 'Success' };
      case 'failure':
        this.config.recorder.event(ref, 'Warning', CONTAINER_UNHEALTHY, `${name} probe failed: ${outcome.output}`);
        return { result: 'Failure', output: outcome.output };
      default:
        return { result: 'Failure' };
    }
  }

  private async runProbe(spec: Probe, pod: Pod, status: PodStatus, container: Container, containerID: string, signal?: AbortSignal): Promise<ProbeOutcome> {
    const timeoutSeconds = spec.timeoutSeconds ?? 1;
    const timing = { clock: this.config.clock, timeoutMs: timeoutSeconds * 1000, signal };
    const podIP = status.podIP ?? '';
    try {
      if (spec.exec) return await execProbe(this.config.runner, containerID, expandCommandOnlyStatic(spec.exec.command ?? [], container), timeoutSeconds);
      if (spec.httpGet) {
        const req = probeRequest(spec.httpGet, container, podIP);
        return 'result' in req ? req : await httpProbe(req, timing);
      }
      if (spec.tcpSocket) {
        const port = resolveContainerPort(spec.tcpSocket.port, container);
        return await tcpProbe(spec.tcpSocket.host || podIP, port, timing);
      }
      if (spec.grpc) return await grpcProbe(podIP, spec.grpc.service ?? '', spec.grpc.port, timing);
    } catch (err) {
      if (err instanceof ProbeError) return { result: 'unknown', output: '', error: err.message };
      return { result: 'unknown', output: '', error: err instanceof Error ? err.message : String(err) };
    }
    return { result: 'unknown', output: '', error: `missing probe handler for ${formatPod(pod)}:${container.name}` };
  }
}
