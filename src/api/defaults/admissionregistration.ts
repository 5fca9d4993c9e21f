// Upstream's admissionregistration/v1 defaults: MutatingWebhookConfiguration and ValidatingWebhookConfiguration;
import { child, isObj, type Obj } from './podspec.js';

function defaultWebhook(hook: Obj, mutating: boolean): void {
  if (hook.failurePolicy == null) hook.failurePolicy = 'Fail';
  if (hook.matchPolicy == null) hook.matchPolicy = 'Equivalent';
  if (hook.namespaceSelector == null) hook.namespaceSelector = {};
  if (hook.objectSelector == null) hook.objectSelector = {};
  if (hook.timeoutSeconds == null) hook.timeoutSeconds = 10;
  if (mutating && hook.reinvocationPolicy == null) hook.reinvocationPolicy = 'Never';
  for (const rule of Array.isArray(hook.rules) ? hook.rules : []) if (isObj(rule) && rule.scope == null) rule.scope = '*';
  const service = isObj(hook.clientConfig) ? hook.clientConfig.service : undefined;
  if (isObj(service) && service.port == null) service.port = 443;
}

export const defaultMutatingWebhookConfiguration = (c: Obj): void => {
  for (const hook of Array.isArray(c.webhooks) ? c.webhooks : []) if (isObj(hook)) defaultWebhook(hook, true);
};

export const defaultValidatingWebhookConfiguration = (c: Obj): void => {
  for (const hook of Array.isArray(c.webhooks) ? c.webhooks : []) if (isObj(hook)) defaultWebhook(hook, false);
};

// ValidatingAdmissionPolicy and its bindings.

/** MatchResources: Equivalent matching, empty (match-all) selectors, rules of any scope. */
function defaultMatchResources(m: Obj): void {
  m.matchPolicy ??= 'Equivalent';
  child(m, 'namespaceSelector');
  child(m, 'objectSelector');
  for (const key of ['resourceRules', 'excludeResourceRules']) {
    for (const rule of Array.isArray(m[key]) ? m[key] : []) if (isObj(rule)) rule.scope ??= '*';
  }
}

export function defaultValidatingAdmissionPolicy(policy: Obj): void {
  const spec = child(policy, 'spec');
  spec.failurePolicy ??= 'Fail';
  if (isObj(spec.matchConstraints)) defaultMatchResources(spec.matchConstraints);
}

export function defaultValidatingAdmissionPolicyBinding(binding: Obj): void {
  const spec = child(binding, 'spec');
  if (isObj(spec.matchResources)) defaultMatchResources(spec.matchResources);
}
