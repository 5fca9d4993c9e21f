// The API server: HTTPS, authentication, authorization, then discovery, OpenAPI and the resource
// handlers over the registries. Side effects happen in start(); stop() undoes them.
import { createServer, type Server } from 'node:https';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '../storage/store.js';
import { openStore } from '../storage/open.js';
import { Compactor } from '../storage/compactor.js';
import { realClock, type Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { ensurePki, issueClientCertificate, servingTlsOptions, type Pki } from './authn/pki.js';
import type { Worker } from 'node:worker_threads';
import type { RestConfig } from '../client/rest.js';
import { startThread, stopThread } from '../util/component-thread.js';
import { closeServer } from '../util/http-server.js';
import { EventSweeper } from './eventttl.js';
import { KubeletClient } from './kubeletclient/client.js';
import { scrapeResourceMetrics } from '../metricsserver/kubelet.js';
import { MetricsApi, METRICS_GROUP, metricsTable } from '../metricsserver/api.js';
import { X509Authenticator } from './authn/x509.js';
import { TokenFileAuthenticator } from './authn/tokenfile.js';
import { AnonymousAuthenticator } from './authn/anonymous.js';
import { BootstrapTokenAuthenticator } from './authn/bootstraptoken.js';
import { BootstrapperAuthorizer, ClusterInfoAuthorizer, clusterInfoPath } from './authz/bootstrap.js';
import type { Node, Pod, Secret } from '../api/types.js';
import type { UserInfo } from './authn/user.js';
import { RequestAuthenticator } from './authn/union.js';
import type { Authenticator } from './authn/authenticator.js';
import { UnionAuthorizer, checkAuthorized, type Authorizer } from './authz/authorizer.js';
import { AuthenticatedAuthorizer, PrivilegedGroupsAuthorizer, PublicInfoAuthorizer, publicInfoPaths } from './authz/builtin.js';
import { AdmissionChain } from './admission/chain.js';
import { NamespaceLifecycle } from './admission/plugins/namespacelifecycle.js';
import { DefaultTolerationSeconds } from './admission/plugins/defaulttolerationseconds.js';
import { PriorityAdmission } from './admission/plugins/priority.js';
import type { AdmissionLookups } from './admission/interface.js';
import { writeKubeconfig } from '../cli/kubeconfig.js';
import { Registries } from './registry/registries.js';
import type { Admitter } from './registry/registry.js';
import { parseRequestInfo, splitRequestTarget, type RequestInfo } from './http/requestinfo.js';
import { negotiateOutput, tableOptions, wantsAggregatedDiscovery } from './http/negotiation.js';
import { toStatusError, writeError, writeObject, writeText } from './http/respond.js';
import { hasStatusCode, methodNotAllowed, StatusError } from './errors.js';
import type { StoredObject } from '../api/meta.js';
import { aggregatedContentType, aggregatedDiscovery, apiGroupDoc, apiGroupList, apiResourceList, apiVersions } from './discovery.js';
import { serveOpenAPIV2 } from './openapi/v2.js';
import { openapiV3Doc, openapiV3Root } from './openapi/v3.js';
import { handleCreate, handleDelete, handleDeleteCollection, handleGet, handleList, handleUpdate } from './handlers/crud.js';
import { handlePatch } from './handlers/patch.js';
import { handleWatch } from './handlers/watch.js';
import { handleSubresource } from './handlers/subresources.js';
import type { ResourceRequest } from './handlers/context.js';
import { ApiMetrics } from './metrics.js';
import { defaultRequestLimits, InflightLimiter, isLongRunning, readHeaderTimeoutMs, requestDeadlineMs, withDeadline, writeTooManyRequests, type RequestLimits } from './http/filters.js';
import { bootstrapObjects, ensureJoinToken } from './bootstrap.js';
import { versionInfo } from './version.js';
import type { ControllerManagerConfig } from '../controllers/manager.js';
import { responseForUpgrade, type UpgradeRequest } from '../streaming/upgrade.js';

export interface ApiServerOptions {
  dataDir: string;
  /** host:port to listen on; port 0 picks a free one. */
  listen: string;
  /** 'sqlite' or 'etcd://HOST:PORT[,...]'. */
  storage: string;
  /** A static token file (upstream's --token-auth-file format). */
  tokenAuthFile?: string;
  /** What runs beside the API server (default: all). */
  components?: readonly Component[];
  /** kube-controller-manager's --controllers for the controllers thread. */
  controllers?: readonly string[];
  /** --request-timeout and the in-flight bounds (defaults: upstream's). */
  limits?: RequestLimits;
  /** How often kubelets are scraped for metrics.k8s.io (metrics-server's --metric-resolution; default 15 s). */
  metricResolutionMs?: number;
  clock?: Clock;
  logger: Logger;
}

export type Component = 'controllers' | 'scheduler';
export const allComponents: readonly Component[] = ['controllers', 'scheduler'];

const notFoundPath = () => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

export class ApiServer {
  private store!: Store;
  private registries!: Registries;
  private compactor!: Compactor;
  private server!: Server;
  /**
   * Plain HTTP on an abstract Unix socket for the components in this process (upstream's loopback
   * client): no TLS between threads of one process, reachable only from this machine's network
   * namespace, and only with a token that never leaves the process.
   */
  private loopback?: ReturnType<typeof createHttpServer>;
  private readonly loopbackSocket = `\0kite-apiserver-${randomUUID()}`;
  private readonly loopbackTokens = new Map<string, UserInfo>();
  private pki!: Pki;
  private authenticator!: RequestAuthenticator;
  private authorizer!: Authorizer;
  /** The components beside the API server, one thread each. */
  private readonly threads: Worker[] = [];
  private eventSweeper?: EventSweeper;
  /** Reaches kubelets for pods/log (as kubeadm's apiserver-kubelet-client). */
  private kubeletClient?: KubeletClient;
  /** metrics.k8s.io, served in process where upstream aggregates metrics-server. */
  private metricsApi?: MetricsApi;
  private readonly metrics = new ApiMetrics();
  /** Upgraded connections (exec, attach, port-forward): the HTTP server no longer tracks them. */
  private readonly upgraded = new Set<Duplex>();
  private readonly clock: Clock;
  private readonly limits: RequestLimits;
  private readonly inflight: InflightLimiter;
  private ready = false;
  private address = '';

  constructor(private readonly opts: ApiServerOptions) {
    this.clock = opts.clock ?? realClock;
    this.limits = opts.limits ?? defaultRequestLimits;
    this.inflight = new InflightLimiter(this.limits);
  }

  /** https://host:port once started. */
  get url(): string {
    return `https://${this.address}`;
  }

  get kubeconfigPath(): string {
    return join(this.opts.dataDir, 'admin.kubeconfig');
  }

  async start(): Promise<void> {
    const { dataDir, logger } = this.opts;
    await mkdir(dataDir, { recursive: true });
    const [host, portText] = splitHostPort(this.opts.listen);
    this.pki = await ensurePki(join(dataDir, 'pki'), { extraSans: [host], clock: this.clock });
    this.store = await openStore(this.opts.storage, dataDir);
    this.registries = new Registries({
      store: this.store,
      clock: this.clock,
      admitter: this.admitter(),
      synchronousWatch: this.store.synchronousWatch,
    });
    await this.registries.start();
    this.compactor = new Compactor(this.store, this.clock, { onError: (err) => logger.warn({ err }, 'compaction failed') });
    this.compactor.start();
    this.eventSweeper = new EventSweeper(this.registries, this.clock, logger);
    this.eventSweeper.start();

    const credentials: Authenticator[] = [new X509Authenticator(this.pki.ca.certPem)];
    if (this.opts.tokenAuthFile) {
      credentials.push(await TokenFileAuthenticator.load(this.opts.tokenAuthFile));
    }
    const getSecret = async (name: string) =>
      (this.registries.cached('', 'secrets', 'kube-system', name) ?? (await this.liveGet('', 'secrets', name, 'kube-system'))) as Secret | undefined;
    credentials.push(new BootstrapTokenAuthenticator({ getSecret, clock: this.clock }));
    this.authenticator = new RequestAuthenticator(credentials, new AnonymousAuthenticator([...publicInfoPaths, clusterInfoPath]));
    this.authorizer = new UnionAuthorizer([
      new PrivilegedGroupsAuthorizer(),
      new PublicInfoAuthorizer(),
      new ClusterInfoAuthorizer(),
      new BootstrapperAuthorizer(),
      new AuthenticatedAuthorizer(),
    ]);

    const kubeletIdentity = await issueClientCertificate(this.pki, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] });
    this.kubeletClient = new KubeletClient({ caPem: this.pki.ca.certPem, client: kubeletIdentity });
    this.metricsApi = new MetricsApi({
      listNodes: () => this.registries.cachedList('', 'nodes') as Node[],
      listPods: () => this.registries.cachedList('', 'pods') as Pod[],
      scrape: scrapeResourceMetrics(this.kubeletClient),
      clock: this.clock,
      logger,
      resolutionMs: this.opts.metricResolutionMs,
    });

    // Against slowloris: the headers get the read-header bound, the whole request (headers and body;
    // responses such as watches are not counted) the request timeout; Node checks these every
    // connectionsCheckingInterval. A TLS handshake gets upstream's 32 s whatever the request timeout:
    // under a flood of new connections an honest one can take seconds.
    const headerTimeout = readHeaderTimeoutMs(this.limits);
    this.server = createServer(
      { ...servingTlsOptions(this.pki), handshakeTimeout: 32_000, connectionsCheckingInterval: Math.min(30_000, Math.max(100, headerTimeout / 4)) },
      (req, res) => void this.handle(req, res),
    );
    // Node hands upgrades (exec, attach, port-forward) to this listener instead of the handler.
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
    this.server.headersTimeout = headerTimeout;
    // The handler's own 504 comes first; this catches bodies that no handler reads (a 401 or 429 answered early).
    this.server.requestTimeout = this.limits.requestTimeoutMs + headerTimeout;
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(Number(portText), host, () => resolve());
    });
    const addr = this.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : Number(portText);
    this.address = `${host.includes(':') ? `[${host}]` : host}:${port}`;

    await bootstrapObjects(this.registries, { ip: host === 'localhost' ? '127.0.0.1' : host, port });
    await ensureJoinToken(this.registries, { dataDir, server: this.url, caPem: this.pki.ca.certPem });
    await writeKubeconfig(this.kubeconfigPath, {
      server: this.url,
      caPem: this.pki.ca.certPem,
      certPem: this.pki.admin.certPem,
      keyPem: this.pki.admin.keyPem,
      user: 'kubernetes-admin',
    });
    const components = this.opts.components ?? allComponents;
    if (components.length > 0) await this.startLoopback();
    const entries: Record<Component, [string, URL]> = {
      controllers: ['kube-controller-manager', new URL('../controllers/worker.js', import.meta.url)],
      scheduler: ['kube-scheduler', new URL('../scheduler/worker.js', import.meta.url)],
    };
    for (const c of components) {
      const [identity, entry] = entries[c];
      const options = c === 'controllers' ? this.controllerOptions() : undefined;
      this.threads.push(startThread(entry, this.componentConfig(identity), (err) => logger.error({ err, component: c }, 'component thread failed'), options));
    }
    this.metricsApi.start();
    this.ready = true;
    logger.info({ url: this.url, storage: this.opts.storage, kubeconfig: this.kubeconfigPath }, 'API server ready');
  }

  private async startLoopback(): Promise<void> {
    const authenticator = new RequestAuthenticator([new TokenFileAuthenticator(this.loopbackTokens)]);
    const loopback = createHttpServer((req, res) => void this.handle(req, res, undefined, authenticator));
    loopback.requestTimeout = 0;
    loopback.keepAliveTimeout = this.server.keepAliveTimeout;
    await new Promise<void>((resolve, reject) => {
      loopback.once('error', reject);
      loopback.listen({ path: this.loopbackSocket }, () => resolve());
    });
    this.loopback = loopback;
  }

  /** The built-in components run in this process but reach the API like any client, each with its own identity. */
  private componentConfig(name: string): RestConfig {
    const token = randomBytes(32).toString('base64url');
    this.loopbackTokens.set(token, { name: `system:${name}`, groups: [] });
    return { server: 'http://localhost', socketPath: this.loopbackSocket, token, userAgent: `kite-${name}/v1.33.0` };
  }

  /** The cluster CA signs approved CSRs, as kube-controller-manager's --cluster-signing-{cert,key}-file. */
  private controllerOptions(): ControllerManagerConfig {
    return { clusterSigningCertFile: join(this.pki.dir, 'ca.crt'), clusterSigningKeyFile: join(this.pki.dir, 'ca.key'), controllers: this.opts.controllers };
  }

  async stop(): Promise<void> {
    this.ready = false;
    await Promise.all(this.threads.splice(0).map((t) => stopThread(t)));
    this.eventSweeper?.stop();
    await this.metricsApi?.stop();
    this.kubeletClient?.close();
    await this.compactor?.stop();
    this.registries?.stop();
    if (this.loopback) await closeServer(this.loopback);
    if (this.server) {
      for (const socket of this.upgraded) socket.destroy();
      await closeServer(this.server);
    }
    await this.store?.close();
  }

  private admitter(): Admitter {
    const lookups: AdmissionLookups = {
      // The cache may lag a namespace created a moment ago (etcd's watch is asynchronous): on a miss,
      // read storage, as upstream's NamespaceLifecycle falls back to a live lookup.
      getNamespace: async (name) => this.registries.cached('', 'namespaces', '', name) ?? this.liveGet('', 'namespaces', name),
      getPriorityClass: async (name) =>
        this.registries.cached('scheduling.k8s.io', 'priorityclasses', '', name) ?? this.liveGet('scheduling.k8s.io', 'priorityclasses', name),
      listPriorityClasses: async () => this.registries.cachedList('scheduling.k8s.io', 'priorityclasses'),
    };
    const chain = new AdmissionChain([
      new NamespaceLifecycle({ lookups, clock: this.clock }),
      new DefaultTolerationSeconds(),
      new PriorityAdmission({ lookups }),
    ]);
    return {
      mutate: (operation, a) => chain.admit({ operation, ...a }),
      validate: (operation, a) => chain.validate({ operation, ...a }),
    };
  }

  private async liveGet(group: string, resource: string, name: string, namespace = ''): Promise<StoredObject | undefined> {
    try {
      return await this.registries.of(group, resource).get(namespace, name);
    } catch (err) {
      if (hasStatusCode(err, 404)) return undefined;
      throw err;
    }
  }

  /** An upgrade goes through the same pipeline; only the streaming subresources take the connection over. */
  private handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // A broken client connection ends only itself.
    socket.on('error', () => socket.destroy());
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    void this.handle(req, responseForUpgrade(req, socket), { socket, head });
  }

  private async handle(req: IncomingMessage, res: ServerResponse, upgrade?: UpgradeRequest, authenticator = this.authenticator): Promise<void> {
    const started = performance.now();
    let info: RequestInfo | undefined;
    let release: (() => void) | undefined;
    try {
      const target = splitRequestTarget(req.url ?? '/');
      // Only the query is read from url; the path is info.path, as sent (a URL would resolve dot segments).
      const url = new URL('https://kite/');
      url.search = target.query.toString();
      info = parseRequestInfo(req.method ?? 'GET', target.path, target.query);
      const user = await authenticator.authenticate(req);
      // The loopback components are exempt, as upstream's loopback client is (system:masters).
      release = authenticator === this.authenticator ? this.inflight.acquire(info, user) : () => undefined;
      if (!release) {
        writeTooManyRequests(res);
        return;
      }
      await checkAuthorized(this.authorizer, { user, ...info });
      this.metrics.trackWatch(info, res);
      // Upstream's AuthorizePodWebsocketUpgradeCreatePermission: a streaming GET also needs create.
      if (upgrade && info.verb === 'get' && info.resource === 'pods' && ['exec', 'attach', 'portforward'].includes(info.subresource)) {
        await checkAuthorized(this.authorizer, { user, ...info, verb: 'create' });
      }
      // The slot is held until the handler is done, even when its client got a 504 before that.
      const slot = release;
      release = undefined;
      const work = (info.isResourceRequest ? this.handleResource(req, res, url, info, user, upgrade) : this.handleNonResource(req, res, url, info)).finally(slot);
      if (upgrade || isLongRunning(info)) await work;
      else await withDeadline(work, requestDeadlineMs(url.searchParams, this.limits.requestTimeoutMs), this.clock, (err) => this.lateError(req, err));
    } catch (err) {
      this.guarded(req, () => {
        const status = toStatusError(err, (e) => this.opts.logger.error({ err: e, url: req.url, method: req.method }, 'request failed'));
        if (!res.headersSent) writeError(res, status);
        else if (!res.writableEnded) res.destroy();
      });
      if (!res.writableEnded) this.guarded(req, () => res.destroy());
    } finally {
      this.guarded(req, () => release?.());
      this.guarded(req, () => this.metrics.observe(info, res.statusCode, performance.now() - started));
    }
  }

  /**
   * The request path's bookkeeping (the error answer, the in-flight slot, metrics): handle() is not
   * awaited by anyone, so anything thrown here would end the process. It is logged instead.
   */
  private guarded(req: IncomingMessage, step: () => void): void {
    try {
      step();
    } catch (err) {
      try {
        this.opts.logger.error({ err, url: req.url, method: req.method }, 'request bookkeeping failed');
      } catch {
        // A logger that throws has nowhere left to report to.
      }
    }
  }

  /** A handler that failed after its request had timed out: its client has its 504 already. */
  private lateError(req: IncomingMessage, err: unknown): void {
    if (!(err instanceof StatusError)) this.opts.logger.error({ err, url: req.url, method: req.method }, 'request failed after its timeout');
  }

  private async handleNonResource(req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo): Promise<void> {
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
        return writeText(res, 200, await this.metrics.render(), this.metrics.contentType);
      case '/api':
      case '/apis': {
        const aggregated = wantsAggregatedDiscovery(accept);
        if (aggregated) {
          const body = `${JSON.stringify(aggregatedDiscovery(path === '/api', aggregated))}\n`;
          res.writeHead(200, { 'Content-Type': aggregatedContentType(aggregated), 'Content-Length': String(Buffer.byteLength(body)) });
          res.end(body);
          return;
        }
        return writeObject(res, 200, path === '/api' ? apiVersions(this.address) : apiGroupList());
      }
      case '/openapi/v2':
        return serveOpenAPIV2(req, res);
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
      const doc = apiGroupDoc(group);
      if (!doc) throw notFoundPath();
      return writeObject(res, 200, doc);
    }
    if (info.apiVersion && info.parts.length === 0) {
      const doc = apiResourceList(info.apiGroup, info.apiVersion);
      if (!doc) throw notFoundPath();
      return writeObject(res, 200, doc);
    }
    throw notFoundPath();
  }

  private health(res: ServerResponse, path: string, url: URL): void {
    const checks: [string, boolean][] = [
      ['ping', true],
      ['log', true],
      ['etcd', this.ready],
      ...(path === '/readyz' ? ([['informer-sync', this.ready]] as [string, boolean][]) : []),
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

  private async handleResource(req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, user: ResourceRequest['user'], upgrade?: UpgradeRequest): Promise<void> {
    if (info.apiGroup === METRICS_GROUP && this.metricsApi) {
      const output = tableOptions(negotiateOutput(req.headers.accept, true), url.searchParams);
      const body = this.metricsApi.serve(info, url.searchParams);
      return writeObject(res, 200, output.includeObject ? metricsTable(body, output.includeObject) : body, output.yaml);
    }
    const registry = this.registries.get(info.apiGroup, info.apiVersion, info.resource);
    if (!registry) throw notFoundPath();
    const resource = registry.info;
    // Cluster-scoped resources take no namespace (a namespace object names itself as its namespace).
    if (!resource.namespaced && info.namespace && resource.resource !== 'namespaces') throw notFoundPath();
    const output = tableOptions(negotiateOutput(req.headers.accept, true), url.searchParams);
    const scoped = resource.namespaced ? info : { ...info, namespace: '' };
    const r: ResourceRequest = { req, res, url, info: scoped, user, resource, registry, registries: this.registries, output, clock: this.clock };
    if (info.subresource) return handleSubresource(r, this.kubeletClient, upgrade);
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
}

function splitHostPort(listen: string): [string, string] {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(listen);
  if (!m) throw new Error(`--listen must be HOST:PORT, got "${listen}"`);
  return [m[1]!, m[2]!];
}

