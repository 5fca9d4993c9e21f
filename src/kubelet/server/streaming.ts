// The kubelet's /exec, /attach and /portForward (upstream's getExec, getAttach, getPortForward):
// the runtime hands out a URL on its own streaming server for the container or sandbox, and the
// kubelet server relays the caller's upgrade there as bytes.
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import { POD_UID_LABEL } from '../kuberuntime/labels.js';
import { formatRuntimeError, RuntimeError, type RuntimeService } from '../runtime/types.js';
import { parseUint16 } from '../../streaming/portforward.js';
import { runtimeContainerId } from './containerlogs.js';

/** A refusal with the HTTP code and plain-text message the kubelet answers with. */
export class StreamingError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'StreamingError';
  }
}

export type StreamingRoute = 'exec' | 'attach' | 'portForward';

/** What the streaming endpoints read from the kubelet (a subset of KubeletHost). */
export interface StreamingHost {
  getPodByName(namespace: string, name: string): Pod | undefined;
  getPodStatus?(pod: Pod): PodStatus | undefined;
  runtime: Pick<RuntimeService, 'exec' | 'attach' | 'portForward' | 'listPodSandbox'>;
}

/** Upstream's remotecommand NewOptions: only "1" turns a stream on; stderr goes under a tty. */
export function remoteCommandOptions(q: URLSearchParams): { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean } {
  const on = (name: string) => q.get(name) === '1';
  const tty = on('tty');
  const opts = { stdin: on('stdin'), stdout: on('stdout'), stderr: on('stderr') && !tty, tty };
  if (!opts.stdin && !opts.stdout && !opts.stderr) throw new StreamingError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  return opts;
}

/**
 * Upstream's portforward.NewV4Options: a WebSocket client names its ports up front in "port"
 * values (comma-separated lists), since its channels are fixed when the connection opens; a SPDY
 * client names them per stream, so its request carries none.
 */
export function portForwardPorts(q: URLSearchParams, webSocket: boolean): number[] {
  if (!webSocket) return [];
  const values = q.getAll('port');
  if (values.length === 0) throw new StreamingError(400, 'query parameter "port" is required');
  const ports: number[] = [];
  for (const value of values) {
    if (value === '') throw new StreamingError(400, 'query parameter "port" cannot be empty');
    for (const p of value.split(',')) {
      let port: number;
      try {
        port = parseUint16(p);
      } catch (err) {
        throw new StreamingError(400, `unable to parse ${JSON.stringify(value)} as a port: ${(err as Error).message}`);
      }
      if (port < 1) throw new StreamingError(400, `port ${JSON.stringify(value)} must be > 0`);
      ports.push(port);
    }
  }
  return ports;
}

/**
 * The runtime's streaming URL for a request to /exec|/attach/{ns}/{pod}[/{uid}]/{container} or
 * /portForward/{ns}/{pod}[/{uid}] (`parts`: the decoded path segments); `webSocket`: whether the
 * caller upgrades to a WebSocket (port-forward's ports then come from the query).
 */
export async function runtimeStreamUrl(host: StreamingHost, route: StreamingRoute, parts: string[], query: URLSearchParams, webSocket = false): Promise<string> {
  if (route === 'portForward') {
    const [, namespace, podName, uid] = parts;
    if (!namespace || !podName || parts.length > 4) throw new StreamingError(404, '404 page not found');
    const ports = portForwardPorts(query, webSocket);
    const pod = host.getPodByName(namespace, podName);
    if (!pod) throw new StreamingError(404, 'pod does not exist');
    if (uid && pod.metadata?.uid !== uid) throw new StreamingError(404, 'pod not found');
    return portForwardUrl(host, pod, ports);
  }
  const [, namespace, podName] = parts;
  const uid = parts.length === 5 ? parts[3] : undefined;
  const containerName = parts[parts.length - 1];
  if (!namespace || !podName || (parts.length !== 4 && parts.length !== 5)) throw new StreamingError(404, '404 page not found');
  const opts = remoteCommandOptions(query);
  const pod = host.getPodByName(namespace, podName);
  if (!pod) throw new StreamingError(404, 'pod does not exist');
  const containerId = uid && pod.metadata?.uid !== uid ? undefined : runningContainerId(host.getPodStatus?.(pod) ?? pod.status, containerName!);
  if (!containerId) throw new StreamingError(500, `container not found (${JSON.stringify(containerName)})`);
  try {
    if (route === 'exec') return await host.runtime.exec({ container_id: containerId, cmd: query.getAll('command'), ...opts });
    // A process's terminal is fixed when it starts: attach follows the container's spec, not the request.
    const spec = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((c) => c.name === containerName);
    return await host.runtime.attach({ container_id: containerId, ...opts, tty: spec?.tty ?? false });
  } catch (err) {
    throw runtimeStreamingError(err);
  }
}

/** The runtime ID of the named container while it runs (upstream finds it among the runtime's running containers). */
function runningContainerId(status: PodStatus | undefined, name: string): string | undefined {
  const all = [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? []), ...(status?.ephemeralContainerStatuses ?? [])];
  const cs = all.find((s) => s.name === name);
  return cs?.state?.running && cs.containerID ? runtimeContainerId(cs.containerID) : undefined;
}

/**
 * Port-forward goes to the pod's newest ready sandbox (its network namespace). The runtime keeps
 * `ports` with the session: its WebSocket server opens a data and an error channel for each.
 */
async function portForwardUrl(host: StreamingHost, pod: Pod, ports: number[]): Promise<string> {
  const uid = pod.metadata?.uid ?? '';
  const fullName = `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}`;
  try {
    const sandboxes = await host.runtime.listPodSandbox({ label_selector: { [POD_UID_LABEL]: uid }, state: { state: 'SANDBOX_READY' } });
    const createdAt = (s: { created_at: string }) => BigInt(s.created_at || '0');
    const newest = sandboxes.sort((a, b) => (createdAt(b) > createdAt(a) ? 1 : createdAt(b) < createdAt(a) ? -1 : 0))[0];
    if (!newest) throw new StreamingError(500, `pod not found (${JSON.stringify(fullName)})`);
    return await host.runtime.portForward({ pod_sandbox_id: newest.id, port: ports });
  } catch (err) {
    throw runtimeStreamingError(err);
  }
}

/** Upstream's streaming.WriteError: the runtime's NotFound is 404, anything else 500, with the error's text. */
function runtimeStreamingError(err: unknown): StreamingError {
  if (err instanceof StreamingError) return err;
  return new StreamingError(err instanceof RuntimeError && err.code === 'NOT_FOUND' ? 404 : 500, formatRuntimeError(err));
}
