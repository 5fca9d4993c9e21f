// SetDefaults of admissionregistration/v1 for ValidatingAdmissionPolicy and its bindings.
import { child, isObj, type Obj } from './podspec.js';

/** MatchResources: Equivalent matching, empty (match-all) selectors, rules of any scope. */
function defaultMatchResources(m: Obj): void {
  m.matchPolicy ??= 'Equivalent';
  child(m, 'namespaceSelector');
  child(m, 'objectSelector');
  for (const key of ['resourceRules', 'excludeResourceRules']) {
    for (const rule of Array.isArray(m[key]) ? m[key] : []) if (isObj(rule)) rule.scope ??= '*';
  }
}

export function defaultValidatingAdmissionPolicy(policy: Obj): void {
  const spec = child(policy, 'spec');
  spec.failurePolicy ??= 'Fail';
  if (isObj(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
}

export function defaultValidatingAdmissionPolicyBinding(binding: Obj): void {
  const spec = child(binding, 'spec');
  if (isObj(spec.matchResources)) defaultMatchResources(spec.matchResources);
}
