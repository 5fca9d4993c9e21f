// Which container's log a request means, as upstream's Kubelet.validateContainerLogStatus: the
// running container, or the last terminated one; --previous the one before; otherwise a message that
// says why there is nothing to read yet (sent as 400, as upstream's kubelet does).
import type { ContainerStatus, Pod, PodStatus } from 'kubernetes-types/core/v1.js';

export class ContainerLogError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ContainerLogError';
  }
}

/** Whether the pod's spec has a container (regular, init or ephemeral) of that name (upstream's GetContainerSpec). */
export function hasContainer(pod: Pod, name: string): boolean {
  const spec = pod.spec;
  return [...(spec?.containers ?? []), ...(spec?.initContainers ?? []), ...(spec?.ephemeralContainers ?? [])].some((c) => c.name === name);
}

/** The runtime's id from a status containerID ("containerd://abc" → "abc"). */
export function runtimeContainerId(containerID: string): string {
  const i = containerID.indexOf('://');
  return i >= 0 ? containerID.slice(i + 3) : containerID;
}

/** The runtime id of the container whose log to read; throws a ContainerLogError (400) when there is none. */
export function validateContainerLogStatus(podName: string, status: PodStatus | undefined, containerName: string, previous: boolean): string {
  const find = (list: ContainerStatus[] | undefined) => list?.find((s) => s.name === containerName);
  const cs = find(status?.containerStatuses) ?? find(status?.initContainerStatuses) ?? find(status?.ephemeralContainerStatuses);
  const fail = (why: string) => new ContainerLogError(400, `container ${JSON.stringify(containerName)} in pod ${JSON.stringify(podName)} ${why}`);
  if (!cs) throw fail('is not available');
  const last = cs.lastState?.terminated;
  const { waiting, running, terminated } = cs.state ?? {};
  let id: string;
  if (previous) {
    if (!last?.containerID) throw new ContainerLogError(400, `previous terminated container ${JSON.stringify(containerName)} in pod ${JSON.stringify(podName)} not found`);
    id = last.containerID;
  } else if (running) {
    id = cs.containerID ?? '';
  } else if (terminated) {
    // When the next container did not start, the terminated state has no id: the last one has the log.
    if (terminated.containerID) id = terminated.containerID;
    else if (last?.containerID) id = last.containerID;
    else throw fail('is terminated');
  } else if (last) {
    if (!last.containerID) throw fail('is terminated');
    id = last.containerID;
  } else if (waiting) {
    switch (waiting.reason) {
      case 'ErrImagePull':
        throw fail("is waiting to start: image can't be pulled");
      case 'ImagePullBackOff':
        throw fail('is waiting to start: trying and failing to pull image');
      default:
        throw fail(`is waiting to start: ${waiting.reason ?? ''}`);
    }
  } else {
    throw fail('is waiting to start - no logs yet');
  }
  return runtimeContainerId(id);
}
