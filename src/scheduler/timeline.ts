// What a scheduling cycle tells the pod's timeline: the SchedulingAttempt summary, built from the
// same Diagnosis as the FailedScheduling message, capped so that a 5,000-node cluster stays small.
import type { SchedulingAttemptSummary } from '../api/timeline/types.js';
import type { Diagnosis } from './framework/diagnosis.js';
import type { PluginScores } from './framework/runtime.js';
import type { NodeInfo } from './framework/types.js';

export const MAX_REJECTED_NODES = 20;
export const MAX_TOP_SCORES = 5;

/** The per-plugin histogram and the first rejected nodes of a cycle's diagnosis. */
export function rejectionSummary(diagnosis: Diagnosis, numAllNodes: number): Pick<SchedulingAttemptSummary, 'plugins' | 'rejectedNodes'> {
  // Most cycles reject no node: nothing to count.
  if (diagnosis.nodeToStatus.size === 0 && numAllNodes === 0) return { plugins: [] };
  const byPlugin = new Map<string, SchedulingAttemptSummary['plugins'][number]>();
  for (const { plugin, reason, count } of diagnosis.rejections(numAllNodes)) {
    let p = byPlugin.get(plugin);
    if (!p) byPlugin.set(plugin, (p = { plugin, rejected: 0, reasons: {} }));
    p.reasons[reason] = (p.reasons[reason] ?? 0) + count;
  }
  // A node with several reasons from one plugin is one rejection by it.
  for (const [, s] of diagnosis.nodeToStatus.entries()) {
    const p = byPlugin.get(s.plugin);
    if (p && s.reasons.length > 0) p.rejected++;
  }
  const absent = diagnosis.nodeToStatus.absentNodesStatus;
  const absentCount = numAllNodes - diagnosis.nodeToStatus.size;
  const absentPlugin = byPlugin.get(absent.plugin);
  if (absentPlugin && absentCount > 0 && absent.reasons.length > 0) absentPlugin.rejected += absentCount;

  const rejectedNodes: NonNullable<SchedulingAttemptSummary['rejectedNodes']> = [];
  for (const [node, s] of diagnosis.nodeToStatus.entries()) {
    if (rejectedNodes.length === MAX_REJECTED_NODES) break;
    rejectedNodes.push({ node, plugin: s.plugin, reason: s.message() });
  }
  const plugins = [...byPlugin.values()].sort((a, b) => b.rejected - a.rejected || (a.plugin < b.plugin ? -1 : 1));
  return rejectedNodes.length ? { plugins, rejectedNodes } : { plugins };
}

/**
 * The best-scored nodes (up to MAX_TOP_SCORES, best first) with each plugin's weighted part; the
 * chosen node (one of the best, picked at random among ties) is always among them.
 */
export function topScores(nodes: readonly NodeInfo[], totals: readonly number[], byPlugin: readonly PluginScores[], chosen: number): NonNullable<SchedulingAttemptSummary['topScores']> {
  // A bounded insertion: MAX_TOP_SCORES comparisons per node at most.
  const top: number[] = [];
  for (let i = 0; i < totals.length; i++) {
    if (top.length === MAX_TOP_SCORES && totals[i]! <= totals[top[top.length - 1]!]!) continue;
    let at = top.length;
    while (at > 0 && totals[top[at - 1]!]! < totals[i]!) at--;
    top.splice(at, 0, i);
    if (top.length > MAX_TOP_SCORES) top.pop();
  }
  if (!top.includes(chosen)) top[top.findLastIndex((i) => totals[i] === totals[chosen])] = chosen;
  return top.map((i) => {
    const plugins: Record<string, number> = {};
    for (const p of byPlugin) plugins[p.plugin] = p.scores[i]! * p.weight;
    return { node: nodes[i]!.name, total: totals[i]!, plugins };
  });
}
