// Upstream's validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration (v1).
import { duplicate, invalid, notSupported, Path, required, type FieldError } from '../field.js';
import { arr, isObj, str, validateLabelSelector, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
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
