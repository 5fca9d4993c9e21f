// Container lifecycle hooks (upstream's pkg/kubelet/lifecycle/handlers.go and the hook parts of
// kuberuntime_container.go): postStart right after a container starts, preStop before its stop
// signal within the grace period. Handlers are exec (ExecSync), httpGet (to the pod IP unless a
// host is given; any response counts, only a failed request fails) and sleep. Failure messages
// are upstream's; the events only say which hook failed, so hook output never leaks into them.
import type { Container, Pod } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { FAILED_POST_START_HOOK, FAILED_PRE_STOP_HOOK } from '../events.js';
import { type EventRecorder } from '../../client/record/recorder.js';
import { formatPod } from '../kuberuntime/backoff.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import { containerRef, podRef } from '../../api/pod/reference.js';
import type { RuntimeService } from '../runtime/types.js';
import { runInContainer, type CommandRunner } from '../prober/exec.js';
import { goQuote } from '../prober/goformat.js';
import { HTTPGetError, doHTTPGet, newRequestForHTTPGetAction, type HTTPGetRequest } from '../prober/http.js';

export type LifecycleHandler = NonNullable<NonNullable<Container['lifecycle']>['postStart']>;

/** The reason a container waits with after its postStart hook failed (kuberuntime's ErrPostStartHook). */
export const POST_START_HOOK_ERROR = 'PostStartHookError';
/** The message of the Killing event for a container whose postStart hook failed. */
export const FAILED_POST_START_HOOK_KILL_MESSAGE = 'FailedPostStartHook';
export const LIFECYCLE_HTTP_FALLBACK = 'LifecycleHTTPFallback';

/** Where an httpGet hook without a host goes: the pod's IP, as the runtime reports it. */
export type PodIPSource = (pod: Pod) => Promise<string | undefined>;

/** The pod IP of the pod's newest ready sandbox (upstream reads it from the runtime's pod status). */
export function runtimePodIP(runtime: Pick<RuntimeService, 'listPodSandbox' | 'podSandboxStatus'>): PodIPSource {
  return async (pod) => {
    const sandboxes = await runtime.listPodSandbox({ label_selector: { [POD_UID_LABEL]: pod.metadata?.uid ?? '' }, state: { state: 'SANDBOX_READY' } });
    const newest = sandboxes.sort((a, b) => (BigInt(b.created_at || '0') > BigInt(a.created_at || '0') ? 1 : -1))[0];
    if (!newest) return undefined;
    return (await runtime.podSandboxStatus(newest.id)).status.network?.ip || undefined;
  };
}

export interface HandlerRunnerConfig {
  runner: CommandRunner;
  recorder: EventRecorder;
  clock: Clock;
  podIP: PodIPSource;
  log?: (msg: string, err?: unknown) => void;
}

export interface RunOptions {
  /** Aborts the handler: a sleep ends with an error, a request is canceled. */
  signal?: AbortSignal;
  /** ExecSync's timeout; 0 runs the command until it ends. */
  execTimeoutSeconds?: number;
}

export class HandlerRunner {
  constructor(private readonly config: HandlerRunnerConfig) {}

  /** handlers.go Run: resolves to upstream's failure message, or undefined when the handler succeeded. */
  async run(pod: Pod, container: Container, containerID: string, handler: LifecycleHandler, opts: RunOptions = {}): Promise<string | undefined> {
    const where = `for Container ${goQuote(container.name)} in Pod ${goQuote(formatPod(pod))}`;
    try {
      if (handler.exec) {
        const cmd = handler.exec.command ?? [];
        const res = await runInContainer(this.config.runner, containerID, cmd, opts.execTimeoutSeconds ?? 0);
        if (res.error === undefined) return undefined;
        return `Exec lifecycle hook ([${cmd.join(' ')}]) ${where} failed - error: ${res.error}, message: ${goQuote(res.output)}`;
      }
      if (handler.httpGet) {
        const err = await this.runHTTPHandler(pod, container, handler.httpGet, opts.signal);
        return err === undefined ? undefined : `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) ${where} failed - error: ${err}`;
      }
      if (handler.sleep) {
        try {
          await this.config.clock.sleep(handler.sleep.seconds * 1000, opts.signal);
          return undefined;
        } catch {
          return `Sleep lifecycle hook (${handler.sleep.seconds}) ${where} failed - error: container terminated before sleep hook finished`;
        }
      }
    } catch (err) {
      this.config.log?.(`lifecycle hook for ${container.name} failed`, err);
      return `Cannot run handler: ${err instanceof Error ? err.message : String(err)}`;
    }
    return `Cannot run handler: invalid handler: ${JSON.stringify(handler)}`;
  }

  /** Resolves to the Go err text of a failed request, undefined when any response came. */
  private async runHTTPHandler(pod: Pod, container: Container, action: NonNullable<LifecycleHandler['httpGet']>, signal?: AbortSignal): Promise<string | undefined> {
    let podIP = action.host ?? '';
    if (!podIP) {
      podIP = (await this.config.podIP(pod)) ?? '';
      if (!podIP) return `failed to find networking container: pod ${formatPod(pod)} has no IP`;
    }
    let req: HTTPGetRequest;
    try {
      req = newRequestForHTTPGetAction(action, container, podIP, 'lifecycle');
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    const get = (r: HTTPGetRequest) => doHTTPGet(r, { clock: this.config.clock, timeoutMs: 0, signal });
    try {
      await get(req);
      return undefined;
    } catch (err) {
      if (!(err instanceof HTTPGetError && err.httpResponseToHTTPS)) return err instanceof Error ? err.message : String(err);
      // An HTTPS hook answered in plain HTTP: retry in HTTP without credentials, and say so.
      const plain: HTTPGetRequest = { ...req, scheme: 'http', url: req.url.replace(/^https:/, 'http:'), headers: req.headers.filter(([k]) => k !== 'Authorization') };
      try {
        await get(plain);
      } catch {
        return err.message;
      }
      const hostPort = new URL(plain.url).host;
      this.config.recorder.event(podRef(pod), 'Warning', LIFECYCLE_HTTP_FALLBACK, `request to HTTPS lifecycle hook ${hostPort} got HTTP response, retry with HTTP succeeded`);
      return undefined;
    }
  }

  /**
   * The postStart hook of a container that just started: resolves to the failure message (the
   * caller then kills the container with FAILED_POST_START_HOOK_KILL_MESSAGE and reports
   * POST_START_HOOK_ERROR with this message), undefined on success or without a hook.
   */
  async runPostStart(pod: Pod, container: Container, containerID: string, signal?: AbortSignal): Promise<string | undefined> {
    const handler = container.lifecycle?.postStart;
    if (!handler) return undefined;
    // Aborted (the pod is being deleted): stop waiting; an exec hook's command dies with its container.
    const aborted = new Promise<undefined>((resolve) => signal?.addEventListener('abort', () => resolve(undefined), { once: true }));
    const msg = signal?.aborted ? undefined : await Promise.race([this.run(pod, container, containerID, handler, { signal }), aborted]);
    if (msg !== undefined && !signal?.aborted) {
      this.config.log?.(msg);
      this.config.recorder.event(containerRef(pod, container), 'Warning', FAILED_POST_START_HOOK, 'PostStartHook failed');
    }
    return msg;
  }

  /**
   * executePreStopHook: runs the preStop hook for at most gracePeriodSeconds and resolves to the
   * whole seconds it used, which the caller takes off the grace period (leaving it at least
   * upstream's minimum of 2 s for the stop itself). A hook still running at the deadline, or when
   * `signal` aborts (the kill is cancelled for a shorter grace period), is abandoned (aborted).
   */
  async runPreStop(pod: Pod, container: Container, containerID: string, gracePeriodSeconds: number, signal?: AbortSignal): Promise<{ elapsedSeconds: number }> {
    const handler = container.lifecycle?.preStop;
    if (!handler || gracePeriodSeconds <= 0 || signal?.aborted) return { elapsedSeconds: 0 };
    const { clock } = this.config;
    const start = clock.now();
    const abandon = new AbortController();
    const graceOver = new AbortController();
    const cancel = () => graceOver.abort();
    signal?.addEventListener('abort', cancel, { once: true });
    const hook = this.run(pod, container, containerID, handler, { signal: abandon.signal, execTimeoutSeconds: gracePeriodSeconds }).then((msg) => {
      if (msg === undefined || abandon.signal.aborted) return;
      this.config.log?.(msg);
      this.config.recorder.event(containerRef(pod, container), 'Warning', FAILED_PRE_STOP_HOOK, 'PreStopHook failed');
    });
    // Ends at the deadline, or at once when cancelled: either way the hook is abandoned.
    const deadline = clock.sleep(gracePeriodSeconds * 1000, graceOver.signal).then(
      () => abandon.abort(),
      () => abandon.abort(),
    );
    await Promise.race([hook, deadline]);
    signal?.removeEventListener('abort', cancel);
    graceOver.abort();
    return { elapsedSeconds: Math.trunc((clock.now() - start) / 1000) };
  }
}
