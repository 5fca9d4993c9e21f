// Turns a request line into upstream's RequestInfo: which resource, which verb.
// Mirrors the URL scheme /api/v1/... and /apis/GROUP/VERSION/..., namespaces/NS/RESOURCE/NAME/SUBRESOURCE.

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

export function parseRequestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
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
  const segs = path.split('/').filter((s) => s !== '').map(decodeURIComponent);
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

  if (info.name === '' && info.verb === 'get') {
    info.verb = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1' ? 'watch' : 'list';
  } else if (info.name === '' && info.verb === 'delete') {
    info.verb = 'deletecollection';
  } else if (info.verb === 'get' && (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1')) {
    // A watch on a single name is served as a watch with a name field selector.
    info.verb = 'watch';
  }
  return info;
}
