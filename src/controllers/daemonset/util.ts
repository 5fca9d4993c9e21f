// The DaemonSet's pure rules, as upstream's pkg/controller/daemon/util and the predicates of
// daemon_controller.go: which nodes should run a daemon pod, the pod a node gets (the daemon
// tolerations, pinned to the node by required node affinity on metadata.name), which pods are of
// the current template, and the surge and unavailability budgets of a rolling update.
import type { DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { Affinity, Node, Pod, PodTemplateSpec, Toleration } from 'kubernetes-types/core/v1.js';
import { RequiredNodeAffinity } from '../../api/scheduling/node-affinity.js';
import { findMatchingUntoleratedTaint } from '../../api/scheduling/taints.js';
import { POD_REVISION_LABEL } from '../kit/history.js';
import { scaledValueFromIntOrPercent } from '../kit/intstr.js';

/** The pod label with the DaemonSet's template generation (upstream's DaemonSetTemplateGenerationKey). */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
/** The annotation the API server keeps the template generation in. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const exists = (key: string, effect: Toleration['effect']): Toleration => ({ key, operator: 'Exists', effect });

/** Upstream's AddOrUpdateDaemonPodTolerations: a daemon pod stays on nodes in trouble. */
export function daemonPodTolerations(hostNetwork: boolean): Toleration[] {
  const t = [
    exists('node.kubernetes.io/not-ready', 'NoExecute'),
    exists('node.kubernetes.io/unreachable', 'NoExecute'),
    exists('node.kubernetes.io/disk-pressure', 'NoSchedule'),
    exists('node.kubernetes.io/memory-pressure', 'NoSchedule'),
    exists('node.kubernetes.io/pid-pressure', 'NoSchedule'),
    exists('node.kubernetes.io/unschedulable', 'NoSchedule'),
  ];
  if (hostNetwork) t.push(exists('node.kubernetes.io/network-unavailable', 'NoSchedule'));
  return t;
}

const sameToleration = (a: Toleration, b: Toleration) =>
  (a.key ?? '') === (b.key ?? '') && (a.operator ?? 'Equal') === (b.operator ?? 'Equal') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '');

/** Upstream's AddOrUpdateTolerationInPodSpec for each daemon toleration: an equal one is replaced, else appended. */
export function withDaemonTolerations(tolerations: readonly Toleration[] | undefined, hostNetwork: boolean): Toleration[] {
  const out = [...(tolerations ?? [])];
  for (const t of daemonPodTolerations(hostNetwork)) {
    const i = out.findIndex((o) => sameToleration(o, t));
    if (i >= 0) out[i] = t;
    else out.push(t);
  }
  return out;
}

/** Upstream's ReplaceDaemonSetPodNodeNameNodeAffinity: the required node terms become one, metadata.name In [node]. */
export function replaceNodeNameNodeAffinity(affinity: Affinity | undefined, nodeName: string): Affinity {
  const terms = [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }];
  const out: Affinity = structuredClone(affinity ?? {});
  out.nodeAffinity ??= {};
  out.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: terms };
  return out;
}

/** Upstream's GetTargetNodeName: the bound node, else the one the pinning affinity names. */
export function targetNodeName(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  for (const term of pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    for (const f of term.matchFields ?? []) if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  }
  return undefined;
}

/**
 * The template generation (upstream's GetTemplateGeneration reads the API server's annotation);
 * without it, metadata.generation.
 */
export function templateGeneration(ds: DaemonSet): number | undefined {
  const annotation = ds.metadata?.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
  if (annotation !== undefined) {
    const n = Number(annotation);
    return Number.isInteger(n) ? n : undefined;
  }
  return ds.metadata?.generation;
}

/** Upstream's CreatePodTemplate: the daemon tolerations, the generation and revision-hash labels. */
export function daemonPodTemplate(ds: DaemonSet, hash: string): PodTemplateSpec {
  const template = structuredClone(ds.spec?.template ?? {});
  template.metadata ??= {};
  const generation = templateGeneration(ds);
  template.metadata.labels = { ...template.metadata.labels, ...(generation !== undefined ? { [TEMPLATE_GENERATION_LABEL]: String(generation) } : {}), ...(hash ? { [POD_REVISION_LABEL]: hash } : {}) };
  if (template.spec) template.spec.tolerations = withDaemonTolerations(template.spec.tolerations, template.spec.hostNetwork === true);
  return template;
}

/** Upstream's IsPodUpdated: the pod carries the current hash or the current template generation. */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata?.labels ?? {};
  return (generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === String(generation)) || (hash !== '' && labels[POD_REVISION_LABEL] === hash);
}

/**
 * Upstream's NodeShouldRunDaemonPod: shouldRun when the node fits the template's nodeName,
 * nodeSelector, required node affinity and (with the daemon tolerations) its NoSchedule and
 * NoExecute taints; shouldContinueRunning when only NoSchedule taints are untolerated.
 */
export function nodeShouldRunDaemonPod(node: Node, ds: DaemonSet): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = ds.spec?.template?.spec;
  const name = node.metadata?.name ?? '';
  if (spec?.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinueRunning: false };
  const pod: Pod = { spec: { ...spec, containers: spec?.containers ?? [], affinity: spec?.affinity, nodeSelector: spec?.nodeSelector } };
  if (!new RequiredNodeAffinity(pod).match(node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = withDaemonTolerations(spec?.tolerations, spec?.hostNetwork === true);
  const taints = node.spec?.taints;
  if (!findMatchingUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')) return { shouldRun: true, shouldContinueRunning: true };
  return { shouldRun: false, shouldContinueRunning: !findMatchingUntoleratedTaint(taints, tolerations, (t) => t.effect === 'NoExecute') };
}

const isRollingUpdate = (ds: DaemonSet) => (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** Upstream's UnavailableCount (maxUnavailable of the desired, rounded up; 1 when unset). */
export function unavailableCount(ds: DaemonSet, desired: number): number {
  if (!isRollingUpdate(ds)) return 0;
  return scaledValueFromIntOrPercent(ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1, desired, true);
}

/** Upstream's SurgeCount (maxSurge of the desired, rounded up; 0 when unset). */
export function surgeCount(ds: DaemonSet, desired: number): number {
  if (!isRollingUpdate(ds)) return 0;
  return scaledValueFromIntOrPercent(ds.spec?.updateStrategy?.rollingUpdate?.maxSurge ?? 0, desired, true);
}

/** Upstream's AllowsSurge: a rolling update whose maxSurge is not zero. */
export function allowsSurge(ds: DaemonSet): boolean {
  const maxSurge = ds.spec?.updateStrategy?.rollingUpdate?.maxSurge;
  if (!isRollingUpdate(ds) || maxSurge === undefined) return false;
  try {
    return scaledValueFromIntOrPercent(maxSurge, 100, true) !== 0;
  } catch {
    return false;
  }
}

const creationTime = (p: Pod) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;

/** Upstream's podByCreationTimestampAndPhase: scheduled pods first, then the oldest, then by name. */
export function sortByCreationTimestampAndPhase(pods: readonly Pod[]): Pod[] {
  return [...pods].sort((a, b) => {
    const sa = a.spec?.nodeName ? 0 : 1;
    const sb = b.spec?.nodeName ? 0 : 1;
    if (sa !== sb) return sa - sb;
    return creationTime(a) - creationTime(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');
  });
}
