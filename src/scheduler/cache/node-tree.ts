// Nodes grouped by zone and listed round-robin across zones (upstream's nodeTree), so a search that
// stops after numFeasibleNodesToFind nodes still sees every zone.
import type { Node } from '../../api/types.js';
import { zoneKey } from '../../api/topology.js';

export class NodeTree {
  private readonly zones = new Map<string, string[]>();
  private readonly zoneOf = new Map<string, string>();

  get numNodes(): number {
    return this.zoneOf.size;
  }

  /** Adds or moves the node; true if the tree changed. */
  add(node: Node): boolean {
    const name = node.metadata?.name ?? '';
    const zone = zoneKey(node);
    const old = this.zoneOf.get(name);
    if (old === zone) return false;
    if (old !== undefined) this.remove(name);
    let list = this.zones.get(zone);
    if (!list) this.zones.set(zone, (list = []));
    list.push(name);
    this.zoneOf.set(name, zone);
    return true;
  }

  remove(name: string): boolean {
    const zone = this.zoneOf.get(name);
    if (zone === undefined) return false;
    const list = this.zones.get(zone)!;
    list.splice(list.indexOf(name), 1);
    if (list.length === 0) this.zones.delete(zone);
    this.zoneOf.delete(name);
    return true;
  }

  /** Node names, one from each zone in turn. */
  list(): string[] {
    const out: string[] = [];
    const lists = [...this.zones.values()];
    for (let i = 0; out.length < this.zoneOf.size; i++) for (const l of lists) if (i < l.length) out.push(l[i]!);
    return out;
  }
}
