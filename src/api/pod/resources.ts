// How a pod's containers add up to what the pod needs, as upstream's resourcehelper.PodRequests and
// PodLimits: one rule, over whichever measure the caller keeps (the scheduler's Resource, quota's
// quantities).
import type { Container, Pod } from '../types.js';
import { isRestartableInitContainer } from './status.js';

/** A measure's sum and element-wise maximum; either may update and return its first argument. */
export interface ResourceMeasure<T> {
  zero(): T;
  add(into: T, x: T): T;
  max(into: T, x: T): T;
}

/**
 * The pod's aggregate of `own` (overhead not included): regular containers and sidecars (restartable
 * init containers) run together; each other init container runs alone beside the sidecars started
 * before it; the pod needs the larger of the two.
 */
export function aggregatePodResources<T>(pod: Pod, own: (c: Container) => T, m: ResourceMeasure<T>): T {
  let total = m.zero();
  for (const c of pod.spec?.containers ?? []) total = m.add(total, own(c));
  let sidecars = m.zero();
  let initPeak = m.zero();
  for (const c of pod.spec?.initContainers ?? []) {
    const x = own(c);
    if (isRestartableInitContainer(c)) {
      total = m.add(total, x);
      sidecars = m.add(sidecars, x);
      initPeak = m.max(initPeak, sidecars);
    } else {
      initPeak = m.max(initPeak, m.add(x, sidecars));
    }
  }
  return m.max(total, initPeak);
}
