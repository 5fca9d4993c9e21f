// The HTTPS transport under the typed client: JSON requests over a keep-alive agent, client
// certificate or bearer token auth, error bodies turned back into StatusError, and streaming
// (watch events as JSON lines, logs as text), all abortable with an AbortSignal.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Readable } from 'node:stream';
import type { Status } from '../api/meta.js';
import { StatusError, type StatusReason } from '../api/errors.js';

export interface RestConfig {
  /** e.g. https://127.0.0.1:6443 (http:// is accepted for tests and the loopback socket). */
  server: string;
  /** A Unix socket to connect to instead of the server's host and port (the API server's loopback socket). */
  socketPath?: string;
  /** PEM. */
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  token?: string;
  insecureSkipTLSVerify?: boolean;
  /** The kubeconfig context's namespace, if any. */
  namespace?: string;
  userAgent?: string;
  /** Upper bound on pooled connections for ordinary requests (default defaultMaxConnections). */
  maxConnections?: number;
}

export type QueryValue = string | number | boolean | undefined | readonly string[];
export type Query = Record<string, QueryValue>;

export interface RequestOptions {
  method?: string;
  /** Absolute API path, e.g. /api/v1/namespaces/default/pods. */
  path: string;
  query?: Query;
  /** Sent as is when a string or Buffer, otherwise as JSON. */
  body?: unknown;
  contentType?: string;
  /** The Accept header (default application/json), e.g. to ask for PartialObjectMetadata. */
  accept?: string;
  signal?: AbortSignal;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One event of a watch stream; ERROR events carry a metav1.Status. */
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

export const patchContentTypes = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = keyof typeof patchContentTypes;

/** A metav1.Status (an error body or a watch ERROR event) as the StatusError the server raised. */
export function errorFromStatus(status: Status, httpCode?: number): StatusError {
  const code = status.code ?? httpCode ?? 500;
  const reason = (status.reason || genericReason(code)) as StatusReason;
  return new StatusError(code, reason, status.message ?? '', status.details as StatusError['details']);
}

// Upstream's NewGenericServerResponse for bodies that are not a Status.
const genericErrors: Record<number, [StatusReason, string | undefined]> = {
  400: ['BadRequest', 'the server rejected our request for an unknown reason'],
  401: ['Unauthorized', 'the server has asked for the client to provide credentials'],
  403: ['Forbidden', undefined],
  404: ['NotFound', 'the server could not find the requested resource'],
  405: ['MethodNotAllowed', 'the server does not allow this method on the requested resource'],
  406: ['NotAcceptable', undefined],
  409: ['Conflict', 'the server reported a conflict'],
  410: ['Gone', 'the server reported that the resource is gone'],
  413: ['RequestEntityTooLarge', 'the server has rejected the request because the request entity is too large'],
  415: ['UnsupportedMediaType', undefined],
  422: ['Invalid', 'the server rejected our request due to an error in our request'],
  429: ['TooManyRequests', 'the server has received too many requests and has asked us to try again later'],
  503: ['ServiceUnavailable', 'the server is currently unable to handle the request'],
  504: ['Timeout', 'the server was unable to return a response in the time allotted, but may still be processing the request'],
};

function genericReason(code: number): StatusReason {
  return genericErrors[code]?.[0] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
}

function genericError(code: number, body: string): StatusError {
  const entry = genericErrors[code];
  const serverMessage = body.trim() || 'unknown';
  if (entry) return new StatusError(code, entry[0], entry[1] ?? serverMessage);
  if (code >= 500)
    return new StatusError(code, 'InternalError', `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`);
  return new StatusError(code, 'BadRequest', serverMessage);
}

function errorFromBody(code: number, body: string): StatusError {
  try {
    const parsed = JSON.parse(body) as Status;
    if (parsed && parsed.kind === 'Status') return errorFromStatus(parsed, code);
  } catch {
    // not JSON: fall through to the generic error
  }
  return genericError(code, body);
}

export function encodeQuery(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) params.append(k, item);
    else params.append(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

async function readBody(res: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const isAbort = (err: unknown, signal?: AbortSignal) => signal?.aborted === true || (err as Error)?.name === 'AbortError';

/**
 * An agent that only ever reaches one server with one set of TLS options. Node's https.Agent keys
 * its pool by a name rebuilt on every request from the options, PEM text included (kilobytes of
 * string building and hashing per request); here the key is constant.
 */
class OneServerAgent extends https.Agent {
  override getName(): string {
    return 'server';
  }
}

/** Connections for ordinary requests; beyond it requests wait for a free one, as on one HTTP/2 connection. */
export const defaultMaxConnections = 32;

/** One request as it goes out: the path carries the query; streaming requests (watch, follow) are long-lived. */
export interface HttpRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  streaming: boolean;
}

export interface HttpResponse {
  statusCode: number;
  body: Readable;
}

/** What carries requests to the API server (client-go's http.RoundTripper): HTTPS here, in process in tests. */
export interface RoundTripper {
  roundTrip(req: HttpRequest): Promise<HttpResponse>;
  close(): void;
}

/** HTTPS (or HTTP on the loopback socket) to config.server. */
class HttpRoundTripper implements RoundTripper {
  /** Short requests share a bounded pool; watches and streams hold a connection each, outside it. */
  private readonly agent: http.Agent;
  private readonly streamAgent: http.Agent;
  private readonly url: URL;

  /** Made once: each new connection would parse the CA, certificate and key again. */
  private readonly secureContext?: tls.SecureContext;

  constructor(private readonly config: RestConfig) {
    this.url = new URL(config.server);
    if (this.url.protocol === 'https:') this.secureContext = tls.createSecureContext({ ca: config.ca, cert: config.cert, key: config.key });
    this.agent = this.newAgent(config.maxConnections ?? defaultMaxConnections);
    this.streamAgent = this.newAgent(Infinity);
  }

  private newAgent(maxSockets: number): http.Agent {
    const c = this.config;
    return this.url.protocol === 'https:'
      ? new OneServerAgent({ keepAlive: true, maxSockets, secureContext: this.secureContext, rejectUnauthorized: !c.insecureSkipTLSVerify })
      : new http.Agent({ keepAlive: true, maxSockets });
  }

  roundTrip(r: HttpRequest): Promise<HttpResponse> {
    const mod = this.url.protocol === 'https:' ? https : http;
    const basePath = this.url.pathname.replace(/\/$/, '');
    return new Promise((resolve, reject) => {
      const req = mod.request(
        {
          protocol: this.url.protocol,
          ...(this.config.socketPath
            ? { socketPath: this.config.socketPath }
            : { hostname: this.url.hostname.replace(/^\[|\]$/g, ''), port: this.url.port }),
          method: r.method,
          path: basePath + r.path,
          headers: r.headers,
          agent: r.streaming ? this.streamAgent : this.agent,
          signal: r.signal,
        },
        (res) => resolve({ statusCode: res.statusCode ?? 0, body: res }),
      );
      req.on('error', reject);
      req.end(r.body);
    });
  }

  /** Frees the pooled connections. */
  close(): void {
    this.agent.destroy();
    this.streamAgent.destroy();
  }
}

export class RestClient {
  private readonly transport: RoundTripper;

  /** transport: how requests travel (default: HTTPS to config.server). */
  constructor(
    readonly config: RestConfig,
    transport?: RoundTripper,
  ) {
    this.transport = transport ?? new HttpRoundTripper(config);
  }

  /** Sends the request and resolves with the parsed JSON body; non-2xx rejects with a StatusError. */
  async request<T>(opts: RequestOptions): Promise<T> {
    const text = await this.requestText(opts);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async requestText(opts: RequestOptions): Promise<string> {
    const res = await this.open(opts, false);
    return readBody(res);
  }

  /** The events of a watch (the caller adds watch=true or uses a watch path); ends quietly on abort. */
  async *watch<T>(opts: RequestOptions): AsyncGenerator<WatchEvent<T>> {
    let buf = '';
    for await (const chunk of this.stream(opts)) {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield JSON.parse(line) as WatchEvent<T>;
      }
    }
    if (buf.trim()) yield JSON.parse(buf) as WatchEvent<T>;
  }

  /** The response body as text chunks as they arrive (logs with follow=true); ends quietly on abort. */
  async *stream(opts: RequestOptions): AsyncGenerator<string> {
    let res: Readable;
    try {
      res = await this.open(opts, true);
    } catch (err) {
      if (isAbort(err, opts.signal)) return;
      throw err;
    }
    res.setEncoding('utf8');
    try {
      for await (const chunk of res) yield chunk as string;
    } catch (err) {
      if (!isAbort(err, opts.signal)) throw err;
    } finally {
      res.destroy();
    }
  }

  /** Frees the pooled connections. */
  close(): void {
    this.transport.close();
  }

  private async open(opts: RequestOptions, streaming: boolean): Promise<Readable> {
    const headers: Record<string, string> = {
      Accept: opts.accept ?? 'application/json',
      'User-Agent': this.config.userAgent ?? 'kite',
    };
    if (this.config.token) headers.Authorization = `Bearer ${this.config.token}`;
    let body: string | Buffer | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' || Buffer.isBuffer(opts.body) ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    const path = opts.path + encodeQuery(opts.query);
    const res = await this.transport.roundTrip({ method: opts.method ?? 'GET', path, headers, body, signal: opts.signal, streaming });
    if (res.statusCode >= 200 && res.statusCode < 300) return res.body;
    throw errorFromBody(res.statusCode, await readBody(res.body));
  }
}
