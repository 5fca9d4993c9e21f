// Object metadata and the small shared checks of apimachinery's api/validation and metav1 validation.
import { duplicate, forbidden, invalid, notSupported, Path, rawValue, required, tooLong, type FieldError } from '../field.js';
import {
  fieldImmutableErrorMsg,
  invalidEach,
  isNegativeErrorMsg,
  labelValueErrors,
  nameIsDNSLabel,
  qualifiedNameErrors,
  regexError,
  type NameValidator,
} from './names.js';

export type Obj = Record<string, any>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const strMap = (v: unknown): Record<string, string> => (isObj(v) ? (v as Record<string, string>) : {});

/** A JSON value Go would decode to a zero or empty value: absent, null, "", empty list or map. */
const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.values(v).every(isEmpty));

/** apiequality.Semantic.DeepEqual for decoded JSON: empty and absent values are equal, as nil and empty are upstream. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b || (isEmpty(a) && isEmpty(b))) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) return [...new Set([...Object.keys(a), ...Object.keys(b)])].every((k) => deepEqual(a[k], b[k]));
  return false;
}

export const validateQualifiedName = (value: string, p: Path): FieldError[] => invalidEach(p, value, qualifiedNameErrors(value));

export function validateNonnegative(value: unknown, p: Path): FieldError[] {
  return typeof value === 'number' && value < 0 ? [invalid(p, value, isNegativeErrorMsg)] : [];
}

export function validateImmutable(newVal: unknown, oldVal: unknown, p: Path, shown: unknown = newVal): FieldError[] {
  return deepEqual(newVal, oldVal) ? [] : [invalid(p, shown, fieldImmutableErrorMsg)];
}

/** metav1validation.ValidateLabels: every key a qualified name, every value a label value; errors at the map's path. */
export function validateLabels(labels: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(strMap(labels))) {
    errs.push(...validateQualifiedName(k, p));
    errs.push(...invalidEach(p, v, labelValueErrors(str(v))));
  }
  return errs;
}

const totalAnnotationSizeLimit = 256 * 1024;
// UTF-8 sizes without Node's Buffer: the console bundles this file's module graph for the browser.
const utf8 = new TextEncoder();

export function validateAnnotations(annotations: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(strMap(annotations))) {
    // Keys are qualified names except that case does not matter.
    errs.push(...invalidEach(p, k, qualifiedNameErrors(k.toLowerCase())));
    size += utf8.encode(k).length + utf8.encode(str(v)).length;
  }
  if (size > totalAnnotationSizeLimit) errs.push(tooLong(p, '', totalAnnotationSizeLimit));
  return errs;
}

function validateOwnerReferences(refs: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of arr(refs)) {
    const apiVersion = str(ref?.apiVersion);
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    if (version === '') errs.push(invalid(p.child('apiVersion'), apiVersion, 'version must not be empty'));
    if (!ref?.kind) errs.push(invalid(p.child('kind'), str(ref?.kind), 'kind must not be empty'));
    if (!ref?.name) errs.push(invalid(p.child('name'), str(ref?.name), 'name must not be empty'));
    if (!ref?.uid) errs.push(invalid(p.child('uid'), str(ref?.uid), 'uid must not be empty'));
    if (ref?.controller === true) {
      const current = `${str(ref.kind)}/${str(ref.name)}`;
      if (firstController) {
        errs.push(invalid(p, refs, `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`));
      } else firstController = current;
    }
  }
  return errs;
}

function validateFinalizers(finalizers: unknown, p: Path): FieldError[] {
  const list = arr(finalizers).map(str);
  const errs = list.flatMap((f) => validateQualifiedName(f, p));
  if (list.includes('orphan') && list.includes('foregroundDeletion')) {
    errs.push(invalid(p, list, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  return errs;
}

/**
 * ValidateObjectMeta: names by `nameFn`, namespace required or forbidden by scope, labels,
 * annotations, owner references and finalizers. The registry has generated any name by now.
 */
export function validateObjectMeta(meta: unknown, namespaced: boolean, nameFn: NameValidator, p = Path.root('metadata')): FieldError[] {
  const m = isObj(meta) ? meta : {};
  const errs: FieldError[] = [];
  const generateName = str(m.generateName);
  if (generateName) errs.push(...invalidEach(p.child('generateName'), generateName, nameFn(generateName, true)));
  const name = str(m.name);
  if (!name) errs.push(required(p.child('name'), 'name or generateName is required'));
  else errs.push(...invalidEach(p.child('name'), name, nameFn(name, false)));
  const namespace = str(m.namespace);
  if (namespaced) {
    if (!namespace) errs.push(required(p.child('namespace'), ''));
    else errs.push(...invalidEach(p.child('namespace'), namespace, nameIsDNSLabel(namespace, false)));
  } else if (namespace) {
    errs.push(forbidden(p.child('namespace'), 'not allowed on this type'));
  }
  errs.push(...validateNonnegative(m.generation, p.child('generation')));
  errs.push(...validateLabels(m.labels, p.child('labels')));
  errs.push(...validateAnnotations(m.annotations, p.child('annotations')));
  errs.push(...validateOwnerReferences(m.ownerReferences, p.child('ownerReferences')));
  errs.push(...validateFinalizers(m.finalizers, p.child('finalizers')));
  return errs;
}

/** Go's %#v of a []string, used where upstream prints a finalizer list in a message. */
const goStrings = (list: string[]) => `[]string{${list.map((s) => JSON.stringify(s)).join(', ')}}`;

/**
 * ValidateObjectMetaUpdate, except the resourceVersion-required check, which is the registry's
 * (it knows whether the request is an unconditional update).
 */
export function validateObjectMetaUpdate(meta: unknown, oldMeta: unknown, p = Path.root('metadata')): FieldError[] {
  const m = isObj(meta) ? meta : {};
  const o = isObj(oldMeta) ? oldMeta : {};
  const errs: FieldError[] = [];
  if (o.deletionTimestamp) {
    const old = new Set(arr(o.finalizers).map(str));
    const extra = [...new Set(arr(m.finalizers).map(str))].filter((f) => !old.has(f)).sort();
    if (extra.length) {
      errs.push(forbidden(p.child('finalizers'), `no new finalizers can be added if the object is being deleted, found new finalizers ${goStrings(extra)}`));
    }
  }
  if (typeof m.generation === 'number' && typeof o.generation === 'number' && m.generation < o.generation) {
    errs.push(invalid(p.child('generation'), m.generation, 'must not be decremented'));
  }
  errs.push(...validateImmutable(str(m.name), str(o.name), p.child('name')));
  errs.push(...validateImmutable(str(m.namespace), str(o.namespace), p.child('namespace')));
  errs.push(...validateImmutable(str(m.uid), str(o.uid), p.child('uid')));
  // Timestamps print as Go's time.Time does in %v: not worth imitating; the RFC 3339 text is shown.
  errs.push(...validateImmutable(m.creationTimestamp ?? null, o.creationTimestamp ?? null, p.child('creationTimestamp'), rawValue(String(m.creationTimestamp ?? 'null'))));
  errs.push(...validateImmutable(m.deletionTimestamp ?? null, o.deletionTimestamp ?? null, p.child('deletionTimestamp'), rawValue(String(m.deletionTimestamp ?? 'null'))));
  errs.push(...validateImmutable(m.deletionGracePeriodSeconds ?? null, o.deletionGracePeriodSeconds ?? null, p.child('deletionGracePeriodSeconds')));
  errs.push(...validateLabels(m.labels, p.child('labels')));
  errs.push(...validateAnnotations(m.annotations, p.child('annotations')));
  errs.push(...validateOwnerReferences(m.ownerReferences, p.child('ownerReferences')));
  return errs;
}

/** metav1validation.ValidateLabelSelector (label values checked strictly). */
export function validateLabelSelector(sel: unknown, p: Path): FieldError[] {
  if (!isObj(sel)) return [];
  const errs = validateLabels(sel.matchLabels, p.child('matchLabels'));
  arr(sel.matchExpressions).forEach((e, i) => {
    const ep = p.child('matchExpressions').index(i);
    const values = arr(e?.values);
    switch (e?.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(required(ep.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) errs.push(forbidden(ep.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(invalid(ep.child('operator'), str(e?.operator), 'not a valid selector operator'));
    }
    errs.push(...validateQualifiedName(str(e?.key), ep.child('key')));
    values.forEach((v, vi) => errs.push(...invalidEach(ep.child('values').index(vi), v, labelValueErrors(str(v)))));
  });
  return errs;
}

/** A metav1.LabelSelector as Go's %#v prints the internal type, as in upstream's immutable-selector errors. */
export function goLabelSelector(sel: unknown): string {
  if (!isObj(sel)) return '(*v1.LabelSelector)(nil)';
  const labels = Object.entries(strMap(sel.matchLabels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const ml = isObj(sel.matchLabels) ? `map[string]string{${labels.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}` : 'map[string]string(nil)';
  const exprs = Array.isArray(sel.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${sel.matchExpressions
        .map((e: Obj) => {
          const values = Array.isArray(e?.values) ? goStrings(e.values.map(str)) : '[]string(nil)';
          return `v1.LabelSelectorRequirement{Key:${JSON.stringify(str(e?.key))}, Operator:${JSON.stringify(str(e?.operator))}, Values:${values}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${ml}, MatchExpressions:${exprs}}`;
}

const conditionReasonFmt = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const conditionReasonMsg =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
const conditionStatuses = ['False', 'True', 'Unknown'];

/** metav1validation.ValidateConditions: the rules of a list of metav1.Condition (type unique). */
export function validateConditions(conditions: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  arr(conditions).forEach((c, i) => {
    const cp = p.index(i);
    const cond = isObj(c) ? c : {};
    const type = str(cond.type);
    if (seen.has(type)) errs.push(duplicate(cp.child('type'), type));
    seen.add(type);
    errs.push(...validateQualifiedName(type, cp.child('type')));
    if (!conditionStatuses.includes(str(cond.status))) errs.push(notSupported(cp.child('status'), str(cond.status), conditionStatuses));
    if (typeof cond.observedGeneration === 'number' && cond.observedGeneration < 0) {
      errs.push(invalid(cp.child('observedGeneration'), cond.observedGeneration, 'must be greater than or equal to zero'));
    }
    if (!cond.lastTransitionTime) errs.push(required(cp.child('lastTransitionTime'), 'must be set'));
    const reason = str(cond.reason);
    if (!reason) errs.push(required(cp.child('reason'), 'must be set'));
    else {
      if (!new RegExp(`^${conditionReasonFmt}$`).test(reason)) {
        errs.push(invalid(cp.child('reason'), reason, regexError(conditionReasonMsg, conditionReasonFmt, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB')));
      }
      if (reason.length > 1024) errs.push(tooLong(cp.child('reason'), reason, 1024));
    }
    if (str(cond.message).length > 32 * 1024) errs.push(tooLong(cp.child('message'), cond.message, 32 * 1024));
  });
  return errs;
}
