// The container runtime as the kubelet sees it: the CRI v1 RuntimeService and ImageService
// (k8s.io/cri-api, package runtime.v1), with the messages' own field names (snake_case, as
// proto-loader's keepCase gives them) so the gRPC client stays a thin layer. Only what kite uses is
// declared; every field is optional on the wire, so readers must default.
//
// int64 values: timestamps (`created_at`, `started_at`, `finished_at`, `timestamp`) are nanoseconds
// since the epoch as decimal strings (they overflow a double's integer range); every other int64
// (resources, sizes, user ids) is a number.

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type NamespaceMode = 'POD' | 'CONTAINER' | 'NODE' | 'TARGET';
export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export type MountPropagation = 'PROPAGATION_PRIVATE' | 'PROPAGATION_HOST_TO_CONTAINER' | 'PROPAGATION_BIDIRECTIONAL';

export interface KeyValue {
  key: string;
  value: string;
}

export interface Int64Value {
  value: number;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}

export interface DNSConfig {
  servers?: string[];
  searches?: string[];
  options?: string[];
}

export interface PortMapping {
  protocol?: Protocol;
  container_port: number;
  host_port?: number;
  host_ip?: string;
}

export interface NamespaceOption {
  network?: NamespaceMode;
  pid?: NamespaceMode;
  ipc?: NamespaceMode;
  target_id?: string;
}

export interface SecurityProfile {
  profile_type?: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  localhost_ref?: string;
}

export interface LinuxSandboxSecurityContext {
  namespace_options?: NamespaceOption;
  run_as_user?: Int64Value;
  run_as_group?: Int64Value;
  readonly_rootfs?: boolean;
  supplemental_groups?: number[];
  privileged?: boolean;
  seccomp?: SecurityProfile;
}

export interface LinuxContainerResources {
  cpu_period?: number;
  cpu_quota?: number;
  cpu_shares?: number;
  memory_limit_in_bytes?: number;
  oom_score_adj?: number;
  cpuset_cpus?: string;
  cpuset_mems?: string;
  unified?: Record<string, string>;
  memory_swap_limit_in_bytes?: number;
}

export interface LinuxPodSandboxConfig {
  cgroup_parent?: string;
  security_context?: LinuxSandboxSecurityContext;
  sysctls?: Record<string, string>;
  overhead?: LinuxContainerResources;
  resources?: LinuxContainerResources;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  log_directory?: string;
  dns_config?: DNSConfig;
  port_mappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  linux?: LinuxPodSandboxConfig;
}

export interface PodSandboxFilter {
  id?: string;
  state?: { state: PodSandboxState };
  label_selector?: Record<string, string>;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtime_handler?: string;
}

export interface PodIP {
  ip: string;
}

export interface PodSandboxNetworkStatus {
  ip: string;
  additional_ips?: PodIP[];
}

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  created_at: string;
  network?: PodSandboxNetworkStatus;
  linux?: { namespaces?: { options?: NamespaceOption } };
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtime_handler?: string;
}

export interface PodSandboxStatusResponse {
  status: PodSandboxStatus;
  /** Runtime-specific detail when verbose was asked for (containerd: JSON under "info"). */
  info?: Record<string, string>;
}

export interface ContainerMetadata {
  name: string;
  attempt: number;
}

export interface ImageSpec {
  image: string;
  annotations?: Record<string, string>;
  user_specified_image?: string;
}

export interface Mount {
  container_path: string;
  host_path: string;
  readonly?: boolean;
  selinux_relabel?: boolean;
  propagation?: MountPropagation;
}

export interface Capability {
  add_capabilities?: string[];
  drop_capabilities?: string[];
}

export interface LinuxContainerSecurityContext {
  capabilities?: Capability;
  privileged?: boolean;
  namespace_options?: NamespaceOption;
  run_as_user?: Int64Value;
  run_as_group?: Int64Value;
  run_as_username?: string;
  readonly_rootfs?: boolean;
  supplemental_groups?: number[];
  no_new_privs?: boolean;
  masked_paths?: string[];
  readonly_paths?: string[];
  seccomp?: SecurityProfile;
}

export interface LinuxContainerConfig {
  resources?: LinuxContainerResources;
  security_context?: LinuxContainerSecurityContext;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  working_dir?: string;
  envs?: KeyValue[];
  mounts?: Mount[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** Relative to the sandbox's log_directory. */
  log_path?: string;
  stdin?: boolean;
  stdin_once?: boolean;
  tty?: boolean;
  linux?: LinuxContainerConfig;
}

export interface ContainerFilter {
  id?: string;
  state?: { state: ContainerState };
  pod_sandbox_id?: string;
  label_selector?: Record<string, string>;
}

export interface Container {
  id: string;
  pod_sandbox_id: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  image_ref: string;
  state: ContainerState;
  created_at: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerStatus {
  id: string;
  metadata: ContainerMetadata;
  state: ContainerState;
  created_at: string;
  started_at: string;
  finished_at: string;
  exit_code: number;
  image: ImageSpec;
  /** The repo digest (docker.io/library/busybox@sha256:...). */
  image_ref: string;
  /** containerd: "OOMKilled", "Completed", "Error", or empty. */
  reason: string;
  message: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  mounts?: Mount[];
  log_path: string;
  resources?: { linux?: LinuxContainerResources };
}

export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exit_code: number;
}

export interface StreamingRequest {
  container_id?: string;
  pod_sandbox_id?: string;
  cmd?: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
  port?: number[];
}

export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export interface RuntimeStatus {
  conditions: RuntimeCondition[];
}

export interface VersionResponse {
  version: string;
  runtime_name: string;
  runtime_version: string;
  runtime_api_version: string;
}

export interface ContainerStats {
  attributes: { id: string; metadata: ContainerMetadata; labels: Record<string, string>; annotations: Record<string, string> };
  cpu?: { timestamp: string; usage_core_nano_seconds?: Int64Value; usage_nano_cores?: Int64Value };
  memory?: { timestamp: string; working_set_bytes?: Int64Value; rss_bytes?: Int64Value; usage_bytes?: Int64Value };
  writable_layer?: { timestamp: string; used_bytes?: Int64Value };
}

export interface Image {
  id: string;
  repo_tags: string[];
  repo_digests: string[];
  size: number;
  uid?: Int64Value;
  username?: string;
  spec?: ImageSpec;
  pinned?: boolean;
}

export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  server_address?: string;
  identity_token?: string;
  registry_token?: string;
}

/** CRI RuntimeService. Every call may reject with a RuntimeError. */
export interface RuntimeService {
  version(): Promise<VersionResponse>;
  status(verbose?: boolean): Promise<{ status: RuntimeStatus; info?: Record<string, string> }>;

  runPodSandbox(config: PodSandboxConfig, runtimeHandler?: string, signal?: AbortSignal): Promise<string>;
  stopPodSandbox(podSandboxId: string): Promise<void>;
  removePodSandbox(podSandboxId: string): Promise<void>;
  podSandboxStatus(podSandboxId: string, verbose?: boolean): Promise<PodSandboxStatusResponse>;
  listPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;

  createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string>;
  startContainer(containerId: string): Promise<void>;
  /**
   * timeoutSeconds: SIGTERM, then SIGKILL after that long; the call lasts until the container is
   * gone, or until `signal` aborts it (the runtime goes on stopping; a second call may shorten it).
   */
  stopContainer(containerId: string, timeoutSeconds: number, signal?: AbortSignal): Promise<void>;
  removeContainer(containerId: string): Promise<void>;
  listContainers(filter?: ContainerFilter): Promise<Container[]>;
  containerStatus(containerId: string, verbose?: boolean): Promise<ContainerStatus>;
  updateContainerResources(containerId: string, linux: LinuxContainerResources): Promise<void>;
  reopenContainerLog(containerId: string): Promise<void>;

  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
  /** Streaming calls answer with the URL of the runtime's own streaming server. */
  exec(req: StreamingRequest): Promise<string>;
  attach(req: StreamingRequest): Promise<string>;
  portForward(req: StreamingRequest): Promise<string>;

  containerStats(containerId: string): Promise<ContainerStats>;
  listContainerStats(filter?: { id?: string; pod_sandbox_id?: string; label_selector?: Record<string, string> }): Promise<ContainerStats[]>;
}

/** CRI ImageService. */
export interface ImageService {
  listImages(filter?: { image?: ImageSpec }): Promise<Image[]>;
  /** undefined when the image is not present (the runtime answers image: null, not an error). */
  imageStatus(image: ImageSpec): Promise<Image | undefined>;
  /** Resolves to the image reference the runtime stored (the image ID for containerd). */
  pullImage(image: ImageSpec, auth?: AuthConfig, sandboxConfig?: PodSandboxConfig, signal?: AbortSignal): Promise<string>;
  removeImage(image: ImageSpec): Promise<void>;
  imageFsInfo(): Promise<{ image_filesystems: { timestamp: string; fs_id: { mountpoint: string }; used_bytes?: Int64Value; inodes_used?: Int64Value }[] }>;
}

export type Runtime = RuntimeService & ImageService;

/** gRPC status codes the kubelet tells apart (google.golang.org/grpc/codes). */
export type RuntimeErrorCode =
  | 'UNKNOWN'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'FAILED_PRECONDITION'
  | 'UNIMPLEMENTED'
  | 'UNAVAILABLE'
  | 'CANCELLED'
  | 'INTERNAL';

/** A runtime call that failed: the gRPC code and the runtime's own message (the message users see). */
export class RuntimeError extends Error {
  constructor(
    readonly code: RuntimeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeError';
  }
}

export function isNotFound(err: unknown): boolean {
  return err instanceof RuntimeError && err.code === 'NOT_FOUND';
}

const goCodeNames: Record<RuntimeErrorCode, string> = {
  UNKNOWN: 'Unknown',
  INVALID_ARGUMENT: 'InvalidArgument',
  DEADLINE_EXCEEDED: 'DeadlineExceeded',
  NOT_FOUND: 'NotFound',
  ALREADY_EXISTS: 'AlreadyExists',
  FAILED_PRECONDITION: 'FailedPrecondition',
  UNIMPLEMENTED: 'Unimplemented',
  UNAVAILABLE: 'Unavailable',
  CANCELLED: 'Canceled',
  INTERNAL: 'Internal',
};

/** A runtime error as the kubelet's messages quote it (a Go gRPC status error: "rpc error: code = NotFound desc = ..."). */
export function formatRuntimeError(err: unknown): string {
  if (err instanceof RuntimeError) return `rpc error: code = ${goCodeNames[err.code]} desc = ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
