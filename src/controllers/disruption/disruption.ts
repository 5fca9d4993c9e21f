// The disruption controller, as upstream's pkg/controller/disruption: for each PodDisruptionBudget it
// counts the pods its selector matches, works out how many are expected (the scale of their
// controllers) and how many must stay healthy, and writes currentHealthy, desiredHealthy,
// expectedPods, disruptionsAllowed and the DisruptionAllowed condition into the budget's status,
// which the eviction subresource spends. Pods an eviction approved (status.disruptedPods) count as
// gone for two minutes. A second queue resets DisruptionTarget conditions that no deletion followed.
import type { Pod, ReplicationController } from 'kubernetes-types/core/v1.js';
import type { Deployment, ReplicaSet, StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { PodDisruptionBudget, PodDisruptionBudgetStatus } from 'kubernetes-types/policy/v1.js';
import type { LabelSelector, OwnerReference } from 'kubernetes-types/meta/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { labelSelectorAsSelector } from '../../api/labels.js';
import {
  DELETION_TIMEOUT_MS,
  DISRUPTION_ALLOWED_CONDITION,
  disruptionConditionUpToDate,
  SYNC_FAILED_REASON,
  withDisruptionAllowedCondition,
} from '../../api/pdb.js';
import { isPodPhaseTerminal } from '../../api/pod/status.js';
import { withPodCondition } from '../../api/pod/conditions.js';
import { setStatusCondition } from '../../api/conditions.js';
import { findKind, findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import { deepEqual } from '../../api/validation/meta.js';
import type { Client } from '../../client/client.js';
import type { SharedInformerFactory } from '../../client/factory.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, splitMetaNamespaceKey } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import { type EventBroadcaster, type EventRecorder } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';
import { scaledValueFromIntOrPercent } from '../kit/intstr.js';
import { involvedObject } from '../kit/podcontrol.js';
import { isPodReady } from '../kit/pods.js';
import { getControllerOf } from '../kit/refmanager.js';

/** How long a DisruptionTarget condition may stand on a pod that is not terminating (stalePodDisruptionTimeout). */
export const STALE_POD_DISRUPTION_TIMEOUT_MS = 2 * 60_000;

const res = (group: string, resource: string) => findResource(group, 'v1', resource)!;
const pdbsResource = res('policy', 'poddisruptionbudgets');
const podsResource = res('', 'pods');

export interface DisruptionControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** Events; default this controller's own recorder on the events API. */
  recorder?: EventRecorder;
  staleDisruptionTimeoutMs?: number;
}

/** A controller's identity and the replicas it wants. */
interface ControllerScale {
  uid: string;
  scale: number;
}

type Finder = (ref: OwnerReference, namespace: string) => Promise<ControllerScale | undefined>;

function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** verifyGroupKind: the reference names this kind in one of these groups. */
const refersTo = (ref: OwnerReference, kind: string, groups: readonly string[]) => ref.kind === kind && groups.includes(groupOf(ref.apiVersion));

export class DisruptionController {
  private readonly pdbs: Lister<PodDisruptionBudget>;
  private readonly pods: Lister<Pod>;
  private readonly rcs: Lister<ReplicationController>;
  private readonly rss: Lister<ReplicaSet>;
  private readonly deployments: Lister<Deployment>;
  private readonly statefulSets: Lister<StatefulSet>;
  private readonly controller: QueueController;
  private readonly staleController: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly recorder: EventRecorder;
  private readonly staleTimeout: number;
  /** The workload kinds are read from listers; anything else through its scale subresource (finders()). */
  private readonly finders: readonly Finder[];

  constructor(private readonly opts: DisruptionControllerOptions) {
    const { informers } = opts;
    const pdbInformer = informers.informerFor<PodDisruptionBudget>(pdbsResource);
    const podInformer = informers.informerFor<Pod>(podsResource);
    const workloads = [res('', 'replicationcontrollers'), res('apps', 'replicasets'), res('apps', 'deployments'), res('apps', 'statefulsets')];
    const workloadInformers = workloads.map((info) => informers.informerFor(info));
    this.pdbs = informers.lister(pdbsResource);
    this.pods = informers.lister(podsResource);
    [this.rcs, this.rss, this.deployments, this.statefulSets] = workloads.map((info) => informers.lister(info)) as [
      Lister<ReplicationController>,
      Lister<ReplicaSet>,
      Lister<Deployment>,
      Lister<StatefulSet>,
    ];
    this.staleTimeout = opts.staleDisruptionTimeoutMs ?? STALE_POD_DISRUPTION_TIMEOUT_MS;
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'controllermanager'));
    const sources = [pdbInformer, podInformer, ...workloadInformers];
    this.controller = new QueueController({ name: 'disruption', clock: opts.clock, logger: opts.logger, sources, sync: (key) => this.sync(key) });
    this.staleController = new QueueController({
      name: 'stale_pod_disruption',
      clock: opts.clock,
      logger: opts.logger,
      sources,
      sync: (key) => this.syncStalePodDisruption(key),
    });
    this.finders = [
      (ref, ns) => this.replicationController(ref, ns),
      (ref, ns) => this.deploymentOfReplicaSet(ref, ns),
      (ref, ns) => this.replicaSet(ref, ns),
      (ref, ns) => this.statefulSet(ref, ns),
      (ref, ns) => this.scaleController(ref, ns),
    ];
    const enqueuePdb = (pdb: PodDisruptionBudget | DeletedFinalStateUnknown<PodDisruptionBudget>) => this.controller.enqueue(metaNamespaceKeyFunc(pdb));
    pdbInformer.addEventHandler({ onAdd: enqueuePdb, onUpdate: (_old, cur) => enqueuePdb(cur), onDelete: enqueuePdb });
    podInformer.addEventHandler({
      onAdd: (pod) => this.podChanged(pod),
      onUpdate: (_old, cur) => this.podChanged(cur),
      onDelete: (obj) => {
        const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        const pdb = this.pdbForPod(pod);
        if (pdb) this.controller.enqueue(metaNamespaceKeyFunc(pdb));
      },
    });
  }

  start(): void {
    this.controller.start();
    this.staleController.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.controller.stop(), this.staleController.stop()]);
    await this.events?.stop();
  }

  private podChanged(pod: Pod): void {
    const pdb = this.pdbForPod(pod);
    if (pdb) this.controller.enqueue(metaNamespaceKeyFunc(pdb));
    const cleanAfter = this.staleDisruptionCleanAfter(pod);
    if (cleanAfter !== undefined) this.staleController.enqueueAfter(metaNamespaceKeyFunc(pod), cleanAfter);
  }

  /**
   * getPdbForPod: the first budget that covers the pod, with a warning when several do. As the policy/v1
   * lister (and unlike the eviction's lookup), an empty selector matches every pod.
   */
  private pdbForPod(pod: Pod): PodDisruptionBudget | undefined {
    const labels = pod.metadata?.labels ?? {};
    const pdbs = this.pdbs
      .namespace(pod.metadata?.namespace ?? '')
      .list()
      .filter((pdb) => {
        try {
          return labelSelectorAsSelector(pdb.spec?.selector).matches(labels);
        } catch {
          return false;
        }
      });
    if (pdbs.length > 1) {
      const m = pod.metadata ?? {};
      const msg = `Pod "${m.namespace}"/"${m.name}" matches multiple PodDisruptionBudgets.  Chose "${pdbs[0]!.metadata?.name}" arbitrarily.`;
      this.recorder.event(involvedObject({ ...pod, apiVersion: 'v1', kind: 'Pod' }), 'Warning', 'MultiplePodDisruptionBudgets', msg);
    }
    return pdbs[0];
  }

  private pdbEvent(pdb: PodDisruptionBudget, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.recorder.event(involvedObject({ ...pdb, apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }), type, reason, message);
  }

  /** Level-triggered: the budget's status from what the listers hold now; a number asks for a recheck after it. */
  async sync(key: string): Promise<number | void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pdb = this.pdbs.namespace(namespace).get(name);
    if (!pdb) return;
    try {
      return await this.trySync(pdb);
    } catch (err) {
      // A conflict is retried as it is; anything else at least closes the budget (fail safe).
      if (hasStatusCode(err, 409)) throw err;
      this.opts.logger.error({ err, podDisruptionBudget: key }, 'Failed to sync PDB');
      await this.failSafe(pdb, err);
    }
  }

  private async trySync(pdb: PodDisruptionBudget): Promise<number | undefined> {
    let pods: Pod[];
    try {
      pods = this.pods.namespace(pdb.metadata?.namespace ?? '').list(labelSelectorAsSelector(pdb.spec?.selector));
    } catch (err) {
      this.pdbEvent(pdb, 'Warning', 'NoPods', `Failed to get pods: ${(err as Error).message}`);
      throw err;
    }
    if (pods.length === 0) this.pdbEvent(pdb, 'Normal', 'NoPods', 'No matching pods found');
    let expected: { expectedCount: number; desiredHealthy: number; unmanagedPods: string[] };
    try {
      expected = await this.expectedPodCount(pdb, pods);
    } catch (err) {
      this.pdbEvent(pdb, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${(err as Error).message}`);
      throw err;
    }
    if (expected.unmanagedPods.length > 0) {
      this.pdbEvent(
        pdb,
        'Warning',
        'UnmanagedPods',
        `Pods selected by this PodDisruptionBudget (selector: ${labelSelectorString(pdb.spec?.selector)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const now = this.opts.clock.now();
    const { disruptedPods, recheckAt } = this.buildDisruptedPodMap(pods, pdb, now);
    const currentHealthy = countHealthyPods(pods, disruptedPods, now);
    await this.updatePdbStatus(pdb, currentHealthy, expected.desiredHealthy, expected.expectedCount, disruptedPods);
    // At the expiry itself the entry still stands (upstream keeps it until strictly past): look again a moment later.
    return recheckAt === undefined ? undefined : Math.max(1, recheckAt - now);
  }

  /** getExpectedPodCount: maxUnavailable and percentage minAvailable scale by the controllers; an integer minAvailable counts the pods. */
  private async expectedPodCount(pdb: PodDisruptionBudget, pods: Pod[]): Promise<{ expectedCount: number; desiredHealthy: number; unmanagedPods: string[] }> {
    const { minAvailable, maxUnavailable } = pdb.spec ?? {};
    if (maxUnavailable != null) {
      const { expectedCount, unmanagedPods } = await this.expectedScale(pdb, pods);
      const desiredHealthy = Math.max(0, expectedCount - scaledValueFromIntOrPercent(maxUnavailable, expectedCount, true));
      return { expectedCount, desiredHealthy, unmanagedPods };
    }
    if (typeof minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: minAvailable, unmanagedPods: [] };
    if (typeof minAvailable === 'string') {
      const { expectedCount, unmanagedPods } = await this.expectedScale(pdb, pods);
      return { expectedCount, desiredHealthy: scaledValueFromIntOrPercent(minAvailable, expectedCount, true), unmanagedPods };
    }
    return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
  }

  /** getExpectedScale: the sum of the scales of the pods' controllers, each counted once; pods without one are unmanaged. */
  private async expectedScale(pdb: PodDisruptionBudget, pods: Pod[]): Promise<{ expectedCount: number; unmanagedPods: string[] }> {
    const scales = new Map<string, number>();
    const unmanagedPods: string[] = [];
    for (const pod of pods) {
      const ref = getControllerOf(pod);
      if (!ref) {
        unmanagedPods.push(pod.metadata?.name ?? '');
        continue;
      }
      if (scales.has(ref.uid)) continue;
      let found: ControllerScale | undefined;
      for (const finder of this.finders) {
        found = await finder(ref, pod.metadata?.namespace ?? pdb.metadata?.namespace ?? '');
        if (found) break;
      }
      if (!found) throw new Error(`found no controllers for pod "${pod.metadata?.name}"`);
      scales.set(found.uid, found.scale);
    }
    let expectedCount = 0;
    for (const n of scales.values()) expectedCount += n;
    return { expectedCount, unmanagedPods };
  }

  private async replicationController(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    if (!refersTo(ref, 'ReplicationController', [''])) return undefined;
    const rc = this.rcs.namespace(namespace).get(ref.name);
    return rc && rc.metadata?.uid === ref.uid ? { uid: ref.uid, scale: rc.spec?.replicas ?? 1 } : undefined;
  }

  /** A ReplicaSet owned by a Deployment: the Deployment's scale. */
  private async deploymentOfReplicaSet(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    if (!refersTo(ref, 'ReplicaSet', ['apps', 'extensions'])) return undefined;
    const rs = this.rss.namespace(namespace).get(ref.name);
    if (!rs || rs.metadata?.uid !== ref.uid) return undefined;
    const owner = getControllerOf(rs);
    if (!owner || !refersTo(owner, 'Deployment', ['apps', 'extensions'])) return undefined;
    const d = this.deployments.namespace(namespace).get(owner.name);
    return d && d.metadata?.uid === owner.uid ? { uid: owner.uid, scale: d.spec?.replicas ?? 1 } : undefined;
  }

  /** A ReplicaSet no Deployment controls. */
  private async replicaSet(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    if (!refersTo(ref, 'ReplicaSet', ['apps', 'extensions'])) return undefined;
    const rs = this.rss.namespace(namespace).get(ref.name);
    if (!rs || rs.metadata?.uid !== ref.uid || getControllerOf(rs)?.kind === 'Deployment') return undefined;
    return { uid: ref.uid, scale: rs.spec?.replicas ?? 1 };
  }

  private async statefulSet(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    if (!refersTo(ref, 'StatefulSet', ['apps'])) return undefined;
    const ss = this.statefulSets.namespace(namespace).get(ref.name);
    return ss && ss.metadata?.uid === ref.uid ? { uid: ref.uid, scale: ss.spec?.replicas ?? 1 } : undefined;
  }

  /** Any other controller, through its scale subresource. */
  private async scaleController(ref: OwnerReference, namespace: string): Promise<ControllerScale | undefined> {
    const group = groupOf(ref.apiVersion);
    const version = ref.apiVersion.slice(ref.apiVersion.indexOf('/') + 1);
    const info = findKind(group, ref.kind);
    if (!info) throw new Error(`no matches for kind "${ref.kind}" in version "${ref.apiVersion}"`);
    const groupResource = group ? `${info.resource}.${group}` : info.resource;
    let scale: { metadata?: { uid?: string }; spec?: { replicas?: number } };
    try {
      scale = await this.opts.client.resource(findResource(group, version, info.resource) ?? info).namespace(namespace).subresource('GET', ref.name, 'scale');
    } catch (err) {
      // A 404 is either a missing object or a resource without the subresource: only the latter is an error.
      if (hasStatusCode(err, 404)) {
        if (!info.subresources.some((s) => s.name === 'scale')) throw new Error(`${groupResource} does not implement the scale subresource`, { cause: err });
        return undefined;
      }
      throw err;
    }
    return scale.metadata?.uid === ref.uid ? { uid: ref.uid, scale: scale.spec?.replicas ?? 0 } : undefined;
  }

  /** buildDisruptedPodMap: approved evictions still within the deletion timeout, and when the first of them expires. */
  private buildDisruptedPodMap(pods: Pod[], pdb: PodDisruptionBudget, now: number): { disruptedPods: Record<string, string>; recheckAt?: number } {
    const previous = pdb.status?.disruptedPods ?? {};
    const disruptedPods: Record<string, string> = {};
    let recheckAt: number | undefined;
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp) continue;
      const name = pod.metadata?.name ?? '';
      if (!Object.hasOwn(previous, name)) continue;
      const expectedDeletion = Date.parse(previous[name]!) + DELETION_TIMEOUT_MS;
      // A time that does not parse has expired as well.
      if (!(expectedDeletion >= now)) {
        const m = pdb.metadata ?? {};
        // Upstream prints the budget's namespace twice here.
        this.recorder.event(involvedObject({ ...pod, apiVersion: 'v1', kind: 'Pod' }), 'Warning', 'NotDeleted', `Pod was expected by PDB ${m.namespace}/${m.namespace} to be deleted but it wasn't`);
      } else {
        if (recheckAt === undefined || expectedDeletion < recheckAt) recheckAt = expectedDeletion;
        disruptedPods[name] = previous[name]!;
      }
    }
    return { disruptedPods, recheckAt };
  }

  private async updatePdbStatus(pdb: PodDisruptionBudget, currentHealthy: number, desiredHealthy: number, expectedPods: number, disruptedPods: Record<string, string>): Promise<void> {
    // No disruption while no pods are expected: a budget whose first pods just appeared stays safe.
    let disruptionsAllowed = currentHealthy - desiredHealthy;
    if (expectedPods <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
    const s = pdb.status;
    const generation = pdb.metadata?.generation ?? 0;
    if (
      s &&
      s.currentHealthy === currentHealthy &&
      s.desiredHealthy === desiredHealthy &&
      s.expectedPods === expectedPods &&
      s.disruptionsAllowed === disruptionsAllowed &&
      deepEqual(s.disruptedPods, disruptedPods) &&
      s.observedGeneration === generation &&
      disruptionConditionUpToDate(pdb)
    ) {
      return;
    }
    let status: PodDisruptionBudgetStatus = { currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed, observedGeneration: generation, conditions: s?.conditions };
    if (Object.keys(disruptedPods).length > 0) status.disruptedPods = disruptedPods;
    status = withDisruptionAllowedCondition(status, rfc3339(this.opts.clock.now()));
    await this.writeStatus(pdb, status);
  }

  /** failSafe: at least stop evictions (disruptionsAllowed 0, DisruptionAllowed False with SyncFailed). */
  private async failSafe(pdb: PodDisruptionBudget, err: unknown): Promise<void> {
    const status: PodDisruptionBudgetStatus = { currentHealthy: 0, desiredHealthy: 0, expectedPods: 0, ...pdb.status, disruptionsAllowed: 0 };
    status.conditions = setStatusCondition(
      status.conditions,
      { type: DISRUPTION_ALLOWED_CONDITION, status: 'False', reason: SYNC_FAILED_REASON, message: (err as Error).message, observedGeneration: status.observedGeneration },
      rfc3339(this.opts.clock.now()),
    );
    await this.writeStatus(pdb, status);
  }

  /** One write, no retry here: a failure requeues the budget (writePdbStatus). */
  private async writeStatus(pdb: PodDisruptionBudget, status: PodDisruptionBudgetStatus): Promise<void> {
    await this.opts.client
      .resource('poddisruptionbudgets.policy')
      .namespace(pdb.metadata?.namespace ?? '')
      .updateStatus({ ...pdb, status });
  }

  /**
   * nonTerminatingPodHasStaleDisruptionCondition: ms until a DisruptionTarget condition on a pod that is
   * not terminating counts as stale, or undefined when there is none to clean (the kubelet's own,
   * terminal pods and terminating ones excepted).
   */
  private staleDisruptionCleanAfter(pod: Pod): number | undefined {
    if (pod.metadata?.deletionTimestamp) return undefined;
    const cond = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    if (!cond || cond.status !== 'True' || cond.reason === 'TerminationByKubelet' || isPodPhaseTerminal(pod.status?.phase)) return undefined;
    const since = Date.parse(cond.lastTransitionTime ?? '');
    const elapsed = Number.isFinite(since) ? this.opts.clock.now() - since : this.staleTimeout;
    return Math.max(0, this.staleTimeout - elapsed);
  }

  /** Resets a stale DisruptionTarget condition to False once its timeout passed. */
  async syncStalePodDisruption(key: string): Promise<number | void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pod = this.pods.namespace(namespace).get(name);
    if (!pod) return;
    const cleanAfter = this.staleDisruptionCleanAfter(pod);
    if (cleanAfter === undefined) return;
    if (cleanAfter > 0) return cleanAfter;
    const now = rfc3339(this.opts.clock.now());
    const status = withPodCondition(pod.status, { type: 'DisruptionTarget', status: 'False', lastTransitionTime: now });
    await this.opts.client.resource('pods').namespace(namespace).updateStatus({ ...pod, status });
    this.opts.logger.info({ pod: key }, 'Reset stale DisruptionTarget condition to False');
  }
}

/** A metav1.LabelSelector as its generated String() prints it (upstream's %v in the UnmanagedPods event). */
function labelSelectorString(sel: LabelSelector | undefined): string {
  if (!sel) return 'nil';
  const labels = Object.keys(sel.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${sel.matchLabels![k]},`)
    .join('');
  const exprs = (sel.matchExpressions ?? []).map((e) => `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],},`).join('');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

/** countHealthyPods: Ready pods that are neither terminating nor approved for eviction within the timeout. */
function countHealthyPods(pods: Pod[], disruptedPods: Record<string, string>, now: number): number {
  let healthy = 0;
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const disrupted = disruptedPods[pod.metadata?.name ?? ''];
    if (disrupted !== undefined && Date.parse(disrupted) + DELETION_TIMEOUT_MS > now) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
}
