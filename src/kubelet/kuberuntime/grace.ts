// The grace period of a container kill (kuberuntime's setTerminationGracePeriod): a pod being
// deleted uses its deletion grace; a container killed for a failed liveness or startup probe uses
// that probe's own terminationGracePeriodSeconds when set; otherwise the pod's.
import type { Container, Pod } from '../../api/types.js';
import type { KillReason } from './planner.js';

/** Upstream's minimumGracePeriodInSeconds: containers always get a moment to stop. */
export const MINIMUM_GRACE_PERIOD_SECONDS = 2;

export function killGracePeriodSeconds(pod: Pod, container: Container, reason: KillReason): number {
  const deletion = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion !== undefined && deletion !== null) return deletion;
  const podGrace = pod.spec?.terminationGracePeriodSeconds;
  // Only a pod that never went through defaulting says nothing; upstream then allows the minimum.
  if (podGrace === undefined || podGrace === null) return MINIMUM_GRACE_PERIOD_SECONDS;
  const probe = reason === 'LivenessProbe' ? container.livenessProbe : reason === 'StartupProbe' ? container.startupProbe : undefined;
  return probe?.terminationGracePeriodSeconds ?? podGrace;
}
