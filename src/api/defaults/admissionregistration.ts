// Upstream's v1 defaults for MutatingWebhookConfiguration and ValidatingWebhookConfiguration.
import { isObj, type Obj } from './podspec.js';

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
