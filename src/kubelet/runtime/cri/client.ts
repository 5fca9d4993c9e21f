// The CRI v1 client: RuntimeService and ImageService over one long-lived gRPC channel to the
// runtime's unix socket (containerd's CRI plugin). Deadlines follow upstream's remote runtime
// client (pkg/kubelet/cri/remote): a default per call, twice that for RunPodSandbox, the grace
// period on top for StopContainer and ExecSync. Every failure becomes a RuntimeError carrying the
// gRPC code and the runtime's own message, the text users later see in events.
import * as grpc from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import {
  RuntimeError,
  type AuthConfig,
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerStats,
  type ContainerStatus,
  type ExecSyncResponse,
  type Image,
  type ImageSpec,
  type LinuxContainerResources,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatusResponse,
  type Runtime,
  type RuntimeErrorCode,
  type RuntimeStatus,
  type StreamingRequest,
  type VersionResponse,
} from '../types.js';
import { criService, criType, normalizeMessage, type CriServiceName } from './load.js';

/** The CRI API version the kubelet announces in VersionRequest. */
export const CRI_API_VERSION = 'v1';

/** Upstream kubelet's --runtime-request-timeout default. */
export const DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS = 2 * 60_000;
export const DEFAULT_PULL_IMAGE_TIMEOUT_MS = 5 * 60_000;
/** Upstream's maxMsgSize for CRI connections. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface CriRuntimeOptions {
  /** 'unix:///run/containerd/containerd.sock' or a plain socket path. */
  endpoint: string;
  defaultTimeoutMs?: number;
  pullImageTimeoutMs?: number;
}

interface CallOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

const KNOWN_CODES = new Set<RuntimeErrorCode>([
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'FAILED_PRECONDITION',
  'UNIMPLEMENTED',
  'UNAVAILABLE',
  'CANCELLED',
  'INTERNAL',
]);

/** The gRPC target for an endpoint given as a unix:// URL or a plain path. */
export function grpcTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (endpoint.startsWith('/')) return `unix://${endpoint}`;
  throw new Error(`unsupported CRI endpoint ${JSON.stringify(endpoint)}: want unix:///path or an absolute socket path`);
}

export class CriRuntime implements Runtime {
  private readonly client: grpc.Client;
  private readonly defaultTimeoutMs: number;
  private readonly pullImageTimeoutMs: number;

  constructor(options: CriRuntimeOptions) {
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_RUNTIME_REQUEST_TIMEOUT_MS;
    this.pullImageTimeoutMs = options.pullImageTimeoutMs ?? DEFAULT_PULL_IMAGE_TIMEOUT_MS;
    // grpc-js connects on the first call, so constructing does no I/O.
    this.client = new grpc.Client(grpcTarget(options.endpoint), grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    });
  }

  /** Resolves once the channel is connected; rejects with UNAVAILABLE if not by the deadline. */
  waitForReady(deadline: Date | number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.waitForReady(deadline, (err) => {
        if (err) reject(new RuntimeError('UNAVAILABLE', `runtime not ready: ${err.message}`));
        else resolve();
      });
    });
  }

  close(): void {
    this.client.close();
  }

  // ---- RuntimeService

  version(): Promise<VersionResponse> {
    return this.runtime<VersionResponse>('Version', { version: CRI_API_VERSION });
  }

  status(verbose = false): Promise<{ status: RuntimeStatus; info?: Record<string, string> }> {
    return this.runtime('Status', { verbose });
  }

  async runPodSandbox(config: PodSandboxConfig, runtimeHandler = '', signal?: AbortSignal): Promise<string> {
    const res = await this.runtime<{ pod_sandbox_id: string }>(
      'RunPodSandbox',
      { config, runtime_handler: runtimeHandler },
      { timeoutMs: this.defaultTimeoutMs * 2, signal },
    );
    return res.pod_sandbox_id;
  }

  async stopPodSandbox(podSandboxId: string): Promise<void> {
    await this.runtime('StopPodSandbox', { pod_sandbox_id: podSandboxId });
  }

  async removePodSandbox(podSandboxId: string): Promise<void> {
    await this.runtime('RemovePodSandbox', { pod_sandbox_id: podSandboxId });
  }

  podSandboxStatus(podSandboxId: string, verbose = false): Promise<PodSandboxStatusResponse> {
    return this.runtime('PodSandboxStatus', { pod_sandbox_id: podSandboxId, verbose });
  }

  async listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return (await this.runtime<{ items: PodSandbox[] }>('ListPodSandbox', { filter })).items;
  }

  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    const res = await this.runtime<{ container_id: string }>('CreateContainer', {
      pod_sandbox_id: podSandboxId,
      config,
      sandbox_config: sandboxConfig,
    });
    return res.container_id;
  }

  async startContainer(containerId: string): Promise<void> {
    await this.runtime('StartContainer', { container_id: containerId });
  }

  async stopContainer(containerId: string, timeoutSeconds: number, signal?: AbortSignal): Promise<void> {
    // The runtime holds the call open for the whole grace period before it kills.
    await this.runtime(
      'StopContainer',
      { container_id: containerId, timeout: timeoutSeconds },
      { timeoutMs: this.defaultTimeoutMs + Math.max(0, timeoutSeconds) * 1000, signal },
    );
  }

  async removeContainer(containerId: string): Promise<void> {
    await this.runtime('RemoveContainer', { container_id: containerId });
  }

  async listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return (await this.runtime<{ containers: Container[] }>('ListContainers', { filter })).containers;
  }

  async containerStatus(containerId: string, verbose = false): Promise<ContainerStatus> {
    const res = await this.runtime<{ status?: ContainerStatus }>('ContainerStatus', { container_id: containerId, verbose });
    if (!res.status) throw new RuntimeError('UNKNOWN', `ContainerStatus of ${containerId}: the runtime returned no status`);
    return res.status;
  }

  async updateContainerResources(containerId: string, linux: LinuxContainerResources): Promise<void> {
    await this.runtime('UpdateContainerResources', { container_id: containerId, linux });
  }

  async reopenContainerLog(containerId: string): Promise<void> {
    await this.runtime('ReopenContainerLog', { container_id: containerId });
  }

  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    // timeout 0 means "run forever" to the runtime, so only a positive one bounds the call.
    const timeoutMs = timeoutSeconds > 0 ? this.defaultTimeoutMs + timeoutSeconds * 1000 : Infinity;
    return this.runtime('ExecSync', { container_id: containerId, cmd, timeout: timeoutSeconds }, { timeoutMs });
  }

  async exec(req: StreamingRequest): Promise<string> {
    return (await this.runtime<{ url: string }>('Exec', req)).url;
  }

  async attach(req: StreamingRequest): Promise<string> {
    return (await this.runtime<{ url: string }>('Attach', req)).url;
  }

  async portForward(req: StreamingRequest): Promise<string> {
    return (await this.runtime<{ url: string }>('PortForward', req)).url;
  }

  async containerStats(containerId: string): Promise<ContainerStats> {
    const res = await this.runtime<{ stats?: ContainerStats }>('ContainerStats', { container_id: containerId });
    if (!res.stats) throw new RuntimeError('UNKNOWN', `ContainerStats of ${containerId}: the runtime returned no stats`);
    return res.stats;
  }

  async listContainerStats(filter?: { id?: string; pod_sandbox_id?: string; label_selector?: Record<string, string> }): Promise<ContainerStats[]> {
    return (await this.runtime<{ stats: ContainerStats[] }>('ListContainerStats', { filter })).stats;
  }

  // ---- ImageService

  async listImages(filter?: { image?: ImageSpec }): Promise<Image[]> {
    return (await this.image<{ images: Image[] }>('ListImages', { filter })).images;
  }

  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    return (await this.image<{ image?: Image }>('ImageStatus', { image })).image;
  }

  async pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, signal?: AbortSignal): Promise<string> {
    const res = await this.image<{ image_ref: string }>(
      'PullImage',
      { image, auth, sandbox_config: sandboxConfig },
      { timeoutMs: this.pullImageTimeoutMs, signal },
    );
    return res.image_ref;
  }

  async removeImage(image: ImageSpec): Promise<void> {
    await this.image('RemoveImage', { image });
  }

  imageFsInfo(): ReturnType<Runtime['imageFsInfo']> {
    return this.image('ImageFsInfo', {});
  }

  // ---- transport

  private runtime<T>(method: string, request: object, options?: CallOptions): Promise<T> {
    return this.unary<T>('RuntimeService', method, request, options);
  }

  private image<T>(method: string, request: object, options?: CallOptions): Promise<T> {
    return this.unary<T>('ImageService', method, request, options);
  }

  private unary<T>(service: CriServiceName, method: string, request: object, options: CallOptions = {}): Promise<T> {
    const def = criService(service)[method];
    if (!def) throw new Error(`CRI ${service} has no method ${method}`);
    const responseType: protobuf.Type = criType(`${method}Response`);
    const { signal } = options;
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const deadline = Number.isFinite(timeoutMs) ? Date.now() + timeoutMs : Infinity;
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(new RuntimeError('CANCELLED', 'context canceled'));
      const onAbort = () => call.cancel();
      const call = this.client.makeUnaryRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize as (b: Buffer) => Record<string, unknown>,
        request,
        new grpc.Metadata(),
        { deadline },
        (err, response) => {
          signal?.removeEventListener('abort', onAbort);
          if (err) reject(toRuntimeError(err, { deadline, aborted: signal?.aborted ?? false }));
          else resolve(normalizeMessage(responseType, response ?? {}) as T);
        },
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * A gRPC failure as a RuntimeError: the status code's name and the runtime's message. Failures
 * the client caused itself (its deadline passed, its caller aborted) read as Go's context errors,
 * the text upstream's kubelet reports for them.
 */
export function toRuntimeError(err: grpc.ServiceError, local: { deadline: number; aborted: boolean }): RuntimeError {
  const name = grpc.status[err.code] as RuntimeErrorCode | undefined;
  const code: RuntimeErrorCode = name && KNOWN_CODES.has(name) ? name : 'UNKNOWN';
  if (code === 'CANCELLED' && local.aborted) return new RuntimeError('CANCELLED', 'context canceled');
  if (code === 'DEADLINE_EXCEEDED' && Date.now() >= local.deadline) return new RuntimeError(code, 'context deadline exceeded');
  return new RuntimeError(code, err.details || err.message);
}
