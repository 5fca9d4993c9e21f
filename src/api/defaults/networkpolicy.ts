// SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort of networking/v1.
import { child, isObj, type Obj } from './podspec.js';

export function defaultNetworkPolicy(np: Obj): void {
  // spec and spec.podSelector are structs upstream: always there, empty when the body omits them.
  const spec = child(np, 'spec');
  child(spec, 'podSelector');
  for (const key of ['ingress', 'egress']) {
    for (const rule of Array.isArray(spec[key]) ? spec[key] : []) {
      for (const port of Array.isArray(rule?.ports) ? rule.ports : []) if (isObj(port) && !port.protocol) port.protocol = 'TCP';
    }
  }
  // A policy that names no types is always about Ingress, and about Egress when it has egress rules.
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}
