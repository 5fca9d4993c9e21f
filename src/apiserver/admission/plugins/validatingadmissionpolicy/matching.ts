// Which requests a policy or binding applies to, as upstream's policy/generic matcher: the
// namespace selector, the object selector, excludeResourceRules, then resourceRules (none: all).
import type { MatchResources, NamedRuleWithOperations } from 'kubernetes-types/admissionregistration/v1.js';
import { labelSelectorAsSelector } from '../../../../api/labels.js';
import type { AdmissionAttributes, AdmissionLookups } from '../../interface.js';

const isNamespaceRequest = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'namespaces';

/** The namespace a request is in: for a namespace itself, its own name. */
export function requestNamespace(a: AdmissionAttributes): string {
  return isNamespaceRequest(a) ? a.name : a.namespace;
}

function matchesAny(values: readonly string[] | undefined, value: string): boolean {
  return (values ?? []).some((v) => v === '*' || v === value);
}

/** `resources` entries: "pods", "*", "pods/status", "*\/scale", "pods/*", "*\/*". */
function matchesResource(resources: readonly string[] | undefined, a: AdmissionAttributes): boolean {
  return (resources ?? []).some((r) => {
    const [res, sub = ''] = r.split('/', 2);
    if (res !== '*' && res !== a.resource.resource) return false;
    if (!r.includes('/')) return a.subresource === '';
    return sub === '*' || sub === a.subresource;
  });
}

function matchesScope(scope: string | undefined, a: AdmissionAttributes): boolean {
  if (!scope || scope === '*') return true;
  if (scope === 'Namespaced') return !isNamespaceRequest(a) && a.namespace !== '';
  return isNamespaceRequest(a) || a.namespace === '';
}

/** kubernetes-types leaves out the fields NamedRuleWithOperations inlines from Rule. */
type NamedRule = NamedRuleWithOperations & { resources?: string[]; scope?: string };

function matchesRule(rule: NamedRule, a: AdmissionAttributes): boolean {
  return (
    matchesAny(rule.operations, a.operation) &&
    matchesAny(rule.apiGroups, a.resource.group) &&
    matchesAny(rule.apiVersions, a.resource.version) &&
    matchesResource(rule.resources, a) &&
    matchesScope(rule.scope, a) &&
    (!rule.resourceNames?.length || rule.resourceNames.includes(a.name))
  );
}

function labelsOf(obj: unknown): Record<string, string> | undefined {
  return (obj as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels;
}

/** Whether the request falls in the match resources; a namespace the selector needs must exist. */
export async function matchesResources(m: MatchResources | undefined, a: AdmissionAttributes, lookups: AdmissionLookups): Promise<boolean> {
  if (!m) return true;
  const nsSelector = labelSelectorAsSelector(m.namespaceSelector ?? {});
  if (!nsSelector.empty() && (a.namespace !== '' || isNamespaceRequest(a))) {
    let labels: Record<string, string> | undefined;
    if (isNamespaceRequest(a) && a.subresource === '' && (a.operation === 'CREATE' || a.operation === 'UPDATE')) labels = labelsOf(a.object);
    else labels = (await lookups.get('namespaces', '', requestNamespace(a)))?.metadata?.labels;
    if (!nsSelector.matches(labels ?? {})) return false;
  }
  const objSelector = labelSelectorAsSelector(m.objectSelector ?? {});
  if (!objSelector.empty()) {
    const matches = (o: unknown) => o !== undefined && objSelector.matches(labelsOf(o) ?? {});
    if (!matches(a.object) && !matches(a.oldObject)) return false;
  }
  if ((m.excludeResourceRules ?? []).some((r: NamedRule) => matchesRule(r, a))) return false;
  return !m.resourceRules?.length || m.resourceRules.some((r: NamedRule) => matchesRule(r, a));
}
