// 403 Forbidden worded as upstream (apimachinery NewForbidden, the authorization filter's message).
import { StatusError, type QualifiedResource } from '../../api/errors.js';
import type { AuthorizationAttributes } from './authorizer.js';

// Go's %q for the strings that occur here (names, paths): quoted, with quotes and backslashes escaped.
const quote = (s: string) => JSON.stringify(s);

/**
 * Upstream's NewForbidden: `pods "web" is forbidden: <why>`, `pods is forbidden: <why>` without a name,
 * `forbidden: <why>` without a resource; details carry group, the resource as kind, and name.
 */
export function newForbidden(r: QualifiedResource, name: string, why: string): StatusError {
  const qualified = r.group ? `${r.resource}.${r.group}` : r.resource;
  const message =
    qualified === '' ? `forbidden: ${why}` : name === '' ? `${qualified} is forbidden: ${why}` : `${qualified} ${quote(name)} is forbidden: ${why}`;
  return new StatusError(403, 'Forbidden', message, {
    ...(r.group && { group: r.group }),
    ...(r.resource && { kind: r.resource }),
    ...(name && { name }),
  });
}

/** The refusal of the authorization filter, e.g. `pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "default"`. */
export function forbiddenError(attrs: AuthorizationAttributes, reason?: string): StatusError {
  // Upstream escapes these so the message can never be read as HTML.
  const message = forbiddenMessage(attrs).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  const r = attrs.isResourceRequest ? { group: attrs.apiGroup, resource: attrs.resource } : { group: '', resource: '' };
  return newForbidden(r, attrs.isResourceRequest ? attrs.name : '', reason ? `${message}: ${reason}` : message);
}

function forbiddenMessage(a: AuthorizationAttributes): string {
  const user = quote(a.user.name);
  if (!a.isResourceRequest) return `User ${user} cannot ${a.verb} path ${quote(a.path)}`;
  const resource = quote(a.subresource ? `${a.resource}/${a.subresource}` : a.resource);
  const scope = a.namespace ? `in the namespace ${quote(a.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${a.verb} resource ${resource} in API group ${quote(a.apiGroup)} ${scope}`;
}
