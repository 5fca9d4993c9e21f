// SchedulingGates: a pod with spec.schedulingGates stays out of activeQ until they are all removed
// (the queue re-runs PreEnqueue when the pod changes).
import type { Pod } from '../../../api/types.js';
import type { EnqueueExtensions, Plugin, PreEnqueuePlugin } from '../../framework/interface.js';
import type { ClusterEventWithHint } from '../../framework/events.js';
import { Code, Status, type Result } from '../../framework/status.js';

export const NAME = 'SchedulingGates';

export class SchedulingGates implements PreEnqueuePlugin, EnqueueExtensions {
  readonly name = NAME;

  preEnqueue(pod: Pod): Result {
    const gates = pod.spec?.schedulingGates ?? [];
    if (gates.length === 0) return undefined;
    return Status.of(Code.UnschedulableAndUnresolvable, `waiting for scheduling gates: [${gates.map((g) => g.name).join(' ')}]`);
  }

  /** None: the queue re-checks a gated pod whenever the pod itself is updated. */
  eventsToRegister(): ClusterEventWithHint[] {
    return [];
  }
}

export const factory = (): Plugin => new SchedulingGates();
