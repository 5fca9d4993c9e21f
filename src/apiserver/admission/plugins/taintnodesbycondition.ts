// TaintNodesByCondition, as upstream: a node is created with the not-ready NoSchedule taint, so
// nothing is scheduled to it before the node lifecycle controller has seen it become Ready.
import type { Node } from 'kubernetes-types/core/v1.js';
import type { AdmissionAttributes, MutatingAdmissionPlugin } from '../interface.js';
import { TAINT_NODE_NOT_READY } from './defaulttolerationseconds.js';

export const pluginName = 'TaintNodesByCondition';

export class TaintNodesByCondition implements MutatingAdmissionPlugin {
  readonly name = pluginName;

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.subresource === '' && a.resource.group === '' && a.resource.resource === 'nodes';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const node = a.object as Node | undefined;
    if (!node) return;
    const taints = node.spec?.taints ?? [];
    if (taints.some((t) => t.key === TAINT_NODE_NOT_READY && t.effect === 'NoSchedule')) return;
    node.spec = { ...node.spec, taints: [...taints, { key: TAINT_NODE_NOT_READY, effect: 'NoSchedule' }] };
  }
}
