// Deployment and ReplicaSet validation as upstream's pkg/apis/apps/validation.
import { forbidden, invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { labelSelectorAsSelector, type Selector } from '../labels.js';
import { isObj, str, strMap, validateImmutable, validateLabelSelector, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate, goLabelSelector, type Obj } from './meta.js';
import { nameIsDNSSubdomain, percentErrors } from './names.js';
import { validatePodTemplateSpec } from './podspec.js';

const specPath = Path.root('spec');
const statusPath = Path.root('status');

const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});
const status = (o: Obj): Obj => (isObj(o.status) ? o.status : {});

/** The selector check shared by both kinds; returns the parsed selector, or undefined when it is invalid. */
function validateSelector(sel: unknown, p: Path, errs: FieldError[]): Selector | undefined {
  if (sel == null) errs.push(required(p, ''));
  else {
    errs.push(...validateLabelSelector(sel, p));
    if (isObj(sel) && Object.keys(strMap(sel.matchLabels)).length + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0) === 0) {
      errs.push(invalid(p, rawValue(goLabelSelector(sel)), 'empty selector is invalid for deployment'));
    }
  }
  try {
    return labelSelectorAsSelector(isObj(sel) ? sel : undefined);
  } catch {
    errs.push(invalid(p, rawValue(goLabelSelector(sel)), 'invalid label selector'));
    return undefined;
  }
}

/** ValidatePodTemplateSpecForReplicaSet: the template must match the selector and always restart. */
function validateTemplateForReplicaSet(template: unknown, selector: Selector, p: Path): FieldError[] {
  if (!isObj(template)) return [required(p, '')];
  const errs: FieldError[] = [];
  const labels = strMap(template.metadata?.labels);
  if (!selector.empty() && !selector.matches(labels)) {
    errs.push(invalid(p.child('metadata', 'labels'), labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validatePodTemplateSpec(template, p));
  const restartPolicy = str(template.spec?.restartPolicy);
  if (restartPolicy !== 'Always') errs.push(notSupported(p.child('spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (template.spec?.activeDeadlineSeconds != null) {
    errs.push(forbidden(p.child('spec', 'activeDeadlineSeconds'), 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return errs;
}

/** An IntOrString as Go's String() prints it. */
const intOrString = (v: unknown) => rawValue(String(v ?? 0));

/** ValidatePositiveIntOrPercent (apps validation, also used by policy's PodDisruptionBudget). */
export function validatePositiveIntOrPercent(v: unknown, p: Path): FieldError[] {
  if (typeof v === 'string') return percentErrors(v).map((m) => invalid(p, intOrString(v), m));
  if (typeof v === 'number') return validateNonnegative(v, p);
  return [invalid(p, intOrString(v), "must be an integer or percentage (e.g '5%')")];
}

/** IsNotMoreThan100Percent: a percentage above 100 is invalid; integers are not bounded here. */
export function isNotMoreThan100Percent(v: unknown, p: Path): FieldError[] {
  return typeof v === 'string' && /^[0-9]+%$/.test(v) && parseInt(v, 10) > 100 ? [invalid(p, intOrString(v), 'must not be greater than 100%')] : [];
}

const intOrPercentValue = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]+%$/.test(v) ? parseInt(v, 10) : 0);

function validateStrategy(strategy: unknown, p: Path): FieldError[] {
  const s = isObj(strategy) ? strategy : {};
  switch (s.type) {
    case 'Recreate':
      return s.rollingUpdate != null ? [forbidden(p.child('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'")] : [];
    case 'RollingUpdate': {
      const ru = s.rollingUpdate;
      const rp = p.child('rollingUpdate');
      if (!isObj(ru)) return [required(rp, 'this should be defaulted and never be nil')];
      const errs = [...validatePositiveIntOrPercent(ru.maxUnavailable, rp.child('maxUnavailable')), ...validatePositiveIntOrPercent(ru.maxSurge, rp.child('maxSurge'))];
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        errs.push(invalid(rp.child('maxUnavailable'), intOrString(ru.maxUnavailable), 'may not be 0 when `maxSurge` is 0'));
      }
      if (typeof ru.maxUnavailable === 'string' && intOrPercentValue(ru.maxUnavailable) > 100) {
        errs.push(invalid(rp.child('maxUnavailable'), intOrString(ru.maxUnavailable), 'must not be greater than 100%'));
      }
      return errs;
    }
    default:
      return [notSupported(p, s, ['Recreate', 'RollingUpdate'])];
  }
}

function validateDeploymentSpec(s: Obj): FieldError[] {
  const errs = validateNonnegative(s.replicas, specPath.child('replicas'));
  const selector = validateSelector(s.selector, specPath.child('selector'), errs);
  if (selector) errs.push(...validateTemplateForReplicaSet(s.template, selector, specPath.child('template')));
  errs.push(...validateStrategy(s.strategy, specPath.child('strategy')));
  errs.push(...validateNonnegative(s.minReadySeconds, specPath.child('minReadySeconds')));
  errs.push(...validateNonnegative(s.revisionHistoryLimit, specPath.child('revisionHistoryLimit')));
  if (typeof s.progressDeadlineSeconds === 'number') {
    errs.push(...validateNonnegative(s.progressDeadlineSeconds, specPath.child('progressDeadlineSeconds')));
    if (s.progressDeadlineSeconds <= (typeof s.minReadySeconds === 'number' ? s.minReadySeconds : 0)) {
      errs.push(invalid(specPath.child('progressDeadlineSeconds'), s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

export const validateDeployment = (d: Obj): FieldError[] => [...validateObjectMeta(d.metadata, true, nameIsDNSSubdomain), ...validateDeploymentSpec(spec(d))];

/** apps/v1 selectors are immutable. */
const selectorImmutable = (o: Obj, old: Obj) =>
  validateImmutable(spec(o).selector, spec(old).selector, specPath.child('selector'), rawValue(goLabelSelector(spec(o).selector)));

export function validateDeploymentUpdate(d: Obj, old: Obj): FieldError[] {
  return [...validateObjectMetaUpdate(d.metadata, old.metadata), ...validateDeploymentSpec(spec(d)), ...selectorImmutable(d, old)];
}

function validateReplicaCounts(s: Obj, extra: string[]): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of ['observedGeneration', 'replicas', ...extra, 'readyReplicas', 'availableReplicas']) errs.push(...validateNonnegative(s[k], statusPath.child(k)));
  const n = (k: string) => (typeof s[k] === 'number' ? s[k] : 0);
  for (const k of [...extra.filter((k) => k !== 'unavailableReplicas'), 'readyReplicas', 'availableReplicas']) {
    if (n(k) > n('replicas')) errs.push(invalid(statusPath.child(k), n(k), 'cannot be greater than status.replicas'));
  }
  if (n('availableReplicas') > n('readyReplicas')) errs.push(invalid(statusPath.child('availableReplicas'), n('availableReplicas'), 'cannot be greater than readyReplicas'));
  return errs;
}

export function validateDeploymentStatusUpdate(d: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(d.metadata, old.metadata);
  const s = status(d);
  errs.push(...validateReplicaCounts(s, ['updatedReplicas', 'unavailableReplicas']));
  errs.push(...validateNonnegative(s.collisionCount, statusPath.child('collisionCount')));
  const oldCount = status(old).collisionCount;
  if (typeof oldCount === 'number' && (typeof s.collisionCount !== 'number' || s.collisionCount < oldCount)) {
    errs.push(invalid(statusPath.child('collisionCount'), typeof s.collisionCount === 'number' ? s.collisionCount : 0, 'cannot be decremented'));
  }
  return errs;
}

function validateReplicaSetSpec(s: Obj): FieldError[] {
  const errs = [...validateNonnegative(s.replicas, specPath.child('replicas')), ...validateNonnegative(s.minReadySeconds, specPath.child('minReadySeconds'))];
  const selector = validateSelector(s.selector, specPath.child('selector'), errs);
  if (selector) errs.push(...validateTemplateForReplicaSet(s.template, selector, specPath.child('template')));
  return errs;
}

export const validateReplicaSet = (rs: Obj): FieldError[] => [...validateObjectMeta(rs.metadata, true, nameIsDNSSubdomain), ...validateReplicaSetSpec(spec(rs))];

export function validateReplicaSetUpdate(rs: Obj, old: Obj): FieldError[] {
  return [...validateObjectMetaUpdate(rs.metadata, old.metadata), ...validateReplicaSetSpec(spec(rs)), ...selectorImmutable(rs, old)];
}

export function validateReplicaSetStatusUpdate(rs: Obj, old: Obj): FieldError[] {
  return [...validateObjectMetaUpdate(rs.metadata, old.metadata), ...validateReplicaCounts(status(rs), ['fullyLabeledReplicas'])];
}
