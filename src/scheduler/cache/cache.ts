// The scheduler cache (upstream's internal/cache): NodeInfos kept from the node and pod informers,
// plus pods the scheduler has assumed onto nodes between Reserve and the informer confirming the
// binding, so the next cycles already count their resources. NodeInfos sit in a list ordered by
// last change, which lets updateSnapshot copy only what changed since the previous cycle.
import type { Node, Pod } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { nodeUpdateActions } from '../framework/events.js';
import { nextGeneration, NodeInfo, PodInfo, podKey, podUID, type ImageState } from '../framework/types.js';
import { NodeTree } from './node-tree.js';
import type { Snapshot } from './snapshot.js';

interface NodeItem {
  name: string;
  info: NodeInfo;
  prev?: NodeItem;
  next?: NodeItem;
}

interface PodState {
  pod: Pod;
  /** The PodInfo counted on the node. */
  info: PodInfo;
  /** For assumed pods whose binding finished: when the assumption expires. */
  deadline?: number;
  bindingFinished: boolean;
}

export interface CacheOptions {
  clock: Clock;
  /**
   * How long an assumed pod whose binding finished may wait for the informer to confirm it before
   * it is dropped; 0 (upstream's default since 1.23, issue 106361) keeps it until confirmed or forgotten.
   */
  assumedPodTTLMs?: number;
}

export class Cache {
  private readonly nodes = new Map<string, NodeItem>();
  /** Most recently changed first. */
  private head?: NodeItem;
  private readonly tree = new NodeTree();
  private treeChanged = true;
  private readonly podStates = new Map<string, PodState>();
  private readonly assumed = new Set<string>();
  private readonly imageStates = new Map<string, ImageState>();

  constructor(private readonly opts: CacheOptions) {}

  // ---- nodes ----

  addNode(node: Node): void {
    this.updateNode(node);
  }

  updateNode(node: Node): void {
    const name = node.metadata?.name ?? '';
    const item = this.nodes.get(name) ?? this.newItem(name);
    const old = item.info.node;
    // Heartbeats (status timestamps) change nothing a plugin reads: keep the NodeInfo and the
    // snapshot's copy as they are instead of re-copying thousands of nodes per cycle.
    if (old && nodeUpdateActions(old, node) === 0 && JSON.stringify(old.status?.images) === JSON.stringify(node.status?.images)) {
      item.info.node = node;
      return;
    }
    if (old) this.removeImages(item.info);
    item.info.setNode(node);
    this.addImages(item.info, node);
    if (this.tree.add(node)) this.treeChanged = true;
    this.moveToHead(item);
  }

  /** The NodeInfo stays while pods still point at the node (they are deleted asynchronously). */
  removeNode(name: string): void {
    const item = this.nodes.get(name);
    if (!item) return;
    this.removeImages(item.info);
    item.info.node = undefined;
    item.info.name = '';
    item.info.generation = nextGeneration();
    if (this.tree.remove(name)) this.treeChanged = true;
    if (item.info.pods.length === 0) this.unlink(item);
    else this.moveToHead(item);
  }

  // ---- pods ----

  /** An assigned pod seen by the informer; confirms an assumed pod. */
  addPod(pod: Pod): void {
    const uid = podUID(pod);
    const state = this.podStates.get(uid);
    if (state && this.assumed.has(uid)) {
      this.assumed.delete(uid);
      // Confirmed on the assumed node: swap the object without recounting (a bound pod's spec can
      // change only in fields NodeInfo does not count; resizes arrive later through updatePod).
      if (state.pod.spec?.nodeName === pod.spec?.nodeName) {
        state.pod = state.info.pod = pod;
        state.deadline = undefined;
      } else this.replacePod(state.pod, pod);
      return;
    }
    if (state) return;
    this.addPodToNode(pod);
  }

  updatePod(oldPod: Pod, newPod: Pod): void {
    const uid = podUID(newPod);
    const state = this.podStates.get(uid);
    if (!state) return this.addPod(newPod);
    this.assumed.delete(uid);
    this.replacePod(state.pod ?? oldPod, newPod);
  }

  removePod(pod: Pod): void {
    const uid = podUID(pod);
    const state = this.podStates.get(uid);
    if (!state) return;
    this.removePodFromNode(state.pod);
    this.podStates.delete(uid);
    this.assumed.delete(uid);
  }

  /** Counts the pod (with spec.nodeName set) on its node until it is confirmed, forgotten or expires. */
  assumePod(pi: PodInfo): void {
    const pod = pi.pod;
    const uid = podUID(pod);
    if (this.podStates.has(uid)) throw new Error(`pod ${podKey(pod)}(${uid}) is in the cache, so can't be assumed`);
    this.addPodToNode(pod, pi);
    this.assumed.add(uid);
  }

  /** The binding call returned: the assumption may expire from now on. */
  finishBinding(pod: Pod): void {
    const state = this.podStates.get(podUID(pod));
    if (!state || !this.assumed.has(podUID(pod))) return;
    state.bindingFinished = true;
    const ttl = this.opts.assumedPodTTLMs ?? 0;
    if (ttl > 0) state.deadline = this.opts.clock.now() + ttl;
  }

  /** Drops an assumed pod (binding failed). */
  forgetPod(pod: Pod): void {
    const uid = podUID(pod);
    if (!this.assumed.has(uid)) return;
    this.removePod(pod);
  }

  isAssumedPod(pod: Pod): boolean {
    return this.assumed.has(podUID(pod));
  }

  /** Drops assumed pods whose binding finished longer than the TTL ago; returns them. */
  cleanupExpiredAssumedPods(): Pod[] {
    const now = this.opts.clock.now();
    const expired: Pod[] = [];
    for (const uid of this.assumed) {
      const state = this.podStates.get(uid)!;
      if (state.bindingFinished && state.deadline !== undefined && now >= state.deadline) expired.push(state.pod);
    }
    for (const pod of expired) this.removePod(pod);
    return expired;
  }

  // ---- snapshot ----

  /** Brings snapshot up to date with the cache, copying only the NodeInfos changed since its generation. */
  updateSnapshot(snapshot: Snapshot): void {
    let rebuildAll = this.treeChanged;
    let rebuildAffinity = false;
    for (let item = this.head; item && item.info.generation > snapshot.generation; item = item.next) {
      const info = item.info;
      if (!info.node) continue;
      const clone = info.clone();
      const existing = snapshot.nodeInfoMap.get(info.name);
      if (!existing) {
        snapshot.nodeInfoMap.set(info.name, clone);
        rebuildAll = true;
        continue;
      }
      if ((existing.podsWithAffinity.length > 0) !== (clone.podsWithAffinity.length > 0)) rebuildAffinity = true;
      if ((existing.podsWithRequiredAntiAffinity.length > 0) !== (clone.podsWithRequiredAntiAffinity.length > 0)) rebuildAffinity = true;
      // Keep the object: the lists hold it.
      Object.assign(existing, clone);
    }
    if (this.head) snapshot.generation = Math.max(snapshot.generation, this.head.info.generation);
    if (snapshot.nodeInfoMap.size > this.tree.numNodes) {
      for (const name of snapshot.nodeInfoMap.keys()) if (!this.nodes.get(name)?.info.node) snapshot.nodeInfoMap.delete(name);
      rebuildAll = true;
    }
    if (rebuildAll || rebuildAffinity) snapshot.rebuildLists(this.tree.list(), rebuildAll);
    this.treeChanged = false;
  }

  // ---- internals ----

  private addPodToNode(pod: Pod, info = new PodInfo(pod)): void {
    const name = pod.spec?.nodeName ?? '';
    const item = this.nodes.get(name) ?? this.newItem(name);
    item.info.addPod(info);
    this.podStates.set(podUID(pod), { pod, info, bindingFinished: false });
    this.moveToHead(item);
  }

  private removePodFromNode(pod: Pod): void {
    const item = this.nodes.get(pod.spec?.nodeName ?? '');
    if (!item) return;
    item.info.removePod(pod);
    if (!item.info.node && item.info.pods.length === 0) this.unlink(item);
    else this.moveToHead(item);
  }

  private replacePod(oldPod: Pod, newPod: Pod): void {
    this.removePodFromNode(oldPod);
    this.addPodToNode(newPod);
  }

  private newItem(name: string): NodeItem {
    const item: NodeItem = { name, info: new NodeInfo() };
    this.nodes.set(name, item);
    return item;
  }

  private moveToHead(item: NodeItem): void {
    if (this.head === item) return;
    if (item.prev) item.prev.next = item.next;
    if (item.next) item.next.prev = item.prev;
    item.prev = undefined;
    item.next = this.head;
    if (this.head) this.head.prev = item;
    this.head = item;
  }

  private unlink(item: NodeItem): void {
    if (item.prev) item.prev.next = item.next;
    if (item.next) item.next.prev = item.prev;
    if (this.head === item) this.head = item.next;
    item.prev = item.next = undefined;
    this.nodes.delete(item.name);
  }

  private addImages(info: NodeInfo, node: Node): void {
    info.imageStates = new Map();
    for (const image of node.status?.images ?? []) {
      for (const name of image.names ?? []) {
        let state = this.imageStates.get(name);
        if (!state) this.imageStates.set(name, (state = { size: image.sizeBytes ?? 0, nodes: new Set() }));
        state.nodes.add(info.name);
        info.imageStates.set(name, state);
      }
    }
  }

  private removeImages(info: NodeInfo): void {
    for (const [name, state] of info.imageStates) {
      state.nodes.delete(info.name);
      if (state.nodes.size === 0) this.imageStates.delete(name);
    }
    info.imageStates = new Map();
  }
}
