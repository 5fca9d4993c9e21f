// The scheduler (upstream's kube-scheduler): informers feed the cache and the queue; one loop pops a
// pod, refreshes the snapshot, filters and scores synchronously, assumes the pod on the chosen node
// and hands it to an asynchronous binding cycle, so binds overlap the next pods' scheduling.
// Failures report PodScheduled=False (reason Unschedulable and upstream's message) through
// pods/status and a FailedScheduling event, and the pod waits in the queue for a helpful event.
import { rfc3339 } from '../api/time.js';
import type { Namespace, Node, Pod, PodCondition, PodDisruptionBudget, ReplicaSet, Service } from '../api/types.js';
import { isPodPhaseTerminal, POD_REASON_SCHEDULING_GATED } from '../api/pod/status.js';
import { Client } from '../client/client.js';
import { namespaceIndex, unwrapDeleted } from '../client/indexer.js';
import { SharedInformer } from '../client/informer.js';
import { realClock, type Clock, type Timer } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { Cache } from './cache/cache.js';
import { Snapshot } from './cache/snapshot.js';
import { schedulerClientFrom, type SchedulerClient } from './client.js';
import { EventRecorder, truncateNote } from '../client/record/eventsv1.js';
import { CycleState } from './framework/cycle-state.js';
import { Diagnosis, FitError, NoNodesAvailableError } from './framework/diagnosis.js';
import { AssignedPodAdd, AssignedPodDelete, NodeAdd, assignedPodUpdateActions, nodeUpdateActions, type ClusterEventWithHint } from './framework/events.js';
import type { NominatingInfo, QueuedPodInfo, WorkloadLister } from './framework/interface.js';
import { Framework, type PluginScores, type Profile, type Registry } from './framework/runtime.js';
import { Code, isSuccess, Status } from './framework/status.js';
import { PodInfo, podKey, podUID, type NodeInfo } from './framework/types.js';
import { SchedulingQueue } from './queue/scheduling-queue.js';
import { every } from '../util/periodic.js';
import type { Service as LifecycleService } from '../util/lifecycle.js';
import { DEFAULT_SCHEDULER_NAME, defaultProfile, inTreeRegistry } from './registry.js';
import { podRef } from '../api/pod/reference.js';
import type { SchedulingAttemptSummary, TimelineStep } from '../api/timeline/types.js';
import { stepTime, type TimelineRecorder } from '../client/timeline/recorder.js';
import { SchedulerMetrics } from './metrics.js';
import { rejectionSummary, topScores } from './timeline.js';

/** Below this many nodes every node is filtered. */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** The adaptive percentage never goes below this. */
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/**
 * How many feasible nodes to find before filtering stops (upstream's numFeasibleNodesToFind):
 * percentage 0 means adaptive, 50% at 100 nodes falling by 1% per 125 nodes, at least 5%, and
 * never fewer than 100 nodes.
 */
export function numFeasibleNodesToFind(percentage: number, numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let p = percentage;
  if (p === 0) p = Math.max(50 - Math.trunc(numAllNodes / 125), MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
  const n = Math.trunc((numAllNodes * p) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}

export interface SchedulerOptions {
  client: Client | SchedulerClient;
  clock?: Clock;
  logger: Logger;
  /** Default: the default profile (schedulerName default-scheduler). */
  profiles?: Profile[];
  /** Default: the in-tree plugins. */
  registry?: Registry;
  /** Global percentageOfNodesToScore; 0 (default) is adaptive. */
  percentageOfNodesToScore?: number;
  /** See CacheOptions.assumedPodTTLMs. */
  assumedPodTTLMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Where the pods' scheduling steps go (default none). */
  timeline?: TimelineRecorder;
}

interface ScheduleResult {
  host: string;
  evaluatedNodes: number;
  feasibleNodes: number;
  /** The cycle's verdicts for the pod's timeline. */
  summary: SchedulingAttemptSummary;
}

const isAssigned = (pod: Pod) => Boolean(pod.spec?.nodeName);
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class Scheduler implements LifecycleService {
  readonly name = 'kube-scheduler';
  readonly cache: Cache;
  readonly queue: SchedulingQueue;
  readonly metrics = new SchedulerMetrics();
  private readonly snapshot = new Snapshot();
  private readonly frameworks = new Map<string, Framework>();
  private readonly client: SchedulerClient;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** Absent: no steps, and no attempt summaries worked out. */
  private readonly timeline?: TimelineRecorder;
  /** One per profile: events name the profile's scheduler as their reportingController. */
  private readonly recorders = new Map<string, EventRecorder>();
  private readonly podInformer: SharedInformer<Pod>;
  private readonly nodeInformer: SharedInformer<Node>;
  private readonly namespaceInformer: SharedInformer<Namespace>;
  /** Only when the client serves them (default topology spreading). */
  private readonly serviceInformer?: SharedInformer<Service>;
  private readonly replicaSetInformer?: SharedInformer<ReplicaSet>;
  private readonly pdbInformer?: SharedInformer<PodDisruptionBudget>;
  private readonly pending = new Set<Promise<void>>();
  private readonly percentageOfNodesToScore: number;
  private nextStartNodeIndex = 0;
  private abort?: AbortController;
  private loop?: Promise<void>;
  private cleanupTimer?: Timer;

  constructor(private readonly opts: SchedulerOptions) {
    this.client = opts.client instanceof Client ? schedulerClientFrom(opts.client) : opts.client;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger;
    this.timeline = opts.timeline;
    this.percentageOfNodesToScore = opts.percentageOfNodesToScore ?? 0;
    this.cache = new Cache({ clock: this.clock, assumedPodTTLMs: opts.assumedPodTTLMs });
    // The queue's nominator is needed by the frameworks, and the queue needs their plugins: the
    // frameworks reach the queue through this indirection.
    const nominator = { nominatedPodsForNode: (node: string) => this.queue.nominatedPodsForNode(node) };
    const events = new Map<string, ClusterEventWithHint[]>();
    const workloads: WorkloadLister = {
      services: (ns) => this.serviceInformer?.indexer.byIndex(namespaceIndex, ns) ?? [],
      replicaSet: (ns, name) => this.replicaSetInformer?.indexer.getByKey(`${ns}/${name}`),
      podDisruptionBudgets: () => this.pdbInformer?.indexer.list() ?? [],
    };
    for (const profile of opts.profiles ?? [defaultProfile()]) {
      const recorder = new EventRecorder({ sink: this.client, clock: this.clock, logger: this.logger, reportingController: profile.schedulerName });
      const fwk = new Framework({
        registry: opts.registry ?? inTreeRegistry,
        profile,
        client: this.client,
        clock: this.clock,
        logger: this.logger.child({ profile: profile.schedulerName }),
        snapshot: this.snapshot,
        nominator,
        namespaceLabels: (ns) => this.namespaceInformer.indexer.getByKey(ns)?.metadata?.labels,
        workloads,
        eventRecorder: recorder,
      });
      this.frameworks.set(profile.schedulerName, fwk);
      this.recorders.set(profile.schedulerName, recorder);
      for (const [name, evs] of fwk.eventsToRegister()) events.set(name, [...(events.get(name) ?? []), ...evs]);
    }
    const first = [...this.frameworks.values()][0]!;
    this.queue = new SchedulingQueue({
      clock: this.clock,
      less: (a, b) => first.less(a, b),
      preEnqueue: (pod) => this.frameworkForPod(pod)?.runPreEnqueuePlugins(pod),
      eventsToRegister: events,
      onGated: (pod, s, newly) => this.reportGated(pod, s, newly),
      onActivated: (pInfo, first, ungated) => this.reportActivated(pInfo, first, ungated),
      initialBackoffMs: opts.initialBackoffMs,
      maxBackoffMs: opts.maxBackoffMs,
    });
    const onError = (err: unknown) => this.logger.warn({ err }, 'informer error');
    this.podInformer = new SharedInformer<Pod>(this.client.pods, { clock: this.clock, onError });
    this.nodeInformer = new SharedInformer<Node>(this.client.nodes, { clock: this.clock, onError });
    this.namespaceInformer = new SharedInformer<Namespace>(this.client.namespaces, { clock: this.clock, onError });
    if (this.client.services) this.serviceInformer = new SharedInformer<Service>(this.client.services, { clock: this.clock, onError });
    if (this.client.replicaSets) this.replicaSetInformer = new SharedInformer<ReplicaSet>(this.client.replicaSets, { clock: this.clock, onError });
    if (this.client.podDisruptionBudgets) this.pdbInformer = new SharedInformer<PodDisruptionBudget>(this.client.podDisruptionBudgets, { clock: this.clock, onError });
    this.podInformer.addEventHandler({
      onAdd: (pod) => this.onPodAdd(pod),
      onUpdate: (oldPod, newPod) => this.onPodUpdate(oldPod, newPod),
      onDelete: (obj) => this.onPodDelete(unwrapDeleted(obj)),
    });
    this.nodeInformer.addEventHandler({
      onAdd: (node) => {
        this.cache.addNode(node);
        this.queue.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, node);
      },
      onUpdate: (oldNode, newNode) => {
        this.cache.updateNode(newNode);
        const actions = nodeUpdateActions(oldNode, newNode);
        if (actions) this.queue.moveAllToActiveOrBackoffQueue({ resource: 'Node', actionType: actions }, oldNode, newNode);
      },
      onDelete: (obj) => this.cache.removeNode(unwrapDeleted(obj).metadata?.name ?? ''),
    });
  }

  async start(): Promise<void> {
    if (this.abort) return;
    this.abort = new AbortController();
    this.podInformer.start();
    this.nodeInformer.start();
    this.namespaceInformer.start();
    this.serviceInformer?.start();
    this.replicaSetInformer?.start();
    this.pdbInformer?.start();
    this.queue.run();
    for (const r of this.recorders.values()) r.start();
    if (this.opts.assumedPodTTLMs) this.cleanupTimer = every(this.clock, 1_000, () => this.cleanupAssumedPods());
    this.loop = this.run(this.abort.signal);
  }

  /** Stops scheduling and waits for bindings, status updates and events in progress. */
  async stop(): Promise<void> {
    this.abort?.abort();
    this.queue.close();
    for (const fwk of this.frameworks.values()) fwk.iterateOverWaitingPods((wp) => wp.reject('', 'scheduler stopped'));
    this.cleanupTimer?.cancel();
    await this.loop;
    await Promise.allSettled([...this.pending]);
    await Promise.all([...this.informers().map((i) => i.stop()), ...[...this.recorders.values()].map((r) => r.stop())]);
  }

  private async run(signal: AbortSignal): Promise<void> {
    try {
      await Promise.all(this.informers().map((i) => i.waitForSync(signal)));
    } catch {
      return;
    }
    while (!signal.aborted) {
      const pInfo = await this.queue.pop();
      if (!pInfo || signal.aborted) return;
      try {
        await this.scheduleOne(pInfo);
      } catch (err) {
        this.logger.error({ err, pod: podKey(pInfo.podInfo.pod) }, 'scheduling cycle failed');
        this.queue.done(podUID(pInfo.podInfo.pod));
      }
      // Let informer events and binding responses in between pods.
      await yieldToEventLoop();
    }
  }

  private informers(): Pick<SharedInformer<Pod>, 'stop' | 'waitForSync'>[] {
    const all = [this.podInformer, this.nodeInformer, this.namespaceInformer, this.serviceInformer, this.replicaSetInformer, this.pdbInformer];
    return all.filter((i) => i !== undefined);
  }

  private frameworkForPod(pod: Pod): Framework | undefined {
    return this.frameworks.get(pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME);
  }

  /** Only called for pods of one of our profiles. */
  private recorderFor(pod: Pod): EventRecorder {
    return this.recorders.get(pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME)!;
  }

  // ---- one pod ----

  private async scheduleOne(pInfo: QueuedPodInfo): Promise<void> {
    const pod = pInfo.podInfo.pod;
    const uid = podUID(pod);
    const fwk = this.frameworkForPod(pod);
    if (!fwk || pod.metadata?.deletionTimestamp || this.cache.isAssumedPod(pod)) {
      this.queue.done(uid);
      return;
    }
    const podCycle = this.queue.currentSchedulingCycle();
    const cycleStart = this.clock.now();
    const state = new CycleState();
    this.cache.updateSnapshot(this.snapshot);

    let result: ScheduleResult;
    try {
      result = this.schedulePod(fwk, state, pod);
    } catch (err) {
      // Errors and "no nodes" clear a stale nomination; a FitError keeps it unless PostFilter says otherwise.
      let nominatingInfo: NominatingInfo | undefined = { nominatedNodeName: '', mode: 'Override' };
      let status: Status;
      if (err instanceof FitError) {
        nominatingInfo = undefined;
        if (fwk.hasPostFilterPlugins()) {
          const post = await fwk.runPostFilterPlugins(state, pod, err.diagnosis.nodeToStatus);
          err.diagnosis.postFilterMsg = post.status.message();
          nominatingInfo = post.result?.nominatingInfo;
          const node = nominatingInfo?.nominatedNodeName;
          if (node) {
            const victims = post.result?.victims ?? [];
            this.recordStep(pod, {
              step: 'Nominated',
              start: stepTime(this.clock.now()),
              detail: `preemption nominated ${node}${victims.length ? `, evicting ${victims.join(', ')}` : ''}`,
              attributes: { node, victims: victims.join(', ') },
            });
          }
        }
        status = new Status(Code.Unschedulable, [err.message], err);
      } else if (err instanceof NoNodesAvailableError) {
        status = new Status(Code.UnschedulableAndUnresolvable, [err.message], err);
      } else {
        status = Status.error(err);
      }
      this.handleSchedulingFailure(pInfo, status, podCycle, cycleStart, nominatingInfo);
      return;
    }

    const assumed: Pod = { ...pod, spec: { ...pod.spec!, nodeName: result.host } };
    this.cache.assumePod(pInfo.podInfo.withPod(assumed));
    this.queue.deleteNominatedPodIfExists(pod);

    const reserve = fwk.runReservePluginsReserve(state, assumed, result.host);
    const permit = isSuccess(reserve) ? fwk.runPermitPlugins(state, assumed, result.host) : reserve;
    if (!isSuccess(permit) && permit!.code !== Code.Wait) {
      fwk.runReservePluginsUnreserve(state, assumed, result.host);
      this.cache.forgetPod(assumed);
      this.handleSchedulingFailure(pInfo, permit!, podCycle, cycleStart);
      return;
    }
    this.recordStep(pod, {
      step: 'SchedulingAttempt',
      start: stepTime(cycleStart),
      end: stepTime(this.clock.now()),
      detail: `assigned to ${result.host} (${result.feasibleNodes} of ${result.summary.nodes} nodes feasible)`,
      attributes: { attempt: pInfo.attempts },
      scheduling: result.summary,
    });
    this.track(this.bindingCycle(fwk, state, pInfo, assumed, result, podCycle, cycleStart));
  }

  private schedulePod(fwk: Framework, state: CycleState, pod: Pod): ScheduleResult {
    const all = this.snapshot.list();
    if (all.length === 0) throw new NoNodesAvailableError();
    const { feasible, diagnosis } = this.findNodesThatFitPod(fwk, state, pod);
    if (feasible.length === 0) throw new FitError(all.length, diagnosis);
    const evaluatedNodes = feasible.length + diagnosis.nodeToStatus.size;
    // Only the nodes filtered count as rejected: the search may stop before the others.
    const summary: SchedulingAttemptSummary = { result: 'Scheduled', nodes: all.length, feasible: feasible.length, plugins: [] };
    if (this.timeline) Object.assign(summary, rejectionSummary(diagnosis, diagnosis.nodeToStatus.size));
    if (feasible.length === 1) return { host: (summary.node = feasible[0]!.name), evaluatedNodes, feasibleNodes: 1, summary };
    const { host, top } = this.prioritizeAndSelect(fwk, state, pod, feasible);
    summary.node = host;
    if (top) summary.topScores = top;
    return { host, evaluatedNodes, feasibleNodes: feasible.length, summary };
  }

  private findNodesThatFitPod(fwk: Framework, state: CycleState, pod: Pod): { feasible: NodeInfo[]; diagnosis: Diagnosis } {
    const diagnosis = new Diagnosis();
    const all = this.snapshot.list();
    const pre = fwk.runPreFilterPlugins(state, pod);
    diagnosis.unschedulablePlugins = pre.unschedulablePlugins;
    if (!isSuccess(pre.status)) {
      const s = pre.status!;
      if (!s.isRejected()) throw s.asError();
      // Every node shares the PreFilter verdict, for preemption and for the message.
      diagnosis.nodeToStatus.absentNodesStatus = s;
      diagnosis.preFilterMsg = s.message();
      diagnosis.addPluginStatus(s);
      return { feasible: [], diagnosis };
    }
    // A node nominated by an earlier preemption is likely the only fit: try it first.
    const nominated = pod.status?.nominatedNodeName ? this.snapshot.get(pod.status.nominatedNodeName) : undefined;
    if (nominated) {
      const feasible = this.findNodesThatPassFilters(fwk, state, pod, diagnosis, [nominated]);
      if (feasible.length > 0) return { feasible, diagnosis };
    }
    let nodes: readonly NodeInfo[] = all;
    if (pre.result?.nodeNames) {
      nodes = [...pre.result.nodeNames].map((n) => this.snapshot.get(n)).filter((n): n is NodeInfo => n !== undefined);
      const plugins = [...pre.unschedulablePlugins].sort().join(' ');
      diagnosis.nodeToStatus.absentNodesStatus = Status.of(Code.UnschedulableAndUnresolvable, `node(s) didn't satisfy plugin(s) [${plugins}]`).withPlugin(plugins);
    }
    const feasible = this.findNodesThatPassFilters(fwk, state, pod, diagnosis, nodes);
    // Start the next pod's search after the nodes this one looked at, so all nodes get their turn.
    this.nextStartNodeIndex = (this.nextStartNodeIndex + feasible.length + diagnosis.nodeToStatus.size) % all.length;
    return { feasible, diagnosis };
  }

  /** Filters nodes from nextStartNodeIndex round, stopping once numFeasibleNodesToFind fit. */
  private findNodesThatPassFilters(fwk: Framework, state: CycleState, pod: Pod, diagnosis: Diagnosis, nodes: readonly NodeInfo[]): NodeInfo[] {
    const n = nodes.length;
    if (n === 0) return [];
    const toFind = fwk.hasScorePlugins() ? numFeasibleNodesToFind(fwk.percentageOfNodesToScore ?? this.percentageOfNodesToScore, n) : 1;
    const start = this.nextStartNodeIndex % n;
    const feasible: NodeInfo[] = [];
    if (!fwk.hasFilterPlugins()) {
      for (let i = 0; i < toFind; i++) feasible.push(nodes[(start + i) % n]!);
      return feasible;
    }
    const filter = fwk.prepareFilter(state, pod);
    for (let i = 0; i < n && feasible.length < toFind; i++) {
      const ni = nodes[(start + i) % n]!;
      const s = filter(ni);
      if (isSuccess(s)) {
        feasible.push(ni);
        continue;
      }
      if (s!.code === Code.Error) throw s!.asError();
      diagnosis.nodeToStatus.set(ni.name, s!);
      diagnosis.addPluginStatus(s!);
    }
    return feasible;
  }

  /** Scores the feasible nodes and picks one of the best at random (upstream's reservoir sampling). */
  private prioritizeAndSelect(fwk: Framework, state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): { host: string; top?: SchedulingAttemptSummary['topScores'] } {
    let totals: number[];
    let top: SchedulingAttemptSummary['topScores'];
    let scored: PluginScores[] | undefined;
    if (!fwk.hasScorePlugins()) totals = new Array<number>(nodes.length).fill(1);
    else {
      const pre = fwk.runPreScorePlugins(state, pod, nodes);
      if (!isSuccess(pre)) throw pre!.asError();
      const result = fwk.runScorePlugins(state, pod, nodes);
      if (!isSuccess(result.status)) throw result.status!.asError();
      totals = result.totals!;
      scored = result.byPlugin;
    }
    let best = 0;
    let ties = 1;
    for (let i = 1; i < totals.length; i++) {
      if (totals[i]! > totals[best]!) {
        best = i;
        ties = 1;
      } else if (totals[i] === totals[best] && Math.random() * ++ties < 1) best = i;
    }
    if (scored && this.timeline) top = topScores(nodes, totals, scored, best);
    return { host: nodes[best]!.name, top };
  }

  private async bindingCycle(
    fwk: Framework,
    state: CycleState,
    pInfo: QueuedPodInfo,
    assumed: Pod,
    result: ScheduleResult,
    podCycle: number,
    cycleStart: number,
  ): Promise<void> {
    const host = result.host;
    let s = await fwk.waitOnPermit(assumed);
    if (isSuccess(s)) s = await fwk.runPreBindPlugins(state, assumed, host);
    const bindStart = this.clock.now();
    if (isSuccess(s)) s = await fwk.runBindPlugins(state, assumed, host);
    if (!isSuccess(s)) {
      fwk.runReservePluginsUnreserve(state, assumed, host);
      this.cache.forgetPod(assumed);
      // The resources it held are free again: that may help others.
      this.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, assumed, undefined);
      this.handleSchedulingFailure(pInfo, s!, podCycle, cycleStart);
      return;
    }
    const bound = this.clock.now();
    this.recordStep(assumed, { step: 'Bound', start: stepTime(bindStart), end: stepTime(bound), detail: `bound to ${host}`, attributes: { node: host } });
    this.metrics.podBound(pInfo, bound);
    this.cache.finishBinding(assumed);
    const { namespace, name } = assumed.metadata ?? {};
    this.logger.debug({ pod: podKey(assumed), node: host, evaluatedNodes: result.evaluatedNodes, feasibleNodes: result.feasibleNodes }, 'successfully bound pod to node');
    this.recorderFor(assumed).eventf(podRef(assumed), 'Normal', 'Scheduled', 'Binding', `Successfully assigned ${namespace}/${name} to ${host}`);
    fwk.runPostBindPlugins(state, assumed, host);
    this.queue.done(podUID(assumed));
  }

  private handleSchedulingFailure(pInfo: QueuedPodInfo, status: Status, podCycle: number, cycleStart: number, nominatingInfo?: NominatingInfo): void {
    const pod = pInfo.podInfo.pod;
    const err = status.error;
    const rejected = status.isRejected();
    if (err instanceof FitError) {
      pInfo.unschedulablePlugins = err.diagnosis.unschedulablePlugins;
      pInfo.pendingPlugins = err.diagnosis.pendingPlugins;
      this.logger.debug({ pod: podKey(pod), err: err.message }, 'unable to schedule pod; no fit; waiting');
    } else {
      pInfo.unschedulablePlugins = new Set(rejected && status.plugin ? [status.plugin] : []);
      pInfo.pendingPlugins = new Set();
      if (!rejected) this.logger.error({ pod: podKey(pod), err: status.message() }, 'error scheduling pod; retrying');
    }
    // Requeue the informer's latest version, unless it is gone or got bound meanwhile.
    const cached = this.podInformer.indexer.get(pod);
    let queue: string | undefined;
    if (!cached || isAssigned(cached)) this.queue.done(podUID(pod));
    else {
      pInfo.podInfo = new PodInfo(cached);
      queue = this.queue.addUnschedulableIfNotPresent(pInfo, podCycle);
    }
    if (nominatingInfo) this.queue.addNominatedPod(pInfo.podInfo, nominatingInfo);
    const message = status.message();
    const note = truncateNote(message);
    this.recorderFor(pod).eventf(podRef(pod), 'Warning', 'FailedScheduling', 'Scheduling', note);
    this.recordFailedAttempt(pInfo, status, note, cycleStart, queue);
    this.updatePodScheduledCondition(
      cached ?? pod,
      { type: 'PodScheduled', status: 'False', reason: rejected ? 'Unschedulable' : 'SchedulerError', message },
      nominatingInfo,
    );
  }

  /**
   * The attempt's step, with the FailedScheduling event's very note as its message; an attempt that
   * repeats the last one's message extends that series instead of adding a row.
   */
  private recordFailedAttempt(pInfo: QueuedPodInfo, status: Status, note: string, cycleStart: number, queue: string | undefined): void {
    const now = this.clock.now();
    const err = status.error;
    const summary: SchedulingAttemptSummary =
      err instanceof FitError
        ? { result: 'Unschedulable', nodes: err.numAllNodes, feasible: 0, ...rejectionSummary(err.diagnosis, err.numAllNodes), message: note }
        : { result: status.isRejected() ? 'Unschedulable' : 'Error', nodes: this.snapshot.nodeInfoList.length, feasible: 0, plugins: [], message: note };
    const step: Omit<TimelineStep, 'component'> = { step: 'SchedulingAttempt', start: stepTime(cycleStart), end: stepTime(now), detail: note, scheduling: summary };
    step.attributes = queue ? { attempt: pInfo.attempts, queue } : { attempt: pInfo.attempts };
    const series = pInfo.failureSeries;
    if (series && series.message === note) {
      series.count++;
      step.start = stepTime(series.start);
      delete step.end;
      step.count = series.count;
      step.lastTime = stepTime(now);
    } else {
      pInfo.failureSeries = { message: note, start: cycleStart, count: 1 };
    }
    this.recordStep(pInfo.podInfo.pod, step);
  }

  private reportActivated(pInfo: QueuedPodInfo, first: boolean, ungated: boolean): void {
    const pod = pInfo.podInfo.pod;
    const now = stepTime(this.clock.now());
    if (ungated) this.recordStep(pod, { step: 'SchedulingUngated', start: now, detail: 'scheduling gates removed' });
    if (first) this.recordStep(pod, { step: 'SchedulingQueued', start: now, detail: 'entered the active queue', attributes: { queue: 'active' } });
  }

  private reportGated(pod: Pod, s: Status, newly: boolean): void {
    this.logger.debug({ pod: podKey(pod), plugin: s.plugin, reason: s.message() }, 'pod gated before the queue');
    if (s.plugin !== 'SchedulingGates') return;
    if (newly) {
      const gates = (pod.spec?.schedulingGates ?? []).map((g) => g.name).join(', ');
      this.recordStep(pod, { step: 'SchedulingGated', start: stepTime(this.clock.now()), detail: `waiting for scheduling gates: ${gates}`, attributes: { gates } });
    }
    this.updatePodScheduledCondition(pod, {
      type: 'PodScheduled',
      status: 'False',
      reason: POD_REASON_SCHEDULING_GATED,
      message: 'Scheduling is blocked due to non-empty scheduling gates',
    });
  }

  /** Patches the condition only when it changes (upstream's UpdatePodCondition), with nominatedNodeName if overridden. */
  private updatePodScheduledCondition(pod: Pod, cond: PodCondition, nominatingInfo?: NominatingInfo): void {
    const existing = pod.status?.conditions?.find((c) => c.type === cond.type);
    const nnnChanged = nominatingInfo?.mode === 'Override' && (pod.status?.nominatedNodeName ?? '') !== nominatingInfo.nominatedNodeName;
    const same = existing && existing.status === cond.status && existing.reason === cond.reason && existing.message === cond.message;
    if (same && !nnnChanged) return;
    const lastTransitionTime = existing && existing.status === cond.status ? existing.lastTransitionTime : rfc3339(this.clock.now());
    const patch = {
      conditions: [{ ...cond, lastProbeTime: null as unknown as string, lastTransitionTime }],
      ...(nnnChanged ? { nominatedNodeName: nominatingInfo!.nominatedNodeName || null } : {}),
    };
    const { namespace = '', name = '' } = pod.metadata ?? {};
    this.track(
      this.client.patchPodStatus(namespace, name, patch).catch((err: unknown) => this.logger.warn({ err, pod: podKey(pod) }, 'error updating pod status')),
    );
  }

  // ---- informer events ----

  private onPodAdd(pod: Pod): void {
    const terminal = isPodPhaseTerminal(pod.status?.phase);
    if (isAssigned(pod)) {
      if (terminal) return;
      this.cache.addPod(pod);
      this.queue.moveAllToActiveOrBackoffQueue(AssignedPodAdd, undefined, pod);
    } else if (!terminal && this.frameworkForPod(pod)) {
      this.queue.add(pod);
    }
  }

  private onPodUpdate(oldPod: Pod, newPod: Pod): void {
    if (isAssigned(newPod)) {
      if (!isAssigned(oldPod)) {
        // Bound (by us or anyone): it leaves the queue and counts on its node.
        this.queue.delete(newPod);
        return this.onPodAdd(newPod);
      }
      if (isPodPhaseTerminal(newPod.status?.phase)) return this.onPodDelete(newPod);
      this.cache.updatePod(oldPod, newPod);
      const actions = assignedPodUpdateActions(oldPod, newPod);
      if (actions) this.queue.moveAllToActiveOrBackoffQueue({ resource: 'Pod', actionType: actions }, oldPod, newPod);
      return;
    }
    if (!this.frameworkForPod(newPod)) return;
    if (isPodPhaseTerminal(newPod.status?.phase)) this.queue.delete(newPod);
    else this.queue.update(oldPod, newPod);
  }

  private onPodDelete(pod: Pod): void {
    if (isAssigned(pod)) {
      this.cache.removePod(pod);
      this.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, undefined);
      return;
    }
    this.queue.delete(pod);
    for (const fwk of this.frameworks.values()) fwk.rejectWaitingPod(podUID(pod));
  }

  private cleanupAssumedPods(): void {
    for (const pod of this.cache.cleanupExpiredAssumedPods()) {
      this.logger.warn({ pod: podKey(pod) }, 'assumed pod expired');
      this.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, undefined);
    }
  }

  /** Records a step of the pod under its profile's scheduler name. */
  private recordStep(pod: Pod, step: Omit<TimelineStep, 'component'>): void {
    if (!this.timeline) return;
    const { namespace = '', name = '', uid = '' } = pod.metadata ?? {};
    // The caller's literal gets its component: spreading every step into a new object cost more than recording it.
    const recorded = step as TimelineStep;
    recorded.component = pod.spec?.schedulerName || DEFAULT_SCHEDULER_NAME;
    this.timeline.record({ namespace, name, uid }, recorded);
  }

  private track(p: Promise<void>): void {
    const tracked = p.catch((err: unknown) => this.logger.error({ err }, 'unexpected scheduler failure'));
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}
