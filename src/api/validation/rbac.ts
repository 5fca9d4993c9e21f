// rbac.authorization.k8s.io validation as upstream's pkg/apis/rbac/validation: rules, roleRef and
// subjects; a binding's roleRef cannot change.
import { invalid, notSupported, Path, rawValue, required, type FieldError } from '../field.js';
import { arr, isObj, str, validateLabelSelector, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { dns1123SubdomainErrors, invalidEach, nameIsPathSegment } from './names.js';

export const rbacGroup = 'rbac.authorization.k8s.io';

function validatePolicyRule(rule: Obj, namespaced: boolean, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (arr(rule.verbs).length === 0) errs.push(required(p.child('verbs'), 'verbs must contain at least one value'));
  const urls = arr(rule.nonResourceURLs);
  if (urls.length > 0) {
    if (namespaced) errs.push(invalid(p.child('nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (arr(rule.apiGroups).length > 0 || arr(rule.resources).length > 0 || arr(rule.resourceNames).length > 0) {
      errs.push(invalid(p.child('nonResourceURLs'), urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (arr(rule.apiGroups).length === 0) errs.push(required(p.child('apiGroups'), 'resource rules must supply at least one api group'));
  if (arr(rule.resources).length === 0) errs.push(required(p.child('resources'), 'resource rules must supply at least one resource'));
  return errs;
}

const validateRules = (rules: unknown, namespaced: boolean) =>
  arr(rules).flatMap((r, i) => validatePolicyRule(isObj(r) ? r : {}, namespaced, Path.root('rules').index(i)));

export const validateRole = (role: Obj): FieldError[] => [...validateObjectMeta(role.metadata, true, nameIsPathSegment), ...validateRules(role.rules, true)];

export function validateClusterRole(role: Obj): FieldError[] {
  const errs = [...validateObjectMeta(role.metadata, false, nameIsPathSegment), ...validateRules(role.rules, false)];
  if (isObj(role.aggregationRule)) {
    const p = Path.root('aggregationRule').child('clusterRoleSelectors');
    const selectors = arr(role.aggregationRule.clusterRoleSelectors);
    if (selectors.length === 0) errs.push(required(p, 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
    selectors.forEach((s, i) => errs.push(...validateLabelSelector(s, p.index(i))));
  }
  return errs;
}

function validateSubject(s: Obj, namespaced: boolean, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(s.name);
  if (name === '') errs.push(required(p.child('name')));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name !== '') errs.push(...invalidEach(p.child('name'), name, dns1123SubdomainErrors(name)));
      if (str(s.apiGroup) !== '') errs.push(notSupported(p.child('apiGroup'), s.apiGroup, ['']));
      if (!namespaced && str(s.namespace) === '') errs.push(required(p.child('namespace')));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== rbacGroup) errs.push(notSupported(p.child('apiGroup'), s.apiGroup ?? '', [rbacGroup]));
      break;
    default:
      errs.push(notSupported(p.child('kind'), s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(b: Obj, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(b.metadata, namespaced, nameIsPathSegment);
  const ref = isObj(b.roleRef) ? b.roleRef : {};
  const p = Path.root('roleRef');
  if (ref.apiGroup !== rbacGroup) errs.push(notSupported(p.child('apiGroup'), ref.apiGroup ?? '', [rbacGroup]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind)) errs.push(notSupported(p.child('kind'), ref.kind ?? '', kinds));
  const name = str(ref.name);
  if (name === '') errs.push(required(p.child('name')));
  else errs.push(...invalidEach(p.child('name'), name, nameIsPathSegment(name, false)));
  arr(b.subjects).forEach((s, i) => errs.push(...validateSubject(isObj(s) ? s : {}, namespaced, Path.root('subjects').index(i))));
  return errs;
}

export const validateRoleBinding = (b: Obj): FieldError[] => validateBinding(b, true);
export const validateClusterRoleBinding = (b: Obj): FieldError[] => validateBinding(b, false);

const roleRefText = (r: Obj) => `rbac.RoleRef{APIGroup:${JSON.stringify(str(r.apiGroup))}, Kind:${JSON.stringify(str(r.kind))}, Name:${JSON.stringify(str(r.name))}}`;

function bindingUpdate(validate: (b: Obj) => FieldError[]) {
  return (b: Obj, old: Obj): FieldError[] => {
    const errs = validateObjectMetaUpdate(b.metadata, old.metadata);
    const ref = isObj(b.roleRef) ? b.roleRef : {};
    const oldRef = isObj(old.roleRef) ? old.roleRef : {};
    if (roleRefText(ref) !== roleRefText(oldRef)) errs.push(invalid(Path.root('roleRef'), rawValue(roleRefText(ref)), 'cannot change roleRef'));
    return [...errs, ...validate(b)];
  };
}

export const validateRoleBindingUpdate = bindingUpdate(validateRoleBinding);
export const validateClusterRoleBindingUpdate = bindingUpdate(validateClusterRoleBinding);
