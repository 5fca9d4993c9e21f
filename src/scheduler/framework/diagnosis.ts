// Why a pod fits nowhere, and upstream's FailedScheduling message built from it:
//   "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {k: v}. <PostFilter message>"
import { Code, Status } from './status.js';

/**
 * The status of each node that failed filtering. Nodes never filtered (PreFilter rejected the pod, or
 * its result excluded them) share absentNodesStatus.
 */
export class NodeToStatus {
  private readonly byNode = new Map<string, Status>();
  absentNodesStatus: Status = Status.of(Code.UnschedulableAndUnresolvable);

  set(nodeName: string, s: Status): void {
    this.byNode.set(nodeName, s);
  }

  /** The node's status (absentNodesStatus if it was not filtered). */
  get(nodeName: string): Status {
    return this.byNode.get(nodeName) ?? this.absentNodesStatus;
  }

  get size(): number {
    return this.byNode.size;
  }

  entries(): IterableIterator<[string, Status]> {
    return this.byNode.entries();
  }
}

export class Diagnosis {
  nodeToStatus = new NodeToStatus();
  /** Plugins that rejected the pod on some node: only their registered events requeue it. */
  unschedulablePlugins = new Set<string>();
  pendingPlugins = new Set<string>();
  /** Set when PreFilter rejected the pod; then per-node reasons are not listed. */
  preFilterMsg = '';
  postFilterMsg = '';

  /**
   * How many nodes each (plugin, reason) rejected, absent nodes counted under absentNodesStatus: the
   * one source of the FailedScheduling message's histogram and of the timeline's per-plugin verdicts.
   */
  rejections(numAllNodes: number): { plugin: string; reason: string; count: number }[] {
    const counts = new Map<string, { plugin: string; reason: string; count: number }>();
    const add = (plugin: string, reason: string, n: number) => {
      const key = `${plugin}\0${reason}`;
      const c = counts.get(key);
      if (c) c.count += n;
      else counts.set(key, { plugin, reason, count: n });
    };
    for (const [, s] of this.nodeToStatus.entries()) for (const r of s.reasons) add(s.plugin, r, 1);
    const absent = numAllNodes - this.nodeToStatus.size;
    if (absent > 0) for (const r of this.nodeToStatus.absentNodesStatus.reasons) add(this.nodeToStatus.absentNodesStatus.plugin, r, absent);
    return [...counts.values()];
  }

  addPluginStatus(s: Status): void {
    if (!s.plugin) return;
    if (s.isRejected()) this.unschedulablePlugins.add(s.plugin);
    if (s.code === Code.Pending) this.pendingPlugins.add(s.plugin);
  }
}

/** The error of a cycle in which no node fit; its message is upstream's FitError.Error(). */
export class FitError extends Error {
  constructor(
    readonly numAllNodes: number,
    readonly diagnosis: Diagnosis,
  ) {
    // No message argument: an own `message` property would hide the getter below.
    super();
    this.name = 'FitError';
  }

  override get message(): string {
    const d = this.diagnosis;
    let msg = `0/${this.numAllNodes} nodes are available:`;
    if (d.preFilterMsg) {
      msg += ` ${d.preFilterMsg}.`;
    } else {
      const counts = new Map<string, number>();
      for (const { reason, count } of d.rejections(this.numAllNodes)) counts.set(reason, (counts.get(reason) ?? 0) + count);
      // Go's sort.Strings: byte order of "<count> <reason>", so "10 x" sorts before "2 y" as upstream.
      const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (parts.length) msg += ` ${parts.join(', ')}.`;
    }
    if (d.postFilterMsg) msg += ` ${d.postFilterMsg}`;
    return msg;
  }
}

/** Upstream's ErrNoNodesAvailable: the cluster has no nodes at all. */
export class NoNodesAvailableError extends Error {
  constructor() {
    super('no nodes available to schedule pods');
    this.name = 'NoNodesAvailableError';
  }
}
