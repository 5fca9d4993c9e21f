// The taint eviction controller (upstream's pkg/controller/tainteviction, kube-controller-manager's
// taint-eviction-controller): it keeps the NoExecute taints of every node and, for each pod bound
// to a tainted node, deletes it at once when it does not tolerate them all, or when the smallest
// tolerationSeconds of its matching tolerations runs out (planner.ts). A deletion scheduled on a
// timer is cancelled when the taints go or the pod comes to tolerate them forever.
//
// Node and pod changes are queued and handled after the informers sync, node changes first (as
// upstream's workers prefer them), so a pod is judged against its node's latest taints. Deleting
// sets the DisruptionTarget condition, then deletes with the pod's own grace period, tried 5 times.
import { isDeepStrictEqual } from 'node:util';
import type { Node, Pod, PodCondition, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { withPodCondition } from '../../api/pod/conditions.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import type { Client } from '../../client/client.js';
import { waitForCacheSync, type EventSource, type SharedInformerFactory } from '../../client/factory.js';
import { splitMetaNamespaceKey, unwrapDeleted } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import type { EventBroadcaster, EventRecorder } from '../../client/record/recorder.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { controllerEvents } from '../kit/events.js';
import { addPodNodeNameIndexer, POD_NODE_NAME_INDEX } from '../kit/pods.js';
import { getNoExecuteTaints, planPodOnNode } from './planner.js';
import { TimedWorkerQueue } from './timedworkers.js';

export const controllerName = 'taint-eviction-controller';
/** The event reason of both the deletion and its cancellation. */
export const TAINT_MANAGER_EVICTION = 'TaintManagerEviction';
export const DELETION_BY_TAINT_MANAGER = 'DeletionByTaintManager';
export const TAINT_MANAGER_MESSAGE = 'Taint manager: deleting due to NoExecute taint';
/** Attempts at the condition and delete of one pod, RETRY_INTERVAL_MS apart (upstream's retries). */
export const DELETE_RETRIES = 5;
const RETRY_INTERVAL_MS = 10;

export interface TaintEvictionControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** Events; default the controller's own recorder on the events API. */
  recorder?: EventRecorder;
}

interface PodUpdate {
  namespace: string;
  name: string;
  nodeName: string;
}

export class TaintEvictionController {
  private readonly pods: Lister<Pod>;
  private readonly nodes: Lister<Node>;
  private readonly sources: readonly EventSource<never>[];
  private readonly recorder: EventRecorder;
  private readonly events?: EventBroadcaster;
  private readonly evictions: TimedWorkerQueue;
  /** Each node's NoExecute taints, for nodes that have some. */
  private readonly taintedNodes = new Map<string, Taint[]>();
  private readonly nodeUpdates = new Set<string>();
  private readonly podUpdates = new Map<string, PodUpdate>();
  private readonly unregister: (() => void)[];
  private readonly abort = new AbortController();
  private synced = false;
  private drainScheduled = false;
  private running?: Promise<void>;

  constructor(private readonly opts: TaintEvictionControllerOptions) {
    const podsInfo = findResource('', 'v1', 'pods')!;
    const nodesInfo = findResource('', 'v1', 'nodes')!;
    addPodNodeNameIndexer(opts.informers);
    const podInformer = opts.informers.informerFor<Pod>(podsInfo);
    const nodeInformer = opts.informers.informerFor<Node>(nodesInfo);
    this.sources = [podInformer, nodeInformer];
    this.pods = opts.informers.lister<Pod>(podsInfo);
    this.nodes = opts.informers.lister<Node>(nodesInfo);
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, controllerName));
    this.evictions = new TimedWorkerQueue(
      opts.clock,
      (key) => this.deletePod(key),
      (err, key) => opts.logger.error({ err, pod: key }, 'TaintEvictionController: timed worker failed'),
    );
    this.unregister = [
      podInformer.addEventHandler({
        onAdd: (pod) => this.podUpdated(undefined, pod),
        onUpdate: (old, cur) => this.podUpdated(old, cur),
        onDelete: (obj) => this.podUpdated(unwrapDeleted(obj), undefined),
      }),
      nodeInformer.addEventHandler({
        onAdd: (node) => this.nodeUpdated(undefined, node),
        onUpdate: (old, cur) => this.nodeUpdated(old, cur),
        onDelete: (obj) => this.nodeUpdated(unwrapDeleted(obj), undefined),
      }),
    ];
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const u of this.unregister) u();
    await this.running;
    await this.evictions.cancelAndWait();
    await this.events?.stop();
  }

  private async run(): Promise<void> {
    const { logger } = this.opts;
    logger.info({ controller: controllerName }, 'Starting controller');
    if (!(await waitForCacheSync(this.abort.signal, ...this.sources))) return;
    this.synced = true;
    this.drain();
  }

  /** A pod's tolerations or node changed, or it came or went. */
  private podUpdated(old: Pod | undefined, cur: Pod | undefined): void {
    if (old && cur && old.spec?.nodeName === cur.spec?.nodeName && tolerationsEqual(old.spec?.tolerations, cur.spec?.tolerations)) return;
    const pod = (cur ?? old)!;
    const update: PodUpdate = { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', nodeName: pod.spec?.nodeName ?? '' };
    this.podUpdates.set(`${update.nodeName}/${update.namespace}/${update.name}`, update);
    this.scheduleDrain();
  }

  /** A node's NoExecute taints changed, or it came or went. */
  private nodeUpdated(old: Node | undefined, cur: Node | undefined): void {
    if (old && cur && isDeepStrictEqual(getNoExecuteTaints(old.spec?.taints), getNoExecuteTaints(cur.spec?.taints))) return;
    this.nodeUpdates.add((cur ?? old)!.metadata?.name ?? '');
    this.scheduleDrain();
  }

  private scheduleDrain(): void {
    if (!this.synced || this.drainScheduled) return;
    this.drainScheduled = true;
    queueMicrotask(() => {
      this.drainScheduled = false;
      this.drain();
    });
  }

  /** Handles what is queued, node updates before pod updates. */
  private drain(): void {
    while (!this.abort.signal.aborted) {
      const [nodeName] = this.nodeUpdates;
      if (nodeName !== undefined) {
        this.nodeUpdates.delete(nodeName);
        this.handleNodeUpdate(nodeName);
        continue;
      }
      const [entry] = this.podUpdates;
      if (!entry) return;
      this.podUpdates.delete(entry[0]);
      this.handlePodUpdate(entry[1]);
    }
  }

  private handlePodUpdate(update: PodUpdate): void {
    const key = `${update.namespace}/${update.name}`;
    const pod = this.pods.namespace(update.namespace).get(update.name);
    if (!pod) {
      this.cancelWorkWithEvent(key);
      return;
    }
    // A later update of the pod on another node is that node's to handle.
    const nodeName = pod.spec?.nodeName ?? '';
    if (nodeName !== update.nodeName || !nodeName) return;
    // A node without NoExecute taints (or gone) had its evictions cancelled when that was noticed.
    const taints = this.taintedNodes.get(nodeName);
    if (!taints) return;
    this.processPodOnNode(key, pod.spec?.tolerations, taints, this.opts.clock.now());
  }

  private handleNodeUpdate(nodeName: string): void {
    const node = this.nodes.get(nodeName);
    if (!node) {
      this.taintedNodes.delete(nodeName);
      return;
    }
    const taints = getNoExecuteTaints(node.spec?.taints);
    if (taints.length === 0) this.taintedNodes.delete(nodeName);
    else this.taintedNodes.set(nodeName, taints);
    const pods = this.pods.byIndex(POD_NODE_NAME_INDEX, nodeName);
    const now = this.opts.clock.now();
    for (const pod of pods) {
      const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      if (taints.length === 0) this.cancelWorkWithEvent(key);
      else this.processPodOnNode(key, pod.spec?.tolerations, taints, now);
    }
  }

  private processPodOnNode(key: string, tolerations: Toleration[] | undefined, taints: readonly Taint[], now: number): void {
    const plan = planPodOnNode(taints, tolerations, now, this.evictions.getWorker(key) !== undefined);
    switch (plan.action) {
      case 'cancel':
        this.cancelWorkWithEvent(key);
        return;
      case 'deleteNow':
        this.opts.logger.debug({ pod: key }, 'Not all taints are tolerated after update for pod on node');
        this.cancelWorkWithEvent(key);
        this.evictions.addWork(key, now, now);
        return;
      case 'schedule':
        this.evictions.addWork(key, now, plan.fireAt);
        return;
      case 'keep':
        return;
    }
  }

  private cancelWorkWithEvent(key: string): void {
    if (this.evictions.cancelWork(key)) this.event(key, `Cancelling deletion of Pod ${key}`);
  }

  private event(key: string, message: string): void {
    const { namespace, name } = splitMetaNamespaceKey(key);
    this.recorder.event({ apiVersion: 'v1', kind: 'Pod', namespace, name }, 'Normal', TAINT_MANAGER_EVICTION, message);
  }

  /** The timed work: the event, then the condition and the delete, retried. */
  private async deletePod(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    this.opts.logger.info({ controller: controllerName, pod: key }, 'Deleting pod');
    this.event(key, `Marking for deletion Pod ${key}`);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.addConditionAndDeletePod(namespace, name);
        return;
      } catch (err) {
        if (attempt >= DELETE_RETRIES) throw err;
      }
      await this.opts.clock.sleep(RETRY_INTERVAL_MS, this.abort.signal);
    }
  }

  private async addConditionAndDeletePod(namespace: string, name: string): Promise<void> {
    const pods = this.opts.client.resource('pods').namespace(namespace);
    const pod = await pods.get(name);
    const condition: PodCondition = { type: 'DisruptionTarget', status: 'True', reason: DELETION_BY_TAINT_MANAGER, message: TAINT_MANAGER_MESSAGE };
    const existing = pod.status?.conditions?.find((c) => c.type === condition.type);
    if (!existing || existing.status !== condition.status || existing.reason !== condition.reason || existing.message !== condition.message) {
      const status = withPodCondition(pod.status, { ...condition, lastTransitionTime: rfc3339(this.opts.clock.now()) });
      const conditions = status.conditions!.filter((c) => c.type === condition.type);
      // The UID in the patch makes it fail on a pod of the same name created since.
      await pods.patch(name, 'strategic', { metadata: { uid: pod.metadata?.uid }, status: { conditions } }, { subresource: 'status' });
    }
    // No options: the pod's own terminationGracePeriodSeconds.
    await pods.delete(name);
  }
}

/** Semantic equality of toleration lists: none and an empty list are the same. */
function tolerationsEqual(a: Toleration[] | undefined, b: Toleration[] | undefined): boolean {
  return isDeepStrictEqual(a ?? [], b ?? []);
}
