// The pod's QoS class as upstream's qos.ComputePodQOS: from cpu and memory requests and limits of
// containers and init containers (ephemeral ones cannot have resources), or of the pod-level
// resources when the pod sets them.
import type { Pod, ResourceRequirements } from '../types.js';
import { Quantity } from '../quantity.js';

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const qosResources = new Set(['cpu', 'memory']);

type Totals = Map<string, Quantity>;

/** Adds the positive cpu/memory quantities of `list` into `totals`; returns the names it added. */
function accumulate(totals: Totals, list: ResourceRequirements['requests']): Set<string> {
  const found = new Set<string>();
  for (const [name, raw] of Object.entries(list ?? {})) {
    if (!qosResources.has(name)) continue;
    const q = Quantity.from(raw as string | number);
    if (q.sign() <= 0) continue;
    found.add(name);
    const prev = totals.get(name);
    totals.set(name, prev ? q.add(prev) : q);
  }
  return found;
}

/** The QoS class recorded in status, else computed (qos.GetPodQOS). */
export function podQOS(pod: Pod): QOSClass {
  return (pod.status?.qosClass as QOSClass | undefined) || qosClass(pod);
}

/** qos.ComputePodQOS. */
export function qosClass(pod: Pod): QOSClass {
  const requests: Totals = new Map();
  const limits: Totals = new Map();
  let guaranteed = true;
  // Pod-level resources (PodLevelResources) are newer than the kubernetes-types release we build on.
  const podLevel = (pod.spec as { resources?: ResourceRequirements } | undefined)?.resources;
  if (podLevel) {
    accumulate(requests, podLevel.requests);
    if (Object.keys(podLevel.limits ?? {}).length > 0) {
      accumulate(limits, podLevel.limits);
      const named = Object.keys(podLevel.limits ?? {});
      if (!named.includes('cpu') || !named.includes('memory')) guaranteed = false;
    }
  } else {
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      accumulate(requests, c.resources?.requests);
      const found = accumulate(limits, c.resources?.limits);
      if (!found.has('cpu') || !found.has('memory')) guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of requests) {
      const lim = limits.get(name);
      if (!lim || !lim.equals(req)) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
