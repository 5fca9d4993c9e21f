// The executing half of upstream's kubeGenericRuntimeManager: SyncPod runs the planner's plan
// against the CRI runtime (sandbox, image, config, create, start, with upstream's events and
// failure reasons), KillPod stops a pod's containers — regular ones together, then sidecars in
// reverse order — and its sandboxes. It remembers each container's last start failure (the
// kubelet's reasonCache) for the status generator.
import type { Container, Pod } from '../../api/types.js';
import { isRestartableInitContainer } from '../../api/pod/status.js';
import type { Clock } from '../../util/clock.js';
import type { KubeletConfig } from '../config.js';
import { BACK_OFF_START_CONTAINER, CREATED_CONTAINER, FAILED_CREATE_POD_SANDBOX, FAILED_TO_CREATE_CONTAINER, FAILED_TO_START_CONTAINER, KILLING_CONTAINER, SANDBOX_CHANGED, STARTED_CONTAINER } from '../events.js';
import { type EventRecorder } from '../../client/record/recorder.js';
import type { EnvSources } from './env.js';
import type { ContainerConfigInput } from './container.js';
import type { ImageManager, PullResult } from '../images/manager.js';
import { containerRef, podRef } from '../../api/pod/reference.js';
import type { PodVolumes } from '../volumes/manager.js';
import type { ContainerConfig, PodSandboxConfig, Runtime } from '../runtime/types.js';
import { isNotFound } from '../runtime/types.js';
import type { StartFailure } from '../status/generate.js';
import { ContainerBackOff, backOffKey, formatPod } from './backoff.js';
import { planPodSync, type KillReason, type PodSyncPlan, type ProbeResults } from './planner.js';
import { MINIMUM_GRACE_PERIOD_SECONDS, killGracePeriodSeconds } from './grace.js';
import { FAILED_POST_START_HOOK_KILL_MESSAGE, POST_START_HOOK_ERROR } from '../lifecycle/handlers.js';
import { findContainerStatus, type ContainerRuntimeStatus, type PodRuntimeState } from './runtime-state.js';
import { containerType, type KubeletTimeline } from '../timeline/timeline.js';
import { stepTime } from '../../client/timeline/recorder.js';

/** Runs a container's preStop hook within the grace period; resolves to the seconds it used. */
export type PreStopHook = (pod: Pod, container: Container, containerId: string, gracePeriodSeconds: number, signal?: AbortSignal) => Promise<number>;
/** Runs a just-started container's postStart hook; resolves to the failure message, undefined on success. */
export type PostStartHook = (pod: Pod, container: Container, containerId: string, signal?: AbortSignal) => Promise<string | undefined>;

export interface RuntimeManagerConfig {
  runtime: Runtime;
  cfg: KubeletConfig;
  clock: Clock;
  recorder: EventRecorder;
  images: ImageManager;
  sources: EnvSources;
  generatePodSandboxConfig: (pod: Pod, attempt: number, cfg: KubeletConfig, recorder: EventRecorder) => PodSandboxConfig;
  generateContainerConfig: (input: ContainerConfigInput) => Promise<ContainerConfig>;
  /** Lifecycle hooks; unset, none runs. */
  preStop?: PreStopHook;
  postStart?: PostStartHook;
  /** Where the sandbox, container, hook and signal steps go. */
  timeline?: KubeletTimeline;
}

export interface SyncResult {
  plan: PodSyncPlan;
  /** Something in the runtime was (or was tried to be) changed: re-read the state. */
  acted: boolean;
  /** A start or the sandbox failed (not counting back-off): retry soon. */
  failed: boolean;
  /** The earliest moment a backed-off container may start. */
  nextBackOffExpiry?: number;
}


function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class KubeRuntimeManager {
  readonly backoff: ContainerBackOff;
  private readonly failures = new Map<string, Map<string, StartFailure>>();

  constructor(private readonly config: RuntimeManagerConfig) {
    const { cfg } = config;
    this.backoff = new ContainerBackOff({ initialMs: cfg.crashLoopBackOffInitialMs, maxMs: cfg.crashLoopBackOffMaxMs, resetMs: cfg.crashLoopBackOffResetMs });
  }

  /** The last start failure per container name of a pod (empty once they all started). */
  startFailures(podUID: string): ReadonlyMap<string, StartFailure> {
    return this.failures.get(podUID) ?? new Map();
  }

  /** Drops what is remembered about a pod that is gone. */
  forgetPod(podUID: string): void {
    this.failures.delete(podUID);
    this.backoff.forgetPod(podUID);
  }

  private setFailure(pod: Pod, name: string, failure: StartFailure | undefined): void {
    const uid = pod.metadata?.uid ?? '';
    let m = this.failures.get(uid);
    if (!failure) {
      m?.delete(name);
      return;
    }
    if (!m) this.failures.set(uid, (m = new Map()));
    m.set(name, failure);
  }

  /** SyncPod: one pass of bringing the runtime towards the pod's spec. */
  /** `signal`: the pod is to be terminated; containers not yet started are left alone. */
  async syncPod(pod: Pod, state: PodRuntimeState, volumes: PodVolumes, probes?: ProbeResults, signal?: AbortSignal): Promise<SyncResult> {
    const { runtime, recorder, clock, cfg } = this.config;
    const plan = planPodSync({ pod, state, backoff: this.backoff, now: clock.now(), probes });
    const result: SyncResult = { plan, acted: false, failed: false };

    if (plan.createSandbox && plan.sandboxId) recorder.event(podRef(pod), 'Normal', SANDBOX_CHANGED, 'Pod sandbox changed, it will be killed and re-created.');

    if (plan.killPod) {
      result.acted = true;
      await this.killPod(pod, state);
      if (!plan.createSandbox) return result;
      // A new sandbox starts initialization over: the old init containers must not count.
      await this.removeContainers(state.containers.filter((c) => (pod.spec?.initContainers ?? []).some((i) => i.name === c.name)));
    } else {
      for (const k of plan.containersToKill) {
        result.acted = true;
        const spec = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find((c) => c.name === k.name);
        await this.killContainer(pod, spec ?? { name: k.name }, k.id, k.message, k.reason);
      }
    }

    await this.pruneExitedContainers(pod, state);

    let sandboxId = plan.sandboxId;
    const imageChecks = new Map<string, Promise<PullResult>>();
    let sandboxConfig: PodSandboxConfig;
    let podIPs: string[];
    try {
      sandboxConfig = this.config.generatePodSandboxConfig(pod, plan.attempt, cfg, recorder);
    } catch (err) {
      recorder.event(podRef(pod), 'Warning', FAILED_CREATE_POD_SANDBOX, `Failed to create pod sandbox: ${errorMessage(err)}`);
      return { ...result, failed: true };
    }
    const timeline = this.config.timeline;
    if (plan.createSandbox) {
      result.acted = true;
      try {
        const sandboxStart = clock.now();
        sandboxId = await runtime.runPodSandbox(sandboxConfig);
        timeline?.span(pod, 'SandboxCreated', sandboxStart, { detail: `sandbox ${sandboxId.slice(0, 13)} (attempt ${plan.attempt})`, attributes: { attempt: plan.attempt } });
        // The first container's image is checked while the sandbox's status is read (each is a
        // runtime round trip), so a new pod's first CreateContainer does not wait for both in turn.
        const first = plan.initContainersToStart.length ? pod.spec?.initContainers?.[plan.initContainersToStart[0]!] : pod.spec?.containers[plan.containersToStart[0] ?? -1];
        if (first && !plan.backOff.has(first.name)) imageChecks.set(first.name, this.config.images.ensureImageExists(pod, first, sandboxConfig));
        const status = (await runtime.podSandboxStatus(sandboxId)).status;
        podIPs = pod.spec?.hostNetwork || !status.network?.ip ? [] : [status.network.ip, ...(status.network.additional_ips ?? []).map((a) => a.ip)];
        if (podIPs[0]) timeline?.instant(pod, 'PodIPAssigned', { detail: podIPs.join(', '), attributes: { ip: podIPs[0] } });
      } catch (err) {
        recorder.event(podRef(pod), 'Warning', FAILED_CREATE_POD_SANDBOX, `Failed to create pod sandbox: ${errorMessage(err)}`);
        return { ...result, failed: true };
      }
    } else {
      podIPs = state.sandboxes[0]?.ips ?? [];
    }

    const start = async (container: Container, kind: 'init' | 'regular'): Promise<boolean> => {
      if (signal?.aborted) return false;
      result.acted = true;
      const backOff = plan.backOff.get(container.name);
      if (backOff) {
        recorder.event(containerRef(pod, container), 'Warning', BACK_OFF_START_CONTAINER, `Back-off restarting failed container ${container.name} in pod ${formatPod(pod)}`);
        this.setFailure(pod, container.name, { reason: 'CrashLoopBackOff', message: backOff.message });
        const attributes = { reason: 'CrashLoopBackOff', delayMs: backOff.delayMs, nextStart: stepTime(backOff.retryAt) };
        timeline?.series(pod, 'BackOff', { container: container.name, containerType: kind, detail: backOff.message, attributes }, backOff.retryAt);
        result.nextBackOffExpiry = Math.min(result.nextBackOffExpiry ?? Infinity, backOff.retryAt);
        return false;
      }
      const failure = await this.startContainer(pod, container, kind, state, sandboxId, sandboxConfig, podIPs, volumes, imageChecks.get(container.name), signal);
      this.setFailure(pod, container.name, failure);
      if (failure) result.failed = true;
      return !failure;
    };

    for (const idx of plan.initContainersToStart) {
      const c = pod.spec!.initContainers![idx]!;
      // A sidecar that fails to start does not hold up the rest; a plain init container does.
      if (!(await start(c, 'init')) && !isRestartableInitContainer(c)) return result;
    }
    for (const idx of plan.containersToStart) await start(pod.spec!.containers[idx]!, 'regular');
    return result;
  }

  /** startContainer: image, config, create, start; the failure as the waiting reason, or undefined. */
  private async startContainer(
    pod: Pod,
    container: Container,
    kind: 'init' | 'regular',
    state: PodRuntimeState,
    sandboxId: string,
    sandboxConfig: PodSandboxConfig,
    podIPs: string[],
    volumes: PodVolumes,
    imageCheck?: Promise<PullResult>,
    signal?: AbortSignal,
  ): Promise<StartFailure | undefined> {
    const { runtime, recorder, clock, cfg } = this.config;
    const ref = containerRef(pod, container);
    const previous = findContainerStatus(state, container.name);
    // Restarting after an exit moves the back-off along (doBackOff's Next).
    const lastExit = state.containers.find((c) => c.name === container.name && c.state === 'CONTAINER_EXITED');
    if (lastExit) this.backoff.next(backOffKey(pod, container), lastExit.finishedAt ?? lastExit.createdAt, clock.now());

    const image = await (imageCheck ?? this.config.images.ensureImageExists(pod, container, sandboxConfig));
    if (!image.ok) return { reason: image.reason, message: image.message };

    const restartCount = previous ? previous.restartCount + 1 : 0;
    const timeline = this.config.timeline;
    const step = { container: container.name, containerType: kind };
    let config: ContainerConfig;
    try {
      config = await this.config.generateContainerConfig({ pod, container, kind, restartCount, podIPs, imageRef: image.imageRef, imageUser: image.user, volumes, sandboxConfig, cfg, sources: this.config.sources });
    } catch (err) {
      recorder.event(ref, 'Warning', FAILED_TO_CREATE_CONTAINER, `Error: ${errorMessage(err)}`);
      return { reason: 'CreateContainerConfigError', message: errorMessage(err) };
    }
    let id: string;
    const createStart = clock.now();
    try {
      id = await runtime.createContainer(sandboxId, config, sandboxConfig);
    } catch (err) {
      recorder.event(ref, 'Warning', FAILED_TO_CREATE_CONTAINER, `Error: ${errorMessage(err)}`);
      return { reason: 'CreateContainerError', message: errorMessage(err) };
    }
    recorder.event(ref, 'Normal', CREATED_CONTAINER, `Created container: ${container.name}`);
    timeline?.span(pod, 'ContainerCreated', createStart, { ...step, detail: `container ${id.slice(0, 13)}`, attributes: { restartCount } });
    const startStart = clock.now();
    try {
      await runtime.startContainer(id);
    } catch (err) {
      recorder.event(ref, 'Warning', FAILED_TO_START_CONTAINER, `Error: ${errorMessage(err)}`);
      return { reason: 'RunContainerError', message: errorMessage(err) };
    }
    recorder.event(ref, 'Normal', STARTED_CONTAINER, `Started container ${container.name}`);
    timeline?.span(pod, 'ContainerStarted', startStart, { ...step, attributes: { restartCount } });
    if (restartCount > 0) timeline?.series(pod, 'ContainerRestarted', { ...step, detail: `restart ${restartCount}`, attributes: { restartCount } }, restartCount, restartCount);
    // The sync, and so the status that shows the container running, waits for the hook.
    if (this.config.postStart && container.lifecycle?.postStart) {
      const hookStart = clock.now();
      const message = await this.config.postStart(pod, container, id, signal);
      timeline?.span(pod, 'PostStart', hookStart, { ...step, ...(message !== undefined && { detail: message, attributes: { error: message } }) });
      // A hook cut short because the pod is being deleted is no failure: the pod's kill follows.
      if (message !== undefined && !signal?.aborted) {
        await this.killContainer(pod, container, id, FAILED_POST_START_HOOK_KILL_MESSAGE, '');
        return { reason: POST_START_HOOK_ERROR, message };
      }
    }
    return undefined;
  }

  /**
   * killContainer: preStop, then StopContainer with what is left of the grace period. `signal`
   * cancels both (a shorter grace period arrived; the caller kills again with it).
   */
  private async killContainer(pod: Pod, container: Container, containerId: string, message: string, reason: KillReason, gracePeriodOverride?: number, signal?: AbortSignal): Promise<void> {
    const { runtime, recorder, clock, timeline } = this.config;
    let grace = gracePeriodOverride ?? killGracePeriodSeconds(pod, container, reason);
    recorder.event(containerRef(pod, container), 'Normal', KILLING_CONTAINER, message || `Stopping container ${container.name}`);
    const step = { container: container.name, containerType: containerType(pod, container.name) };
    if (this.config.preStop && container.lifecycle?.preStop) {
      const hookStart = clock.now();
      grace -= await this.config.preStop(pod, container, containerId, grace, signal);
      timeline?.span(pod, 'PreStop', hookStart, step);
    }
    if (signal?.aborted) return;
    const timeout = Math.max(grace, MINIMUM_GRACE_PERIOD_SECONDS);
    const stopStart = clock.now();
    timeline?.instant(pod, 'SIGTERM', { ...step, detail: `grace period ${timeout}s`, attributes: { gracePeriodSeconds: timeout } });
    try {
      await runtime.stopContainer(containerId, timeout, signal);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // The runtime kills what still runs when the grace period is over: a stop that lasted it did.
    const killAt = stopStart + timeout * 1000;
    if (!signal?.aborted && clock.now() >= killAt) timeline?.instant(pod, 'SIGKILL', { ...step, detail: `grace period ${timeout}s expired` }, killAt);
  }

  /**
   * KillPod: every running container (regular and plain init containers together, then sidecars
   * one at a time in reverse spec order, so they outlive what they serve), then every sandbox.
   */
  async killPod(pod: Pod, state: PodRuntimeState, gracePeriodOverride?: number, signal?: AbortSignal): Promise<void> {
    const running = state.containers.filter((c) => c.state === 'CONTAINER_RUNNING' || c.state === 'CONTAINER_CREATED' || c.state === 'CONTAINER_UNKNOWN');
    const inits = pod.spec?.initContainers ?? [];
    const specOf = (c: ContainerRuntimeStatus): Container => [...inits, ...(pod.spec?.containers ?? [])].find((s) => s.name === c.name) ?? { name: c.name };
    const isSidecar = (c: ContainerRuntimeStatus) => isRestartableInitContainer(inits.find((i) => i.name === c.name));
    await Promise.all(running.filter((c) => !isSidecar(c)).map((c) => this.killContainer(pod, specOf(c), c.id, '', '', gracePeriodOverride, signal)));
    const sidecars = running.filter(isSidecar).sort((a, b) => inits.findIndex((i) => i.name === b.name) - inits.findIndex((i) => i.name === a.name));
    for (const c of sidecars) await this.killContainer(pod, specOf(c), c.id, '', '', gracePeriodOverride, signal);
    if (signal?.aborted) return;
    for (const s of state.sandboxes) {
      try {
        await this.config.runtime.stopPodSandbox(s.id);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /** Removes every container and sandbox of a terminated pod from the runtime. */
  async removePod(state: PodRuntimeState): Promise<void> {
    await this.removeContainers(state.containers);
    for (const s of state.sandboxes) {
      try {
        await this.config.runtime.removePodSandbox(s.id);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  private async removeContainers(list: ContainerRuntimeStatus[]): Promise<void> {
    for (const c of list) {
      try {
        await this.config.runtime.removeContainer(c.id);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  /**
   * Only the newest exited attempt of each container is kept (pruneInitContainersBeforeStart, and
   * container GC's one dead container per pod and name): it carries the restart count and the
   * last state the status shows.
   */
  private async pruneExitedContainers(pod: Pod, state: PodRuntimeState): Promise<void> {
    const names = new Set([...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name));
    const stale: ContainerRuntimeStatus[] = [];
    for (const name of names) {
      const dead = state.containers.filter((c) => c.name === name && (c.state === 'CONTAINER_EXITED' || c.state === 'CONTAINER_UNKNOWN'));
      // The state and the last state the status shows stay: two dead attempts when the newest is dead.
      const keep = state.containers.find((c) => c.name === name)?.state === 'CONTAINER_EXITED' ? 2 : 1;
      stale.push(...dead.slice(keep));
    }
    await this.removeContainers(stale);
  }
}
