// The node view of one scheduling cycle. The cache refreshes it incrementally before each cycle:
// only NodeInfos whose generation moved are copied, and the lists are rebuilt only when nodes come
// or go or start/stop running pods with affinity terms, so a cycle at 5,000 nodes copies ~1 NodeInfo.
import type { NodeInfoLister } from '../framework/interface.js';
import type { NodeInfo } from '../framework/types.js';

export class Snapshot implements NodeInfoLister {
  readonly nodeInfoMap = new Map<string, NodeInfo>();
  nodeInfoList: NodeInfo[] = [];
  havePodsWithAffinityNodeInfoList: NodeInfo[] = [];
  havePodsWithRequiredAntiAffinityNodeInfoList: NodeInfo[] = [];
  /** The cache generation this snapshot reflects. */
  generation = 0;

  list(): readonly NodeInfo[] {
    return this.nodeInfoList;
  }

  havePodsWithAffinityList(): readonly NodeInfo[] {
    return this.havePodsWithAffinityNodeInfoList;
  }

  havePodsWithRequiredAntiAffinityList(): readonly NodeInfo[] {
    return this.havePodsWithRequiredAntiAffinityNodeInfoList;
  }

  get(nodeName: string): NodeInfo | undefined {
    return this.nodeInfoMap.get(nodeName);
  }

  /** Rebuilds the lists in the given node order. */
  rebuildLists(order: readonly string[], all: boolean): void {
    if (all) {
      this.nodeInfoList = [];
      for (const name of order) {
        const ni = this.nodeInfoMap.get(name);
        if (ni) this.nodeInfoList.push(ni);
      }
    }
    // One pass for both lists: this runs whenever a node gains its first or loses its last pod with affinity.
    const withAffinity: NodeInfo[] = [];
    const withRequiredAntiAffinity: NodeInfo[] = [];
    for (const n of this.nodeInfoList) {
      if (n.podsWithAffinity.length > 0) withAffinity.push(n);
      if (n.podsWithRequiredAntiAffinity.length > 0) withRequiredAntiAffinity.push(n);
    }
    this.havePodsWithAffinityNodeInfoList = withAffinity;
    this.havePodsWithRequiredAntiAffinityNodeInfoList = withRequiredAntiAffinity;
  }
}
