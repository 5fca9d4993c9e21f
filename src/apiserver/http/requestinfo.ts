// Turns a request line into upstream's RequestInfo: which resource, which verb.
// Mirrors the URL scheme /api/v1/... and /apis/GROUP/VERSION/..., namespaces/NS/RESOURCE/NAME/SUBRESOURCE.
// The path is read as sent: WHATWG URL parsing would resolve `pods/..` (and `%2e%2e`) into the
// namespace above it, so a DELETE of a pod named ".." would delete the namespace.
import { badRequest, notFoundPath } from '../../api/errors.js';
import { queryBool } from '../../api/query.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection, connect; lowercase HTTP method for non-resource paths. */
  verb: string;
  apiPrefix: string; // 'api' | 'apis'
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The path segments after the version. */
  parts: string[];
}

const specialVerbs = new Set(['proxy', 'watch']);

/** Upstream's path.IsValidPathSegmentName: what a name must satisfy to be one segment of a URL or storage key. */
export function pathSegmentNameErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

/**
 * A request target split into its percent-decoded path and its query, without resolving dot
 * segments (as Go's url.ParseRequestURI). A malformed escape is a 400, not an exception.
 */
export function splitRequestTarget(target: string): { path: string; query: URLSearchParams } {
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  // An absolute-form target (GET https://host/path) names its path after the authority.
  const pathPart = /^[a-z][a-z0-9+.-]*:\/\//i.test(rawPath) ? rawPath.replace(/^[^:]+:\/\/[^/]*/, '') || '/' : rawPath;
  let path: string;
  try {
    path = decodeURIComponent(pathPart);
  } catch {
    // Go names the first malformed escape; a well-formed one that is not UTF-8 has no Go counterpart.
    const bad = /%(?![0-9a-fA-F]{2}).{0,2}/s.exec(pathPart)?.[0];
    throw badRequest(bad ? `invalid URL escape ${JSON.stringify(bad)}` : 'invalid UTF-8 in the URL path');
  }
  return { path, query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)) };
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  // As upstream's splitPath: only the outer slashes go; an empty segment inside stays (and is refused below).
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  const segs = trimmed === '' ? [] : trimmed.split('/');
  if (segs.length === 0 || (segs[0] !== 'api' && segs[0] !== 'apis')) return info;
  info.apiPrefix = segs[0]!;
  let rest = segs.slice(1);
  if (info.apiPrefix === 'apis') {
    if (rest.length < 2) return info; // /apis or /apis/GROUP: discovery
    info.apiGroup = rest[0]!;
    rest = rest.slice(1);
  } else if (rest.length < 1) {
    return info; // /api: discovery
  }
  info.apiVersion = rest[0]!;
  rest = rest.slice(1);
  if (rest.length === 0) return info; // /api/v1: resource list
  info.isResourceRequest = true;

  // /api/v1/watch/namespaces/ns/pods: the deprecated watch path form.
  if (specialVerbs.has(rest[0]!) && rest.length >= 2) {
    info.verb = rest[0]!;
    rest = rest.slice(1);
  } else {
    switch (method) {
      case 'POST':
        info.verb = 'create';
        break;
      case 'GET':
      case 'HEAD':
        info.verb = 'get';
        break;
      case 'PUT':
        info.verb = 'update';
        break;
      case 'PATCH':
        info.verb = 'patch';
        break;
      case 'DELETE':
        info.verb = 'delete';
        break;
      default:
        info.verb = '';
    }
  }

  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      if (rest[1] === '') throw badRequest('Namespace parameter required.');
      info.namespace = rest[1]!;
      // /namespaces/NAME itself, or /namespaces/NAME/status|finalize: the namespace object.
      if (rest.length > 2 && rest[2] !== 'status' && rest[2] !== 'finalize') rest = rest.slice(2);
    }
  }
  info.parts = rest;
  if (rest.length >= 3) info.subresource = rest[2]!;
  if (rest.length >= 2) info.name = rest[1]!;
  if (rest.length >= 1) info.resource = rest[0]!;
  // The namespace object itself: as upstream, /api/v1/namespaces/NAME is also "in" namespace NAME.
  if (info.resource === 'namespaces') info.namespace = info.name;

  validateSegments(info);
  const watch = query.has('watch') && queryBool(query.get('watch')!);
  if (info.name === '' && info.verb === 'get') {
    info.verb = watch ? 'watch' : 'list';
  } else if (info.name === '' && info.verb === 'delete') {
    info.verb = 'deletecollection';
  } else if (info.verb === 'get' && watch) {
    // A watch on a single name is served as a watch with a name field selector.
    info.verb = 'watch';
  }
  return info;
}

/**
 * Refuses, before routing, what upstream's storage key functions refuse: an empty or unsafe name
 * ("Name parameter invalid: \"..\": may not be '..'"). A namespace segment is held to the same rule
 * (it names a Namespace object); another empty segment routes nowhere.
 */
function validateSegments(info: RequestInfo): void {
  if (info.parts.length > 2 && info.parts[1] === '') throw badRequest('Name parameter required.');
  if (info.parts.includes('')) throw notFoundPath();
  for (const [what, value] of [['Name', info.name], ['Namespace', info.namespace]] as const) {
    const errs = pathSegmentNameErrors(value);
    if (errs.length) throw badRequest(`${what} parameter invalid: ${JSON.stringify(value)}: ${errs.join(';')}`);
  }
}
