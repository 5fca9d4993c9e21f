// The API server's process assembly (upstream's Config): storage, registries, authentication,
// authorization, admission, the listeners and the components beside it; each request goes through
// the filter chain (chain.ts) into the router (router.ts). Side effects happen in start(); stop() undoes them.
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
import { ensurePki, ensureServiceAccountKey, issueClientCertificate, servingTlsOptions, type Pki } from './authn/pki.js';
import { ServiceAccountAuthenticator } from './authn/serviceaccount.js';
import { TokenSigner, defaultServiceAccountIssuer, expirationExtensionSeconds, openIDConfiguration } from './authn/satoken.js';
import type { TokenIssuer } from './handlers/tokenrequest.js';
import type { Worker } from 'node:worker_threads';
import type { RestConfig } from '../client/rest.js';
import { startThread, stopThread, threadMetrics } from '../util/component-thread.js';
import { closeServer } from '../util/http-server.js';
import { EventSweeper } from './eventttl.js';
import { KubeletClient } from './kubeletclient/client.js';
import { scrapeResourceMetrics } from './aggregated/metrics/kubelet.js';
import { MetricsApi, metricsGroupVersion } from './aggregated/metrics/api.js';
import { X509Authenticator } from './authn/x509.js';
import { ConsoleHandler, defaultConsoleDir, isConsolePath } from './console/handler.js';
import { ConsoleSessions } from './console/sessions.js';
import { TokenFileAuthenticator } from './authn/tokenfile.js';
import { AnonymousAuthenticator } from './authn/anonymous.js';
import { BootstrapTokenAuthenticator } from './authn/bootstraptoken.js';
import { clusterInfoPath } from './authz/bootstrap.js';
import type { UserInfo } from './authn/user.js';
import { RequestAuthenticator, UnionAuthenticator } from './authn/union.js';
import type { Authenticator } from './authn/authenticator.js';
import { UnionAuthorizer, type Authorizer } from './authz/authorizer.js';
import { PrivilegedGroupsAuthorizer, publicInfoPaths } from './authz/builtin.js';
import { RbacAuthorizer } from './authz/rbac/authorizer.js';
import { NodeAuthorizer } from './authz/node/authorizer.js';
import { clusterRoles } from './authz/rbac/bootstrappolicy/policy.js';
import { ensureRbacPolicy } from './authz/rbac/bootstrappolicy/reconcile.js';
import type { EscalationDeps } from './authz/rbac/escalation.js';
import { newAdmitter, type AdmissionPluginFlags } from './admission/plugins.js';
import { reviewGroupVersions } from './reviews/api.js';
import { TimelineStore } from './timeline/store.js';
import type { TimelineSink } from './timeline/sink.js';
import { existingPodsIn, LocalPodTimelines, podFactsIn, type PodTimelines } from './timeline/service.js';
import { ProcessPodTimelines, startTimelineProcess, type TimelineProcess } from './timeline/process.js';
import { OtlpTimelineSink } from './timeline/otel/exporter.js';
import { timelineGroupVersion } from './timeline/api.js';
import { PodStepQueue } from './timeline/trace.js';
import { PodIndex } from './timeline/podindex.js';
import { audienceAgnostic } from './reviews/authentication.js';
import { writeKubeconfig } from '../client/kubeconfig-write.js';
import { Registries } from './registry/registries.js';
import { loadEncryptionConfiguration } from './encryptionconfig/config.js';
import type { PortRange } from './registry/service/portallocator.js';
import { ServiceAllocationRepair } from './registry/service/repair.js';
import { Periodic } from '../util/periodic.js';
import { parseRequestInfo, splitRequestTarget, type RequestInfo } from './http/requestinfo.js';
import { toStatusError, writeError } from './http/respond.js';
import { StatusError } from '../api/errors.js';
import { ApiMetrics } from './metrics.js';
import { defaultRequestLimits, InflightLimiter, readHeaderTimeoutMs, type RequestLimits } from './http/filters.js';
import { buildHandlerChain, defaultFilters, ignoreAnnotation, type Handler } from './chain.js';
import { loadPolicy } from './audit/policy.js';
import { LogBackend, type AuditBackend, type LogBackendOptions } from './audit/log.js';
import { Router, storageGroupVersions } from './router.js';
import { APISERVER_KUBELET_CLIENT, bootstrapObjects, ensureClusterServices, ensureJoinToken, kubernetesServiceIP } from './bootstrap.js';
import { isIP } from 'node:net';
import { LeaseEndpointReconciler } from './endpointreconciler.js';
import type { ControllerManagerConfig } from '../controllers/manager.js';
import { responseForUpgrade, type UpgradeRequest } from '../streaming/upgrade.js';
import type { Service } from '../util/lifecycle.js';

export interface ApiServerOptions {
  dataDir: string;
  /** The CA, serving and admin certificates (default DATA/pki): shared by the servers of one etcd cluster. */
  pkiDir?: string;
  /** host:port to listen on; port 0 picks a free one. */
  listen: string;
  /**
   * --advertise-address: the address pods reach this server at. It also listens there (on the
   * same port), and the `kubernetes` Service's endpoints name it. Default: the listen host, unless
   * that is a loopback or unspecified address (Endpoints refuse those; then nothing is published).
   */
  advertiseAddress?: string;
  /** 'sqlite' or 'etcd://HOST:PORT[,...]'. */
  storage: string;
  /** A static token file (upstream's --token-auth-file format). */
  tokenAuthFile?: string;
  /** The web console's build (/ui/); default dist/console. */
  consoleDir?: string;
  /** What runs beside the API server (default: all). */
  components?: readonly Component[];
  /** kube-controller-manager's --controllers for the controllers thread. */
  controllers?: readonly string[];
  /**
   * The service accounts (kube-system/<identity>) the controllers run as, as kube-controller-manager's
   * --use-service-account-credentials: each gets its own loopback token, so each controller is its
   * own user. Unset: they share the controller manager's identity.
   */
  controllerIdentities?: readonly string[];
  /** kube-controller-manager's --terminated-pod-gc-threshold for the pod garbage collector. */
  terminatedPodGCThreshold?: number;
  /** kube-controller-manager's --max-endpoints-per-slice for the EndpointSlice controller. */
  maxEndpointsPerSlice?: number;
  /** kube-controller-manager's --horizontal-pod-autoscaler-sync-period (ms). */
  horizontalPodAutoscalerSyncPeriodMs?: number;
  /** kube-controller-manager's --resource-quota-sync-period (ms). */
  resourceQuotaSyncPeriodMs?: number;
  /** kube-controller-manager's node lifecycle flags (--node-monitor-grace-period, --node-eviction-rate, ...). */
  nodeLifecycle?: ControllerManagerConfig['nodeLifecycle'];
  /** --request-timeout and the in-flight bounds (defaults: upstream's). */
  limits?: RequestLimits;
  /** --enable-admission-plugins / --disable-admission-plugins (default: upstream's default-on set). */
  admission?: AdmissionPluginFlags;
  /** How often kubelets are scraped for metrics.k8s.io (metrics-server's --metric-resolution; default 15 s). */
  metricResolutionMs?: number;
  /** --service-cluster-ip-range: the default ServiceCIDR's CIDRs, made at first start (default 10.96.0.0/12). */
  serviceClusterIPRange?: string;
  /** --service-node-port-range (default 30000-32767). */
  serviceNodePortRange?: PortRange;
  /** --service-account-issuer (default https://kubernetes.default.svc.cluster.local). */
  serviceAccountIssuer?: string;
  /** --api-audiences: what tokens must name to reach this server (default: the issuer). */
  apiAudiences?: readonly string[];
  /** --service-account-max-token-expiration in seconds (default: no cap). */
  serviceAccountMaxTokenExpirationSeconds?: number;
  /**
   * --audit-policy-file and the log backend's --audit-log-* flags: requests are audited when both the
   * policy and a log path are given (upstream records nothing without either).
   */
  audit?: { policyFile?: string; log?: Omit<LogBackendOptions, 'clock' | 'logger'> };
  /** --encryption-provider-config: an EncryptionConfiguration file (resources stored encrypted). */
  encryptionProviderConfig?: string;
  /** --pod-timeline (default on), --pod-timeline-retention, --pod-timeline-max-pods. */
  podTimeline?: { enabled?: boolean; retentionMs?: number; maxPods?: number };
  /** --otlp-endpoint: the OTLP/HTTP traces endpoint the pod timelines are exported to (unset: none). */
  otlpEndpoint?: string;
  clock?: Clock;
  logger: Logger;
}


export type Component = 'controllers' | 'scheduler';
export const allComponents: readonly Component[] = ['controllers', 'scheduler'];

export class ApiServer implements Service {
  readonly name = 'kube-apiserver';
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
  private console!: ConsoleHandler;
  private authorizer!: Authorizer;
  /** RBAC's rule resolver and the whole authorizer, for the escalation checks of RBAC writes. */
  private escalation?: EscalationDeps;
  /** The components beside the API server, one thread each. */
  private readonly threads: Worker[] = [];
  private eventSweeper?: EventSweeper;
  private allocationRepair?: ServiceAllocationRepair;
  /** default/kubernetes and kube-system/kube-dns, made again when deleted. */
  private clusterServices?: Periodic;
  /** Reaches kubelets for pods/log (as kubeadm's apiserver-kubelet-client). */
  private kubeletClient?: KubeletClient;
  /** metrics.k8s.io, served in process where upstream aggregates metrics-server. */
  private metricsApi?: MetricsApi;
  private readonly metrics = new ApiMetrics();
  /** Upgraded connections (exec, attach, port-forward): the HTTP server no longer tracks them. */
  private readonly upgraded = new Set<Duplex>();
  private readonly clock: Clock;
  private readonly limits: RequestLimits;
  /** The request path: the filters, then the router. */
  private chain!: Handler;
  private ready = false;
  private address = '';
  /** The advertise address, once known (the OIDC key set is published there). */
  private advertise?: string;
  /** The listener on the advertise address when it is not the listen address. */
  private advertised?: Server;
  private advertiseAbort = new AbortController();
  private endpointReconciler?: LeaseEndpointReconciler;
  private auditBackend?: AuditBackend;
  /** The pod timelines (timeline.kite.dev), kept in DATA/timeline.db. */
  private timelines?: PodTimelines;
  /** Their process, when they run in one. */
  private timelineProcess?: TimelineProcess;
  /** The API server's own pod steps on their way into the timeline (absent when it is off). */
  private podSteps?: PodStepQueue;
  private readonly timelinePods = new PodIndex();
  private stopTimelinePods?: () => void;
  private otlpSink?: OtlpTimelineSink;

  constructor(private readonly opts: ApiServerOptions) {
    this.clock = opts.clock ?? realClock;
    this.limits = opts.limits ?? defaultRequestLimits;
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
    const advertise = advertiseAddress(host, this.opts.advertiseAddress);
    this.advertise = advertise;
    // The names in-cluster clients use: the advertise address, the Service's IP and DNS names.
    const serviceSans = [kubernetesServiceIP({ serviceClusterIPRange: this.opts.serviceClusterIPRange }), 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
    this.pki = await ensurePki(this.opts.pkiDir ?? join(dataDir, 'pki'), { extraSans: [host, ...(advertise ? [advertise] : []), ...serviceSans], clock: this.clock });
    // Read before the store opens: a bad file stops the start with its one line.
    const auditPolicy = this.opts.audit?.policyFile ? await loadPolicy(this.opts.audit.policyFile) : undefined;
    const transformerFor = this.opts.encryptionProviderConfig ? await loadEncryptionConfiguration(this.opts.encryptionProviderConfig) : undefined;
    this.store = await openStore(this.opts.storage, dataDir);
    this.registries = new Registries({
      store: this.store,
      clock: this.clock,
      admitter: newAdmitter(() => this.registries, this.clock, (attrs) => this.authorizer.authorize(attrs), this.opts.admission),
      synchronousWatch: this.store.synchronousWatch,
      nodePortRange: this.opts.serviceNodePortRange,
      escalation: () => this.escalation,
      transformerFor,
    });
    await this.registries.start();
    this.compactor = new Compactor(this.store, this.clock, { onError: (err) => logger.warn({ err }, 'compaction failed') });
    this.compactor.start();
    this.eventSweeper = new EventSweeper(this.registries, this.clock, logger);
    this.eventSweeper.start();
    this.timelines = await this.startTimelines(join(dataDir, 'timeline.db'), logger);
    if (this.timelines.enabled) {
      this.podSteps = new PodStepQueue(this.timelines, this.clock);
      const steps = this.podSteps;
      this.stopTimelinePods = await this.timelinePods.watch(this.registries, logger, (pod) => steps.deleted(pod, this.clock.now()));
    }

    const issuer = await this.tokenIssuer();
    const tokens: Authenticator[] = [];
    if (this.opts.tokenAuthFile) {
      tokens.push(await TokenFileAuthenticator.load(this.opts.tokenAuthFile));
    }
    const getSecret = (name: string) => this.registries.lookup('secrets', 'kube-system', name);
    tokens.push(new BootstrapTokenAuthenticator({ getSecret, clock: this.clock }));
    tokens.push(
      new ServiceAccountAuthenticator({
        signer: issuer.signer,
        issuers: [issuer.issuer],
        apiAudiences: issuer.apiAudiences,
        get: (resource, namespace, name) => this.registries.lookup(resource, namespace, name),
        clock: this.clock,
      }),
    );
    // The web console's sessions name their users like any credential (never to TokenReview: not in tokens).
    const consoleSessions = new ConsoleSessions(this.clock);
    this.authenticator = new RequestAuthenticator([new X509Authenticator(this.pki.ca.certPem), consoleSessions, ...tokens], new AnonymousAuthenticator([...publicInfoPaths, clusterInfoPath]));
    // kube-apiserver's --authorization-mode=Node,RBAC, after the privileged group.
    const reg = this.registries;
    const rbacKinds = [
      'roles.rbac.authorization.k8s.io',
      'rolebindings.rbac.authorization.k8s.io',
      'clusterroles.rbac.authorization.k8s.io',
      'clusterrolebindings.rbac.authorization.k8s.io',
    ] as const;
    const rbac = new RbacAuthorizer({
      version: () => rbacKinds.reduce((sum, r) => sum + reg.cacheChanges(r), 0),
      roles: () => reg.cachedList('roles.rbac.authorization.k8s.io'),
      roleBindings: () => reg.cachedList('rolebindings.rbac.authorization.k8s.io'),
      clusterRoles: () => reg.cachedList('clusterroles.rbac.authorization.k8s.io'),
      clusterRoleBindings: () => reg.cachedList('clusterrolebindings.rbac.authorization.k8s.io'),
    });
    const nodeRules = clusterRoles.find((r) => r.metadata?.name === 'system:node')!.rules!;
    const node = new NodeAuthorizer({ version: () => reg.cacheChanges('pods'), pods: () => reg.cachedList('pods') }, nodeRules);
    this.authorizer = new UnionAuthorizer([new PrivilegedGroupsAuthorizer(), node, rbac]);
    this.escalation = { authorizer: this.authorizer, rbac };

    // No privileged group: kubelets ask this server (SubjectAccessReview), and the binding made at bootstrap grants it.
    const kubeletIdentity = await issueClientCertificate(this.pki, { commonName: APISERVER_KUBELET_CLIENT });
    this.kubeletClient = new KubeletClient({ caPem: this.pki.ca.certPem, client: kubeletIdentity });
    this.metricsApi = new MetricsApi({
      listNodes: () => this.registries.cachedList('nodes'),
      listPods: () => this.registries.cachedList('pods'),
      scrape: scrapeResourceMetrics(this.kubeletClient),
      clock: this.clock,
      logger,
      resolutionMs: this.opts.metricResolutionMs,
    });

    const router = new Router({
      metrics: this.metrics,
      address: () => this.address,
      ready: () => this.ready,
      issuerDiscovery: () => ({ configuration: openIDConfiguration(issuer.issuer, this.advertisedAddress()), jwks: { keys: [issuer.signer.jwk()] } }),
    });
    for (const gv of storageGroupVersions({ registries: this.registries, clock: this.clock, kubelet: this.kubeletClient, tokens: issuer })) router.register(gv);
    router.register(metricsGroupVersion(this.metricsApi));
    router.register(timelineGroupVersion({ timelines: this.timelines, clock: this.clock }));
    // TokenReview asks the bearer-token authenticators (a client certificate is no token).
    const tokenAuthenticator = audienceAgnostic(new UnionAuthenticator(tokens), issuer.apiAudiences);
    for (const gv of reviewGroupVersions({ authorizer: this.authorizer, ruleResolver: this.escalation.rbac, tokenAuthenticator, apiAudiences: issuer.apiAudiences, clock: this.clock })) router.register(gv);
    this.console = new ConsoleHandler({ sessions: consoleSessions, tokens: tokenAuthenticator, caPem: this.pki.ca.certPem, clock: this.clock, root: this.opts.consoleDir ?? defaultConsoleDir() });
    if (auditPolicy && this.opts.audit?.log) this.auditBackend = new LogBackend({ ...this.opts.audit.log, clock: this.clock, logger });
    else if (auditPolicy || this.opts.audit?.log) logger.info('audit needs both --audit-policy-file and --audit-log-path: no events will be recorded');
    const audit = this.auditBackend && auditPolicy && { policy: auditPolicy, backend: this.auditBackend, clock: this.clock };
    this.chain = buildHandlerChain(
      defaultFilters({ authorizer: this.authorizer, limits: this.limits, inflight: new InflightLimiter(this.limits), clock: this.clock, onLateError: (req, err) => this.lateError(req, err), audit, podSteps: this.podSteps }),
      router.handle,
    );

    // Against slowloris: the headers get the read-header bound, the whole request (headers and body;
    // responses such as watches are not counted) the request timeout; Node checks these every
    // connectionsCheckingInterval. A TLS handshake gets upstream's 32 s whatever the request timeout:
    // under a flood of new connections an honest one can take seconds.
    const headerTimeout = readHeaderTimeoutMs(this.limits);
    this.server = this.newServer(headerTimeout);
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(Number(portText), host, () => resolve());
    });
    const addr = this.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : Number(portText);
    this.address = `${host.includes(':') ? `[${host}]` : host}:${port}`;

    await bootstrapObjects(this.registries, { ip: host === 'localhost' ? '127.0.0.1' : host, port }, { serviceClusterIPRange: this.opts.serviceClusterIPRange });
    await ensureRbacPolicy(this.registries);
    this.allocationRepair = new ServiceAllocationRepair({ registries: this.registries, clock: this.clock, logger });
    this.allocationRepair.start();
    this.clusterServices = new Periodic({
      clock: this.clock,
      periodMs: 10_000,
      run: () => ensureClusterServices(this.registries, port, { serviceClusterIPRange: this.opts.serviceClusterIPRange }),
      onError: (err) => logger.warn({ err }, 'ensuring the kubernetes and kube-dns Services failed'),
    });
    this.clusterServices.start();
    if (!advertise) {
      logger.info({ listen: this.opts.listen }, 'no advertise address (--advertise-address): the kubernetes Service gets no endpoints, as Endpoints may not name loopback addresses');
    } else {
      const reconciler = new LeaseEndpointReconciler({ store: this.store, registries: this.registries, clock: this.clock, logger, ip: advertise, port });
      this.endpointReconciler = reconciler;
      if (advertise === host) reconciler.start();
      // Published once this server is reachable there (the bridge may come after the server).
      else void this.listenAdvertised(advertise, port, headerTimeout).then((bound) => bound && reconciler.start());
    }
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
      // Components record pod timeline steps only when the server keeps them.
      const options = c === 'controllers' ? this.controllerOptions() : { podTimeline: this.opts.podTimeline?.enabled !== false };
      const worker = startThread(entry, this.componentConfig(identity), (err) => logger.error({ err, component: c }, 'component thread failed'), options);
      this.threads.push(worker);
      if (c === 'scheduler') this.metrics.addSource(() => threadMetrics(worker));
    }
    this.metricsApi.start();
    this.ready = true;
    logger.info({ url: this.url, storage: this.opts.storage, kubeconfig: this.kubeconfigPath }, 'API server ready');
  }

  /**
   * The service-account token settings: the key made beside the CA on first start, the issuer, and
   * the API audiences (kube-apiserver's default: the issuer).
   */
  private async tokenIssuer(): Promise<TokenIssuer> {
    const issuer = this.opts.serviceAccountIssuer ?? defaultServiceAccountIssuer;
    return {
      signer: new TokenSigner(await ensureServiceAccountKey(this.pki.dir)),
      issuer,
      apiAudiences: this.opts.apiAudiences?.length ? [...this.opts.apiAudiences] : [issuer],
      maxExpirationSeconds: this.opts.serviceAccountMaxTokenExpirationSeconds ?? 0,
      extendExpiration: true,
      maxExtendedExpirationSeconds: expirationExtensionSeconds,
    };
  }

  /** host:port where clients outside this machine reach the server (the advertise address when there is one). */
  private advertisedAddress(): string {
    if (!this.advertise) return this.address;
    const port = this.address.slice(this.address.lastIndexOf(':') + 1);
    return `${this.advertise.includes(':') ? `[${this.advertise}]` : this.advertise}:${port}`;
  }

  /** The HTTPS listener: the request pipeline, upgrades (exec, attach, port-forward) and the slowloris bounds. */
  private newServer(headerTimeout: number): Server {
    const server = createServer(
      { ...servingTlsOptions(this.pki), handshakeTimeout: 32_000, connectionsCheckingInterval: Math.min(30_000, Math.max(100, headerTimeout / 4)) },
      (req, res) => void this.handle(req, res),
    );
    // Node hands upgrades (exec, attach, port-forward) to this listener instead of the handler.
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
    server.headersTimeout = headerTimeout;
    // The handler's own 504 comes first; this catches bodies that no handler reads (a 401 or 429 answered early).
    server.requestTimeout = this.limits.requestTimeoutMs + headerTimeout;
    server.keepAliveTimeout = 65_000;
    return server;
  }

  /**
   * Listens on the advertise address too, trying again every second while the address does not
   * exist yet (a pod bridge made after the server); resolves whether it is bound (false: stopped).
   */
  private async listenAdvertised(ip: string, port: number, headerTimeout: number): Promise<boolean> {
    const signal = this.advertiseAbort.signal;
    for (let logged = false; !signal.aborted; ) {
      const server = this.newServer(headerTimeout);
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, ip, () => resolve());
        });
        this.advertised = server;
        this.opts.logger.info({ address: `${ip}:${port}` }, 'listening on the advertise address');
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'EADDRNOTAVAIL') throw err;
        if (!logged) this.opts.logger.info({ address: ip }, 'advertise address not on this machine yet; trying every second');
        logged = true;
        await this.clock.sleep(1000, signal).catch(() => undefined);
      }
    }
    return false;
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
    const token = this.loopbackToken({ name: `system:${name}`, groups: [] });
    return { server: 'http://localhost', socketPath: this.loopbackSocket, token, userAgent: `kite-${name}/v1.33.0` };
  }

  /** A token of the loopback listener for user; it never leaves the process. */
  private loopbackToken(user: UserInfo): string {
    const token = randomBytes(32).toString('base64url');
    this.loopbackTokens.set(token, user);
    return token;
  }

  /** The cluster CA signs approved CSRs, as kube-controller-manager's --cluster-signing-{cert,key}-file. */
  private controllerOptions(): ControllerManagerConfig {
    const serviceAccountTokens = Object.fromEntries(
      (this.opts.controllerIdentities ?? []).map((id) => [id, this.loopbackToken({ name: `system:serviceaccount:kube-system:${id}`, groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system'] })]),
    );
    return {
      clusterSigningCertFile: join(this.pki.dir, 'ca.crt'),
      clusterSigningKeyFile: join(this.pki.dir, 'ca.key'),
      rootCAFile: join(this.pki.dir, 'ca.crt'),
      serviceAccountPrivateKeyFile: join(this.pki.dir, 'sa.key'),
      controllers: this.opts.controllers,
      serviceAccountTokens,
      terminatedPodGCThreshold: this.opts.terminatedPodGCThreshold,
      horizontalPodAutoscalerSyncPeriodMs: this.opts.horizontalPodAutoscalerSyncPeriodMs,
      resourceQuotaSyncPeriodMs: this.opts.resourceQuotaSyncPeriodMs,
      maxEndpointsPerSlice: this.opts.maxEndpointsPerSlice,
      nodeLifecycle: this.opts.nodeLifecycle,
      podTimeline: this.opts.podTimeline?.enabled !== false,
    };
  }

  async stop(): Promise<void> {
    this.ready = false;
    await Promise.all(this.threads.splice(0).map((t) => stopThread(t)));
    this.eventSweeper?.stop();
    await this.allocationRepair?.stop();
    await this.clusterServices?.stop();
    await this.metricsApi?.stop();
    this.kubeletClient?.close();
    await this.compactor?.stop();
    this.registries?.stop();
    this.advertiseAbort.abort();
    await this.endpointReconciler?.stop().catch((err: unknown) => this.opts.logger.warn({ err }, 'removing this server from the kubernetes Service endpoints failed'));
    if (this.advertised) await closeServer(this.advertised);
    if (this.loopback) await closeServer(this.loopback);
    if (this.server) {
      for (const socket of this.upgraded) socket.destroy();
      await closeServer(this.server);
    }
    this.stopTimelinePods?.();
    this.podSteps?.flush();
    await this.store?.close();
    await this.timelines?.stop();
    await this.timelineProcess?.end();
    await this.otlpSink?.stop();
    this.auditBackend?.close();
  }

  /**
   * The pod timelines: in their own process at the idle CPU policy when kite runs from its build on
   * the real clock (process.ts); in the event loop when run from the TypeScript sources (unit tests,
   * which would pay a child's start-up per server), on an injected clock, or when off.
   */
  private async startTimelines(file: string, logger: Logger): Promise<PodTimelines> {
    // What else hears of recorded steps (the OTLP exporter): pushed here.
    const sinks: TimelineSink[] = [];
    if (this.opts.otlpEndpoint) sinks.push((this.otlpSink = new OtlpTimelineSink({ endpoint: this.opts.otlpEndpoint, logger })));
    const options = this.opts.podTimeline ?? {};
    const pods = this.timelinePods;
    if (options.enabled !== false && this.clock === realClock && !import.meta.url.endsWith('.ts')) {
      const child = (this.timelineProcess = startTimelineProcess({ ...options, file, sinks: sinks.length > 0 }, (err) => {
        logger.error({ err }, 'the pod timeline process failed');
        timelines.fail(err);
      }));
      const timelines = new ProcessPodTimelines(child.port, { enabled: true, pods, sinks, logger, busy: child.busy });
      return timelines;
    }
    const store = new TimelineStore({ ...options, file, sinks, podsExisting: async (uids) => existingPodsIn(pods, uids), clock: this.clock, logger });
    const timelines = new LocalPodTimelines(store, async (uids) => podFactsIn(pods, uids));
    await timelines.start();
    return timelines;
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
    try {
      const target = splitRequestTarget(req.url ?? '/');
      // Only the query is read from url; the path is info.path, as sent (a URL would resolve dot segments).
      const url = new URL('https://kite/');
      url.search = target.query.toString();
      // The console's files and login are before authentication (they hold no data); not on the loopback listener.
      if (!upgrade && authenticator === this.authenticator && isConsolePath(target.path)) return await this.console.handle(req, res, target.path);
      info = parseRequestInfo(req.method ?? 'GET', target.path, target.query);
      await this.chain({ req, res, url, info, upgrade, authenticator, loopback: authenticator !== this.authenticator, annotate: ignoreAnnotation });
    } catch (err) {
      this.guarded(req, () => {
        const status = toStatusError(err, (e) => this.opts.logger.error({ err: e, url: req.url, method: req.method }, 'request failed'));
        if (!res.headersSent) writeError(res, status);
        else if (!res.writableEnded) res.destroy();
      });
      if (!res.writableEnded) this.guarded(req, () => res.destroy());
    } finally {
      this.guarded(req, () => this.metrics.observe(info, res.statusCode, performance.now() - started));
    }
  }

  /**
   * The request path's bookkeeping (the error answer, metrics): handle() is not awaited by anyone,
   * so anything thrown here would end the process. It is logged instead.
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
}

/** The advertise address: the flag's, else the listen host unless that is loopback, unspecified or a name. */
function advertiseAddress(host: string, flag: string | undefined): string | undefined {
  if (flag !== undefined) return flag;
  if (!isIP(host) || host.startsWith('127.') || host === '::1' || host === '0.0.0.0' || host === '::') return undefined;
  return host;
}

function splitHostPort(listen: string): [string, string] {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(listen);
  if (!m) throw new Error(`--listen must be HOST:PORT, got "${listen}"`);
  return [m[1]!, m[2]!];
}

