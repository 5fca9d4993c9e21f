// DefaultPreemption (PostFilter): when no node fits, look for nodes where evicting lower-priority
// pods would make room, keep the fewest victims (reprieving the most important pods that can stay),
// pick one node by upstream's criteria, then mark and delete its victims, drop lower-priority
// nominations there, and nominate the pod to it so the next cycle tries that node first.
// PodDisruptionBudgets are honoured as upstream does: pods whose eviction a budget does not allow are
// reprieved first, and the node with the fewest such victims wins (budgets may still be violated).
//
// Preemption runs synchronously inside the cycle (upstream's behaviour without async preemption).
import { rfc3339 } from '../../../api/time.js';
import type { Pod, PodCondition, PodDisruptionBudget } from '../../../api/types.js';
import { podDisruptionBudgetsFor } from '../../../api/pdb.js';
import { hasStatusCode } from '../../../api/errors.js';
import type { CycleState } from '../../framework/cycle-state.js';
import { Diagnosis, FitError, NodeToStatus } from '../../framework/diagnosis.js';
import type { Handle, NodeInfoLister, Plugin, PostFilterPlugin, PostFilterResult } from '../../framework/interface.js';
import { Code, isSuccess, Status, type Result } from '../../framework/status.js';
import { podKey, podPriority, podUID, type NodeInfo, type PodInfo } from '../../framework/types.js';
import { podRef } from '../../../api/pod/reference.js';

export const NAME = 'DefaultPreemption';
export const REASON_NO_VICTIMS = 'No preemption victims found for incoming pod';
export const REASON_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const MSG_PREEMPTION_POLICY_NEVER = 'not eligible due to preemptionPolicy=Never.';
export const MSG_TERMINATING_VICTIM = 'not eligible due to a terminating pod on the nominated node.';
/** The DisruptionTarget condition's reason on victims. */
export const REASON_PREEMPTION_BY_SCHEDULER = 'PreemptionByScheduler';

export interface DefaultPreemptionArgs {
  /** Dry-run at least this percentage of the candidate nodes (default 10). */
  minCandidateNodesPercentage?: number;
  /** ...and at least this many (default 100). */
  minCandidateNodesAbsolute?: number;
}

/** A node where the pod would fit once victims (most important first) are gone. */
export interface Candidate {
  nodeName: string;
  victims: Pod[];
  /** Victims whose eviction a PodDisruptionBudget does not allow. */
  numPDBViolations: number;
}

/** Upstream's ValidateDefaultPreemptionArgs. */
function validateArgs(percentage: number, absolute: number): void {
  const errs: string[] = [];
  if (!Number.isInteger(percentage) || percentage < 0 || percentage > 100) {
    errs.push(`minCandidateNodesPercentage: Invalid value: ${percentage}: not in valid range [0, 100]`);
  }
  if (!Number.isInteger(absolute) || absolute < 0) errs.push(`minCandidateNodesAbsolute: Invalid value: ${absolute}: not in valid range [0, inf)`);
  if (percentage === 0 && absolute === 0) errs.push('minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute');
  if (errs.length) throw new Error(`invalid DefaultPreemptionArgs: ${errs.join(', ')}`);
}

/** When the pod started (now if it has not: assumed or just bound pods). */
const startTime = (pod: Pod, now: number): number => (pod.status?.startTime ? Date.parse(pod.status.startTime) : now);

/** Higher priority first; among equals, the pod running longer. */
export function moreImportantPod(a: Pod, b: Pod, now: number): boolean {
  const pa = podPriority(a);
  const pb = podPriority(b);
  if (pa !== pb) return pa > pb;
  return startTime(a, now) < startTime(b, now);
}

/** The pod is going away because the scheduler preempted it. */
function terminatingByPreemption(pod: Pod): boolean {
  if (!pod.metadata?.deletionTimestamp) return false;
  const c = pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
  return c?.status === 'True' && c.reason === REASON_PREEMPTION_BY_SCHEDULER;
}

/** The nodes whose status has `code` (nodes never filtered share the absent status). */
function nodesForStatusCode(m: NodeToStatus, nodes: NodeInfoLister, code: Code): NodeInfo[] {
  if (m.absentNodesStatus.code === code) return nodes.list().filter((ni) => m.get(ni.name).code === code);
  const out: NodeInfo[] = [];
  for (const [name, s] of m.entries()) {
    const ni = s.code === code ? nodes.get(name) : undefined;
    if (ni) out.push(ni);
  }
  return out;
}

/** How many candidates to dry-run among numNodes potential nodes: percentage of them, at least absolute, at most all. */
export function numCandidates(numNodes: number, percentage: number, absolute: number): number {
  return Math.min(Math.max(Math.trunc((numNodes * percentage) / 100), absolute), numNodes);
}

/** Upstream's utilerrors.NewAggregate message. */
const aggregate = (errs: Error[]): Error => (errs.length === 1 ? errs[0]! : new Error(`[${errs.map((e) => e.message).join(', ')}]`));

/**
 * filterPodsWithPDBViolation: splits pods (in order) by whether evicting them, one after the other,
 * exceeds a budget covering them. A pod already in a budget's disruptedPods was approved by the API
 * server and spends nothing again.
 */
export function filterPodsWithPDBViolation(pods: readonly PodInfo[], pdbs: readonly PodDisruptionBudget[]): { violating: PodInfo[]; nonViolating: PodInfo[] } {
  const allowed = new Map(pdbs.map((pdb) => [pdb, pdb.status?.disruptionsAllowed ?? 0]));
  const violating: PodInfo[] = [];
  const nonViolating: PodInfo[] = [];
  for (const pi of pods) {
    let violated = false;
    for (const pdb of podDisruptionBudgetsFor(pdbs, pi.pod)) {
      if (Object.hasOwn(pdb.status?.disruptedPods ?? {}, pi.pod.metadata?.name ?? '')) continue;
      const left = allowed.get(pdb)! - 1;
      allowed.set(pdb, left);
      if (left < 0) violated = true;
    }
    (violated ? violating : nonViolating).push(pi);
  }
  return { violating, nonViolating };
}

/**
 * The candidate upstream's pickOneNodeForPreemption picks: the fewest PDB violations, then the lowest highest-priority victim, then
 * the smallest sum of priorities, then the fewest victims, then the latest start among the
 * highest-priority victims, then the first. Victims are ordered most important first.
 */
export function pickOneNodeForPreemption(candidates: readonly Candidate[], now: number): Candidate | undefined {
  const criteria: ((c: Candidate) => number)[] = [
    (c) => -c.numPDBViolations,
    (c) => -podPriority(c.victims[0]!),
    // Shifted by 2^31 so that more pods of a negative priority never look cheaper than fewer.
    (c) => -c.victims.reduce((sum, p) => sum + podPriority(p) + 2 ** 31, 0),
    (c) => -c.victims.length,
    (c) => {
      let top = podPriority(c.victims[0]!);
      let earliest = startTime(c.victims[0]!, now);
      for (const p of c.victims) {
        const prio = podPriority(p);
        if (prio > top) {
          top = prio;
          earliest = startTime(p, now);
        } else if (prio === top) earliest = Math.min(earliest, startTime(p, now));
      }
      return earliest;
    },
  ];
  let remaining = [...candidates];
  for (const score of criteria) {
    if (remaining.length <= 1) break;
    const scores = remaining.map(score);
    const best = Math.max(...scores);
    remaining = remaining.filter((_, i) => scores[i] === best);
  }
  return remaining[0];
}

class DefaultPreemption implements PostFilterPlugin {
  readonly name = NAME;

  constructor(
    private readonly handle: Handle,
    private readonly minCandidateNodesPercentage: number,
    private readonly minCandidateNodesAbsolute: number,
  ) {}

  async postFilter(state: CycleState, pod: Pod, m: NodeToStatus): Promise<{ result?: PostFilterResult; status?: Result }> {
    const { result, status } = await this.preempt(state, pod, m);
    const msg = status?.message();
    return { result, status: msg ? Status.of(status!.code, `preemption: ${msg}`) : status };
  }

  private async preempt(state: CycleState, pod: Pod, m: NodeToStatus): Promise<{ result?: PostFilterResult; status?: Result }> {
    const ineligible = this.ineligibleReason(pod, m);
    if (ineligible) return { status: Status.of(Code.Unschedulable, ineligible) };

    const numAllNodes = this.handle.snapshot().list().length;
    const { candidates, nodeToStatus, errors } = this.findCandidates(state, pod, m);
    if (candidates.length === 0) {
      if (errors.length) return { status: Status.error(aggregate(errors)) };
      const diagnosis = new Diagnosis();
      diagnosis.nodeToStatus = nodeToStatus;
      nodeToStatus.absentNodesStatus = Status.of(Code.UnschedulableAndUnresolvable, REASON_NOT_HELPFUL);
      // Clear a nomination the pod may still carry: no node can take it.
      return {
        result: { nominatingInfo: { nominatedNodeName: '', mode: 'Override' } },
        status: Status.of(Code.Unschedulable, new FitError(numAllNodes, diagnosis).message),
      };
    }

    const best = pickOneNodeForPreemption(candidates, this.handle.clock.now())!;
    this.handle.logger.debug({ pod: podKey(pod), node: best.nodeName, victims: best.victims.length }, 'the target node for the preemption is determined');
    const prepared = await this.prepareCandidate(best, pod);
    if (!isSuccess(prepared)) return { status: prepared };
    return { result: { nominatingInfo: { nominatedNodeName: best.nodeName, mode: 'Override' }, victims: best.victims.map(podKey) } };
  }

  /** Why the pod may not preempt now (upstream's PodEligibleToPreemptOthers), or undefined. */
  private ineligibleReason(pod: Pod, m: NodeToStatus): string | undefined {
    if (pod.spec?.preemptionPolicy === 'Never') return MSG_PREEMPTION_POLICY_NEVER;
    const nominated = pod.status?.nominatedNodeName;
    // A nominated node the filters now call unresolvable gets no grace: preempt elsewhere.
    if (!nominated || m.get(nominated).code === Code.UnschedulableAndUnresolvable) return undefined;
    // Victims of an earlier preemption still terminating there: wait for them rather than preempt more.
    const prio = podPriority(pod);
    for (const pi of this.handle.snapshot().get(nominated)?.pods ?? []) {
      if (podPriority(pi.pod) < prio && terminatingByPreemption(pi.pod)) return MSG_TERMINATING_VICTIM;
    }
    return undefined;
  }

  /**
   * Dry-runs preemption on the nodes that failed with Unschedulable (not UnschedulableAndUnresolvable),
   * from a random offset, until enough candidates are found.
   */
  private findCandidates(state: CycleState, pod: Pod, m: NodeToStatus): { candidates: Candidate[]; nodeToStatus: NodeToStatus; errors: Error[] } {
    const nodeToStatus = new NodeToStatus();
    const candidates: Candidate[] = [];
    const errors: Error[] = [];
    const potential = nodesForStatusCode(m, this.handle.snapshot(), Code.Unschedulable);
    if (potential.length === 0) return { candidates, nodeToStatus, errors };
    const pdbs = this.handle.workloads.podDisruptionBudgets?.() ?? [];
    const offset = Math.floor(Math.random() * potential.length);
    const wanted = numCandidates(potential.length, this.minCandidateNodesPercentage, this.minCandidateNodesAbsolute);
    for (let i = 0; i < potential.length && candidates.length < wanted; i++) {
      const ni = potential[(offset + i) % potential.length]!;
      const { victims, numPDBViolations, status } = this.selectVictimsOnNode(state.clone(), pod, ni.clone(), pdbs);
      if (isSuccess(status) && victims.length > 0) {
        candidates.push({ nodeName: ni.name, victims, numPDBViolations });
        continue;
      }
      const s = isSuccess(status) ? Status.error(new Error(`expected at least one victim pod on node "${ni.name}"`)) : status!;
      if (s.code === Code.Error) errors.push(s.asError());
      nodeToStatus.set(ni.name, s);
    }
    return { candidates, nodeToStatus, errors };
  }

  /**
   * The fewest pods to evict from the node (a copy, as is state) for the pod to fit: remove every
   * lower-priority pod, check the pod fits, then add them back most important first, keeping each
   * one that still lets the pod fit; those a budget protects are tried first, and counted when they
   * must go all the same.
   */
  private selectVictimsOnNode(state: CycleState, pod: Pod, ni: NodeInfo, pdbs: readonly PodDisruptionBudget[]): { victims: Pod[]; numPDBViolations: number; status: Result } {
    const h = this.handle;
    const remove = (pi: PodInfo): Result => {
      ni.removePod(pi.pod);
      return h.runPreFilterExtensionRemovePod(state, pod, pi, ni);
    };
    const prio = podPriority(pod);
    const potential = ni.pods.filter((pi) => podPriority(pi.pod) < prio);
    const fail = (status: Result) => ({ victims: [], numPDBViolations: 0, status });
    for (const pi of potential) {
      const s = remove(pi);
      if (!isSuccess(s)) return fail(s);
    }
    if (potential.length === 0) return fail(Status.of(Code.UnschedulableAndUnresolvable, REASON_NO_VICTIMS));
    // Not even without all of them: affinity to a victim would be the only way, which is not supported.
    const fits = h.runFilterPluginsWithNominatedPods(state, pod, ni);
    if (!isSuccess(fits)) return fail(fits);

    const now = h.clock.now();
    const byImportance = (a: Pod, b: Pod) => (moreImportantPod(a, b, now) ? -1 : moreImportantPod(b, a, now) ? 1 : 0);
    potential.sort((a, b) => byImportance(a.pod, b.pod));
    const { violating, nonViolating } = filterPodsWithPDBViolation(potential, pdbs);
    const victims: Pod[] = [];
    /** Adds the pod back; if the preemptor no longer fits, it goes again and is a victim. */
    const reprieve = (pi: PodInfo): { fits: boolean; status?: Result } => {
      ni.addPod(pi);
      const added = h.runPreFilterExtensionAddPod(state, pod, pi, ni);
      if (!isSuccess(added)) return { fits: false, status: added };
      if (isSuccess(h.runFilterPluginsWithNominatedPods(state, pod, ni))) return { fits: true };
      const s = remove(pi);
      if (!isSuccess(s)) return { fits: false, status: s };
      victims.push(pi.pod);
      return { fits: false };
    };
    let numPDBViolations = 0;
    for (const pi of violating) {
      const r = reprieve(pi);
      if (r.status) return fail(r.status);
      if (!r.fits) numPDBViolations++;
    }
    for (const pi of nonViolating) {
      const r = reprieve(pi);
      if (r.status) return fail(r.status);
    }
    // Most important first again, as the two passes interleave them.
    if (violating.length > 0 && nonViolating.length > 0) victims.sort(byImportance);
    return { victims, numPDBViolations, status: undefined };
  }

  /** Evicts the victims, then clears the nominations of lower-priority pods on the node. */
  private async prepareCandidate(c: Candidate, pod: Pod): Promise<Result> {
    try {
      await Promise.all(c.victims.filter((v) => !v.metadata?.deletionTimestamp).map((v) => this.preemptPod(c, pod, v)));
    } catch (err) {
      return Status.error(err);
    }
    // They may no longer fit there; clearing their nomination sends them back to the queue sooner.
    const prio = podPriority(pod);
    const lower = this.handle.nominator.nominatedPodsForNode(c.nodeName).filter((pi) => podPriority(pi.pod) < prio && pi.pod.status?.nominatedNodeName);
    await Promise.all(
      lower.map(({ pod: p }) =>
        this.handle.client
          .patchPodStatus(p.metadata?.namespace ?? '', p.metadata?.name ?? '', { nominatedNodeName: null })
          .catch((err: unknown) => this.handle.logger.warn({ err, pod: podKey(p) }, "cannot clear 'NominatedNodeName' field")),
      ),
    );
    return undefined;
  }

  /** A victim waiting at Permit is rejected; any other gets a DisruptionTarget condition and is deleted gracefully. */
  private async preemptPod(c: Candidate, preemptor: Pod, victim: Pod): Promise<void> {
    const log = { preemptor: podKey(preemptor), victim: podKey(victim), node: c.nodeName };
    const waiting = this.handle.getWaitingPod(podUID(victim));
    if (waiting) {
      waiting.reject(NAME, 'preempted');
      this.handle.logger.debug(log, 'preemptor pod preempted a waiting pod');
    } else {
      const deleted = await this.deleteVictim(preemptor, victim);
      this.handle.logger.debug(log, deleted ? 'preemptor pod preempted victim pod' : 'victim pod is already deleted');
      if (!deleted) return;
    }
    this.handle.eventRecorder.eventf(podRef(victim), 'Normal', 'Preempted', 'Preempting', `Preempted by pod ${preemptor.metadata?.uid ?? ''} on node ${c.nodeName}`, podRef(preemptor));
  }

  /** Marks the victim with the DisruptionTarget condition, then deletes it; false if it was already gone. */
  private async deleteVictim(preemptor: Pod, victim: Pod): Promise<boolean> {
    const { namespace = '', name = '' } = victim.metadata ?? {};
    const condition: PodCondition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: REASON_PREEMPTION_BY_SCHEDULER,
      message: `${preemptor.spec?.schedulerName ?? ''}: preempting to accommodate a higher priority pod`,
    };
    const existing = victim.status?.conditions?.find((x) => x.type === condition.type);
    try {
      if (!existing || existing.status !== condition.status || existing.reason !== condition.reason || existing.message !== condition.message) {
        const lastTransitionTime =
          existing?.status === condition.status ? existing.lastTransitionTime : rfc3339(this.handle.clock.now());
        await this.handle.client.patchPodStatus(namespace, name, { conditions: [{ ...condition, lastTransitionTime }] });
      }
      await this.handle.client.deletePod(namespace, name, victim.metadata?.uid);
      return true;
    } catch (err) {
      if (hasStatusCode(err, 404)) return false;
      throw err;
    }
  }
}

export const factory = (args: unknown, handle: Handle): Plugin => {
  const a = (args ?? {}) as DefaultPreemptionArgs;
  const percentage = a.minCandidateNodesPercentage ?? 10;
  const absolute = a.minCandidateNodesAbsolute ?? 100;
  validateArgs(percentage, absolute);
  return new DefaultPreemption(handle, percentage, absolute);
};
