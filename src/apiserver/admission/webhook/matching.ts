// Which webhooks a request calls, as upstream's generic webhook predicates: the rules (operations,
// groups, versions, resources/subresources, scope), matchPolicy Equivalent (the same resource in
// another served version), the namespaceSelector and the objectSelector.
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import type { RuleWithOperations as TypesRule } from 'kubernetes-types/admissionregistration/v1.js';
import { internalError } from '../../../api/errors.js';
import { labelSelectorAsSelector, type Labels } from '../../../api/labels.js';
import { resources, type ResourceInfo } from '../../../api/resources.js';
import type { AdmissionAttributes, AdmissionLookups } from '../interface.js';

/** A rule with the fields kubernetes-types leaves out of its inlined Rule. */
export type RuleWithOperations = TypesRule & { resources?: string[]; scope?: string };

/** The fields of a webhook that decide whether it is called. */
export interface WebhookMatchSpec {
  name: string;
  rules?: RuleWithOperations[];
  matchPolicy?: string;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

/** The resource a webhook sees a request as: the request's own, or an equivalent one it matched by. */
export interface MatchedResource {
  resource: ResourceInfo;
  /** Whether the webhook matched the request only through another served version. */
  equivalent: boolean;
}

const isNamespaces = (r: ResourceInfo) => r.group === '' && r.resource === 'namespaces';

/** upstream's rules.Matcher for one rule against a request seen as `resource`. */
export function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes, resource: ResourceInfo): boolean {
  const has = (list: string[] | undefined, v: string) => (list ?? []).some((x) => x === '*' || x === v);
  return (
    has(rule.operations, a.operation) &&
    has(rule.apiGroups, resource.group) &&
    has(rule.apiVersions, resource.version) &&
    resourceMatches(rule.resources ?? [], resource.resource, a.subresource) &&
    scopeMatches(rule.scope, a, resource)
  );
}

/** `*` is any resource, `x/*` any subresource of x (and x itself), `*\/s` subresource s of any resource. */
function resourceMatches(patterns: string[], resource: string, subresource: string): boolean {
  return patterns.some((p) => {
    const slash = p.indexOf('/');
    const res = slash < 0 ? p : p.slice(0, slash);
    const sub = slash < 0 ? '' : p.slice(slash + 1);
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

/** Namespace objects are cluster-scoped, though their requests name a namespace. */
function scopeMatches(scope: string | undefined, a: AdmissionAttributes, resource: ResourceInfo): boolean {
  if (scope === 'Namespaced') return !isNamespaces(resource) && a.namespace !== '';
  if (scope === 'Cluster') return isNamespaces(resource) || a.namespace === '';
  return true;
}

/** The same resource in the other versions kite serves (autoscaling v1 and v2), upstream's equivalent resources. */
function equivalentResources(r: ResourceInfo): ResourceInfo[] {
  return resources.filter((o) => o !== r && o.group === r.group && o.resource === r.resource);
}

/**
 * The resource the webhook is called for, undefined when its rules do not match: the request's own
 * resource, else (matchPolicy Equivalent, the default) the first equivalent one a rule matches.
 */
export function matchRules(hook: WebhookMatchSpec, a: AdmissionAttributes): MatchedResource | undefined {
  const rules = hook.rules ?? [];
  if (rules.some((rule) => ruleMatches(rule, a, a.resource))) return { resource: a.resource, equivalent: false };
  if (hook.matchPolicy === 'Exact') return undefined;
  for (const eq of equivalentResources(a.resource)) {
    if (rules.some((rule) => ruleMatches(rule, a, eq))) return { resource: eq, equivalent: true };
  }
  return undefined;
}

/** {} selects everything without looking at labels (an absent selector, stored before defaulting, too). */
function isEmptySelector(sel: LabelSelector): boolean {
  return (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions?.length ?? 0) === 0);
}

function selectorMatches(selector: LabelSelector, labels: Labels, webhook: string, which: string): boolean {
  try {
    return labelSelectorAsSelector(selector).matches(labels);
  } catch (err) {
    throw internalError(`failed to parse ${which} of webhook "${webhook}": ${(err as Error).message}`);
  }
}

const labelsOf = (o: AdmissionAttributes['object']): Labels => o?.metadata?.labels ?? {};

/**
 * The namespaceSelector against the labels of the request's namespace (the object's own for a
 * namespace); requests on other cluster-scoped resources always match.
 */
export async function matchNamespaceSelector(hook: WebhookMatchSpec, a: AdmissionAttributes, lookups: AdmissionLookups): Promise<boolean> {
  const sel = hook.namespaceSelector;
  if (!sel || isEmptySelector(sel)) return true;
  let labels: Labels;
  if (isNamespaces(a.resource)) {
    labels = labelsOf(a.object ?? a.oldObject);
  } else if (a.namespace === '') {
    return true;
  } else {
    const ns = await lookups.get('namespaces', '', a.namespace);
    if (!ns) throw internalError(`namespaces "${a.namespace}" not found`);
    labels = ns.metadata?.labels ?? {};
  }
  return selectorMatches(sel, labels, hook.name, 'namespaceSelector');
}

/** The objectSelector: the webhook is called when the new or the old object's labels match. */
export function matchObjectSelector(hook: WebhookMatchSpec, a: AdmissionAttributes): boolean {
  const sel = hook.objectSelector;
  if (!sel || isEmptySelector(sel)) return true;
  return [a.object, a.oldObject].some((o) => o !== undefined && selectorMatches(sel, labelsOf(o), hook.name, 'objectSelector'));
}
