// The framework runtime: instantiates a profile's plugins from the registry and runs each extension
// point with upstream's semantics (Skip, first-failure Filter, PreFilter result intersection, score
// normalization and weights, Permit waiting with timeouts, Bind plugins that may Skip).
import type { Labels } from '../../api/labels.js';
import type { Pod } from '../../api/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import type { SchedulerClient } from '../client.js';
import { EventRecorder } from '../../client/record/eventsv1.js';
import { CycleState } from './cycle-state.js';
import type { NodeToStatus } from './diagnosis.js';
import { ActionType, type ClusterEventWithHint } from './events.js';
import {
  MAX_NODE_SCORE,
  MIN_NODE_SCORE,
  type BindPlugin,
  type EnqueueExtensions,
  type FilterPlugin,
  type Handle,
  type NodeInfoLister,
  type Plugin,
  type PluginFactory,
  type PermitPlugin,
  type PodNominator,
  type PostBindPlugin,
  type PostFilterPlugin,
  type PostFilterResult,
  type PreBindPlugin,
  type PreEnqueuePlugin,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type QueuedPodInfo,
  type QueueSortPlugin,
  type ReservePlugin,
  type ScorePlugin,
  type WaitingPod,
  type WorkloadLister,
} from './interface.js';
import { Code, isSuccess, Status, type Result } from './status.js';
import { NodeInfo, podPriority, podUID, type PodInfo } from './types.js';

/** Plugin name → factory. */
export type Registry = Readonly<Record<string, PluginFactory>>;

/** One Score plugin's normalized scores, one per node in the order scored. */
export interface PluginScores {
  plugin: string;
  weight: number;
  scores: number[];
}

export interface PluginConfig {
  name: string;
  /** Score weight (default 1). */
  weight?: number;
  args?: unknown;
}

/** A scheduling profile: upstream's KubeSchedulerProfile with every plugin enabled at each extension point it implements (multiPoint). */
export interface Profile {
  schedulerName: string;
  /** In run order. */
  plugins: PluginConfig[];
  /** 0 or undefined: adaptive, as upstream. */
  percentageOfNodesToScore?: number;
}

export interface FrameworkOptions {
  registry: Registry;
  profile: Profile;
  client: SchedulerClient;
  clock: Clock;
  logger: Logger;
  /** The snapshot the scheduler refreshes before each cycle. */
  snapshot: NodeInfoLister;
  nominator: PodNominator;
  /** Namespace labels from the scheduler's namespace informer. */
  namespaceLabels?: (namespace: string) => Labels | undefined;
  /** Services and ReplicaSets from the scheduler's informers; none without them. */
  workloads?: WorkloadLister;
  /** The profile's recorder (the scheduler's, which it starts and flushes); default: a new one. */
  eventRecorder?: EventRecorder;
}

const noWorkloads: WorkloadLister = {
  services: () => [],
  replicaSet: () => undefined,
};

/** Permit may hold a pod at most this long. */
export const MAX_PERMIT_TIMEOUT_MS = 15 * 60_000;

const implementsMethod = (p: Plugin, method: string) => typeof (p as unknown as Record<string, unknown>)[method] === 'function';

class PermitWaiter implements WaitingPod {
  private readonly pending = new Map<string, Timer>();
  private settle!: (s: Result) => void;
  readonly done: Promise<Result>;

  constructor(
    readonly pod: Pod,
    waits: Map<string, number>,
    clock: Clock,
  ) {
    this.done = new Promise((resolve) => (this.settle = resolve));
    for (const [plugin, ms] of waits) {
      this.pending.set(
        plugin,
        clock.setTimer(ms, () => this.reject(plugin, `rejected due to timeout after waiting ${ms / 1000}s at plugin ${plugin}`)),
      );
    }
  }

  pendingPlugins(): string[] {
    return [...this.pending.keys()];
  }

  allow(plugin: string): void {
    this.pending.get(plugin)?.cancel();
    this.pending.delete(plugin);
    if (this.pending.size === 0) this.settle(undefined);
  }

  reject(plugin: string, message: string): void {
    for (const t of this.pending.values()) t.cancel();
    this.pending.clear();
    this.settle(Status.of(Code.Unschedulable, message).withPlugin(plugin));
  }
}

export class Framework implements Handle {
  readonly profileName: string;
  readonly percentageOfNodesToScore?: number;
  readonly client: SchedulerClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly nominator: PodNominator;
  private readonly lister: NodeInfoLister;
  private readonly nsLabels?: (namespace: string) => Labels | undefined;
  readonly workloads: WorkloadLister;
  readonly eventRecorder: EventRecorder;

  private readonly queueSortPlugin: QueueSortPlugin;
  private readonly preEnqueuePlugins: PreEnqueuePlugin[] = [];
  private readonly preFilterPlugins: PreFilterPlugin[] = [];
  private readonly filterPlugins: FilterPlugin[] = [];
  private readonly postFilterPlugins: PostFilterPlugin[] = [];
  private readonly preScorePlugins: PreScorePlugin[] = [];
  private readonly scorePlugins: { plugin: ScorePlugin; weight: number }[] = [];
  private readonly reservePlugins: ReservePlugin[] = [];
  private readonly permitPlugins: PermitPlugin[] = [];
  private readonly preBindPlugins: PreBindPlugin[] = [];
  private readonly bindPlugins: BindPlugin[] = [];
  private readonly postBindPlugins: PostBindPlugin[] = [];
  private readonly plugins: Plugin[] = [];
  private readonly waitingPods = new Map<string, PermitWaiter>();

  constructor(opts: FrameworkOptions) {
    this.profileName = opts.profile.schedulerName;
    this.percentageOfNodesToScore = opts.profile.percentageOfNodesToScore;
    this.client = opts.client;
    this.clock = opts.clock;
    this.logger = opts.logger;
    this.nominator = opts.nominator;
    this.lister = opts.snapshot;
    this.nsLabels = opts.namespaceLabels;
    this.workloads = opts.workloads ?? noWorkloads;
    this.eventRecorder =
      opts.eventRecorder ?? new EventRecorder({ sink: opts.client, clock: opts.clock, logger: opts.logger, reportingController: opts.profile.schedulerName });
    let queueSort: QueueSortPlugin | undefined;
    for (const cfg of opts.profile.plugins) {
      const factory = opts.registry[cfg.name];
      if (!factory) throw new Error(`plugin "${cfg.name}" does not exist`);
      const p = factory(cfg.args, this);
      this.plugins.push(p);
      if (implementsMethod(p, 'less')) {
        if (queueSort) throw new Error(`only one queue sort plugin can be enabled`);
        queueSort = p as QueueSortPlugin;
      }
      if (implementsMethod(p, 'preEnqueue')) this.preEnqueuePlugins.push(p as PreEnqueuePlugin);
      if (implementsMethod(p, 'preFilter')) this.preFilterPlugins.push(p as PreFilterPlugin);
      if (implementsMethod(p, 'filter')) this.filterPlugins.push(p as FilterPlugin);
      if (implementsMethod(p, 'postFilter')) this.postFilterPlugins.push(p as PostFilterPlugin);
      if (implementsMethod(p, 'preScore')) this.preScorePlugins.push(p as PreScorePlugin);
      if (implementsMethod(p, 'score')) this.scorePlugins.push({ plugin: p as ScorePlugin, weight: cfg.weight || 1 });
      if (implementsMethod(p, 'reserve')) this.reservePlugins.push(p as ReservePlugin);
      if (implementsMethod(p, 'permit')) this.permitPlugins.push(p as PermitPlugin);
      if (implementsMethod(p, 'preBind')) this.preBindPlugins.push(p as PreBindPlugin);
      if (implementsMethod(p, 'bind')) this.bindPlugins.push(p as BindPlugin);
      if (implementsMethod(p, 'postBind')) this.postBindPlugins.push(p as PostBindPlugin);
    }
    if (!queueSort) throw new Error(`no queue sort plugin is enabled`);
    if (this.bindPlugins.length === 0) throw new Error(`at least one bind plugin is needed`);
    this.queueSortPlugin = queueSort;
  }

  snapshot(): NodeInfoLister {
    return this.lister;
  }

  namespaceLabels(namespace: string): Labels | undefined {
    return this.nsLabels?.(namespace);
  }

  hasFilterPlugins(): boolean {
    return this.filterPlugins.length > 0;
  }

  hasScorePlugins(): boolean {
    return this.scorePlugins.length > 0;
  }

  hasPostFilterPlugins(): boolean {
    return this.postFilterPlugins.length > 0;
  }

  /**
   * The events each plugin wants to requeue pods on. A plugin that rejects pods but declares nothing
   * is registered for every event, as upstream does, so its pods are never stranded.
   */
  eventsToRegister(): Map<string, ClusterEventWithHint[]> {
    const out = new Map<string, ClusterEventWithHint[]>();
    for (const p of this.plugins) {
      if (implementsMethod(p, 'eventsToRegister')) out.set(p.name, (p as EnqueueExtensions).eventsToRegister());
      else if (['preEnqueue', 'preFilter', 'filter', 'reserve', 'permit'].some((m) => implementsMethod(p, m))) {
        out.set(p.name, [{ event: { resource: '*', actionType: ActionType.All } }]);
      }
    }
    return out;
  }

  less(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
    return this.queueSortPlugin.less(a, b);
  }

  /** The first rejection among PreEnqueue plugins (with its plugin), or undefined. */
  runPreEnqueuePlugins(pod: Pod): Status | undefined {
    for (const p of this.preEnqueuePlugins) {
      const s = p.preEnqueue(pod);
      if (!isSuccess(s)) return s!.withPlugin(p.name);
    }
    return undefined;
  }

  runPreFilterPlugins(state: CycleState, pod: Pod): { result?: PreFilterResult; status: Result; unschedulablePlugins: Set<string> } {
    const nodes = this.lister.list();
    let result: PreFilterResult | undefined;
    let returnStatus: Status | undefined;
    const unschedulablePlugins = new Set<string>();
    const pluginsWithNodes: string[] = [];
    for (const p of this.preFilterPlugins) {
      const out = p.preFilter(state, pod, nodes);
      const s = out?.status;
      if (s?.isSkip()) {
        state.skipFilterPlugins.add(p.name);
        continue;
      }
      if (!isSuccess(s)) {
        s!.withPlugin(p.name);
        if (s!.code === Code.UnschedulableAndUnresolvable) return { status: s, unschedulablePlugins: new Set([p.name]) };
        if (s!.code === Code.Unschedulable) {
          // Keep going: preemption needs every PreFilter's state (upstream issue 119770).
          unschedulablePlugins.add(p.name);
          returnStatus = s;
          continue;
        }
        return { status: Status.error(new Error(`running PreFilter plugin "${p.name}": ${s!.message()}`)).withPlugin(p.name), unschedulablePlugins };
      }
      const names = out?.result?.nodeNames;
      if (!names) continue;
      pluginsWithNodes.push(p.name);
      result = { nodeNames: result?.nodeNames ? new Set([...result.nodeNames].filter((n) => names.has(n))) : names };
      if (result.nodeNames!.size === 0) {
        const msg =
          pluginsWithNodes.length === 1
            ? `node(s) didn't satisfy plugin ${pluginsWithNodes[0]}`
            : `node(s) didn't satisfy plugin(s) [${pluginsWithNodes.join(' ')}] simultaneously`;
        for (const n of pluginsWithNodes) unschedulablePlugins.add(n);
        return { result, status: Status.of(Code.UnschedulableAndUnresolvable, msg), unschedulablePlugins };
      }
    }
    if (result?.nodeNames) for (const n of pluginsWithNodes) unschedulablePlugins.add(n);
    return { result, status: returnStatus, unschedulablePlugins };
  }

  /** Runs the Filter plugins in order and returns the first non-success (with its plugin set). */
  runFilterPlugins(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    return this.runFilters(this.activeFilters(state), state, pod, nodeInfo);
  }

  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    return this.prepareFilter(state, pod)(nodeInfo);
  }

  /**
   * runFilterPluginsWithNominatedPods for one cycle, with the plugins not skipped by PreFilter worked
   * out once rather than per node.
   */
  prepareFilter(state: CycleState, pod: Pod): (nodeInfo: NodeInfo) => Result {
    const plugins = this.activeFilters(state);
    const prio = podPriority(pod);
    const uid = podUID(pod);
    return (nodeInfo) => {
      // First with the nominated pods of equal or higher priority on the node, then (if that passed)
      // without them: their own preemption might not happen, and the pod must fit either way.
      const nominated = this.nominator.nominatedPodsForNode(nodeInfo.name);
      let withNominated: { state: CycleState; nodeInfo: NodeInfo } | undefined;
      for (const pi of nominated) {
        if (podPriority(pi.pod) < prio || podUID(pi.pod) === uid) continue;
        withNominated ??= { state: state.clone(), nodeInfo: nodeInfo.clone() };
        withNominated.nodeInfo.addPod(pi);
        const s = this.runPreFilterExtensionAddPod(withNominated.state, pod, pi, withNominated.nodeInfo);
        if (!isSuccess(s)) return s;
      }
      if (withNominated) {
        const s = this.runFilters(plugins, withNominated.state, pod, withNominated.nodeInfo);
        if (!isSuccess(s)) return s;
      }
      return this.runFilters(plugins, state, pod, nodeInfo);
    };
  }

  private activeFilters(state: CycleState): FilterPlugin[] {
    const skip = state.skipFilterPlugins;
    return skip.size === 0 ? this.filterPlugins : this.filterPlugins.filter((p) => !skip.has(p.name));
  }

  private runFilters(plugins: readonly FilterPlugin[], state: CycleState, pod: Pod, nodeInfo: NodeInfo): Result {
    for (const p of plugins) {
      const s = p.filter(state, pod, nodeInfo);
      if (s === undefined || s.code === Code.Success) continue;
      if (!s.isRejected()) return Status.error(new Error(`running "${p.name}" filter plugin: ${s.message()}`)).withPlugin(p.name);
      return s.withPlugin(p.name);
    }
    return undefined;
  }

  runPreFilterExtensionAddPod(state: CycleState, podToSchedule: Pod, podInfoToAdd: PodInfo, nodeInfo: NodeInfo): Result {
    return this.runPreFilterExtension(state, (ext) => ext.addPod(state, podToSchedule, podInfoToAdd, nodeInfo));
  }

  runPreFilterExtensionRemovePod(state: CycleState, podToSchedule: Pod, podInfoToRemove: PodInfo, nodeInfo: NodeInfo): Result {
    return this.runPreFilterExtension(state, (ext) => ext.removePod(state, podToSchedule, podInfoToRemove, nodeInfo));
  }

  private runPreFilterExtension(state: CycleState, fn: (ext: NonNullable<ReturnType<NonNullable<PreFilterPlugin['preFilterExtensions']>>>) => Result): Result {
    for (const p of this.preFilterPlugins) {
      if (state.skipFilterPlugins.has(p.name)) continue;
      const ext = p.preFilterExtensions?.();
      if (!ext) continue;
      const s = fn(ext);
      if (!isSuccess(s)) return Status.error(new Error(`running PreFilterExtension plugin "${p.name}": ${s!.message()}`)).withPlugin(p.name);
    }
    return undefined;
  }

  /** The first success or UnschedulableAndUnresolvable wins; otherwise the rejections' reasons are merged. */
  async runPostFilterPlugins(state: CycleState, pod: Pod, filteredNodeStatus: NodeToStatus): Promise<{ result?: PostFilterResult; status: Status }> {
    let result: PostFilterResult | undefined;
    const reasons: string[] = [];
    let rejector = '';
    for (const p of this.postFilterPlugins) {
      const out = await p.postFilter(state, pod, filteredNodeStatus);
      const s = out.status;
      if (isSuccess(s)) return { result: out.result, status: s ?? Status.of(Code.Success) };
      if (s!.code === Code.UnschedulableAndUnresolvable) return { result: out.result, status: s!.withPlugin(p.name) };
      if (!s!.isRejected()) return { status: Status.error(s!.asError()).withPlugin(p.name) };
      if (out.result?.nominatingInfo && out.result.nominatingInfo.mode !== 'Noop') result = out.result;
      reasons.push(...s!.reasons);
      rejector ||= p.name;
    }
    return { result, status: new Status(Code.Unschedulable, reasons).withPlugin(rejector) };
  }

  runPreScorePlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): Result {
    for (const p of this.preScorePlugins) {
      const s = p.preScore(state, pod, nodes);
      if (s?.isSkip()) {
        state.skipScorePlugins.add(p.name);
        continue;
      }
      if (!isSuccess(s)) return Status.error(new Error(`running PreScore plugin "${p.name}": ${s!.message()}`)).withPlugin(p.name);
    }
    return undefined;
  }

  /** Weighted total score per node (aligned with nodes). */
  /** The weighted totals per node, and each plugin's normalized scores (for the timeline's top scores). */
  runScorePlugins(state: CycleState, pod: Pod, nodes: readonly NodeInfo[]): { totals?: number[]; byPlugin?: PluginScores[]; status: Result } {
    const totals = new Array<number>(nodes.length).fill(0);
    const byPlugin: PluginScores[] = [];
    for (const { plugin, weight } of this.scorePlugins) {
      if (state.skipScorePlugins.has(plugin.name)) continue;
      const scores = new Array<number>(nodes.length);
      byPlugin.push({ plugin: plugin.name, weight, scores });
      for (let i = 0; i < nodes.length; i++) {
        const s = plugin.score(state, pod, nodes[i]!);
        if (typeof s !== 'number') return { status: Status.error(new Error(`running Score plugin "${plugin.name}": ${s.message()}`)).withPlugin(plugin.name) };
        scores[i] = s;
      }
      const ext = plugin.scoreExtensions?.();
      if (ext) {
        const s = ext.normalizeScore(state, pod, scores);
        if (!isSuccess(s)) return { status: Status.error(new Error(`running Normalize on Score plugins: ${s!.message()}`)).withPlugin(plugin.name) };
      }
      for (let i = 0; i < nodes.length; i++) {
        const v = scores[i]!;
        if (v > MAX_NODE_SCORE || v < MIN_NODE_SCORE) {
          return {
            status: Status.error(
              new Error(`plugin "${plugin.name}" returns an invalid score ${v}, it should in the range of [${MIN_NODE_SCORE}, ${MAX_NODE_SCORE}] after normalizing`),
            ),
          };
        }
        totals[i]! += v * weight;
      }
    }
    return { totals, byPlugin, status: undefined };
  }

  runReservePluginsReserve(state: CycleState, pod: Pod, nodeName: string): Result {
    for (const p of this.reservePlugins) {
      const s = p.reserve(state, pod, nodeName);
      if (isSuccess(s)) continue;
      if (s!.isRejected()) return s!.withPlugin(p.name);
      return Status.error(new Error(`running Reserve plugin "${p.name}": ${s!.message()}`)).withPlugin(p.name);
    }
    return undefined;
  }

  /** In reverse order, every Reserve plugin (each must tolerate a reserve that never happened). */
  runReservePluginsUnreserve(state: CycleState, pod: Pod, nodeName: string): void {
    for (let i = this.reservePlugins.length - 1; i >= 0; i--) this.reservePlugins[i]!.unreserve(state, pod, nodeName);
  }

  /** Success, a rejection, an Error, or Wait (the pod then waits in waitOnPermit). */
  runPermitPlugins(state: CycleState, pod: Pod, nodeName: string): Result {
    const waits = new Map<string, number>();
    for (const p of this.permitPlugins) {
      const { status: s, timeoutMs = 0 } = p.permit(state, pod, nodeName);
      if (isSuccess(s)) continue;
      if (s!.isRejected()) return s!.withPlugin(p.name);
      if (s!.code === Code.Wait) waits.set(p.name, Math.min(timeoutMs, MAX_PERMIT_TIMEOUT_MS));
      else return Status.error(new Error(`running Permit plugin "${p.name}": ${s!.message()}`)).withPlugin(p.name);
    }
    if (waits.size === 0) return undefined;
    this.waitingPods.set(podUID(pod), new PermitWaiter(pod, waits, this.clock));
    return Status.of(Code.Wait, `one or more plugins asked to wait and no plugin rejected pod "${pod.metadata?.name}"`);
  }

  /** Resolves when every waiting Permit plugin allowed the pod, or with the rejection. */
  async waitOnPermit(pod: Pod): Promise<Result> {
    const w = this.waitingPods.get(podUID(pod));
    if (!w) return undefined;
    try {
      return await w.done;
    } finally {
      this.waitingPods.delete(podUID(pod));
    }
  }

  getWaitingPod(uid: string): WaitingPod | undefined {
    return this.waitingPods.get(uid);
  }

  iterateOverWaitingPods(fn: (wp: WaitingPod) => void): void {
    for (const w of this.waitingPods.values()) fn(w);
  }

  /** Rejects a waiting pod (it was deleted); true if it was waiting. */
  rejectWaitingPod(uid: string): boolean {
    const w = this.waitingPods.get(uid);
    w?.reject('', 'removed');
    return Boolean(w);
  }

  async runPreBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Result> {
    for (const p of this.preBindPlugins) {
      const s = await p.preBind(state, pod, nodeName);
      if (isSuccess(s) || s!.isSkip()) continue;
      if (s!.isRejected()) return s!.withPlugin(p.name);
      return Status.error(new Error(`running PreBind plugin "${p.name}": ${s!.message()}`)).withPlugin(p.name);
    }
    return undefined;
  }

  async runBindPlugins(state: CycleState, pod: Pod, nodeName: string): Promise<Result> {
    let last: Result = Status.of(Code.Skip);
    for (const p of this.bindPlugins) {
      last = await p.bind(state, pod, nodeName);
      if (last?.isSkip()) continue;
      if (isSuccess(last)) return undefined;
      if (last!.isRejected()) return last!.withPlugin(p.name);
      return Status.error(new Error(`running Bind plugin "${p.name}": ${last!.message()}`)).withPlugin(p.name);
    }
    return last;
  }

  runPostBindPlugins(state: CycleState, pod: Pod, nodeName: string): void {
    for (const p of this.postBindPlugins) p.postBind(state, pod, nodeName);
  }
}
