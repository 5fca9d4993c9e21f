// RBAC policy rules: whether a rule allows a request (upstream's RuleAllows and the rbacv1 helpers'
// matchers), whether one set of rules covers another (validation/rule.go's Covers, used by
// escalation checks), and the compact text upstream prints for rules a user is missing.
import type { PolicyRule } from '../../../api/types.js';
import type { AuthorizationAttributes } from '../authorizer.js';

const all = '*';

const has = (set: readonly string[] | undefined, v: string) => set?.includes(v) ?? false;
const hasAll = (set: readonly string[] | undefined, vs: readonly string[] | undefined) => (vs ?? []).every((v) => has(set, v));

export const verbMatches = (rule: PolicyRule, verb: string) => has(rule.verbs, all) || has(rule.verbs, verb);
export const apiGroupMatches = (rule: PolicyRule, group: string) => has(rule.apiGroups, all) || has(rule.apiGroups, group);

/** combined is `resource` or `resource/subresource`; `*` and `*\/subresource` rules match any resource's subresource. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === all || r === combined) return true;
    if (subresource !== '' && r === `*/${subresource}`) return true;
  }
  return false;
}

export const resourceNameMatches = (rule: PolicyRule, name: string) => (rule.resourceNames ?? []).length === 0 || has(rule.resourceNames, name);

/** `*` matches every path, a trailing `*` any path with that prefix. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some((u) => u === all || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))));
}

export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.isResourceRequest) return nonResourceURLMatches(rule, a.path);
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name);
}

/** Whether owner grants everything the single-valued rule sub asks for (sub comes from breakdownRule). */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, all) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, all) || hasAll(owner.apiGroups, sub.apiGroups);
  const urls = (sub.nonResourceURLs ?? []).every((u) => nonResourceURLMatches({ verbs: [], nonResourceURLs: owner.nonResourceURLs }, u));
  const resources =
    has(owner.resources, all) ||
    (sub.resources ?? []).every((r) => has(owner.resources, r) || (r.includes('/') && has(owner.resources, `*/${r.slice(r.indexOf('/') + 1)}`)));
  const ownerNames = owner.resourceNames ?? [];
  const names = ownerNames.length === 0 || ((sub.resourceNames ?? []).length > 0 && hasAll(ownerNames, sub.resourceNames));
  return verbs && groups && urls && resources && names;
}

/** One rule per (group, resource, verb, name) and per (url, verb), as upstream's BreakdownRule. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        if ((rule.resourceNames ?? []).length === 0) out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
        for (const name of rule.resourceNames ?? []) out.push({ apiGroups: [group], resources: [resource], resourceNames: [name], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

/** The pieces of requested that no owner rule covers (empty: owner covers all of it). */
export function uncoveredRules(owner: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of requested) for (const piece of breakdownRule(rule)) if (!owner.some((o) => ruleCovers(o, piece))) missing.push(piece);
  return missing;
}

/** Joins single-resource rules that differ only in verbs, as upstream's CompactRules. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const simple = new Map<string, PolicyRule>();
  const out: PolicyRule[] = [];
  for (const rule of rules) {
    const isSimple = (rule.nonResourceURLs ?? []).length === 0 && rule.apiGroups?.length === 1 && rule.resources?.length === 1 && (rule.resourceNames ?? []).length <= 1;
    if (!isSimple) {
      out.push(rule);
      continue;
    }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], rule.resourceNames?.[0] ?? null]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...existing.verbs, ...rule.verbs];
    else simple.set(key, { ...rule, verbs: [...rule.verbs] });
  }
  return [...out, ...simple.values()];
}

// Go's %q of a []string: ["a" "b"].
export const goStrings = (vs: readonly string[]) => `[${vs.map((v) => JSON.stringify(v)).join(' ')}]`;

/** Upstream's PolicyRule CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  const field = (name: string, vs: readonly string[] | undefined) => {
    if (vs && vs.length > 0) parts.push(`${name}:${goStrings(vs)}`);
  };
  field('APIGroups', rule.apiGroups);
  field('Resources', rule.resources);
  field('NonResourceURLs', rule.nonResourceURLs);
  field('ResourceNames', rule.resourceNames);
  field('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}
