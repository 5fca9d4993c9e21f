// TaintToleration: Filter rejects nodes with a NoSchedule or NoExecute taint the pod does not
// tolerate; Score prefers nodes with fewer untolerated PreferNoSchedule taints.
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';
import type { Node, Pod } from '../../../api/types.js';
import { CycleState, ReadOnlyState, StateKey } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import { MAX_NODE_SCORE, type EnqueueExtensions, type FilterPlugin, type Plugin, type PreScorePlugin, type ScoreExtensions, type ScorePlugin } from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { NodeInfo } from '../../framework/types.js';
import { defaultNormalizeScore } from '../helper/normalize-score.js';
import { findMatchingUntoleratedTaint, tolerationsTolerateTaint } from '../../../api/scheduling/taints.js';

export const NAME = 'TaintToleration';
/** The reason for an untolerated taint, as upstream words it. */
export const untoleratedTaintReason = (t: Taint): string => `node(s) had untolerated taint {${t.key}: ${t.value ?? ''}}`;

const hardEffect = (t: Taint) => t.effect === 'NoSchedule' || t.effect === 'NoExecute';

/** The pod's tolerations that can tolerate PreferNoSchedule taints. */
const preScoreKey = new StateKey<ReadOnlyState<Toleration[]>>(`PreScore${NAME}`);

export class TaintToleration implements FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions {
  readonly name = NAME;

  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    const taint = findMatchingUntoleratedTaint(nodeInfo.node?.spec?.taints, pod.spec?.tolerations, hardEffect);
    return taint ? Status.of(Code.UnschedulableAndUnresolvable, untoleratedTaintReason(taint)) : undefined;
  }

  preScore(state: CycleState, pod: Pod): Result {
    const tolerations = (pod.spec?.tolerations ?? []).filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
    state.write(preScoreKey, new ReadOnlyState(tolerations));
    return undefined;
  }

  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): number {
    const tolerations = state.read(preScoreKey)?.value ?? [];
    let count = 0;
    for (const taint of nodeInfo.node?.spec?.taints ?? []) {
      if (taint.effect === 'PreferNoSchedule' && !tolerationsTolerateTaint(tolerations, taint)) count++;
    }
    return count;
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  normalizeScore(_state: CycleState, _pod: Pod, scores: number[]): Result {
    return defaultNormalizeScore(MAX_NODE_SCORE, true, scores);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeTaint },
        queueingHintFn: (pod, _old, node) =>
          findMatchingUntoleratedTaint((node as Node).spec?.taints, pod.spec?.tolerations, hardEffect) ? QueueingHint.QueueSkip : QueueingHint.Queue,
      },
    ];
  }
}

export const factory = (): Plugin => new TaintToleration();
