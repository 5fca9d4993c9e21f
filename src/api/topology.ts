// Node topology labels as upstream's utilnode: the zone key the scheduler spreads over and the node
// lifecycle controller rate-limits by.
import type { Node } from './types.js';

const labelRegion = 'topology.kubernetes.io/region';
const labelZone = 'topology.kubernetes.io/zone';
const labelRegionBeta = 'failure-domain.beta.kubernetes.io/region';
const labelZoneBeta = 'failure-domain.beta.kubernetes.io/zone';

/** Upstream's utilnode.GetZoneKey: "" when the node has neither region nor zone. */
export function zoneKey(node: Node): string {
  const l = node.metadata?.labels ?? {};
  const region = l[labelRegion] ?? l[labelRegionBeta] ?? '';
  const zone = l[labelZone] ?? l[labelZoneBeta] ?? '';
  if (!region && !zone) return '';
  return `${region}:\x00:${zone}`;
}
