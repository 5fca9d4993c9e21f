// The object references events carry for a pod (upstream's ref.GetReference) and for one of its
// containers (GenerateContainerRef: the pod, with the container's field path).
import type { Container, ObjectReference, Pod } from '../types.js';

export type PodReference = Pick<ObjectReference, 'kind' | 'apiVersion' | 'namespace' | 'name' | 'uid' | 'resourceVersion' | 'fieldPath'>;

export function podRef(pod: Pod): PodReference {
  const m = pod.metadata;
  return { kind: 'Pod', apiVersion: 'v1', namespace: m?.namespace, name: m?.name, uid: m?.uid, resourceVersion: m?.resourceVersion };
}

export function containerRef(pod: Pod, container: Container): PodReference {
  const isInit = (pod.spec?.initContainers ?? []).some((c) => c.name === container.name);
  const isEphemeral = !isInit && !(pod.spec?.containers ?? []).some((c) => c.name === container.name) && (pod.spec?.ephemeralContainers ?? []).some((c) => c.name === container.name);
  const field = isInit ? 'initContainers' : isEphemeral ? 'ephemeralContainers' : 'containers';
  return { ...podRef(pod), fieldPath: `spec.${field}{${container.name}}` };
}
