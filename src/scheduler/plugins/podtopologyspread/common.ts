// The parsed form of a pod's topologySpreadConstraints shared by filtering and scoring: one
// selector per constraint (labelSelector plus the pod's values of matchLabelKeys), the defaults for
// minDomains (1), nodeAffinityPolicy (Honor) and nodeTaintsPolicy (Ignore), and which nodes and
// pods count toward a constraint.
import type { TopologySpreadConstraint } from 'kubernetes-types/core/v1.js';
import { labelSelectorAsSelector, newRequirement, selectorOf, type Labels, type Selector } from '../../../api/labels.js';
import type { Node, Pod } from '../../../api/types.js';
import type { PodInfo } from '../../framework/types.js';
import type { RequiredNodeAffinity } from '../../../api/scheduling/node-affinity.js';
import { findMatchingUntoleratedTaint } from '../../../api/scheduling/taints.js';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_TOPOLOGY_ZONE = 'topology.kubernetes.io/zone';

export type UnsatisfiableAction = 'DoNotSchedule' | 'ScheduleAnyway';

export interface Constraint {
  maxSkew: number;
  topologyKey: string;
  selector: Selector;
  minDomains: number;
  /** Honor: only nodes matching the pod's nodeSelector/required node affinity count. */
  nodeAffinityPolicy: string;
  /** Honor: nodes with taints the pod does not tolerate (NoSchedule, NoExecute) do not count. */
  nodeTaintsPolicy: string;
}

/** The selector narrowed to pods that also carry the given labels (upstream's mergeLabelSetWithSelector). */
function withLabels(selector: Selector, set: Labels): Selector {
  const reqs = selector.requirements();
  if (!reqs) return selector;
  return selectorOf([...reqs, ...Object.entries(set).map(([k, v]) => newRequirement(k, '=', [v]))]);
}

/** The constraints with the given whenUnsatisfiable, parsed; throws on an invalid label selector. */
export function constraintsOf(constraints: readonly TopologySpreadConstraint[], podLabels: Labels | undefined, action: UnsatisfiableAction): Constraint[] {
  const out: Constraint[] = [];
  for (const c of constraints) {
    if (c.whenUnsatisfiable !== action) continue;
    let selector = labelSelectorAsSelector(c.labelSelector);
    const keyed: Record<string, string> = {};
    for (const k of c.matchLabelKeys ?? []) {
      const v = podLabels?.[k];
      if (v !== undefined) keyed[k] = v;
    }
    if (Object.keys(keyed).length > 0) selector = withLabels(selector, keyed);
    out.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector,
      minDomains: c.minDomains ?? 1,
      nodeAffinityPolicy: c.nodeAffinityPolicy ?? 'Honor',
      nodeTaintsPolicy: c.nodeTaintsPolicy ?? 'Ignore',
    });
  }
  return out;
}

const doNotScheduleTaint = (t: { effect: string }) => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

/** Whether node counts toward constraint c under its node inclusion policies. */
export function nodeIncluded(c: Constraint, pod: Pod, node: Node, affinity: RequiredNodeAffinity): boolean {
  if (c.nodeAffinityPolicy === 'Honor' && !affinity.match(node)) return false;
  if (c.nodeTaintsPolicy === 'Honor' && findMatchingUntoleratedTaint(node.spec?.taints, pod.spec?.tolerations, doNotScheduleTaint)) return false;
  return true;
}

/** Whether the node has every constraint's topology key. */
export function hasAllTopologyKeys(labels: Labels | undefined, constraints: readonly Constraint[]): boolean {
  for (const c of constraints) if (labels?.[c.topologyKey] === undefined) return false;
  return true;
}

/** Pods of namespace ns matching the selector, not terminating; an empty selector counts none (as upstream). */
export function countMatching(pods: readonly PodInfo[], selector: Selector, ns: string): number {
  if (pods.length === 0 || selector.empty()) return 0;
  let n = 0;
  for (const p of pods) if (!p.terminating && p.namespace === ns && selector.matches(p.labels)) n++;
  return n;
}
