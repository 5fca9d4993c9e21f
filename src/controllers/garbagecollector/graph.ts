// The garbage collector's picture of the cluster, as upstream's GraphBuilder keeps it: every observed
// object by UID with its ownerReferences, plus the reverse index from an owner's UID to the objects
// that name it. The UID is the identity: a reference counts only for the object that holds its UID
// under the kind, name and namespace the reference states.
//
// The graph decides which objects need a look; the workers then read the live objects before they
// write, so a lagging cache can delay a collection but never cause a wrong one.
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { parseApiVersion } from '../../api/meta.js';
import type { ResourceInfo } from '../../api/resources.js';
import type { MetaObject } from '../../client/indexer.js';

export const finalizerOrphan = 'orphan';
export const finalizerForeground = 'foregroundDeletion';

/** Where an object lives and which object it is. */
export interface ObjectRef {
  info: ResourceInfo;
  namespace: string;
  name: string;
  uid: string;
}

export interface GraphNode extends ObjectRef {
  owners: readonly OwnerReference[];
  beingDeleted: boolean;
  /** Deleted in foreground: waits until no dependent blocks it. */
  deletingDependents: boolean;
  /** Deleted with the orphan policy: its dependents lose their references to it first. */
  orphaning: boolean;
}

/** What the graph asks the workers to look at, by UID. */
export interface GraphQueues {
  attemptToDelete(uid: string): void;
  attemptToOrphan(uid: string): void;
}

export class Graph {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly dependentUIDs = new Map<string, Set<string>>();

  constructor(private readonly queues: GraphQueues) {}

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  /** The observed objects that name uid as an owner. */
  dependents(uid: string): GraphNode[] {
    return [...(this.dependentUIDs.get(uid) ?? [])].map((d) => this.nodes.get(d)!);
  }

  /** The dependents whose reference to uid sets blockOwnerDeletion: a foreground deletion waits for them. */
  blockingDependents(uid: string): GraphNode[] {
    return this.dependents(uid).filter((d) => d.owners.some((r) => r.uid === uid && r.blockOwnerDeletion === true));
  }

  /** The observed object a reference of dependent names, if it exists with that UID, kind, name and namespace. */
  ownerOf(dependent: ObjectRef, ref: OwnerReference): GraphNode | undefined {
    const owner = this.nodes.get(ref.uid);
    if (!owner) return undefined;
    const sameKind = owner.info.kind === ref.kind && owner.info.group === parseApiVersion(ref.apiVersion).group;
    const sameNamespace = !owner.info.namespaced || owner.namespace === dependent.namespace;
    return sameKind && sameNamespace && owner.name === ref.name ? owner : undefined;
  }

  /**
   * True when the cache shows every owner present and none deleting its dependents: the object stays,
   * and any change to that (an owner's deletion) arrives as an event that brings it back.
   */
  ownersSolid(node: GraphNode): boolean {
    return node.owners.every((ref) => {
      const owner = this.ownerOf(node, ref);
      return owner !== undefined && !owner.deletingDependents;
    });
  }

  /** An object added or updated, as an informer saw it. */
  observe(info: ResourceInfo, obj: MetaObject): void {
    const meta = obj.metadata ?? {};
    if (!meta.uid) return;
    const uid = meta.uid;
    const finalizers = meta.finalizers ?? [];
    const beingDeleted = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
    const node: GraphNode = {
      info,
      namespace: meta.namespace ?? '',
      name: meta.name ?? '',
      uid,
      owners: meta.ownerReferences ?? [],
      beingDeleted,
      deletingDependents: beingDeleted && finalizers.includes(finalizerForeground),
      orphaning: beingDeleted && finalizers.includes(finalizerOrphan),
    };
    const old = this.nodes.get(uid);
    this.nodes.set(uid, node);

    const before = new Map((old?.owners ?? []).map((r) => [r.uid, r]));
    const after = new Map(node.owners.map((r) => [r.uid, r]));
    for (const [ownerUID, ref] of before) {
      if (!after.has(ownerUID)) this.unindex(ownerUID, uid);
      // An owner waiting in foreground may be free once this reference stops blocking it.
      if (ref.blockOwnerDeletion === true && after.get(ownerUID)?.blockOwnerDeletion !== true) this.enqueueOwner(ownerUID);
    }
    for (const ownerUID of after.keys()) if (!before.has(ownerUID)) this.index(ownerUID, uid);

    if (node.orphaning) this.queues.attemptToOrphan(uid);
    if (node.deletingDependents) {
      if (!old?.deletingDependents) for (const dep of this.dependents(uid)) this.queues.attemptToDelete(dep.uid);
      this.queues.attemptToDelete(uid);
    } else if (!beingDeleted && !this.ownersSolid(node)) {
      this.queues.attemptToDelete(uid);
    }
  }

  /** An object deleted, as an informer saw it: its dependents may now be garbage. */
  remove(obj: MetaObject): void {
    const uid = obj.metadata?.uid;
    const node = uid === undefined ? undefined : this.nodes.get(uid);
    if (!node) return;
    this.nodes.delete(node.uid);
    for (const ref of node.owners) this.unindex(ref.uid, node.uid);
    for (const dep of this.dependents(node.uid)) this.queues.attemptToDelete(dep.uid);
    for (const ref of node.owners) this.enqueueOwner(ref.uid);
  }

  // Only an owner deleting its dependents has anything to re-check when one of them changes.
  private enqueueOwner(uid: string): void {
    if (this.nodes.get(uid)?.deletingDependents) this.queues.attemptToDelete(uid);
  }

  private index(ownerUID: string, uid: string): void {
    let set = this.dependentUIDs.get(ownerUID);
    if (!set) this.dependentUIDs.set(ownerUID, (set = new Set()));
    set.add(uid);
  }

  private unindex(ownerUID: string, uid: string): void {
    const set = this.dependentUIDs.get(ownerUID);
    set?.delete(uid);
    if (set?.size === 0) this.dependentUIDs.delete(ownerUID);
  }
}
