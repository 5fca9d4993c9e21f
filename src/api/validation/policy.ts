// PodDisruptionBudget validation as upstream's pkg/apis/policy/validation and the policy strategies.
import { invalid, notSupported, Path, type FieldError } from '../field.js';
import { isNotMoreThan100Percent, validatePositiveIntOrPercent } from './apps.js';
import { isObj, validateConditions, validateLabelSelector, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { nameIsPathSegment } from './names.js';

const specPath = Path.root('spec');
const statusPath = Path.root('status');
const unhealthyPodEvictionPolicies = ['AlwaysAllow', 'IfHealthyBudget'];

/** ValidatePodDisruptionBudgetSpec. */
function validateSpec(spec: unknown): FieldError[] {
  const s = isObj(spec) ? spec : {};
  const errs: FieldError[] = [];
  if (s.minAvailable != null && s.maxUnavailable != null) {
    // Upstream prints the internal struct with %#v (pointer addresses included); the JSON shows the same fields.
    errs.push(invalid(specPath, s, 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const k of ['minAvailable', 'maxUnavailable'] as const) {
    if (s[k] == null) continue;
    errs.push(...validatePositiveIntOrPercent(s[k], specPath.child(k)), ...isNotMoreThan100Percent(s[k], specPath.child(k)));
  }
  errs.push(...validateLabelSelector(s.selector, specPath.child('selector')));
  const policy = s.unhealthyPodEvictionPolicy;
  if (policy != null && !unhealthyPodEvictionPolicies.includes(policy)) {
    errs.push(notSupported(specPath.child('unhealthyPodEvictionPolicy'), policy, unhealthyPodEvictionPolicies));
  }
  return errs;
}

// The generic registry checks a PodDisruptionBudget's name as a path segment only.
export const validatePodDisruptionBudget = (pdb: Obj): FieldError[] => [...validateObjectMeta(pdb.metadata, true, nameIsPathSegment), ...validateSpec(pdb.spec)];

/** The spec is mutable (since 1.15): the update runs the create rules. */
export const validatePodDisruptionBudgetUpdate = (pdb: Obj, old: Obj): FieldError[] => [...validateObjectMetaUpdate(pdb.metadata, old.metadata), ...validateSpec(pdb.spec)];

/** ValidatePodDisruptionBudgetStatusUpdate for policy/v1: the conditions, and no negative count. */
export function validatePodDisruptionBudgetStatusUpdate(pdb: Obj, old: Obj): FieldError[] {
  const status = isObj(pdb.status) ? pdb.status : {};
  const errs = [...validateObjectMetaUpdate(pdb.metadata, old.metadata), ...validateConditions(status.conditions, statusPath.child('conditions'))];
  for (const k of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) errs.push(...validateNonnegative(status[k], statusPath.child(k)));
  return errs;
}
