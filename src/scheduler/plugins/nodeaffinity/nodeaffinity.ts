// NodeAffinity: Filter enforces spec.nodeSelector and required node affinity; PreFilter narrows the
// candidates to the node names of metadata.name matchFields; Score sums the weights of the matching
// preferred terms, normalized so the best node gets 100.
import type { Node, Pod } from '../../../api/types.js';
import { CycleState, ReadOnlyState, StateKey } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint, type ClusterEventWithHint } from '../../framework/events.js';
import {
  MAX_NODE_SCORE,
  type EnqueueExtensions,
  type FilterPlugin,
  type Plugin,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type ScoreExtensions,
  type ScorePlugin,
} from '../../framework/interface.js';
import { Code, Status, type Result } from '../../framework/status.js';
import type { NodeInfo } from '../../framework/types.js';
import { PreferredSchedulingTerms, RequiredNodeAffinity } from '../../../api/scheduling/node-affinity.js';
import { defaultNormalizeScore } from '../helper/normalize-score.js';

export const NAME = 'NodeAffinity';
export const ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector";
export const ERR_REASON_CONFLICT = 'pod affinity terms conflict';

const preFilterKey = new StateKey<ReadOnlyState<RequiredNodeAffinity>>(`PreFilter${NAME}`);
const preScoreKey = new StateKey<ReadOnlyState<PreferredSchedulingTerms>>(`PreScore${NAME}`);

/** Node names the required terms pin the pod to; undefined when some term allows any node. */
function nodeNamesOf(pod: Pod): Set<string> | undefined {
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  let names: Set<string> | undefined;
  for (const t of terms) {
    let termNames: Set<string> | undefined;
    for (const r of t.matchFields ?? []) {
      if (r.key !== 'metadata.name' || r.operator !== 'In') continue;
      const s = new Set(r.values ?? []);
      // A term's requirements are ANDed.
      termNames = termNames ? new Set([...termNames].filter((n) => s.has(n))) : s;
    }
    // Terms are ORed: one unrestricted term allows every node.
    if (!termNames) return undefined;
    names = new Set([...(names ?? []), ...termNames]);
  }
  return names;
}

const hasRequired = (pod: Pod) => Boolean(pod.spec?.nodeSelector || pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution);

export class NodeAffinity implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions {
  readonly name = NAME;

  preFilter(state: CycleState, pod: Pod): { result?: PreFilterResult; status?: Result } {
    if (!hasRequired(pod)) return { status: Status.of(Code.Skip) };
    state.write(preFilterKey, new ReadOnlyState(new RequiredNodeAffinity(pod)));
    const names = nodeNamesOf(pod);
    if (names && names.size === 0) return { status: Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT) };
    return names ? { result: { nodeNames: names } } : {};
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    const affinity = state.read(preFilterKey)?.value ?? new RequiredNodeAffinity(pod);
    return nodeInfo.node && affinity.match(nodeInfo.node) ? undefined : Status.of(Code.UnschedulableAndUnresolvable, ERR_REASON_POD);
  }

  preScore(state: CycleState, pod: Pod): Result {
    const terms = pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    if (terms.length === 0) return Status.of(Code.Skip);
    state.write(preScoreKey, new ReadOnlyState(new PreferredSchedulingTerms(terms)));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): number {
    const terms = state.read(preScoreKey)?.value ?? new PreferredSchedulingTerms(pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []);
    return nodeInfo.node ? terms.score(nodeInfo.node) : 0;
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  normalizeScore(_state: CycleState, _pod: Pod, scores: number[]): Result {
    return defaultNormalizeScore(MAX_NODE_SCORE, false, scores);
  }

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: 'Node', actionType: ActionType.Add | ActionType.UpdateNodeLabel },
        queueingHintFn: (pod, oldNode, newNode) => {
          const affinity = new RequiredNodeAffinity(pod);
          if (!affinity.match(newNode as Node)) return QueueingHint.QueueSkip;
          // A node that already matched did not change this plugin's verdict.
          return oldNode && affinity.match(oldNode as Node) ? QueueingHint.QueueSkip : QueueingHint.Queue;
        },
      },
    ];
  }
}

export const factory = (): Plugin => new NodeAffinity();
