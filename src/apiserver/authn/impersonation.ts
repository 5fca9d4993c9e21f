// Impersonation as upstream's WithImpersonation filter: the Impersonate-User, -Uid, -Group and
// -Extra-<key> headers ask to act as someone else; the authenticated requester needs `impersonate`
// on each of them (users, serviceaccounts, groups, uids and userextras/<key>), and the request then
// runs as the user the headers describe.
import type { IncomingHttpHeaders } from 'node:http';
import { badRequest } from '../../api/errors.js';
import type { AuthorizationAttributes } from '../authz/authorizer.js';
import { authenticatedGroup, unauthenticatedGroup } from './union.js';
import { anonymousUser, type UserInfo } from './user.js';

const userHeader = 'impersonate-user';
const uidHeader = 'impersonate-uid';
const groupHeader = 'impersonate-group';
const extraPrefix = 'impersonate-extra-';
const serviceAccountPrefix = 'system:serviceaccount:';

/** What one header asks to impersonate, as the attributes `impersonate` is authorized on. */
type ImpersonationRequest = Pick<AuthorizationAttributes, 'apiGroup' | 'resource' | 'subresource' | 'namespace' | 'name'>;

export interface Impersonation {
  /** Each must be allowed `impersonate` for the requester. */
  requests: ImpersonationRequest[];
  /** Who the request runs as once they are. */
  user: UserInfo;
}

const ask = (resource: string, name: string, more: Partial<ImpersonationRequest> = {}): ImpersonationRequest => ({ apiGroup: '', resource, subresource: '', namespace: '', name, ...more });

/** Upstream's serviceaccount.SplitUsername: system:serviceaccount:<namespace>:<name>. */
function splitServiceAccount(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(serviceAccountPrefix)) return undefined;
  const parts = username.slice(serviceAccountPrefix.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** Whether any header of a request (name, value, name, value, ...) is an Impersonate-* one. */
export function asksImpersonation(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length > 12 && name.slice(0, 12).toLowerCase() === 'impersonate-') return true;
  }
  return false;
}

/** The impersonation a request's headers ask for; undefined when they ask for none. */
export function impersonationOf(headers: NodeJS.Dict<string[]> | IncomingHttpHeaders): Impersonation | undefined {
  const values = (name: string): string[] => {
    const v = headers[name];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  };
  const username = values(userHeader)[0] ?? '';
  const uid = values(uidHeader)[0] ?? '';
  const groups = values(groupHeader);
  const extra: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  const requests: ImpersonationRequest[] = [];
  for (const header of Object.keys(headers)) {
    if (!header.startsWith(extraPrefix)) continue;
    let key: string;
    try {
      // Keys may carry characters a header name cannot: upstream percent-decodes them.
      key = decodeURIComponent(header.slice(extraPrefix.length)).toLowerCase();
    } catch {
      throw badRequest(`invalid impersonation extra key: ${JSON.stringify(header)}`);
    }
    for (const value of values(header)) {
      (extra[key] ??= []).push(value);
      requests.push(ask('userextras', value, { apiGroup: 'authentication.k8s.io', subresource: key }));
    }
  }
  if (!username) {
    // Upstream answers this with a 500; it is the client's mistake.
    if (groups.length || uid || requests.length) throw badRequest('requested impersonation of groups, a uid or user extras without impersonating a user');
    return undefined;
  }

  const user: UserInfo = { name: username, groups: [...groups] };
  const sa = splitServiceAccount(username);
  if (sa) {
    requests.unshift(ask('serviceaccounts', sa.name, { namespace: sa.namespace }));
    // A service account's groups are fixed, unless the request names them.
    if (!groups.length) user.groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
  } else {
    requests.unshift(ask('users', username));
  }
  for (const g of groups) requests.push(ask('groups', g));
  if (uid) {
    user.uid = uid;
    requests.push(ask('uids', uid, { apiGroup: 'authentication.k8s.io' }));
  }
  if (Object.keys(extra).length) user.extra = extra;
  // As upstream: an impersonated user is authenticated unless it says otherwise; anonymous is not.
  if (username === anonymousUser.name) {
    if (!user.groups.includes(unauthenticatedGroup)) user.groups.push(unauthenticatedGroup);
  } else if (!user.groups.includes(authenticatedGroup) && !user.groups.includes(unauthenticatedGroup)) {
    user.groups.push(authenticatedGroup);
  }
  return { requests, user };
}
