// A StatefulSet's pods, as upstream's stateful_set_utils.go: stable names <set>-<ordinal>, the
// identity labels and hostname/subdomain, the revision a pod was made from, and the pod of an
// ordinal made from the current or the update revision according to the partition.
import type { ControllerRevision, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { POD_REVISION_LABEL } from '../kit/history.js';
import { podFromTemplate } from '../kit/podcontrol.js';
import { isPodReady } from '../kit/pods.js';
import { newControllerRef } from '../kit/refmanager.js';
import { isPodAvailable } from '../kit/pods.js';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

const statefulPodRegex = /^(.*)-([0-9]+)$/;

/** Upstream's getParentNameAndOrdinal: the set's name and the ordinal, -1 when the name has none. */
export function parentNameAndOrdinal(pod: Pod): { parent: string; ordinal: number } {
  const m = statefulPodRegex.exec(pod.metadata?.name ?? '');
  if (!m) return { parent: '', ordinal: -1 };
  const ordinal = Number(m[2]);
  return { parent: m[1]!, ordinal: Number.isSafeInteger(ordinal) && ordinal <= 2 ** 31 - 1 ? ordinal : -1 };
}

export const ordinalOf = (pod: Pod) => parentNameAndOrdinal(pod).ordinal;

/** Upstream's isMemberOf: named after the set. */
export const isMemberOf = (set: StatefulSet, pod: Pod) => parentNameAndOrdinal(pod).parent === set.metadata?.name;

/** spec.ordinals.start (0 when unset). */
export const startOrdinal = (set: StatefulSet) => set.spec?.ordinals?.start ?? 0;

export const podRevision = (pod: Pod) => pod.metadata?.labels?.[POD_REVISION_LABEL] ?? '';

export const isCreated = (pod: Pod) => pod.status?.phase !== undefined || pod.metadata?.resourceVersion !== undefined;
export const isTerminating = (pod: Pod) => pod.metadata?.deletionTimestamp !== undefined;
export const isFailed = (pod: Pod) => pod.status?.phase === 'Failed';
export const isSucceeded = (pod: Pod) => pod.status?.phase === 'Succeeded';
export const isRunningAndReady = (pod: Pod) => pod.status?.phase === 'Running' && isPodReady(pod);
export const isRunningAndAvailable = (pod: Pod, minReadySeconds: number, now: number) => pod.status?.phase === 'Running' && isPodAvailable(pod, minReadySeconds, now);
/** Upstream's isHealthy: running, ready and not terminating. */
export const isHealthy = (pod: Pod) => isRunningAndReady(pod) && !isTerminating(pod);

/** The template a revision stores (its patch's spec.template without the $patch directive). */
export function revisionTemplate(revision: ControllerRevision): PodTemplateSpec {
  const template = structuredClone(((revision.data as { spec?: { template?: Record<string, unknown> } } | undefined)?.spec?.template ?? {}) as Record<string, unknown>);
  delete template.$patch;
  return template as PodTemplateSpec;
}

/** The claim template names that have no volume of their name in the pod (upstream's updateStorage would add them). */
export function claimTemplateNames(set: StatefulSet): string[] {
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => t.metadata?.name ?? '').filter((n) => n !== '');
}

/**
 * Upstream's newStatefulSetPod: the template's pod named <set>-<ordinal> with its identity. The
 * volumeClaimTemplates' PersistentVolumeClaims are not served yet: each claim template's volume is
 * an emptyDir (so the template's mounts stay valid), and the controller says so in an event.
 */
export function newStatefulSetPod(set: StatefulSet, template: PodTemplateSpec, ordinal: number, revisionName: string): Pod {
  const owner = { ...set, apiVersion: 'apps/v1', kind: 'StatefulSet' };
  const pod = podFromTemplate(template, owner, newControllerRef(set, 'apps/v1', 'StatefulSet'));
  const name = `${set.metadata?.name}-${ordinal}`;
  delete pod.metadata!.generateName;
  pod.metadata!.name = name;
  pod.metadata!.namespace = set.metadata?.namespace;
  pod.metadata!.labels = { ...pod.metadata!.labels, [POD_NAME_LABEL]: name, [POD_INDEX_LABEL]: String(ordinal), [POD_REVISION_LABEL]: revisionName };
  pod.spec ??= { containers: [] };
  pod.spec.hostname = name;
  if (set.spec?.serviceName) pod.spec.subdomain = set.spec.serviceName;
  const claims = claimTemplateNames(set);
  if (claims.length) {
    const volumes = (pod.spec.volumes ?? []).filter((v) => !claims.includes(v.name));
    pod.spec.volumes = [...volumes, ...claims.map((claim) => ({ name: claim, emptyDir: {} }))];
  }
  return pod;
}

/** Upstream's identityMatches: the name, namespace, labels, hostname and subdomain of its ordinal. */
export function identityMatches(set: StatefulSet, pod: Pod): boolean {
  const { parent, ordinal } = parentNameAndOrdinal(pod);
  const labels = pod.metadata?.labels ?? {};
  return (
    ordinal >= 0 &&
    parent === set.metadata?.name &&
    pod.metadata?.namespace === set.metadata?.namespace &&
    labels[POD_NAME_LABEL] === pod.metadata?.name &&
    labels[POD_INDEX_LABEL] === String(ordinal)
  );
}
