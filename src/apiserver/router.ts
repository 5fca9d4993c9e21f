// The innermost handler of the chain: non-resource paths (version, health, metrics, discovery,
// OpenAPI) and resource requests, dispatched to the group version registered for them. Stored
// groups and aggregated ones (metrics.k8s.io) are registered alike, and discovery lists them all.
import type { ResourceInfo } from '../api/resources.js';
import { groupVersions, resources as catalog } from '../api/resources.js';
import { methodNotAllowed, notFound, notFoundPath } from '../api/errors.js';
import type { Clock } from '../util/clock.js';
import type { UserInfo } from './authn/user.js';
import type { Handler, RequestContext } from './chain.js';
import { aggregatedContentType, aggregatedDiscovery, apiGroupDoc, apiGroupList, apiResourceList, apiVersions } from './discovery.js';
import { handleCreate, handleDelete, handleDeleteCollection, handleGet, handleList, handleUpdate } from './handlers/crud.js';
import type { ResourceRequest } from './handlers/context.js';
import { handlePatch } from './handlers/patch.js';
import { subresourceStorage, type SubresourceHandler } from './handlers/subresources.js';
import { handleWatch } from './handlers/watch.js';
import { negotiateOutput, tableOptions, wantsAggregatedDiscovery } from './http/negotiation.js';
import { addResponseWarning, writeObject, writeText } from './http/respond.js';
import type { KubeletClient } from './kubeletclient/client.js';
import type { TokenIssuer } from './handlers/tokenrequest.js';
import { jwksPath, openIDConfigurationPath } from './authn/satoken.js';
import type { ApiMetrics } from './metrics.js';
import { serveOpenAPIV2 } from './openapi/v2.js';
import { openapiV3Doc, openapiV3Root } from './openapi/v3.js';
import type { Registries } from './registry/registries.js';
import { versionInfo } from './version.js';

/** What a group version's handler reads of a request that has passed the filters. */
export type ResourceContext = Pick<RequestContext, 'req' | 'res' | 'url' | 'info' | 'upgrade' | 'annotate' | 'timeline'>;


/** One served group version (upstream's APIGroupInfo for one version): its resources and their handler. */
export interface APIGroupVersion {
  readonly group: string;
  readonly version: string;
  /** What discovery lists for it. */
  readonly resources: readonly ResourceInfo[];
  /** Serves an authenticated, authorized resource request of this group version. */
  serve(ctx: ResourceContext, user: UserInfo): Promise<void>;
}

export interface RouterOptions {
  metrics: ApiMetrics;
  /** host:port as clients reach the server (APIVersions' serverAddressByClientCIDRs). */
  address(): string;
  /** Whether storage and the caches are up (health checks). */
  ready(): boolean;
  /**
   * Service account issuer discovery (upstream's openidmetadata.go): the OpenID configuration
   * (undefined when the issuer is no https URL) and the key set; absent: neither is served.
   */
  issuerDiscovery?(): { configuration?: Record<string, unknown>; jwks: Record<string, unknown> };
}

export class Router {
  private readonly groups = new Map<string, Map<string, APIGroupVersion>>();
  /** Every registered resource, in registration order, for discovery. */
  private resources: ResourceInfo[] = [];

  constructor(private readonly opts: RouterOptions) {}

  register(gv: APIGroupVersion): void {
    let versions = this.groups.get(gv.group);
    if (!versions) this.groups.set(gv.group, (versions = new Map()));
    if (versions.has(gv.version)) throw new Error(`group version ${gv.group}/${gv.version} is registered twice`);
    versions.set(gv.version, gv);
    this.resources = [...this.resources, ...gv.resources];
  }

  readonly handle: Handler = (ctx) => {
    this.opts.metrics.trackWatch(ctx.info, ctx.res);
    if (!ctx.info.isResourceRequest) return this.handleNonResource(ctx);
    const gv = this.groups.get(ctx.info.apiGroup)?.get(ctx.info.apiVersion);
    if (!gv) throw notFoundPath();
    return gv.serve(ctx, ctx.user!);
  };

  private async handleNonResource({ req, res, url, info }: RequestContext): Promise<void> {
    const path = info.path.replace(/\/+$/, '') || '/';
    if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(`the server does not allow this method on the requested resource`);
    const accept = req.headers.accept;
    switch (path) {
      case '/version':
        return writeObject(res, 200, versionInfo());
      case '/healthz':
      case '/livez':
      case '/readyz':
        return this.health(res, path, url);
      case '/metrics':
        return writeText(res, 200, await this.opts.metrics.render(), this.opts.metrics.contentType);
      case '/api':
      case '/apis': {
        const aggregated = wantsAggregatedDiscovery(accept);
        if (aggregated) {
          const body = `${JSON.stringify(aggregatedDiscovery(path === '/api', aggregated, this.resources))}\n`;
          res.writeHead(200, { 'Content-Type': aggregatedContentType(aggregated), 'Content-Length': String(Buffer.byteLength(body)) });
          res.end(body);
          return;
        }
        return writeObject(res, 200, path === '/api' ? apiVersions(this.opts.address()) : apiGroupList(this.resources));
      }
      case '/openapi/v2':
        return serveOpenAPIV2(req, res);
      case openIDConfigurationPath:
      case jwksPath: {
        const discovery = this.opts.issuerDiscovery?.();
        const doc = path === jwksPath ? discovery?.jwks : discovery?.configuration;
        if (!doc) throw notFoundPath();
        const body = JSON.stringify(doc);
        // As upstream: cacheable for an hour by anyone (the keys change only with the server's key).
        res.writeHead(200, {
          'Content-Type': path === jwksPath ? 'application/jwk-set+json' : 'application/json',
          'Cache-Control': 'public, max-age=3600',
          'Content-Length': String(Buffer.byteLength(body)),
        });
        res.end(body);
        return;
      }
      case '/openapi/v3':
        return writeObject(res, 200, openapiV3Root());
    }
    if (path.startsWith('/openapi/v3/')) {
      const doc = openapiV3Doc(path.slice('/openapi/v3/'.length));
      if (!doc) throw notFoundPath();
      const etag = `"${doc.hash}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { ETag: etag });
        res.end();
        return;
      }
      // A request naming the current hash may be cached forever, as upstream allows.
      const immutable = url.searchParams.get('hash') === doc.hash;
      res.writeHead(200, {
        'Content-Type': 'application/json',
        ETag: etag,
        'Cache-Control': immutable ? 'public, immutable' : 'no-cache, no-store, must-revalidate',
        'Content-Length': String(Buffer.byteLength(doc.body)),
      });
      res.end(doc.body);
      return;
    }
    if (info.apiPrefix === 'apis' && info.apiGroup === '' && path.split('/').filter(Boolean).length === 2) {
      const group = path.split('/').filter(Boolean)[1]!;
      const doc = apiGroupDoc(group, this.resources);
      if (!doc) throw notFoundPath();
      return writeObject(res, 200, doc);
    }
    if (info.apiVersion && info.parts.length === 0) {
      const doc = apiResourceList(info.apiGroup, info.apiVersion, this.resources);
      if (!doc) throw notFoundPath();
      return writeObject(res, 200, doc);
    }
    throw notFoundPath();
  }

  private health(res: RequestContext['res'], path: string, url: URL): void {
    const ready = this.opts.ready();
    const checks: [string, boolean][] = [
      ['ping', true],
      ['log', true],
      ['etcd', ready],
      ...(path === '/readyz' ? ([['informer-sync', ready]] as [string, boolean][]) : []),
    ];
    const ok = checks.every(([, pass]) => pass);
    const name = path.slice(1);
    if (url.searchParams.has('verbose')) {
      const lines = checks.map(([n, pass]) => `[${pass ? '+' : '-'}]${n} ${pass ? 'ok' : 'failed: reason withheld'}`);
      lines.push(ok ? `${name} check passed` : `${name} check failed`);
      return writeText(res, ok ? 200 : 500, `${lines.join('\n')}\n`);
    }
    writeText(res, ok ? 200 : 500, ok ? 'ok' : `${checks.filter(([, p]) => !p).map(([n]) => `[-]${n} failed: reason withheld`).join('\n')}\n${name} check failed`);
  }
}

export interface StorageDependencies {
  registries: Registries;
  clock: Clock;
  /** The API server's client to kubelets, for the node-proxied subresources (absent: they answer 503). */
  kubelet?: KubeletClient;
  /** The service-account token issuer for serviceaccounts/token (absent: it answers 503). */
  tokens?: TokenIssuer;
}

/**
 * The group versions the registries store, each resource with the subresource handlers its kind
 * registers; a subresource the catalog declares without a handler is an error at start.
 */
export function storageGroupVersions(deps: StorageDependencies): APIGroupVersion[] {
  const storage = subresourceStorage(deps.kubelet, deps.tokens);
  return groupVersions().map(({ group, version }) => {
    const resources = catalog.filter((r) => r.group === group && r.version === version);
    const subresources = new Map<string, ReadonlyMap<string, SubresourceHandler>>();
    for (const r of resources) {
      const handlers = storage.get(`${r.group}/${r.resource}`) ?? new Map<string, SubresourceHandler>();
      for (const s of r.subresources) if (!handlers.has(s.name)) throw new Error(`no handler for ${r.group}/${r.resource}/${s.name}`);
      subresources.set(r.resource, handlers);
    }
    return { group, version, resources, serve: (ctx, user) => serveStored(ctx, user, deps, subresources) };
  });
}

function serveStored(
  { req, res, url, info, upgrade, annotate, timeline }: ResourceContext,
  user: UserInfo,
  { registries, clock }: StorageDependencies,
  /** By resource name: the subresource handlers each resource of the group version registers. */
  subresources: ReadonlyMap<string, ReadonlyMap<string, SubresourceHandler>>,
): Promise<void> {
  const registry = registries.get(info.apiGroup, info.apiVersion, info.resource);
  if (!registry) throw notFoundPath();
  const resource = registry.info;
  // Cluster-scoped resources take no namespace (a namespace object names itself as its namespace).
  if (!resource.namespaced && info.namespace && resource.resource !== 'namespaces') throw notFoundPath();
  const output = tableOptions(negotiateOutput(req.headers.accept, true), url.searchParams);
  const scoped = resource.namespaced ? info : { ...info, namespace: '' };
  if (resource.deprecationWarning) addResponseWarning(res, resource.deprecationWarning);
  const r: ResourceRequest = { req, res, url, info: scoped, user, resource, registry, registries, output, clock, upgrade, annotate, timeline };
  if (info.subresource) {
    const sub = info.subresource;
    const declared = resource.subresources.find((s) => s.name === sub);
    const handler = subresources.get(resource.resource)?.get(sub);
    if (!declared || !handler) throw notFound({ group: resource.group, resource: `${resource.resource}/${sub}` }, info.name);
    const verb = info.verb;
    // Only the methods a subresource has routes for (DELETE on log or exec is a 405, as upstream).
    if (!declared.verbs.includes(verb === 'connect' || verb === 'watch' ? 'get' : verb)) throw methodNotAllowed();
    return handler(r);
  }
  // A verb the resource does not serve has no route upstream (namespaces take no deletecollection).
  if (!resource.verbs.includes(info.verb)) throw methodNotAllowed();
  switch (info.verb) {
    case 'get':
      return handleGet(r);
    case 'list':
      return handleList(r);
    case 'watch':
      return handleWatch(r);
    case 'create':
      if (info.name) throw methodNotAllowed('the server does not allow this method on the requested resource');
      return handleCreate(r);
    // A collection takes no PUT or PATCH: upstream routes none there (405).
    case 'update':
      if (!info.name) throw methodNotAllowed();
      return handleUpdate(r);
    case 'patch':
      if (!info.name) throw methodNotAllowed();
      return handlePatch(r);
    case 'delete':
      return handleDelete(r);
    case 'deletecollection':
      return handleDeleteCollection(r);
    default:
      throw methodNotAllowed('the server does not allow this method on the requested resource');
  }
}
