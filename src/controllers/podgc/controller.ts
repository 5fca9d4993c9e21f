// The pod garbage collector (upstream's pkg/controller/podgc): every gcCheckPeriod it force-deletes
// terminated pods beyond --terminated-pod-gc-threshold (oldest first), terminating pods on
// out-of-service nodes that are not ready, pods bound to nodes that are gone (checked with a live
// GET after a quarantine, as the node informer may lag) and terminating pods never scheduled.
// A pod not yet Succeeded or Failed is first patched to Failed, so a pod whose kubelet is gone does
// not stay Running in a client's last view of it.
import type { Node, Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import { hasStatusCode } from '../../api/errors.js';
import { withPodCondition } from '../../api/pod/conditions.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import type { Client } from '../../client/client.js';
import { waitForCacheSync, type EventSource, type SharedInformerFactory } from '../../client/factory.js';
import { metaNamespaceKeyFunc } from '../../client/indexer.js';
import type { Lister } from '../../client/lister.js';
import { DelayingQueue } from '../../client/workqueue.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';

/** How often the collector runs (upstream's gcCheckPeriod). */
export const gcCheckPeriodMs = 20_000;
/** How long a node missing from the informer waits before a live GET decides it is gone (quarantineTime). */
export const quarantineTimeMs = 40_000;
/** kube-controller-manager's --terminated-pod-gc-threshold default. */
export const defaultTerminatedPodGCThreshold = 12500;

const taintNodeOutOfService = 'node.kubernetes.io/out-of-service';

export interface PodGCControllerOptions {
  client: Client;
  informers: SharedInformerFactory;
  clock: Clock;
  logger: Logger;
  /** --terminated-pod-gc-threshold: terminated pods kept before the oldest go; 0 or less turns that off. */
  terminatedPodGCThreshold?: number;
}

export class PodGCController {
  private readonly pods: Lister<Pod>;
  private readonly nodes: Lister<Node>;
  private readonly sources: readonly EventSource<never>[];
  private readonly nodeQueue: DelayingQueue<string>;
  private readonly threshold: number;
  private readonly abort = new AbortController();
  private running?: Promise<void>;

  constructor(private readonly opts: PodGCControllerOptions) {
    const podsInfo = findResource('', 'v1', 'pods')!;
    const nodesInfo = findResource('', 'v1', 'nodes')!;
    this.sources = [opts.informers.informerFor<Pod>(podsInfo), opts.informers.informerFor<Node>(nodesInfo)];
    this.pods = opts.informers.lister<Pod>(podsInfo);
    this.nodes = opts.informers.lister<Node>(nodesInfo);
    this.nodeQueue = new DelayingQueue<string>({ clock: opts.clock });
    this.threshold = opts.terminatedPodGCThreshold ?? defaultTerminatedPodGCThreshold;
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.nodeQueue.shutDown();
    await this.running;
  }

  private async run(): Promise<void> {
    const { logger, clock } = this.opts;
    const signal = this.abort.signal;
    logger.info({ controller: 'podgc' }, 'Starting controller');
    if (!(await waitForCacheSync(signal, ...this.sources))) return;
    // wait.Until: the first pass at once, then a period after each pass ends.
    while (!signal.aborted) {
      try {
        await this.gc();
      } catch (err) {
        logger.error({ err }, 'pod garbage collection failed');
      }
      try {
        await clock.sleep(gcCheckPeriodMs, signal);
      } catch {
        break;
      }
    }
    logger.info({ controller: 'podgc' }, 'Shutting down controller');
  }

  /** One pass of every rule over the informers' view. */
  async gc(): Promise<void> {
    const pods = this.pods.list();
    const nodes = this.nodes.list();
    if (this.threshold > 0) await this.gcTerminated(pods);
    await this.gcTerminating(pods);
    await this.gcOrphaned(pods, nodes);
    await this.gcUnscheduledTerminating(pods);
  }

  private async gcTerminated(pods: Pod[]): Promise<void> {
    const terminated = pods.filter(isPodTerminated);
    const deleteCount = terminated.length - this.threshold;
    if (deleteCount <= 0) return;
    this.opts.logger.info({ numPods: deleteCount }, 'Garbage collecting pods');
    terminated.sort(byEvictionAndCreationTimestamp);
    await Promise.all(terminated.slice(0, deleteCount).map((pod) => this.markFailedAndDeletePod(pod).catch((err: unknown) => this.handleError(err, pod))));
  }

  /** Terminating pods on a node that is not ready and carries the out-of-service taint. */
  private async gcTerminating(pods: Pod[]): Promise<void> {
    const { logger } = this.opts;
    const terminating: Pod[] = [];
    for (const pod of pods) {
      if (!pod.metadata?.deletionTimestamp) continue;
      const nodeName = pod.spec?.nodeName ?? '';
      const node = this.nodes.get(nodeName);
      if (!node) {
        logger.error({ node: nodeName }, `Failed to get node: node "${nodeName}" not found`);
        continue;
      }
      if (!isNodeReady(node) && (node.spec?.taints ?? []).some((t) => t.key === taintNodeOutOfService)) {
        logger.debug({ pod: metaNamespaceKeyFunc(pod), phase: pod.status?.phase }, 'Garbage collecting pod that is terminating');
        terminating.push(pod);
      }
    }
    if (terminating.length === 0) return;
    logger.debug({ numPods: terminating.length }, `Garbage collecting pods that are terminating on node tainted with ${taintNodeOutOfService}`);
    terminating.sort(byEvictionAndCreationTimestamp);
    await Promise.all(terminating.map((pod) => this.markFailedAndDeletePod(pod).catch((err: unknown) => this.handleError(err, pod))));
  }

  /** Pods bound to nodes that no longer exist. */
  private async gcOrphaned(pods: Pod[], nodes: Node[]): Promise<void> {
    const { logger } = this.opts;
    const existing = new Set(nodes.map((n) => n.metadata?.name ?? ''));
    for (const pod of pods) {
      const nodeName = pod.spec?.nodeName;
      if (nodeName && !existing.has(nodeName)) this.nodeQueue.addAfter(nodeName, quarantineTimeMs);
    }
    const deleted = await this.discoverDeletedNodes(existing);
    for (const pod of pods) {
      const nodeName = pod.spec?.nodeName ?? '';
      if (!deleted.has(nodeName)) continue;
      logger.debug({ pod: metaNamespaceKeyFunc(pod), node: nodeName }, 'Found orphaned Pod assigned to the Node, deleting');
      const condition: PodCondition = { type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' };
      try {
        await this.markFailedAndDeletePod(pod, condition);
        logger.info({ pod: metaNamespaceKeyFunc(pod) }, 'Forced deletion of orphaned Pod succeeded');
      } catch (err) {
        this.handleError(err, pod);
      }
    }
  }

  /** Nodes out of quarantine that a live GET does not find; a failed GET leaves the node for a later pass. */
  private async discoverDeletedNodes(existing: Set<string>): Promise<Set<string>> {
    const deleted = new Set<string>();
    while (this.nodeQueue.len() > 0) {
      const nodeName = await this.nodeQueue.get();
      if (nodeName === undefined) break;
      try {
        if (!existing.has(nodeName) && !(await this.nodeExists(nodeName))) deleted.add(nodeName);
      } catch (err) {
        this.opts.logger.error({ err, node: nodeName }, 'Error while getting node');
      } finally {
        this.nodeQueue.done(nodeName);
      }
    }
    return deleted;
  }

  private async nodeExists(name: string): Promise<boolean> {
    try {
      await this.opts.client.resource('nodes').get(name);
      return true;
    } catch (err) {
      if (hasStatusCode(err, 404)) return false;
      throw err;
    }
  }

  /** Terminating pods not assigned to any node. */
  private async gcUnscheduledTerminating(pods: Pod[]): Promise<void> {
    const { logger } = this.opts;
    for (const pod of pods) {
      if (!pod.metadata?.deletionTimestamp || pod.spec?.nodeName) continue;
      logger.debug({ pod: metaNamespaceKeyFunc(pod) }, 'Found unscheduled terminating Pod not assigned to any Node, deleting');
      try {
        await this.markFailedAndDeletePod(pod);
        logger.info({ pod: metaNamespaceKeyFunc(pod) }, 'Forced deletion of unscheduled terminating Pod succeeded');
      } catch (err) {
        this.handleError(err, pod);
      }
    }
  }

  /** Moves a pod not yet terminated to Failed (with the condition, if any), then deletes it with no grace. */
  private async markFailedAndDeletePod(pod: Pod, condition?: PodCondition): Promise<void> {
    const { namespace = '', name = '', uid } = pod.metadata ?? {};
    this.opts.logger.info({ pod: `${namespace}/${name}` }, 'PodGC is force deleting Pod');
    const pods = this.opts.client.resource('pods').namespace(namespace);
    const phase = pod.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') {
      const patch: { phase: string; conditions?: PodCondition[] } = { phase: 'Failed' };
      if (condition) {
        const status = withPodCondition(pod.status, { ...condition, lastTransitionTime: rfc3339(this.opts.clock.now()) });
        patch.conditions = status.conditions!.filter((c) => c.type === condition.type);
      }
      // The UID in the patch makes it fail on a pod of the same name created since.
      await pods.patch(name, 'strategic', { metadata: { uid }, status: patch }, { subresource: 'status' });
    }
    await pods.delete(name, { gracePeriodSeconds: 0 });
  }

  private handleError(err: unknown, pod: Pod): void {
    this.opts.logger.error({ err, pod: metaNamespaceKeyFunc(pod) }, 'pod garbage collection failed for pod');
  }
}

/** Any phase but Pending, Running and Unknown (an empty phase included, as upstream). */
function isPodTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase ?? '';
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

function isNodeReady(node: Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** The kubelet's eviction.PodIsEvicted. */
function isEvicted(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' && pod.status.reason === 'Evicted';
}

/** Evicted pods first (they spare terminated pods controllers keep), then oldest, then by name. */
function byEvictionAndCreationTimestamp(a: Pod, b: Pod): number {
  const ae = isEvicted(a);
  const be = isEvicted(b);
  if (ae !== be) return ae ? -1 : 1;
  const at = Date.parse(a.metadata?.creationTimestamp ?? '') || 0;
  const bt = Date.parse(b.metadata?.creationTimestamp ?? '') || 0;
  if (at !== bt) return at - bt;
  const an = a.metadata?.name ?? '';
  const bn = b.metadata?.name ?? '';
  return an < bn ? -1 : an > bn ? 1 : 0;
}
