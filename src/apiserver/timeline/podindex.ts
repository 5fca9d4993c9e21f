// The watch cache's pods by UID, rebuilt when the pods changed and a batch needs it (as the Node
// authorizer indexes them by node): which node a recorded pod is bound to, and its controller.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { NodePodSource } from '../authz/node/authorizer.js';

export class PodIndex {
  private byUid = new Map<string, Pod>();
  private version = -1;

  constructor(private readonly source: NodePodSource) {}

  get(uid: string): Pod | undefined {
    const v = this.source.version();
    if (v !== this.version) {
      this.byUid = new Map(this.source.pods().flatMap((p) => (p.metadata?.uid ? [[p.metadata.uid, p] as const] : [])));
      this.version = v;
    }
    return this.byUid.get(uid);
  }
}
