// Deployment, ReplicaSet, DaemonSet, StatefulSet and ControllerRevision validation as upstream's
// pkg/apis/apps/validation.
import { forbidden, invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { labelSelectorAsSelector, type Selector } from '../labels.js';
import {
  deepEqual,
  isObj,
  str,
  strMap,
  validateAnnotations,
  validateImmutable,
  validateLabels,
  validateLabelSelector,
  validateNonnegative,
  validateObjectMeta,
  validateObjectMetaUpdate,
  goLabelSelector,
  type Obj,
} from './meta.js';
import { nameIsDNSLabel, nameIsDNSSubdomain, percentErrors } from './names.js';
import { validatePodTemplateSpec } from './podspec.js';

const specPath = Path.root('spec');
const statusPath = Path.root('status');

const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});
const status = (o: Obj): Obj => (isObj(o.status) ? o.status : {});

const emptySelector = (sel: unknown) =>
  isObj(sel) && Object.keys(strMap(sel.matchLabels)).length + (Array.isArray(sel.matchExpressions) ? sel.matchExpressions.length : 0) === 0;

/**
 * The selector check of Deployment, ReplicaSet and StatefulSet (`owner` names the kind in the
 * empty-selector message); returns the parsed selector, or undefined when it is invalid.
 */
function validateSelector(sel: unknown, p: Path, errs: FieldError[], owner = 'deployment', unparsable = 'invalid label selector'): Selector | undefined {
  if (sel == null) errs.push(required(p, ''));
  else {
    errs.push(...validateLabelSelector(sel, p));
    if (emptySelector(sel)) errs.push(invalid(p, rawValue(goLabelSelector(sel)), `empty selector is invalid for ${owner}`));
  }
  try {
    return labelSelectorAsSelector(isObj(sel) ? sel : undefined);
  } catch {
    errs.push(invalid(p, rawValue(goLabelSelector(sel)), unparsable));
    return undefined;
  }
}

/** The template's labels must match a non-empty selector. */
export function validateTemplateLabels(template: Obj, selector: Selector, p: Path): FieldError[] {
  const labels = strMap(template.metadata?.labels);
  if (selector.empty() || selector.matches(labels)) return [];
  // Go prints an absent map as a nil one.
  return [invalid(p.child('metadata', 'labels'), isObj(template.metadata?.labels) ? labels : rawValue('map[string]string(nil)'), '`selector` does not match template `labels`')];
}

/** A controller's pods always restart and have no deadline; `kind` names the controller in the message. */
export function validateTemplateRestarts(template: Obj, kind: string, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const restartPolicy = str(template.spec?.restartPolicy);
  if (restartPolicy !== 'Always') errs.push(notSupported(p.child('spec', 'restartPolicy'), restartPolicy, ['Always']));
  if (template.spec?.activeDeadlineSeconds != null) {
    errs.push(forbidden(p.child('spec', 'activeDeadlineSeconds'), `activeDeadlineSeconds in ${kind} is not Supported`));
  }
  return errs;
}

/** ValidatePodTemplateSpecForReplicaSet: the template must match the selector and always restart. */
function validateTemplateForReplicaSet(template: unknown, selector: Selector, p: Path): FieldError[] {
  if (!isObj(template)) return [required(p, '')];
  return [...validateTemplateLabels(template, selector, p), ...validatePodTemplateSpec(template, p), ...validateTemplateRestarts(template, 'ReplicaSet', p)];
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

// The DaemonSet.

/** A pointer field as Go's %#v prints it inside a struct: nil, or an address we cannot know. */
const goPointer = (type: string, v: unknown) => (v == null ? `(*${type})(nil)` : `(*${type})(0xc000000000)`);

/** ValidateRollingUpdateDaemonSet: both within 0..100%, exactly one of them non-zero. */
function validateRollingUpdateDaemonSet(ru: Obj, p: Path): FieldError[] {
  const errs = [...validatePositiveIntOrPercent(ru.maxUnavailable, p.child('maxUnavailable')), ...validatePositiveIntOrPercent(ru.maxSurge, p.child('maxSurge'))];
  for (const k of ['maxUnavailable', 'maxSurge']) {
    if (typeof ru[k] === 'string' && /^[0-9]+%$/.test(ru[k]) && intOrPercentValue(ru[k]) > 100) errs.push(invalid(p.child(k), intOrString(ru[k]), 'must not be greater than 100%'));
  }
  const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
  const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
  if (hasUnavailable && hasSurge) errs.push(invalid(p.child('maxSurge'), intOrString(ru.maxSurge), 'may not be set when maxUnavailable is non-zero'));
  else if (!hasUnavailable && !hasSurge) errs.push(required(p.child('maxUnavailable'), 'cannot be 0 when maxSurge is 0'));
  return errs;
}

function validateDaemonSetUpdateStrategy(strategy: unknown, p: Path): FieldError[] {
  const s = isObj(strategy) ? strategy : {};
  switch (s.type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate':
      return isObj(s.rollingUpdate) ? validateRollingUpdateDaemonSet(s.rollingUpdate, p.child('rollingUpdate')) : [required(p.child('rollingUpdate'), '')];
    default: {
      const shown = `apps.DaemonSetUpdateStrategy{Type:${JSON.stringify(str(s.type))}, RollingUpdate:${goPointer('apps.RollingUpdateDaemonSet', s.rollingUpdate)}}`;
      return [notSupported(p, rawValue(shown), ['RollingUpdate', 'OnDelete'])];
    }
  }
}

function validateDaemonSetSpec(s: Obj): FieldError[] {
  const sel = s.selector;
  const errs = validateLabelSelector(sel, specPath.child('selector'));
  const template = isObj(s.template) ? s.template : {};
  let selector: Selector | undefined;
  try {
    selector = labelSelectorAsSelector(isObj(sel) ? sel : undefined);
  } catch {
    selector = undefined;
  }
  // A missing selector selects nothing, so no template matches it.
  if (selector && !selector.matches(strMap(template.metadata?.labels))) {
    const labels = isObj(template.metadata?.labels) ? template.metadata.labels : rawValue('map[string]string(nil)');
    errs.push(invalid(specPath.child('template', 'metadata', 'labels'), labels, '`selector` does not match template `labels`'));
  }
  if (emptySelector(sel)) errs.push(invalid(specPath.child('selector'), rawValue(goLabelSelector(sel)), 'empty selector is invalid for daemonset'));
  const tp = specPath.child('template');
  errs.push(...validatePodTemplateSpec(template, tp), ...validateTemplateRestarts(template, 'DaemonSet', tp));
  errs.push(...validateNonnegative(s.minReadySeconds, specPath.child('minReadySeconds')));
  errs.push(...validateDaemonSetUpdateStrategy(s.updateStrategy, specPath.child('updateStrategy')));
  errs.push(...validateNonnegative(s.revisionHistoryLimit, specPath.child('revisionHistoryLimit')));
  return errs;
}

export const validateDaemonSet = (ds: Obj): FieldError[] => [...validateObjectMeta(ds.metadata, true, nameIsDNSSubdomain), ...validateDaemonSetSpec(spec(ds))];

/** Upstream's daemonset strategy validates the object as new, then as an update (the spec twice), then the selector. */
export function validateDaemonSetUpdate(ds: Obj, old: Obj): FieldError[] {
  return [...validateDaemonSet(ds), ...validateObjectMetaUpdate(ds.metadata, old.metadata), ...validateDaemonSetSpec(spec(ds)), ...selectorImmutable(ds, old)];
}

/** A status's collisionCount may not go down. */
function collisionCountNotDecremented(s: Obj, old: Obj): FieldError[] {
  const oldCount = status(old).collisionCount;
  if (typeof oldCount !== 'number' || (typeof s.collisionCount === 'number' && s.collisionCount >= oldCount)) return [];
  return [invalid(statusPath.child('collisionCount'), typeof s.collisionCount === 'number' ? s.collisionCount : 0, 'cannot be decremented')];
}

const daemonSetCounts = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'collisionCount',
];

export function validateDaemonSetStatusUpdate(ds: Obj, old: Obj): FieldError[] {
  const s = status(ds);
  const errs = validateObjectMetaUpdate(ds.metadata, old.metadata);
  for (const k of daemonSetCounts) errs.push(...validateNonnegative(s[k], statusPath.child(k)));
  return [...errs, ...collisionCountNotDecremented(s, old)];
}

// The StatefulSet.

function validateRetentionPolicy(policy: unknown, p: Path): FieldError[] {
  if (!isObj(policy)) return [];
  const errs: FieldError[] = [];
  for (const k of ['whenDeleted', 'whenScaled']) {
    if (policy[k] !== 'Retain' && policy[k] !== 'Delete') errs.push(notSupported(p.child(k), str(policy[k]), ['Retain', 'Delete']));
  }
  return errs;
}

function validateStatefulSetUpdateStrategy(strategy: unknown, p: Path): FieldError[] {
  const s = isObj(strategy) ? strategy : {};
  const ru = s.rollingUpdate;
  const rp = p.child('rollingUpdate');
  switch (s.type) {
    case undefined:
    case '':
      return [required(p, '')];
    case 'OnDelete': {
      if (ru == null) return [];
      const r = isObj(ru) ? ru : {};
      const shown = `apps.RollingUpdateStatefulSetStrategy{Partition:${typeof r.partition === 'number' ? r.partition : 0}, MaxUnavailable:${goPointer('intstr.IntOrString', r.maxUnavailable)}}`;
      return [invalid(rp, rawValue(shown), "only allowed for updateStrategy 'RollingUpdate'")];
    }
    case 'RollingUpdate': {
      if (!isObj(ru)) return [];
      const errs = validateNonnegative(ru.partition, rp.child('partition'));
      if (ru.maxUnavailable != null) {
        const mp = rp.child('maxUnavailable');
        errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, mp));
        if (intOrPercentValue(ru.maxUnavailable) === 0) errs.push(invalid(mp, intOrString(ru.maxUnavailable), 'cannot be 0'));
        if (typeof ru.maxUnavailable === 'string' && /^[0-9]+%$/.test(ru.maxUnavailable) && intOrPercentValue(ru.maxUnavailable) > 100) {
          errs.push(invalid(mp, intOrString(ru.maxUnavailable), 'must not be greater than 100%'));
        }
      }
      return errs;
    }
    default: {
      const shown = `apps.StatefulSetUpdateStrategy{Type:${JSON.stringify(str(s.type))}, RollingUpdate:${goPointer('apps.RollingUpdateStatefulSetStrategy', ru)}}`;
      return [invalid(p, rawValue(shown), "must be 'RollingUpdate' or 'OnDelete'")];
    }
  }
}

function validateStatefulSetSpec(s: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const policy = s.podManagementPolicy;
  if (policy == null || policy === '') errs.push(required(specPath.child('podManagementPolicy'), ''));
  else if (policy !== 'OrderedReady' && policy !== 'Parallel') errs.push(invalid(specPath.child('podManagementPolicy'), policy, "must be 'OrderedReady' or 'Parallel'"));
  errs.push(...validateStatefulSetUpdateStrategy(s.updateStrategy, specPath.child('updateStrategy')));
  errs.push(...validateRetentionPolicy(s.persistentVolumeClaimRetentionPolicy, specPath.child('persistentVolumeClaimRetentionPolicy')));
  errs.push(...validateNonnegative(s.replicas, specPath.child('replicas')));
  errs.push(...validateNonnegative(s.minReadySeconds, specPath.child('minReadySeconds')));
  if (isObj(s.ordinals)) errs.push(...validateNonnegative(s.ordinals.start, specPath.child('ordinals.start')));
  const tp = specPath.child('template');
  const template = isObj(s.template) ? s.template : {};
  const selector = validateSelector(s.selector, specPath.child('selector'), errs, 'statefulset', '');
  // Upstream checks only the template's metadata here: the pod spec is left to the pods' creation.
  if (selector) {
    errs.push(...validateTemplateLabels(template, selector, tp));
    errs.push(...validateLabels(template.metadata?.labels, tp.child('labels')), ...validateAnnotations(template.metadata?.annotations, tp.child('annotations')));
  }
  errs.push(...validateTemplateRestarts(template, 'StatefulSet', tp));
  return errs;
}

export const validateStatefulSet = (ss: Obj): FieldError[] => [...validateObjectMeta(ss.metadata, true, nameIsDNSLabel), ...validateStatefulSetSpec(spec(ss))];

/** The spec fields an update may change; the rest of the spec is fixed at creation. */
const statefulSetUpdatable = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

export function validateStatefulSetUpdate(ss: Obj, old: Obj): FieldError[] {
  const errs = [...validateObjectMetaUpdate(ss.metadata, old.metadata), ...validateStatefulSetSpec(spec(ss))];
  const fixed = (o: Obj) => Object.fromEntries(Object.entries(spec(o)).filter(([k]) => !statefulSetUpdatable.includes(k)));
  if (!deepEqual(fixed(ss), fixed(old))) {
    errs.push(
      forbidden(
        specPath,
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    );
  }
  return errs;
}

export function validateStatefulSetStatusUpdate(ss: Obj, old: Obj): FieldError[] {
  const s = status(ss);
  const errs: FieldError[] = [];
  for (const k of ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']) {
    errs.push(...validateNonnegative(s[k], statusPath.child(k)));
  }
  const n = (k: string) => (typeof s[k] === 'number' ? s[k] : 0);
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
    if (n(k) > n('replicas')) errs.push(invalid(statusPath.child(k), n(k), 'cannot be greater than status.replicas'));
  }
  if (n('availableReplicas') > n('readyReplicas')) errs.push(invalid(statusPath.child('availableReplicas'), n('availableReplicas'), 'cannot be greater than status.readyReplicas'));
  return [...errs, ...validateObjectMetaUpdate(ss.metadata, old.metadata), ...collisionCountNotDecremented(s, old)];
}

// The ControllerRevision: its data and revision are what a controller's history is made of.

export function validateControllerRevision(cr: Obj): FieldError[] {
  const errs = validateObjectMeta(cr.metadata, true, nameIsDNSSubdomain);
  if (cr.data == null) errs.push(required(Path.root('data'), 'data is mandatory'));
  return [...errs, ...validateNonnegative(cr.revision, Path.root('revision'))];
}

export function validateControllerRevisionUpdate(cr: Obj, old: Obj): FieldError[] {
  return [
    ...validateObjectMetaUpdate(cr.metadata, old.metadata),
    ...validateControllerRevision(cr),
    ...validateImmutable(cr.data, old.data, Path.root('data'), rawValue(JSON.stringify(cr.data ?? null))),
  ];
}
