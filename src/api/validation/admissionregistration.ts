// Upstream's admissionregistration/v1 validation: MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration; ValidatingAdmissionPolicy and its bindings, every CEL expression
// compiled (a policy whose expression does not compile is refused at the field that holds it).
import { compile } from '../cel/cel.js';
import { duplicate, invalid, notSupported, Path, rawValue, required, tooMany, type FieldError } from '../field.js';
import { arr, isObj, str, validateLabelSelector, validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName, type Obj } from './meta.js';
import { dns1123SubdomainErrors, nameIsDNSSubdomain } from './names.js';

const operations = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const scopes = ['*', 'Cluster', 'Namespaced'];
const failurePolicies = ['Fail', 'Ignore'];
const matchPolicies = ['Equivalent', 'Exact'];
const sideEffectClasses = ['None', 'NoneOnDryRun'];
const reinvocationPolicies = ['IfNeeded', 'Never'];
const reviewVersions = ['v1', 'v1beta1'];

/** A list that is required and where `*` stands alone. */
function validateStarList(list: unknown, p: Path, what: string): FieldError[] {
  const items = arr(list);
  if (items.length === 0) return [required(p, '')];
  if (items.length > 1 && items.includes('*')) return [invalid(p, items, `if '*' is present, must not specify other ${what}`)];
  return [];
}

function validateRule(rule: Obj, p: Path): FieldError[] {
  const errs = validateStarList(rule.operations, p.child('operations'), 'operations');
  arr(rule.operations).forEach((op, i) => {
    if (!operations.includes(op)) errs.push(notSupported(p.child('operations').index(i), op, operations));
  });
  errs.push(...validateStarList(rule.apiGroups, p.child('apiGroups'), 'API groups'));
  errs.push(...validateStarList(rule.apiVersions, p.child('apiVersions'), 'API versions'));
  arr(rule.apiVersions).forEach((v, i) => {
    if (str(v) === '') errs.push(required(p.child('apiVersions').index(i), ''));
  });
  const resources = arr(rule.resources);
  if (resources.length === 0) errs.push(required(p.child('resources'), ''));
  resources.forEach((r, i) => {
    if (str(r) === '') errs.push(required(p.child('resources').index(i), ''));
  });
  if (resources.length > 1 && resources.includes('*/*')) errs.push(invalid(p.child('resources'), resources, "if '*/*' is present, must not specify other resources"));
  if (rule.scope != null && !scopes.includes(rule.scope)) errs.push(notSupported(p.child('scope'), rule.scope, scopes));
  return errs;
}

function validateClientConfig(cc: unknown, p: Path): FieldError[] {
  const c = isObj(cc) ? cc : {};
  const hasUrl = c.url != null;
  const hasService = c.service != null;
  if (hasUrl === hasService) return [required(p, 'exactly one of url or service is required')];
  if (hasUrl) {
    const up = p.child('url');
    const raw = str(c.url);
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return [invalid(up, raw, 'host must be specified')];
    }
    const errs: FieldError[] = [];
    if (u.protocol !== 'https:') errs.push(invalid(up, raw, "'https' is the only allowed URL scheme"));
    if (u.hostname === '') errs.push(invalid(up, raw, 'host must be specified'));
    if (u.username || u.password) errs.push(invalid(up, raw, 'user information is not permitted in the URL'));
    if (raw.includes('#')) errs.push(invalid(up, raw, 'fragments are not permitted in the URL'));
    if (raw.includes('?')) errs.push(invalid(up, raw, 'query parameters are not permitted in the URL'));
    return errs;
  }
  const sp = p.child('service');
  const svc = isObj(c.service) ? c.service : {};
  const errs: FieldError[] = [];
  if (!str(svc.name)) errs.push(required(sp.child('name'), 'service name is required'));
  if (!str(svc.namespace)) errs.push(required(sp.child('namespace'), 'service namespace is required'));
  if (svc.port != null && !(Number.isInteger(svc.port) && svc.port >= 1 && svc.port <= 65535)) {
    errs.push(invalid(sp.child('port'), svc.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (svc.path != null && svc.path !== '' && !str(svc.path).startsWith('/')) errs.push(invalid(sp.child('path'), svc.path, "must start with a '/'"));
  return errs;
}

function validateWebhook(hook: Obj, p: Path, mutating: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(hook.name);
  if (name === '') errs.push(required(p.child('name'), ''));
  else {
    for (const msg of dns1123SubdomainErrors(name)) errs.push(invalid(p.child('name'), name, msg));
    if (name.split('.').length < 3) errs.push(invalid(p.child('name'), name, 'should be a domain with at least three segments separated by dots'));
  }
  arr(hook.rules).forEach((r, i) => errs.push(...validateRule(isObj(r) ? r : {}, p.child('rules').index(i))));
  if (hook.failurePolicy != null && !failurePolicies.includes(hook.failurePolicy)) errs.push(notSupported(p.child('failurePolicy'), hook.failurePolicy, failurePolicies));
  if (hook.matchPolicy != null && !matchPolicies.includes(hook.matchPolicy)) errs.push(notSupported(p.child('matchPolicy'), hook.matchPolicy, matchPolicies));
  if (hook.sideEffects == null) errs.push(required(p.child('sideEffects'), `must specify one of ${sideEffectClasses.join(', ')}`));
  else if (!sideEffectClasses.includes(hook.sideEffects)) errs.push(notSupported(p.child('sideEffects'), hook.sideEffects, sideEffectClasses));
  if (hook.timeoutSeconds != null && !(Number.isInteger(hook.timeoutSeconds) && hook.timeoutSeconds >= 1 && hook.timeoutSeconds <= 30)) {
    errs.push(invalid(p.child('timeoutSeconds'), hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
  }
  const versions = arr(hook.admissionReviewVersions);
  if (versions.length === 0) errs.push(required(p.child('admissionReviewVersions'), `must specify one of ${reviewVersions.join(', ')}`));
  else if (!versions.some((v) => reviewVersions.includes(v))) {
    errs.push(invalid(p.child('admissionReviewVersions'), versions, `must include at least one of ${reviewVersions.join(', ')}`));
  }
  if (hook.namespaceSelector != null) errs.push(...validateLabelSelector(hook.namespaceSelector, p.child('namespaceSelector')));
  if (hook.objectSelector != null) errs.push(...validateLabelSelector(hook.objectSelector, p.child('objectSelector')));
  errs.push(...validateMatchConditions(hook.matchConditions, p.child('matchConditions')));
  if (mutating && hook.reinvocationPolicy != null && !reinvocationPolicies.includes(hook.reinvocationPolicy)) {
    errs.push(notSupported(p.child('reinvocationPolicy'), hook.reinvocationPolicy, reinvocationPolicies));
  }
  errs.push(...validateClientConfig(hook.clientConfig, p.child('clientConfig')));
  return errs;
}

function validateConfiguration(c: Obj, mutating: boolean): FieldError[] {
  const errs = validateObjectMeta(c.metadata, false, nameIsDNSSubdomain);
  const seen = new Set<string>();
  arr(c.webhooks).forEach((hook, i) => {
    const p = Path.root('webhooks').index(i);
    const h = isObj(hook) ? hook : {};
    errs.push(...validateWebhook(h, p, mutating));
    const name = str(h.name);
    if (name && seen.has(name)) errs.push(duplicate(p.child('name'), name));
    seen.add(name);
  });
  return errs;
}

export const validateMutatingWebhookConfiguration = (c: Obj): FieldError[] => validateConfiguration(c, true);
export const validateValidatingWebhookConfiguration = (c: Obj): FieldError[] => validateConfiguration(c, false);
export const validateMutatingWebhookConfigurationUpdate = (c: Obj, old: Obj): FieldError[] => [
  ...validateObjectMetaUpdate(c.metadata, old.metadata),
  ...validateMutatingWebhookConfiguration(c),
];
export const validateValidatingWebhookConfigurationUpdate = (c: Obj, old: Obj): FieldError[] => [
  ...validateObjectMetaUpdate(c.metadata, old.metadata),
  ...validateValidatingWebhookConfiguration(c),
];

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

/** Upstream's most matchConditions a webhook or policy may have. */
const maxMatchConditions = 64;

/** validateMatchConditions, shared by webhooks and policies: each expression compiles, names are qualified and unique. */
function validateMatchConditions(list: unknown, p: Path): FieldError[] {
  const conditions = arr(list);
  const errs: FieldError[] = [];
  if (conditions.length > maxMatchConditions) errs.push(tooMany(p, conditions.length, maxMatchConditions));
  const names = new Set<string>();
  conditions.forEach((c: Obj, i) => {
    const cp = p.index(i);
    const expression = str(c?.expression).trim();
    errs.push(...validateExpression(expression, cp.child('expression')));
    const name = str(c?.name);
    if (!name) errs.push(required(cp.child('name'), ''));
    else errs.push(...validateQualifiedName(name, cp.child('name')));
    if (name && names.has(name)) errs.push(duplicate(cp.child('name'), name));
    names.add(name);
  });
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
  rules.forEach((r, i) => errs.push(...validateRule(isObj(r) ? r : {}, p.child('resourceRules').index(i))));
  arr(mr.excludeResourceRules).forEach((r, i) => errs.push(...validateRule(isObj(r) ? r : {}, p.child('excludeResourceRules').index(i))));
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
  errs.push(...validateMatchConditions(s.matchConditions, p.child('matchConditions')));
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
