// ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding validation, as upstream's
// admissionregistration validation: the rules, the match resources, and every CEL expression
// compiled (a policy whose expression does not compile is refused at the field that holds it).
import { compile } from '../cel/cel.js';
import { duplicate, invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { arr, isObj, str, validateLabelSelector, validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName, type Obj } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';

const operations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const scopes = ['*', 'Cluster', 'Namespaced'];
const reasons = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const celIdentifier = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

function validateExpression(expression: unknown, p: Path): FieldError[] {
  const text = str(expression);
  if (!text) return [required(p, '')];
  try {
    compile(text);
    return [];
  } catch (err) {
    return [invalid(p, text, err instanceof Error ? err.message : String(err))];
  }
}

/** A list of words each of which must be one of `allowed` ("*" alone when present). */
function validateWords(values: unknown, p: Path, allowed?: string[]): FieldError[] {
  const list = arr(values);
  if (list.length === 0) return [required(p, '')];
  const errs: FieldError[] = [];
  if (list.length > 1 && list.includes('*')) errs.push(invalid(p, rawValue(`[]string{${list.map((v) => JSON.stringify(v)).join(', ')}}`), "if '*' is present, must not specify other values"));
  list.forEach((v, i) => {
    if (!str(v)) errs.push(required(p.index(i), ''));
    else if (allowed && !allowed.includes(v)) errs.push(notSupported(p.index(i), v, allowed.filter((a) => a !== '*')));
  });
  return errs;
}

function validateRule(rule: unknown, p: Path): FieldError[] {
  const r = isObj(rule) ? rule : {};
  const errs = [
    ...validateWords(r.operations, p.child('operations'), operations),
    ...validateWords(r.apiGroups, p.child('apiGroups')),
    ...validateWords(r.apiVersions, p.child('apiVersions')),
    ...validateWords(r.resources, p.child('resources')),
  ];
  if (r.scope !== undefined && !scopes.includes(r.scope)) errs.push(notSupported(p.child('scope'), r.scope, scopes));
  return errs;
}

function validateMatchResources(m: unknown, p: Path, rulesRequired: boolean): FieldError[] {
  const mr = isObj(m) ? m : {};
  const errs: FieldError[] = [];
  if (mr.matchPolicy !== undefined && !['Exact', 'Equivalent'].includes(mr.matchPolicy)) errs.push(notSupported(p.child('matchPolicy'), mr.matchPolicy, ['Equivalent', 'Exact']));
  errs.push(...validateLabelSelector(mr.namespaceSelector, p.child('namespaceSelector')));
  errs.push(...validateLabelSelector(mr.objectSelector, p.child('objectSelector')));
  const rules = arr(mr.resourceRules);
  if (rulesRequired && rules.length === 0) errs.push(required(p.child('resourceRules'), ''));
  rules.forEach((r, i) => errs.push(...validateRule(r, p.child('resourceRules').index(i))));
  arr(mr.excludeResourceRules).forEach((r, i) => errs.push(...validateRule(r, p.child('excludeResourceRules').index(i))));
  return errs;
}

function validatePolicySpec(spec: unknown): FieldError[] {
  const s = isObj(spec) ? spec : {};
  const p = Path.root('spec');
  const errs: FieldError[] = [];
  if (!['Ignore', 'Fail'].includes(s.failurePolicy)) errs.push(notSupported(p.child('failurePolicy'), s.failurePolicy, ['Fail', 'Ignore']));
  if (isObj(s.paramKind)) {
    const pk = p.child('paramKind');
    if (!str(s.paramKind.apiVersion)) errs.push(required(pk.child('apiVersion'), ''));
    if (!str(s.paramKind.kind)) errs.push(required(pk.child('kind'), ''));
  }
  if (!isObj(s.matchConstraints)) errs.push(required(p.child('matchConstraints'), ''));
  else errs.push(...validateMatchResources(s.matchConstraints, p.child('matchConstraints'), true));
  const validations = arr(s.validations);
  if (validations.length === 0 && arr(s.auditAnnotations).length === 0) {
    errs.push(required(p.child('validations'), 'validations or auditAnnotations must contain at least one item'));
  }
  validations.forEach((v: Obj, i) => {
    const vp = p.child('validations').index(i);
    errs.push(...validateExpression(v?.expression, vp.child('expression')));
    if (typeof v?.message === 'string' && v.message.includes('\n')) errs.push(invalid(vp.child('message'), v.message, 'message must not contain line breaks'));
    if (v?.messageExpression) errs.push(...validateExpression(v.messageExpression, vp.child('messageExpression')));
    if (v?.reason !== undefined && !reasons.includes(v.reason)) errs.push(notSupported(vp.child('reason'), v.reason, reasons));
  });
  arr(s.auditAnnotations).forEach((a: Obj, i) => {
    const ap = p.child('auditAnnotations').index(i);
    if (!str(a?.key)) errs.push(required(ap.child('key'), ''));
    errs.push(...validateExpression(a?.valueExpression, ap.child('valueExpression')));
  });
  const names = new Set<string>();
  arr(s.matchConditions).forEach((c: Obj, i) => {
    const cp = p.child('matchConditions').index(i);
    const name = str(c?.name);
    if (!name) errs.push(required(cp.child('name'), ''));
    else {
      errs.push(...validateQualifiedName(name, cp.child('name')));
      if (names.has(name)) errs.push(duplicate(cp.child('name'), name));
      names.add(name);
    }
    errs.push(...validateExpression(c?.expression, cp.child('expression')));
  });
  arr(s.variables).forEach((v: Obj, i) => {
    const vp = p.child('variables').index(i);
    const name = str(v?.name);
    if (!name) errs.push(required(vp.child('name'), ''));
    else if (!celIdentifier.test(name)) errs.push(invalid(vp.child('name'), name, 'name is not a valid CEL identifier'));
    errs.push(...validateExpression(v?.expression, vp.child('expression')));
  });
  return errs;
}

export const validateValidatingAdmissionPolicy = (o: Obj): FieldError[] => [...validateObjectMeta(o.metadata, false, nameIsDNSSubdomain), ...validatePolicySpec(o.spec)];
export const validateValidatingAdmissionPolicyUpdate = (o: Obj, old: Obj): FieldError[] => [
  ...validateObjectMetaUpdate(o.metadata, old.metadata),
  ...validatePolicySpec(o.spec),
];

function validateBindingSpec(spec: unknown): FieldError[] {
  const s = isObj(spec) ? spec : {};
  const p = Path.root('spec');
  const errs: FieldError[] = [];
  if (!str(s.policyName)) errs.push(required(p.child('policyName'), ''));
  if (isObj(s.paramRef)) {
    const rp = p.child('paramRef');
    const ref = s.paramRef;
    if (ref.name && ref.selector) errs.push(invalid(rp.child('name'), ref.name, '`name` and `selector` are mutually exclusive'));
    if (!ref.name && !ref.selector) errs.push(required(rp, 'one of `name` or `selector` must be specified'));
    errs.push(...validateLabelSelector(ref.selector, rp.child('selector')));
    if (ref.parameterNotFoundAction === undefined) errs.push(required(rp.child('parameterNotFoundAction'), ''));
    else if (!['Allow', 'Deny'].includes(ref.parameterNotFoundAction)) errs.push(notSupported(rp.child('parameterNotFoundAction'), ref.parameterNotFoundAction, ['Deny', 'Allow']));
  }
  if (isObj(s.matchResources)) errs.push(...validateMatchResources(s.matchResources, p.child('matchResources'), false));
  const actions = arr(s.validationActions);
  const ap = p.child('validationActions');
  if (actions.length === 0) errs.push(required(ap, 'at least one validation action is required'));
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!['Deny', 'Warn', 'Audit'].includes(a)) errs.push(notSupported(ap.index(i), a, ['Audit', 'Deny', 'Warn']));
    if (seen.has(a)) errs.push(duplicate(ap.index(i), a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn')) {
    errs.push(
      invalid(
        ap,
        rawValue(`[]admissionregistration.ValidationAction{${actions.map((a) => JSON.stringify(a)).join(', ')}}`),
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  }
  return errs;
}

export const validateValidatingAdmissionPolicyBinding = (o: Obj): FieldError[] => [...validateObjectMeta(o.metadata, false, nameIsDNSSubdomain), ...validateBindingSpec(o.spec)];
export const validateValidatingAdmissionPolicyBindingUpdate = (o: Obj, old: Obj): FieldError[] => [
  ...validateObjectMetaUpdate(o.metadata, old.metadata),
  ...validateBindingSpec(o.spec),
];
