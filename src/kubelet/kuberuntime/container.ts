// The ContainerConfig for CreateContainer, as upstream's generateContainerConfig and the kubelet's
// GenerateRunContainerOptions: environment, expanded command and args, mounts (the pod's volumes,
// a kubelet-managed /etc/hosts and the termination-message file), identity labels and the
// annotations a restarted kubelet reads back, the log path, and the Linux resources and security.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import type { Container, Pod } from '../../api/types.js';
import { Quantity } from '../../api/quantity.js';
import type { KubeletConfig } from '../config.js';
import type { EventRecorder } from '../../client/record/recorder.js';
import type { ContainerConfig, Mount, PodSandboxConfig } from '../runtime/types.js';
import type { PodVolumes } from '../volumes/manager.js';
import { EnvError, expandCommandAndArgs, invalidKeysMessage, makeEnvironmentVariables, type EnvSources } from './env.js';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_PORTS_ANNOTATION,
  CONTAINER_PRESTOP_HANDLER_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION,
  POD_DELETION_GRACE_PERIOD_ANNOTATION,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  POD_UID_LABEL,
  hashContainer,
} from './labels.js';
import { containerResources } from './resources.js';
import { podHostnameAndDomain, podLogsDirectory } from './sandbox.js';
import { containerSecurityContext, verifyRunAsNonRoot, type ImageUser } from './security.js';
import { podRef } from '../../api/pod/reference.js';

export interface ContainerConfigInput {
  pod: Pod;
  container: Container;
  kind: 'init' | 'regular';
  restartCount: number;
  podIPs: string[];
  imageRef: string;
  volumes: PodVolumes;
  sandboxConfig: PodSandboxConfig;
  cfg: KubeletConfig;
  sources: EnvSources;
  /** Who the image runs as (ImageManager's PullResult.user); unknown means root for runAsNonRoot. */
  imageUser?: ImageUser;
  /** Node allocatable; defaults to this machine's cpus and memory. */
  nodeAllocatable?: Record<string, string>;
  /** Receives InvalidEnvironmentVariableNames warnings. */
  recorder?: EventRecorder;
}

/** CreateContainerConfigError: the message becomes the container's waiting message. */
export class CreateContainerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CreateContainerConfigError';
  }
}

const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';
const ETC_HOSTS = '/etc/hosts';

const MANAGED_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';
const MANAGED_HOSTS_HEADER_HOST_NETWORK = '# Kubernetes-managed hosts file (host network).\n';

function machineAllocatable(): Record<string, string> {
  return { cpu: String(cpus().length), memory: String(totalmem()) };
}

/** The hosts file upstream's kubelet writes for a pod (managedHostsFileContent). */
export function managedHostsContent(pod: Pod, podIPs: string[], clusterDomain: string, nodeHosts?: string): string {
  const aliases = pod.spec?.hostAliases ?? [];
  const aliasLines = aliases.length === 0 ? '' : `\n# Entries added by HostAliases.\n${aliases.map((a) => `${a.ip}\t${(a.hostnames ?? []).join('\t')}\n`).join('')}`;
  if (pod.spec?.hostNetwork) return MANAGED_HOSTS_HEADER_HOST_NETWORK + (nodeHosts ?? '') + aliasLines;
  const { hostname, domain } = podHostnameAndDomain(pod, clusterDomain);
  let out =
    MANAGED_HOSTS_HEADER +
    '127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\n' +
    'fe00::0\tip6-localnet\n' +
    'fe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\n' +
    'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + aliasLines;
}

function podDir(cfg: KubeletConfig, pod: Pod): string {
  return join(cfg.rootDir, 'pods', pod.metadata?.uid ?? '');
}

/** Writes <pod dir>/etc-hosts and returns its mount, unless the container mounts its own /etc/hosts or the pod has no IP yet. */
async function etcHostsMount(input: ContainerConfigInput, volumeMounts: Mount[]): Promise<Mount | undefined> {
  const { pod, podIPs, cfg } = input;
  if (podIPs.length === 0 || volumeMounts.some((m) => m.container_path === ETC_HOSTS)) return undefined;
  const nodeHosts = pod.spec?.hostNetwork ? await readFile(ETC_HOSTS, 'utf8').catch(() => '') : undefined;
  const file = join(podDir(cfg, pod), 'etc-hosts');
  // Rewritten in place at every container start, as upstream's ensureHostsFile: running containers
  // have the file bind-mounted (a rename would leave them the old inode), and it is regenerated on
  // the next start if a crash tears it, so no fsync on the start-up path.
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, managedHostsContent(pod, podIPs, cfg.clusterDomain, nodeHosts), { mode: 0o644 });
  return { container_path: ETC_HOSTS, host_path: file, readonly: false };
}

/**
 * An empty host file for the termination message, unique per container instance (the kubelet
 * reads it back through ContainerStatus.mounts once the container ends).
 */
async function terminationMessageMount(input: ContainerConfigInput): Promise<Mount | undefined> {
  const path = input.container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
  if (!path) return undefined;
  const dir = join(podDir(input.cfg, input.pod), 'containers', input.container.name);
  await mkdir(dir, { recursive: true });
  const file = join(dir, randomBytes(4).toString('hex'));
  await writeFile(file, '');
  // Any user in the container must be able to write it; the umask must not decide.
  await chmod(file, 0o666);
  return { container_path: path, host_path: file };
}

/** The annotations a restarted kubelet reads back (newContainerAnnotations). */
export function containerAnnotations(pod: Pod, container: Container, restartCount: number): Record<string, string> {
  const a: Record<string, string> = {
    [CONTAINER_HASH_ANNOTATION]: hashContainer(container),
    [CONTAINER_RESTART_COUNT_ANNOTATION]: String(restartCount),
    [CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION]: container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH,
    [CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION]: container.terminationMessagePolicy ?? 'File',
  };
  if (pod.metadata?.deletionGracePeriodSeconds !== undefined) a[POD_DELETION_GRACE_PERIOD_ANNOTATION] = String(pod.metadata.deletionGracePeriodSeconds);
  if (pod.spec?.terminationGracePeriodSeconds !== undefined) a[POD_TERMINATION_GRACE_PERIOD_ANNOTATION] = String(pod.spec.terminationGracePeriodSeconds);
  if (container.lifecycle?.preStop) a[CONTAINER_PRESTOP_HANDLER_ANNOTATION] = JSON.stringify(container.lifecycle.preStop);
  if (container.ports?.length) {
    // Field order as Go marshals v1.ContainerPort.
    const ports = container.ports.map((p) => ({ name: p.name, hostPort: p.hostPort, containerPort: p.containerPort, protocol: p.protocol, hostIP: p.hostIP }));
    a[CONTAINER_PORTS_ANNOTATION] = JSON.stringify(ports);
  }
  return a;
}

export function containerLabels(pod: Pod, container: Container): Record<string, string> {
  return {
    [POD_NAME_LABEL]: pod.metadata?.name ?? '',
    [POD_NAMESPACE_LABEL]: pod.metadata?.namespace ?? '',
    [POD_UID_LABEL]: pod.metadata?.uid ?? '',
    [CONTAINER_NAME_LABEL]: container.name,
  };
}

/** <container>/<restartCount>.log, relative to the sandbox's log_directory (BuildContainerLogsPath). */
export function containerLogPath(containerName: string, restartCount: number): string {
  return `${containerName}/${restartCount}.log`;
}

/** generateContainerConfig: rejects with CreateContainerConfigError for the user's mistakes (missing keys, non-root policy). */
export async function generateContainerConfig(input: ContainerConfigInput): Promise<ContainerConfig> {
  const { pod, container, cfg, restartCount } = input;
  const allocatable = input.nodeAllocatable ?? machineAllocatable();
  let envs;
  try {
    const result = await makeEnvironmentVariables(pod, container, input.sources, { podIPs: input.podIPs, hostIPs: [cfg.nodeIP], nodeAllocatable: allocatable });
    envs = result.envs;
    for (const skipped of result.invalidKeys) {
      input.recorder?.event(
        podRef(pod),
        'Warning',
        'InvalidEnvironmentVariableNames',
        invalidKeysMessage(pod.metadata?.namespace ?? '', skipped),
      );
    }
  } catch (err) {
    if (err instanceof EnvError) throw new CreateContainerConfigError(err.message);
    throw err;
  }

  const nonRoot = verifyRunAsNonRoot(pod, container, input.imageUser ?? {});
  if (nonRoot) throw new CreateContainerConfigError(nonRoot);

  let mounts: Mount[];
  try {
    mounts = input.volumes.mounts(container, envs);
  } catch (err) {
    throw new CreateContainerConfigError((err as Error).message);
  }
  const hosts = await etcHostsMount(input, mounts);
  if (hosts) mounts.push(hosts);
  const termination = await terminationMessageMount(input);
  if (termination) mounts.push(termination);

  await mkdir(join(podLogsDirectory(cfg, pod), container.name), { recursive: true, mode: 0o755 });

  const memoryCapacity = allocatable.memory !== undefined ? Number(Quantity.from(allocatable.memory).value()) : totalmem();
  const { command, args } = expandCommandAndArgs(container, envs);
  const config: ContainerConfig = {
    metadata: { name: container.name, attempt: restartCount },
    image: { image: input.imageRef, user_specified_image: container.image ?? '' },
    envs,
    mounts,
    labels: containerLabels(pod, container),
    annotations: containerAnnotations(pod, container, restartCount),
    log_path: containerLogPath(container.name, restartCount),
    stdin: container.stdin === true,
    stdin_once: container.stdinOnce === true,
    tty: container.tty === true,
    linux: {
      resources: containerResources(pod, container, memoryCapacity),
      security_context: containerSecurityContext(pod, container, cfg),
    },
  };
  if (command?.length) config.command = command;
  if (args?.length) config.args = args;
  if (container.workingDir) config.working_dir = container.workingDir;
  return config;
}
