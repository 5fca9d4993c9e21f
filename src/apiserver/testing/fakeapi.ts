// An in-process API server for controller and component tests, in the spirit of client-go's
// testing/fixture.go but with none of its re-implemented semantics: the real registries, admission
// chain and resource handlers over SQLite in memory, reached by the real Client through a
// RoundTripper that hands each request to the handlers instead of a socket. Finalizers, graceful
// deletion, preconditions, resourceVersion conflicts, selectors, watches and PartialObjectMetadata
// are the server's own code. Requests are recorded as actions, and one can be made to fail.
import { PassThrough, Readable } from 'node:stream';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Client } from '../../client/client.js';
import { RestClient, type HttpRequest, type HttpResponse, type RoundTripper } from '../../client/rest.js';
import { notFoundPath, StatusError } from '../../api/errors.js';
import { SqliteStore } from '../../storage/sqlite/sqlite-store.js';
import { realClock, type Clock } from '../../util/clock.js';
import { newAdmitter, type AdmissionPluginFlags } from '../admission/plugins.js';
import type { UserInfo } from '../authn/user.js';
import { bootstrapObjects } from '../bootstrap.js';
import { parseRequestInfo, splitRequestTarget, type RequestInfo } from '../http/requestinfo.js';
import { toStatusError, writeError } from '../http/respond.js';
import { Registries } from '../registry/registries.js';
import { storageGroupVersions, type APIGroupVersion } from '../router.js';
import type { TokenIssuer } from '../handlers/tokenrequest.js';
import { ignoreAnnotation } from '../chain.js';
import type { TimelineStore } from '../timeline/store.js';
import { LocalPodTimelines, podFactsIn } from '../timeline/service.js';
import { timelineGroupVersion } from '../timeline/api.js';
import { PodIndex } from '../timeline/podindex.js';
import { newLogger } from '../../util/log.js';

/** What kubectl's admin.kubeconfig authenticates as. */
export const adminUser: UserInfo = { name: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

/** One request the fake API received (client-go's testing.Action). */
export interface Action {
  verb: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The decoded JSON body, if any. */
  body?: unknown;
  user: string;
}

export interface FakeApiOptions {
  /** The server's clock: deletionTimestamps, watch timeouts, NamespaceLifecycle's cache window. */
  clock?: Clock;
  /**
   * The admission plugin flags. Default: the API server's, less ServiceAccount: no serviceaccount
   * controller makes the `default` service accounts the plugin waits for here.
   */
  admission?: AdmissionPluginFlags;
  /** The service-account token issuer behind serviceaccounts/token (absent: it answers 503). */
  tokens?: TokenIssuer;
  /** Serves timeline.kite.dev from this store (absent: that group is not served). */
  timeline?: TimelineStore;
}

export class FakeApi {
  /** Every resource request, in the order received. */
  readonly actions: Action[] = [];
  private readonly failures: { verb: string; name: string; err: StatusError }[] = [];

  /** The API server's own routes for the stored group versions, by group and version. */
  private readonly groupVersions: Map<string, APIGroupVersion>;
  private readonly stopTimelinePods?: () => void;

  private constructor(
    readonly store: SqliteStore,
    readonly registries: Registries,
    clock: Clock,
    tokens?: TokenIssuer,
    timeline?: { store: TimelineStore; pods: PodIndex; stop: () => void },
  ) {
    const groupVersions = storageGroupVersions({ registries, clock, tokens });
    if (timeline) {
      const { pods } = timeline;
      groupVersions.push(timelineGroupVersion({ timelines: new LocalPodTimelines(timeline.store, async (uids) => podFactsIn(pods, uids)), clock }));
    }
    this.stopTimelinePods = timeline?.stop;
    this.groupVersions = new Map(groupVersions.map((gv) => [`${gv.group}/${gv.version}`, gv]));
  }

  /** A started server with the objects a fresh cluster has (default, kube-system, kube-public, ...). */
  static async start(opts: FakeApiOptions = {}): Promise<FakeApi> {
    const clock = opts.clock ?? realClock;
    const store = new SqliteStore(':memory:');
    // The API server's default admission plugins, as it builds them, but for ServiceAccount (unless
    // opts.admission says otherwise) and TaintNodesByCondition: controller tests create finished nodes
    // with no node lifecycle controller to take its taint off. Authorization allows everything.
    const admission = opts.admission ?? { disable: ['ServiceAccount', 'TaintNodesByCondition'] };
    const admitter = newAdmitter(() => registries, clock, async () => ({ decision: 'allow' }), admission);
    const registries: Registries = new Registries({ store, clock, admitter, synchronousWatch: store.synchronousWatch });
    await registries.start();
    await bootstrapObjects(registries, { ip: '127.0.0.1', port: 6443 });
    let timeline: { store: TimelineStore; pods: PodIndex; stop: () => void } | undefined;
    if (opts.timeline) {
      const pods = new PodIndex();
      timeline = { store: opts.timeline, pods, stop: await pods.watch(registries, newLogger('fakeapi')) };
    }
    return new FakeApi(store, registries, clock, opts.tokens, timeline);
  }

  /** A client that reaches this server as user (default: the cluster admin). */
  client(user: UserInfo = adminUser, userAgent = 'kite-test'): Client {
    return new Client(new RestClient({ server: 'http://fake', userAgent }, new InProcessRoundTripper(this, user)));
  }

  /** The next request with this verb on an object of this name fails with err (before it reaches the registry). */
  failNext(verb: string, name: string, err: StatusError): void {
    this.failures.push({ verb, name, err });
  }

  async stop(): Promise<void> {
    this.stopTimelinePods?.();
    this.registries.stop();
    await this.store.close();
  }

  /** @internal The server side of one request: routing as the API server's, then the real handlers. */
  async serve(req: IncomingMessage, res: ServerResponse, user: UserInfo, body: Buffer): Promise<void> {
    try {
      const target = splitRequestTarget(req.url ?? '/');
      const url = new URL('https://kite/');
      url.search = target.query.toString();
      const info = parseRequestInfo(req.method ?? 'GET', target.path, target.query);
      this.record(info, user, body);
      await this.route(req, res, url, info, user);
    } catch (err) {
      const status = toStatusError(err, () => undefined);
      if (!res.headersSent) writeError(res, status);
      else if (!res.writableEnded) res.destroy();
    }
  }

  private record(info: RequestInfo, user: UserInfo, body: Buffer): void {
    if (!info.isResourceRequest) return;
    const { verb, resource, subresource, namespace, name } = info;
    this.actions.push({ verb, resource, subresource, namespace, name, body: decodedBody(body), user: user.name });
    const i = this.failures.findIndex((f) => f.verb === verb && f.name === name);
    if (i >= 0) throw this.failures.splice(i, 1)[0]!.err;
  }

  // The API server's own routing for stored resources; the kubelet-proxied subresources answer 503.
  private route(req: IncomingMessage, res: ServerResponse, url: URL, info: RequestInfo, user: UserInfo): Promise<void> {
    const gv = info.isResourceRequest ? this.groupVersions.get(`${info.apiGroup}/${info.apiVersion}`) : undefined;
    if (!gv) throw notFoundPath();
    return gv.serve({ req, res, url, info, annotate: ignoreAnnotation }, user);
  }
}

function decodedBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return body.toString('utf8');
  }
}

/** The response side the handlers write to: headers land here, the body flows to the client. */
class InProcessResponse extends PassThrough {
  statusCode = 200;
  headersSent = false;
  private readonly headers: OutgoingHttpHeaders = {};
  readonly head: Promise<void>;
  private sent!: () => void;

  constructor() {
    super();
    this.head = new Promise((resolve) => (this.sent = resolve));
  }

  setHeader(name: string, value: string | string[]): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): OutgoingHttpHeaders[string] {
    return this.headers[name.toLowerCase()];
  }

  writeHead(code: number, headers: OutgoingHttpHeaders = {}): this {
    this.statusCode = code;
    Object.assign(this.headers, headers);
    this.headersSent = true;
    this.sent();
    return this;
  }

  flushHeaders(): void {}
}

class InProcessRoundTripper implements RoundTripper {
  constructor(
    private readonly api: FakeApi,
    private readonly user: UserInfo,
  ) {}

  async roundTrip(r: HttpRequest): Promise<HttpResponse> {
    r.signal?.throwIfAborted();
    const body = r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body);
    const lowered = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const req = Object.assign(new Readable({ read() {} }), { method: r.method, url: r.path, headers: lowered });
    req.push(body);
    req.push(null);
    const res = new InProcessResponse();
    const abort = () => {
      req.destroy();
      res.destroy();
    };
    r.signal?.addEventListener('abort', abort, { once: true });
    res.once('close', () => r.signal?.removeEventListener('abort', abort));
    const served = this.api.serve(req as unknown as IncomingMessage, res as unknown as ServerResponse, this.user, body);
    await Promise.race([res.head, served]);
    return { statusCode: res.statusCode, body: res };
  }

  close(): void {}
}
