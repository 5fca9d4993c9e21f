// DefaultTolerationSeconds, as upstream: every pod tolerates the node not-ready and unreachable
// NoExecute taints for 300 seconds unless it already tolerates them, so pods on a failed node are
// evicted after five minutes rather than at once.
import type { Toleration } from 'kubernetes-types/core/v1.js';
import type { AdmissionAttributes, MutatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'DefaultTolerationSeconds';

export const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const defaultTolerationSeconds = 300;

/** Whether `t` already tolerates the NoExecute taint `key` (an empty key or effect matches all). */
const tolerates = (t: Toleration, key: string) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect);

export class DefaultTolerationSeconds implements MutatingAdmissionPlugin {
  readonly name = pluginName;

  constructor(private readonly seconds = defaultTolerationSeconds) {}

  handles(a: AdmissionAttributes): boolean {
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.subresource === '' && a.resource.group === '' && a.resource.resource === 'pods';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const spec = a.object?.spec as { tolerations?: Toleration[] } | undefined;
    if (!spec) return;
    const tolerations = spec.tolerations ?? [];
    const added: Toleration[] = [];
    for (const key of [TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE]) {
      if (!tolerations.some((t) => tolerates(t, key))) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: this.seconds });
    }
    if (!added.length) return;
    spec.tolerations = [...tolerations, ...added];
    a.timeline?.mutated('spec.tolerations');
  }
}
