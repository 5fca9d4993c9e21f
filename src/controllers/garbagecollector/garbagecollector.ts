// The garbage collector, as upstream's: the process's shared informers on every collectable resource
// (metadata only, PartialObjectMetadata, where nothing else watches whole objects) feed a graph of
// owners and dependents by UID; two rate-limited queues of UIDs drive the work.
// - attemptToDelete: an object whose owners are all gone is deleted (in background, unless its own
//   finalizers ask otherwise); one with a remaining owner stays and loses its dangling references; an
//   owner deleted in foreground deletes its dependents and drops `foregroundDeletion` once no
//   blocking dependent remains.
// - attemptToOrphan: an owner deleted with the orphan policy has its references removed from every
//   dependent, then its `orphan` finalizer.
// Every sync is level-triggered and idempotent; decisions are checked against live reads of the
// object and its owners, since the caches may lag.
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { parseApiVersion } from '../../api/meta.js';
import { findKind, resources, type ResourceInfo } from '../../api/resources.js';
import type { EventSource } from '../../client/factory.js';
import { DeletedFinalStateUnknown, type MetaObject } from '../../client/indexer.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import { QueueController } from '../kit/controller.js';
import { finalizerForeground, finalizerOrphan, Graph, type GraphNode } from './graph.js';
import {
  deleteObject,
  getLive,
  removeFinalizer,
  removeOwnerReferences,
  unblockOwnerReferences,
  type GarbageCollectorClient,
  type PropagationPolicy,
} from './operations.js';

export interface GarbageCollectorOptions {
  client: GarbageCollectorClient;
  /** The process's informers (SharedInformerFactory): metadata-only unless whole objects are watched anyway. */
  informers: { ownerGraphInformer(info: ResourceInfo): EventSource<MetaObject> };
  clock: Clock;
  logger: Logger;
  /** Workers per queue (upstream's --concurrent-gc-syncs). */
  workers?: number;
}

/** Every resource that can be listed, watched and deleted, except events, which nothing owns in practice. */
const collectedResources = resources.filter((r) => ['list', 'watch', 'delete'].every((v) => r.verbs.includes(v)) && r.resource !== 'events');

/** A reference the API can never satisfy: retrying will not help, so the item is dropped (as upstream). */
class InvalidOwnerReferenceError extends Error {}

export class GarbageCollector {
  private readonly graph: Graph;
  private readonly attemptToDelete: QueueController;
  private readonly attemptToOrphan: QueueController;

  constructor(private readonly opts: GarbageCollectorOptions) {
    const sources = collectedResources.map((info) => {
      const informer = opts.informers.ownerGraphInformer(info);
      informer.addEventHandler({
        onAdd: (obj) => this.graph.observe(info, obj),
        onUpdate: (_old, obj) => this.graph.observe(info, obj),
        onDelete: (obj) => this.graph.remove(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj),
      });
      return informer;
    });
    // Workers wait for every informer's first list: an owner not yet seen must not look absent.
    const queue = (name: string, sync: (uid: string) => Promise<void>) =>
      new QueueController({ name, clock: opts.clock, logger: opts.logger, sources, workers: opts.workers ?? 20, sync, onError: (err, uid) => this.onError(err, uid) });
    this.attemptToDelete = queue('garbagecollector-delete', (uid) => this.syncDelete(uid));
    this.attemptToOrphan = queue('garbagecollector-orphan', (uid) => this.syncOrphan(uid));
    this.graph = new Graph({ attemptToDelete: (uid) => this.attemptToDelete.enqueue(uid), attemptToOrphan: (uid) => this.attemptToOrphan.enqueue(uid) });
  }

  start(): void {
    this.attemptToDelete.start();
    this.attemptToOrphan.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.attemptToDelete.stop(), this.attemptToOrphan.stop()]);
  }

  private onError(err: unknown, uid: string): 'retry' | 'drop' {
    if (!(err instanceof InvalidOwnerReferenceError)) return 'retry';
    this.opts.logger.warn({ uid, reason: err.message }, 'garbage collector ignores object');
    return 'drop';
  }

  private async syncDelete(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    // Being deleted is a one-way trip: its dependents are looked at once it is gone.
    if (!node || (node.beingDeleted && !node.deletingDependents)) return;
    if (node.deletingDependents) return this.syncDeletingDependents(node);
    if (this.graph.ownersSolid(node)) return;

    const latest = await getLive(this.opts.client, node);
    // Gone (the informer will report it) or owned by nothing now: nothing to collect.
    const refs = latest?.metadata?.ownerReferences ?? [];
    if (!latest || refs.length === 0) return;
    const { solid, dangling, waiting } = await this.classify(node, refs);
    const log = this.opts.logger;
    if (solid.length > 0) {
      // It stays; references to absent owners, or to owners waiting on it, only hold things up.
      if (dangling.length === 0 && waiting.length === 0) return;
      log.debug({ object: describe(node) }, 'removing dangling owner references');
      await removeOwnerReferences(this.opts.client, node, new Set([...dangling, ...waiting].map((r) => r.uid)));
      return;
    }
    const dependents = this.graph.dependents(uid);
    if (waiting.length > 0 && dependents.length > 0) {
      // An owner waits in foreground: this object's own dependents must go before it does.
      if (dependents.some((d) => d.deletingDependents)) {
        log.debug({ object: describe(node) }, 'unblocking owner references to break a foreground cycle');
        await unblockOwnerReferences(this.opts.client, node);
      }
      log.debug({ object: describe(node), policy: 'Foreground' }, 'deleting object: an owner waits for it, its own dependents go first');
      await deleteObject(this.opts.client, node, latest, 'Foreground');
      return;
    }
    const finalizers = latest.metadata?.finalizers ?? [];
    const policy: PropagationPolicy = finalizers.includes(finalizerOrphan) ? 'Orphan' : finalizers.includes(finalizerForeground) ? 'Foreground' : 'Background';
    log.debug({ object: describe(node), policy }, 'deleting object: no owner keeps it');
    await deleteObject(this.opts.client, node, latest, policy);
  }

  /** The owner waits for its blocking dependents; with none left it drops its finalizer and goes. */
  private async syncDeletingDependents(owner: GraphNode): Promise<void> {
    const blocking = this.graph.blockingDependents(owner.uid);
    if (blocking.length === 0) {
      this.opts.logger.debug({ object: describe(owner) }, 'removing foregroundDeletion finalizer');
      await removeFinalizer(this.opts.client, owner, finalizerForeground);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.attemptToDelete.enqueue(dep.uid);
  }

  private async syncOrphan(uid: string): Promise<void> {
    const owner = this.graph.get(uid);
    if (!owner?.orphaning) return;
    const results = await Promise.allSettled(this.graph.dependents(uid).map((dep) => removeOwnerReferences(this.opts.client, dep, new Set([uid]))));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown), `orphaning the dependents of ${describe(owner)} failed`);
    this.opts.logger.debug({ object: describe(owner) }, 'dependents orphaned, removing orphan finalizer');
    await removeFinalizer(this.opts.client, owner, finalizerOrphan);
  }

  /**
   * Sorts references by a live read of each owner: solid (present), dangling (absent, or its name now
   * holds another UID), waiting (present, deleting its dependents in foreground).
   */
  private async classify(node: GraphNode, refs: readonly OwnerReference[]): Promise<Record<'solid' | 'dangling' | 'waiting', OwnerReference[]>> {
    const out: Record<'solid' | 'dangling' | 'waiting', OwnerReference[]> = { solid: [], dangling: [], waiting: [] };
    for (const ref of refs) {
      const info = findKind(parseApiVersion(ref.apiVersion).group, ref.kind);
      if (!info) throw new Error(`owner reference of ${describe(node)} names an unknown kind ${ref.kind} in ${ref.apiVersion}`);
      if (info.namespaced && !node.info.namespaced) throw new InvalidOwnerReferenceError(`cluster-scoped ${describe(node)} names a namespaced owner ${ref.kind} ${ref.name}`);
      const owner = await getLive(this.opts.client, { info, namespace: node.namespace, name: ref.name, uid: ref.uid });
      const meta = owner?.metadata;
      if (!meta) out.dangling.push(ref);
      else if (meta.deletionTimestamp && meta.finalizers?.includes(finalizerForeground)) out.waiting.push(ref);
      else out.solid.push(ref);
    }
    return out;
  }
}

function describe(node: GraphNode): string {
  const where = node.namespace ? `${node.namespace}/` : '';
  return `${node.info.kind} ${where}${node.name} (${node.uid})`;
}
