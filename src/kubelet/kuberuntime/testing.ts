// Builders for kubelet tests: pods and runtime states written as short tables.
import type { Container, Pod } from '../../api/types.js';
import { hashContainer } from './labels.js';
import type { ContainerRuntimeStatus, PodRuntimeState, SandboxRuntimeStatus } from './runtime-state.js';

export const T0 = Date.UTC(2026, 0, 1);

export function makePod(opts: { name?: string; uid?: string; restartPolicy?: 'Always' | 'OnFailure' | 'Never'; containers?: (string | Partial<Container>)[]; initContainers?: (string | Partial<Container>)[]; hostNetwork?: boolean } = {}): Pod {
  const toContainer = (c: string | Partial<Container>): Container => (typeof c === 'string' ? { name: c, image: 'busybox' } : { image: 'busybox', name: 'c', ...c });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: opts.name ?? 'web', namespace: 'default', uid: opts.uid ?? 'uid-1' },
    spec: {
      nodeName: 'node-1',
      restartPolicy: opts.restartPolicy ?? 'Always',
      hostNetwork: opts.hostNetwork,
      containers: (opts.containers ?? ['nginx']).map(toContainer),
      ...(opts.initContainers ? { initContainers: opts.initContainers.map(toContainer) } : {}),
    },
    status: { phase: 'Pending' },
  };
}

export function sandbox(s: Partial<SandboxRuntimeStatus> = {}): SandboxRuntimeStatus {
  return { id: 'sb0', attempt: 0, state: 'SANDBOX_READY', createdAt: T0, ips: ['10.88.0.2'], networkMode: 'POD', ...s };
}

/** A container status; `image` defaults to busybox so its hash matches makePod's containers. */
export function ctr(name: string, s: Partial<ContainerRuntimeStatus> = {}): ContainerRuntimeStatus {
  const image = s.image ?? 'busybox';
  const running = (s.state ?? 'CONTAINER_RUNNING') !== 'CONTAINER_CREATED';
  return {
    id: `${name}-${s.restartCount ?? 0}`,
    sandboxId: 'sb0',
    name,
    state: 'CONTAINER_RUNNING',
    createdAt: T0,
    startedAt: running ? T0 : undefined,
    exitCode: 0,
    reason: '',
    message: '',
    restartCount: 0,
    hash: hashContainer({ name, image }),
    image,
    imageRef: `docker.io/library/${image}@sha256:abc`,
    ...s,
  };
}

export function exited(name: string, exitCode: number, s: Partial<ContainerRuntimeStatus> = {}): ContainerRuntimeStatus {
  return ctr(name, { state: 'CONTAINER_EXITED', exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: T0 + 1000, ...s });
}

export function runtimeState(sandboxes: SandboxRuntimeStatus[], containers: ContainerRuntimeStatus[]): PodRuntimeState {
  return { uid: 'uid-1', name: 'web', namespace: 'default', sandboxes, containers };
}
