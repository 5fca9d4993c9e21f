// ResourceQuota validation as upstream's ValidateResourceQuota(Update|StatusUpdate): quota resource
// names (standard ones or fully qualified), non-negative (and whole, for counted resources)
// quantities, scopes and the scope selector; scopes are immutable.
import { invalid, Path, rawValue, required, type FieldError } from '../field.js';
import { arr, isObj, str, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { fieldImmutableErrorMsg, nameIsDNSSubdomain } from './names.js';
import { quantityAt, validateResourceName, validateResourceQuantity } from './podspec.js';

/** helper.IsStandardQuotaResourceName's set (hugepages aside). */
const standardQuotaResources = new Set([
  'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.storage', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods', 'resourcequotas', 'services', 'replicationcontrollers',
  'secrets', 'persistentvolumeclaims', 'configmaps', 'services.nodeports', 'services.loadbalancers',
]);

/** The scopes a quota may name (VolumeAttributesClass is behind a gate that is off in 1.33). */
export const standardResourceQuotaScopes = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];

const podComputeQuotaResources = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);

const isStandardQuotaResourceName = (name: string) =>
  standardQuotaResources.has(name) || name.startsWith('hugepages-') || name.startsWith('requests.hugepages-');

/** IsResourceQuotaScopeValidForResource: pod scopes only constrain pod counts and compute. */
function scopeValidForResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return resource === 'pods' || podComputeQuotaResources.has(resource);
    case 'BestEffort':
      return resource === 'pods';
    default:
      return true;
  }
}

/** ValidateResourceQuotaResourceName. */
function validateQuotaResourceName(name: string, p: Path): FieldError[] {
  const errs = validateResourceName(name, p);
  if (!name.includes('/') && !isStandardQuotaResourceName(name)) errs.push(invalid(p, name, 'must be a standard resource for quota'));
  return errs;
}

function validateResourceList(list: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  for (const [name, raw] of Object.entries(isObj(list) ? list : {})) {
    const fp = p.key(name);
    errs.push(...validateQuotaResourceName(name, fp));
    const q = quantityAt(raw, fp, errs);
    if (q) errs.push(...validateResourceQuantity(name, q, fp));
  }
  return errs;
}

const conflictingScopePairs = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];

/** The scopes as upstream's error shows its internal []core.ResourceQuotaScope. */
const goScopes = (scopes: string[]) => rawValue(`[]core.ResourceQuotaScope{${scopes.map((s) => JSON.stringify(s)).join(', ')}}`);

function validateScopes(spec: Obj, p: Path): FieldError[] {
  const scopes = arr(spec.scopes).map(str);
  if (scopes.length === 0) return [];
  const shown = goScopes(scopes);
  const hard = Object.keys(isObj(spec.hard) ? spec.hard : {}).sort();
  const errs: FieldError[] = [];
  const sp = p.child('scopes');
  for (const scope of scopes) {
    if (!standardResourceQuotaScopes.includes(scope)) errs.push(invalid(sp, shown, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !scopeValidForResource(scope, k)) errs.push(invalid(sp, shown, 'unsupported scope applied to resource'));
    }
  }
  for (const pair of conflictingScopePairs) if (pair.every((s) => scopes.includes(s))) errs.push(invalid(sp, shown, 'conflicting scopes'));
  return errs;
}

const existsOnlyScopes = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity']);

function validateScopeSelector(spec: Obj, p: Path): FieldError[] {
  if (!isObj(spec.scopeSelector)) return [];
  const selector = spec.scopeSelector;
  const hard = Object.keys(isObj(spec.hard) ? spec.hard : {}).sort();
  const errs: FieldError[] = [];
  const mp = p.child('scopeSelector', 'matchExpressions');
  const seen = new Set<string>();
  for (const req of arr(selector.matchExpressions).filter(isObj)) {
    const scope = str(req.scopeName);
    const operator = str(req.operator);
    const values = arr(req.values);
    if (!standardResourceQuotaScopes.includes(scope)) errs.push(invalid(mp.child('scopeName'), scope, 'unsupported scope'));
    for (const k of hard) {
      if (isStandardQuotaResourceName(k) && !scopeValidForResource(scope, k)) errs.push(invalid(mp, selector, 'unsupported scope applied to resource'));
    }
    if (existsOnlyScopes.has(scope) && operator !== 'Exists') {
      errs.push(
        invalid(
          mp.child('operator'),
          operator,
          "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    }
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0) errs.push(required(mp.child('values'), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length !== 0) errs.push(invalid(mp.child('values'), values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    } else {
      errs.push(invalid(mp.child('operator'), operator, 'not a valid selector operator'));
    }
    seen.add(scope);
  }
  for (const pair of conflictingScopePairs) if (pair.every((s) => seen.has(s))) errs.push(invalid(mp, selector, 'conflicting scopes'));
  return errs;
}

function validateSpec(spec: Obj): FieldError[] {
  const p = Path.root('spec');
  return [...validateResourceList(spec.hard, p.child('hard')), ...validateScopes(spec, p), ...validateScopeSelector(spec, p)];
}

function validateStatus(status: Obj): FieldError[] {
  const p = Path.root('status');
  return [...validateResourceList(status.hard, p.child('hard')), ...validateResourceList(status.used, p.child('used'))];
}

const specOf = (q: Obj): Obj => (isObj(q.spec) ? q.spec : {});
const statusOf = (q: Obj): Obj => (isObj(q.status) ? q.status : {});

export const validateResourceQuota = (q: Obj): FieldError[] => [
  ...validateObjectMeta(q.metadata, true, nameIsDNSSubdomain),
  ...validateSpec(specOf(q)),
  ...validateStatus(statusOf(q)),
];

export function validateResourceQuotaUpdate(q: Obj, old: Obj): FieldError[] {
  const errs = [...validateObjectMetaUpdate(q.metadata, old.metadata), ...validateSpec(specOf(q))];
  const scopes = new Set(arr(specOf(q).scopes).map(str));
  const oldScopes = new Set(arr(specOf(old).scopes).map(str));
  if (scopes.size !== oldScopes.size || [...scopes].some((s) => !oldScopes.has(s))) {
    errs.push(invalid(Path.root('spec').child('scopes'), goScopes(arr(specOf(q).scopes).map(str)), fieldImmutableErrorMsg));
  }
  return errs;
}

export const validateResourceQuotaStatusUpdate = (q: Obj, old: Obj): FieldError[] => [
  ...validateObjectMetaUpdate(q.metadata, old.metadata),
  ...validateStatus(statusOf(q)),
];
