// The kubelet's HTTPS API (upstream's pkg/kubelet/server): /healthz, /pods,
// /containerLogs/{namespace}/{pod}/{container}, /metrics and /metrics/resource, on the node's address with a serving certificate
// from the cluster CA. Every request needs a client certificate from that CA (anonymous auth off:
// 401), and the API server must allow it through a SubjectAccessReview (auth.ts; refused: 403 with
// upstream's message). exec, attach and portForward relay upgrades to the runtime's streaming
// server (streaming.ts); run and stats have their place here and answer 501 until they are implemented.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pod, PodStatus } from 'kubernetes-types/core/v1.js';
import type { CertKeyPair } from '../../apiserver/authn/pki.js';
import { X509Authenticator } from '../../apiserver/authn/x509.js';
import { UnionAuthenticator } from '../../apiserver/authn/union.js';
import type { UserInfo } from '../../apiserver/authn/user.js';
import { podLogOptionsFromQuery, validatePodLogOptions } from '../../api/validation/podlogoptions.js';
import type { Clock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';
import type { KubeletConfig } from '../config.js';
import type { RuntimeService } from '../runtime/types.js';
import { isNotFound } from '../runtime/types.js';
import { logOptionsFrom, readLogs } from '../logs/read.js';
import { ContainerLogError, hasContainer, validateContainerLogStatus } from './containerlogs.js';
import { runtimeStreamUrl, StreamingError, type StreamingHost, type StreamingRoute } from './streaming.js';
import { proxyUpgrade, writeUpgradeFailure } from '../../streaming/proxy.js';
import { isWebSocketRequest, responseForUpgrade, takeOverUpgrade, type UpgradeRequest } from '../../streaming/upgrade.js';
import type { StatsProvider } from '../stats/types.js';
import { renderResourceMetrics } from '../stats/resource-metrics.js';
import { TEXT_CONTENT_TYPE } from '../stats/prometheus.js';
import { closeServer } from '../../util/http-server.js';
import { forbiddenMessage, subresourceOf, verbOf, type DelegatingKubeletAuthorizer } from './auth.js';

/** What the server needs from the kubelet it belongs to. */
export interface KubeletHost {
  /** The pods this kubelet runs (bound to its node), by namespace and name. */
  getPodByName(namespace: string, name: string): Pod | undefined;
  getPods(): Pod[];
  /** The pod's status as the kubelet last computed it (its status manager); undefined falls back to pod.status. */
  getPodStatus?(pod: Pod): PodStatus | undefined;
  /** For a container's log path and whether it still runs; streaming URLs for exec, attach and port-forward (without them: 501). */
  runtime: Pick<RuntimeService, 'containerStatus'> & Partial<StreamingHost['runtime']>;
}

export interface KubeletServerOptions {
  config: Pick<KubeletConfig, 'nodeIP' | 'port' | 'nodeName'>;
  /** Asks the API server whether a client may make a request (SubjectAccessReview). */
  authorizer: Pick<DelegatingKubeletAuthorizer, 'authorize'>;
  /** The kubelet's serving certificate, signed by the cluster CA and valid for nodeIP. */
  serving: CertKeyPair;
  /** The cluster CA: client certificates must chain to it. */
  caPem: string;
  host: KubeletHost;
  /** Feeds /metrics/resource; without one that path is 404. */
  stats?: StatsProvider;
  /** The kubelet's own metrics on /metrics; without them that path is 404. */
  metrics?: { contentType: string; render(): Promise<string> };
  clock: Clock;
  logger: Logger;
}

const streamingRoutes = new Set(['exec', 'attach', 'portForward', 'run']);

class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** upgrade: the connection of an upgrade request, which only the streaming routes take over. */
type Route = (req: IncomingMessage, res: ServerResponse, url: URL, parts: string[], upgrade?: UpgradeRequest) => Promise<void>;

export class KubeletServer {
  private server?: Server;
  private boundPort = 0;
  private readonly authenticator: UnionAuthenticator;
  private readonly streams = new Set<AbortController>();
  /** Upgraded connections (exec, attach, port-forward): the HTTP server no longer tracks them. */
  private readonly upgraded = new Set<Duplex>();
  private readonly routes: Record<string, Route>;

  constructor(private readonly opts: KubeletServerOptions) {
    // As upstream's delegating authenticator: a certificate's user is also system:authenticated.
    this.authenticator = new UnionAuthenticator([new X509Authenticator(opts.caPem)]);
    const notImplemented: Route = async (_req, _res, url) => {
      throw new HttpError(501, `${url.pathname.split('/')[1]} is not implemented by this kubelet yet`);
    };
    this.routes = {
      healthz: async (_req, res) => writePlain(res, 200, 'ok'),
      pods: async (_req, res) => this.pods(res),
      containerLogs: (req, res, url, parts) => this.containerLogs(req, res, url, parts),
      metrics: (_req, res, _url, parts) => this.metrics(res, parts),
      exec: (req, res, url, parts, upgrade) => this.stream('exec', req, res, url, parts, upgrade),
      attach: (req, res, url, parts, upgrade) => this.stream('attach', req, res, url, parts, upgrade),
      portForward: (req, res, url, parts, upgrade) => this.stream('portForward', req, res, url, parts, upgrade),
      run: notImplemented,
      stats: notImplemented,
    };
  }

  /** The port the server listens on (the node reports it as daemonEndpoints.kubeletEndpoint). */
  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const { serving, caPem, config } = this.opts;
    // The TLS layer asks for a certificate; authentication decides (401 rather than a failed handshake).
    const server = createServer({ key: serving.keyPem, cert: serving.certPem, ca: caPem, requestCert: true, rejectUnauthorized: false }, (req, res) => void this.handle(req, res));
    server.requestTimeout = 0;
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // The same authentication and routes as any request; only the streaming routes take the connection over.
      socket.on('error', () => socket.destroy());
      this.upgraded.add(socket);
      socket.once('close', () => this.upgraded.delete(socket));
      void this.handle(req, responseForUpgrade(req, socket), { socket, head });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.nodeIP, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    this.boundPort = typeof addr === 'object' && addr ? addr.port : config.port;
    this.server = server;
  }

  /** Ends log streams in progress and closes the listener. */
  async stop(): Promise<void> {
    for (const s of this.streams) s.abort();
    for (const socket of this.upgraded) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await closeServer(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse, upgrade?: UpgradeRequest): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
      let user: UserInfo | undefined;
      try {
        user = await this.authenticator.authenticate(req);
      } catch {
        user = undefined;
      }
      if (!user) throw new HttpError(401, 'Unauthorized');
      const attrs = { user, verb: verbOf(req.method), subresource: subresourceOf(parts[0]), name: this.opts.config.nodeName };
      if (!(await this.opts.authorizer.authorize(attrs))) throw new HttpError(403, forbiddenMessage(attrs));
      const route = parts[0] !== undefined ? this.routes[parts[0]] : undefined;
      if (!route || !Object.hasOwn(this.routes, parts[0]!)) throw new HttpError(404, '404 page not found');
      // exec, attach, portForward and run take POST (and upgrades); the rest are reads.
      if (req.method !== 'GET' && req.method !== 'HEAD' && !streamingRoutes.has(parts[0]!)) throw new HttpError(405, 'Method Not Allowed');
      await route(req, res, url, parts, upgrade);
    } catch (err) {
      if (err instanceof HttpError || err instanceof ContainerLogError || err instanceof StreamingError) return writePlain(res, err.code, err.message);
      this.opts.logger.error({ err, url: req.url }, 'kubelet request failed');
      writePlain(res, 500, err instanceof Error ? err.message : String(err));
    }
  }

  /** Relays the upgrade to the runtime's streaming server (upstream's proxyStream). */
  private async stream(route: StreamingRoute, req: IncomingMessage, res: ServerResponse, url: URL, parts: string[], upgrade?: UpgradeRequest): Promise<void> {
    const { host } = this.opts;
    if (!canStream(host)) throw new HttpError(501, `${route} is not implemented by this kubelet yet`);
    const target = await runtimeStreamUrl(host, route, parts, url.searchParams, isWebSocketRequest(req));
    if (!upgrade) throw new HttpError(400, 'Upgrade request required');
    takeOverUpgrade(res, upgrade.socket);
    proxyUpgrade(req, upgrade.socket, upgrade.head, { url: target }).catch((err: unknown) => writeUpgradeFailure(upgrade.socket, err));
  }

  private async pods(res: ServerResponse): Promise<void> {
    const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: this.opts.host.getPods() });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(body);
  }

  /** /metrics and /metrics/resource; the other /metrics paths (cadvisor, probes) are not served. */
  private async metrics(res: ServerResponse, parts: string[]): Promise<void> {
    const own = this.opts.metrics;
    if (parts.length === 1 && own) {
      const text = await own.render();
      res.writeHead(200, { 'Content-Type': own.contentType, 'Content-Length': String(Buffer.byteLength(text)) });
      res.end(text);
      return;
    }
    const stats = this.opts.stats;
    if (parts.length !== 2 || parts[1] !== 'resource' || !stats) throw new HttpError(404, '404 page not found');
    let text: string;
    try {
      text = renderResourceMetrics(await stats.getCPUAndMemoryStats());
    } catch (err) {
      this.opts.logger.warn({ err }, 'Error getting summary for resourceMetric prometheus endpoint');
      text = renderResourceMetrics(err instanceof Error ? err : new Error(String(err)));
    }
    res.writeHead(200, { 'Content-Type': TEXT_CONTENT_TYPE, 'Content-Length': String(Buffer.byteLength(text)) });
    res.end(text);
  }

  private async containerLogs(req: IncomingMessage, res: ServerResponse, url: URL, parts: string[]): Promise<void> {
    const [, namespace, podName, containerName] = parts;
    if (!podName) throw new HttpError(400, '{"message": "Missing podID."}');
    if (!containerName) throw new HttpError(400, '{"message": "Missing container name."}');
    if (!namespace) throw new HttpError(400, '{"message": "Missing podNamespace."}');
    const query = new URLSearchParams(url.searchParams);
    // The old "tail" parameter; "all" is the same as none.
    const tail = query.get('tail');
    if (tail) {
      if (tail === 'all') query.delete('tailLines');
      else query.set('tailLines', tail);
    }
    let podLogOptions;
    try {
      podLogOptions = podLogOptionsFromQuery(query);
    } catch {
      throw new HttpError(400, '{"message": "Unable to decode query."}');
    }
    if (validatePodLogOptions(podLogOptions).length > 0) throw new HttpError(422, '{"message": "Invalid request."}');

    const { host, clock } = this.opts;
    const pod = host.getPodByName(namespace, podName);
    if (!pod) throw new HttpError(404, `pod ${JSON.stringify(podName)} does not exist`);
    if (!hasContainer(pod, containerName)) throw new HttpError(404, `container ${JSON.stringify(containerName)} not found in pod ${JSON.stringify(podName)}`);
    const status = host.getPodStatus?.(pod) ?? pod.status;
    const containerId = validateContainerLogStatus(podName, status, containerName, podLogOptions.previous ?? false);
    let logPath: string;
    try {
      logPath = (await host.runtime.containerStatus(containerId)).log_path;
    } catch (err) {
      throw new HttpError(400, `failed to get container status ${JSON.stringify(containerId)}: ${(err as Error).message}`);
    }

    // From here the answer is 200 and the body streams: like upstream (which writes before reading),
    // a later failure is reported at the end of the body.
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    const abort = new AbortController();
    this.streams.add(abort);
    const onClose = () => abort.abort();
    req.socket.once('close', onClose);
    res.once('close', onClose);
    try {
      await readLogs(logPath, logOptionsFrom(podLogOptions, clock.now()), res, {
        clock,
        signal: abort.signal,
        isRunning: async () => {
          try {
            return (await host.runtime.containerStatus(containerId)).state === 'CONTAINER_RUNNING';
          } catch (err) {
            if (isNotFound(err)) return false;
            throw err;
          }
        },
      });
    } catch (err) {
      if (!res.destroyed) res.write((err as Error).message);
    } finally {
      this.streams.delete(abort);
      req.socket.off('close', onClose);
      if (!res.destroyed) res.end();
    }
  }
}

function canStream(host: KubeletHost): host is KubeletHost & StreamingHost {
  const r = host.runtime;
  return Boolean(r.exec && r.attach && r.portForward && r.listPodSandbox);
}

function writePlain(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent) {
    if (!res.destroyed) res.end();
    return;
  }
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}
