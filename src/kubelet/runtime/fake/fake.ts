// An in-memory CRI runtime for tests: sandboxes and containers with CRI states and timestamps from
// an injected clock, exits that tests script, an image store, a log of every call and per-method
// error injection. It behaves like containerd where the kubelet can tell: NOT_FOUND for unknown
// ids, a stopped container exits 137 with reason Error, a stopped sandbox kills its containers.
import { createHash } from 'node:crypto';
import type { Clock } from '../../../util/clock.js';
import {
  RuntimeError,
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerState,
  type ContainerStats,
  type ContainerStatus,
  type ExecSyncResponse,
  type Image,
  type ImageSpec,
  type LinuxContainerResources,
  type NamespaceMode,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxState,
  type PodSandboxStatusResponse,
  type Runtime,
  type RuntimeStatus,
  type StreamingRequest,
  type VersionResponse,
} from '../types.js';

export interface FakeSandbox {
  id: string;
  config: PodSandboxConfig;
  state: PodSandboxState;
  createdAt: number;
  ip: string;
  runtimeHandler?: string;
}

export interface FakeContainer {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  state: ContainerState;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode: number;
  reason: string;
  message: string;
  imageRef: string;
}

export interface FakeCall {
  method: keyof Runtime;
  args: unknown[];
}

/** Nanoseconds since the epoch as CRI's decimal string; "0" for never. */
export function nanos(ms: number | undefined): string {
  return ms === undefined ? '0' : (BigInt(Math.round(ms)) * 1_000_000n).toString();
}

/** docker.io/library/busybox:latest for "busybox", as containerd normalizes references. */
export function normalizeImage(image: string): string {
  let ref = image;
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  if (slash < 0) ref = `docker.io/library/${ref}`;
  else if (!first.includes('.') && !first.includes(':') && first !== 'localhost') ref = `docker.io/${ref}`;
  const lastSlash = ref.lastIndexOf('/');
  if (!ref.includes('@') && !ref.slice(lastSlash).includes(':')) ref += ':latest';
  return ref;
}

function digest(s: string): string {
  return `sha256:${createHash('sha256').update(s).digest('hex')}`;
}

function matches(labels: Record<string, string>, selector: Record<string, string> | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);
}

export class FakeRuntime implements Runtime {
  readonly calls: FakeCall[] = [];
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  /** Images by normalized reference. */
  readonly images = new Map<string, Image>();
  /** Normalized references whose pull fails with NOT_FOUND, as a registry without the tag. */
  readonly unpullable = new Set<string>();
  /** The exit a stopped container reports (a PID 1 without a TERM handler: 137, Error). */
  stopExit = { exitCode: 137, reason: 'Error' };
  /** Containers ignore SIGTERM: a stop takes its whole timeout (on the clock) before the kill. */
  ignoreSigterm = false;
  private readonly failures = new Map<keyof Runtime, Error[]>();
  private nextId = 1;
  private nextIP = 2;

  constructor(private readonly clock: Clock) {}

  /** The next call of `method` rejects with `err` (queued: call twice to fail twice). */
  failNext(method: keyof Runtime, err: Error): void {
    const list = this.failures.get(method) ?? [];
    list.push(err);
    this.failures.set(method, list);
  }

  /** Calls of one method, in order. */
  callsOf(method: keyof Runtime): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  /** A running container exits now. */
  exitContainer(id: string, exitCode: number, reason = exitCode === 0 ? 'Completed' : 'Error', message = ''): void {
    const c = this.mustContainer(id);
    if (c.state !== 'CONTAINER_RUNNING') throw new Error(`fake runtime: container ${id} is ${c.state}`);
    Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.clock.now(), exitCode, reason, message });
  }

  /** The sandbox dies (its network and pause process gone): NOTREADY, every container in it exited. */
  killSandbox(id: string): void {
    const s = this.sandboxes.get(id);
    if (!s) throw new Error(`fake runtime: no sandbox ${id}`);
    s.state = 'SANDBOX_NOTREADY';
    for (const c of this.containers.values()) {
      if (c.sandboxId === id && c.state === 'CONTAINER_RUNNING') this.exitContainer(c.id, 137, 'Error');
    }
  }

  /** The container of this pod UID and name, newest first. */
  containersNamed(podUID: string, name: string): FakeContainer[] {
    return [...this.containers.values()]
      .filter((c) => c.config.metadata.name === name && this.sandboxes.get(c.sandboxId)?.config.metadata.uid === podUID)
      .sort((a, b) => b.createdAt - a.createdAt || Number(b.id.slice(1)) - Number(a.id.slice(1)));
  }

  addImage(image: string, opts: { size?: number } = {}): Image {
    const ref = normalizeImage(image);
    const repo = ref.replace(/[:@][^/]*$/, '');
    const img: Image = { id: digest(`config:${ref}`), repo_tags: [ref], repo_digests: [`${repo}@${digest(`manifest:${ref}`)}`], size: opts.size ?? 1_000_000 };
    this.images.set(ref, img);
    return img;
  }

  private record(method: keyof Runtime, args: unknown[]): void {
    this.calls.push({ method, args });
    const err = this.failures.get(method)?.shift();
    if (err) throw err;
  }

  private id(prefix: string): string {
    return `${prefix}${this.nextId++}`;
  }

  private mustContainer(id: string): FakeContainer {
    const c = this.containers.get(id);
    if (!c) throw new RuntimeError('NOT_FOUND', `an error occurred when try to find container "${id}": not found`);
    return c;
  }

  private mustSandbox(id: string): FakeSandbox {
    const s = this.sandboxes.get(id);
    if (!s) throw new RuntimeError('NOT_FOUND', `an error occurred when try to find sandbox "${id}": not found`);
    return s;
  }

  version(): Promise<VersionResponse> {
    return this.run('version', [], () => ({ version: '0.1.0', runtime_name: 'fake', runtime_version: '1.0.0', runtime_api_version: 'v1' }));
  }

  status(): Promise<{ status: RuntimeStatus }> {
    return this.run('status', [], () => ({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: true, reason: '', message: '' },
        ],
      },
    }));
  }

  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string> {
    return this.run('runPodSandbox', [config, runtimeHandler], () => {
      const id = this.id('s');
      const hostNetwork = config.linux?.security_context?.namespace_options?.network === 'NODE';
      const ip = hostNetwork ? '' : `10.88.0.${this.nextIP++}`;
      this.sandboxes.set(id, { id, config, state: 'SANDBOX_READY', createdAt: this.clock.now(), ip, runtimeHandler });
      return id;
    });
  }

  stopPodSandbox(id: string): Promise<void> {
    return this.run('stopPodSandbox', [id], () => {
      const s = this.sandboxes.get(id);
      if (!s) return; // containerd: stopping a missing sandbox is not an error
      for (const c of this.containers.values()) if (c.sandboxId === id) this.stopNow(c);
      s.state = 'SANDBOX_NOTREADY';
    });
  }

  removePodSandbox(id: string): Promise<void> {
    return this.run('removePodSandbox', [id], () => {
      for (const c of [...this.containers.values()]) if (c.sandboxId === id) this.containers.delete(c.id);
      this.sandboxes.delete(id);
    });
  }

  podSandboxStatus(id: string): Promise<PodSandboxStatusResponse> {
    return this.run('podSandboxStatus', [id], () => {
      const s = this.mustSandbox(id);
      const network: NamespaceMode = s.config.linux?.security_context?.namespace_options?.network ?? 'POD';
      return {
        status: {
          id,
          metadata: s.config.metadata,
          state: s.state,
          created_at: nanos(s.createdAt),
          network: { ip: s.state === 'SANDBOX_READY' ? s.ip : '', additional_ips: [] },
          linux: { namespaces: { options: { network } } },
          labels: s.config.labels ?? {},
          annotations: s.config.annotations ?? {},
          runtime_handler: s.runtimeHandler,
        },
      };
    });
  }

  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]> {
    return this.run('listPodSandbox', [filter], () =>
      [...this.sandboxes.values()]
        .filter((s) => (!filter?.id || s.id === filter.id) && (!filter?.state || s.state === filter.state.state) && matches(s.config.labels ?? {}, filter?.label_selector))
        .map((s) => ({
          id: s.id,
          metadata: s.config.metadata,
          state: s.state,
          created_at: nanos(s.createdAt),
          labels: s.config.labels ?? {},
          annotations: s.config.annotations ?? {},
          runtime_handler: s.runtimeHandler,
        })),
    );
  }

  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    return this.run('createContainer', [podSandboxId, config, sandboxConfig], () => {
      const s = this.mustSandbox(podSandboxId);
      if (s.state !== 'SANDBOX_READY') throw new RuntimeError('UNKNOWN', `sandbox container "${podSandboxId}" is not running`);
      const img = this.images.get(normalizeImage(config.image.image));
      if (!img) throw new RuntimeError('NOT_FOUND', `failed to get image "${config.image.image}": not found`);
      const id = this.id('c');
      this.containers.set(id, { id, sandboxId: podSandboxId, config, state: 'CONTAINER_CREATED', createdAt: this.clock.now(), exitCode: 0, reason: '', message: '', imageRef: img.repo_digests[0] ?? img.id });
      return id;
    });
  }

  startContainer(id: string): Promise<void> {
    return this.run('startContainer', [id], () => {
      const c = this.mustContainer(id);
      if (c.state !== 'CONTAINER_CREATED') throw new RuntimeError('UNKNOWN', `container ${id} is in ${c.state} state`);
      c.state = 'CONTAINER_RUNNING';
      c.startedAt = this.clock.now();
    });
  }

  async stopContainer(id: string, timeoutSeconds: number, signal?: AbortSignal): Promise<void> {
    const c = await this.run('stopContainer', [id, timeoutSeconds], () => this.mustContainer(id));
    if (this.ignoreSigterm && c.state === 'CONTAINER_RUNNING') {
      await this.clock.sleep(timeoutSeconds * 1000, signal).catch(() => {
        throw new RuntimeError('CANCELLED', 'context canceled');
      });
    }
    this.stopNow(c);
  }

  private stopNow(c: FakeContainer): void {
    if (c.state === 'CONTAINER_RUNNING') Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.clock.now(), ...this.stopExit });
    else if (c.state === 'CONTAINER_CREATED') Object.assign(c, { state: 'CONTAINER_EXITED', finishedAt: this.clock.now(), exitCode: 0, reason: '' });
  }

  removeContainer(id: string): Promise<void> {
    return this.run('removeContainer', [id], () => {
      this.containers.delete(id);
    });
  }

  listContainers(filter?: ContainerFilter): Promise<Container[]> {
    return this.run('listContainers', [filter], () =>
      [...this.containers.values()]
        .filter(
          (c) =>
            (!filter?.id || c.id === filter.id) &&
            (!filter?.pod_sandbox_id || c.sandboxId === filter.pod_sandbox_id) &&
            (!filter?.state || c.state === filter.state.state) &&
            matches(c.config.labels ?? {}, filter?.label_selector),
        )
        .map((c) => ({
          id: c.id,
          pod_sandbox_id: c.sandboxId,
          metadata: c.config.metadata,
          image: c.config.image,
          image_ref: c.imageRef,
          state: c.state,
          created_at: nanos(c.createdAt),
          labels: c.config.labels ?? {},
          annotations: c.config.annotations ?? {},
        })),
    );
  }

  containerStatus(id: string): Promise<ContainerStatus> {
    return this.run('containerStatus', [id], () => {
      const c = this.mustContainer(id);
      return {
        id,
        metadata: c.config.metadata,
        state: c.state,
        created_at: nanos(c.createdAt),
        started_at: nanos(c.startedAt),
        finished_at: nanos(c.finishedAt),
        exit_code: c.exitCode,
        image: c.config.image,
        image_ref: c.imageRef,
        reason: c.reason,
        message: c.message,
        labels: c.config.labels ?? {},
        annotations: c.config.annotations ?? {},
        mounts: c.config.mounts ?? [],
        log_path: c.config.log_path ?? '',
      };
    });
  }

  updateContainerResources(id: string, linux: LinuxContainerResources): Promise<void> {
    return this.run('updateContainerResources', [id, linux], () => {
      this.mustContainer(id).config.linux = { ...this.mustContainer(id).config.linux, resources: linux };
    });
  }

  reopenContainerLog(id: string): Promise<void> {
    return this.run('reopenContainerLog', [id], () => void this.mustContainer(id));
  }

  execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    return this.run('execSync', [id, cmd, timeoutSeconds], () => {
      this.mustContainer(id);
      return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exit_code: 0 };
    });
  }

  exec(req: StreamingRequest): Promise<string> {
    return this.run('exec', [req], () => 'http://127.0.0.1:0/exec/fake');
  }

  attach(req: StreamingRequest): Promise<string> {
    return this.run('attach', [req], () => 'http://127.0.0.1:0/attach/fake');
  }

  portForward(req: StreamingRequest): Promise<string> {
    return this.run('portForward', [req], () => 'http://127.0.0.1:0/portforward/fake');
  }

  containerStats(id: string): Promise<ContainerStats> {
    return this.run('containerStats', [id], () => {
      const c = this.mustContainer(id);
      return { attributes: { id, metadata: c.config.metadata, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} } };
    });
  }

  listContainerStats(): Promise<ContainerStats[]> {
    return this.run('listContainerStats', [], () =>
      [...this.containers.values()].map((c) => ({ attributes: { id: c.id, metadata: c.config.metadata, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} } })),
    );
  }

  listImages(): Promise<Image[]> {
    return this.run('listImages', [], () => [...this.images.values()]);
  }

  imageStatus(image: ImageSpec): Promise<Image | undefined> {
    return this.run('imageStatus', [image], () => this.images.get(normalizeImage(image.image)));
  }

  pullImage(image: ImageSpec): Promise<string> {
    return this.run('pullImage', [image], () => {
      const ref = normalizeImage(image.image);
      if (this.unpullable.has(ref)) {
        throw new RuntimeError('NOT_FOUND', `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`);
      }
      return (this.images.get(ref) ?? this.addImage(image.image)).id;
    });
  }

  removeImage(image: ImageSpec): Promise<void> {
    return this.run('removeImage', [image], () => {
      // By reference or, as the image GC removes them, by ID.
      const ref = [...this.images].find(([, img]) => img.id === image.image)?.[0] ?? normalizeImage(image.image);
      this.images.delete(ref);
    });
  }

  imageFsInfo(): Promise<{ image_filesystems: { timestamp: string; fs_id: { mountpoint: string } }[] }> {
    return this.run('imageFsInfo', [], () => ({ image_filesystems: [{ timestamp: nanos(this.clock.now()), fs_id: { mountpoint: '/fake/images' } }] }));
  }

  /** Every call is asynchronous, as over gRPC, so callers interleave as they would for real. */
  private async run<T>(method: keyof Runtime, args: unknown[], fn: () => T): Promise<T> {
    await Promise.resolve();
    this.record(method, args);
    return fn();
  }
}
