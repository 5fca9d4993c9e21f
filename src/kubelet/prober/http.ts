// HTTP GET for probes and lifecycle hooks (upstream's pkg/probe/http): the request built from an
// HTTPGetAction (scheme, host defaulting to the pod IP, port by number or name, headers, the
// kube-<purpose> User-Agent), sent without proxy, keep-alive or certificate checks, following
// redirects only to the same host, with the body read up to 10 KiB. Failures carry the text Go's
// http.Client gives them, since users read them in events.
import * as http from 'node:http';
import * as https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { Container, Probe } from '../../api/types.js';
import type { Clock } from '../../util/clock.js';
import { dialErrorText, errnoText, goQuote, joinHostPort } from './goformat.js';
import { MAX_PROBE_OUTPUT_BYTES, ProbeError, resolveContainerPort, userAgent, type ProbeOutcome } from './probe.js';

export type HTTPGetAction = NonNullable<Probe['httpGet']>;

export interface HTTPGetRequest {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  /** Path and query as sent ("/" when the action has none). */
  path: string;
  /** Go's url.String() of the request, as errors quote it. */
  url: string;
  /** Canonical header names, in order; repeated names keep every value. */
  headers: [string, string][];
}

/** Go's http.CanonicalHeaderKey: "x-custom-header" → "X-Custom-Header" (names with odd characters stay as written). */
export function canonicalHeaderKey(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/** httpprobe.NewRequestForHTTPGetAction; throws ProbeError when the port does not resolve. */
export function newRequestForHTTPGetAction(action: HTTPGetAction, container: Container, podIP: string, purpose: 'probe' | 'lifecycle'): HTTPGetRequest {
  const scheme = (action.scheme ?? '').toLowerCase() === 'https' ? 'https' : 'http';
  const host = action.host || podIP;
  const port = resolveContainerPort(action.port, container);
  const raw = action.path ?? '';
  const path = raw === '' ? '/' : raw.startsWith('/') ? raw : `/${raw}`;
  const headers: [string, string][] = (action.httpHeaders ?? []).map((h) => [canonicalHeaderKey(h.name), h.value]);
  if (!headers.some(([k]) => k === 'User-Agent')) headers.push(['User-Agent', userAgent(purpose)]);
  const accept = headers.filter(([k]) => k === 'Accept');
  if (accept.length === 0) headers.push(['Accept', '*/*']);
  else if (accept[0]![1] === '') for (let i = headers.length - 1; i >= 0; i--) if (headers[i]![0] === 'Accept') headers.splice(i, 1);
  const hostPort = joinHostPort(host, port);
  return { scheme, host, port, path, url: `${scheme}://${hostPort}${raw === '' ? '' : path}`, headers };
}

export interface HTTPGetOptions {
  clock: Clock;
  /** The client's overall timeout (Go's Client.Timeout); 0 for none. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface HTTPGetResponse {
  statusCode: number;
  /** At most MAX_PROBE_OUTPUT_BYTES of it. */
  body: Buffer;
}

/** The request failed before a response (Go's *url.Error text: `Get "http://...": ...`). */
export class HTTPGetError extends Error {
  constructor(
    message: string,
    /** The HTTPS request met a plain HTTP server (the lifecycle handler then retries with HTTP). */
    readonly httpResponseToHTTPS = false,
  ) {
    super(message);
    this.name = 'HTTPGetError';
  }
}

/** The response came but its body could not be read (a timeout mid-body). */
export class HTTPBodyError extends Error {}

const REDIRECT_CODES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;
const HTTP_RESPONSE_TO_HTTPS = 'http: server gave HTTP response to HTTPS client';

interface Target {
  url: URL;
  display: string;
  /** A Host header the caller set; kept across relative redirects only, as Go does. */
  hostHeader?: string;
}

/** Sends the GET and follows same-host redirects (httpprobe.RedirectChecker(false)). */
export async function doHTTPGet(req: HTTPGetRequest, opts: HTTPGetOptions): Promise<HTTPGetResponse> {
  const ac = new AbortController();
  let timedOut = false;
  const timer = opts.timeoutMs > 0 ? opts.clock.setTimer(opts.timeoutMs, () => ((timedOut = true), ac.abort())) : undefined;
  const onAbort = () => ac.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const headers = req.headers.filter(([k]) => k !== 'Host');
  const hostHeader = req.headers.find(([k]) => k === 'Host')?.[1];
  let target: Target = { url: new URL(`${req.scheme}://${joinHostPort(req.host, req.port)}${req.path}`), display: req.url, hostHeader };
  const first = target.url;
  try {
    for (let redirects = 0; ; redirects++) {
      let res: IncomingMessage;
      try {
        res = await send(target, headers, ac.signal);
      } catch (err) {
        if (timedOut) throw new HTTPGetError(`Get ${goQuote(target.display)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
        if (ac.signal.aborted) throw new HTTPGetError(`Get ${goQuote(target.display)}: context canceled`);
        const text = transportErrorText(err, target.url);
        throw new HTTPGetError(`Get ${goQuote(target.display)}: ${text}`, text === HTTP_RESPONSE_TO_HTTPS);
      }
      const loc = res.headers.location;
      const next = REDIRECT_CODES.has(res.statusCode ?? 0) && loc ? parseLocation(loc, target.url) : undefined;
      if (next && next.hostname === first.hostname) {
        res.resume();
        if (redirects + 1 >= MAX_REDIRECTS) throw new HTTPGetError(`Get ${goQuote(loc!)}: stopped after ${MAX_REDIRECTS} redirects`);
        const relative = !/^[a-z][a-z0-9+.-]*:/i.test(loc!);
        target = { url: next, display: next.href, hostHeader: relative ? target.hostHeader : undefined };
        continue;
      }
      // A redirect elsewhere is not followed: its own response is the answer (http.ErrUseLastResponse).
      try {
        return { statusCode: res.statusCode ?? 0, body: await readAtMost(res, MAX_PROBE_OUTPUT_BYTES, ac.signal) };
      } catch {
        throw new HTTPBodyError(timedOut ? 'context deadline exceeded (Client.Timeout or context cancellation while reading body)' : ac.signal.aborted ? 'context canceled' : 'unexpected EOF');
      }
    }
  } finally {
    timer?.cancel();
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

function parseLocation(loc: string, base: URL): URL | undefined {
  try {
    return new URL(loc, base);
  } catch {
    return undefined;
  }
}

function send(target: Target, headers: [string, string][], signal: AbortSignal): Promise<IncomingMessage> {
  const { url } = target;
  const isHTTPS = url.protocol === 'https:';
  const out: Record<string, string | string[]> = { Host: target.hostHeader ?? url.host };
  for (const [k, v] of headers) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const options: https.RequestOptions = {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || (isHTTPS ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers: out,
    agent: false,
    signal,
  };
  if (isHTTPS) options.rejectUnauthorized = false;
  return new Promise((resolve, reject) => {
    const r = (isHTTPS ? https : http).request(options, resolve);
    r.on('error', reject);
    r.end();
  });
}

function readAtMost(res: IncomingMessage, limit: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: unknown) => {
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).subarray(0, limit));
    };
    const onAbort = () => {
      res.destroy();
      done(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        res.destroy();
        done();
      }
    });
    res.on('end', () => done());
    res.on('error', (err) => done(err));
    res.on('aborted', () => done(new Error('aborted')));
  });
}

/** The part of Go's error after `Get "url": ` for a request that got no response. */
function transportErrorText(err: unknown, url: URL): string {
  const e = err as NodeJS.ErrnoException;
  const addr = joinHostPort(url.hostname.replace(/^\[|\]$/g, ''), url.port || (url.protocol === 'https:' ? 443 : 80));
  if (e?.code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number|packet length too long/.test(e?.message ?? '')) return HTTP_RESPONSE_TO_HTTPS;
  if (e?.syscall === 'connect' || e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') return dialErrorText(addr, err);
  if (e?.message === 'socket hang up') return 'EOF';
  if (e?.code?.startsWith('HPE_')) return `net/http: HTTP/1.x transport connection broken: malformed HTTP response`;
  const text = errnoText(err);
  if (text) return `read tcp ${addr}: read: ${text}`;
  return e?.message ?? String(err);
}

/** httpprobe.DoHTTPProbe: 2xx succeed, 3xx (a redirect not followed) succeed with a warning, the rest fail. */
export async function httpProbe(req: HTTPGetRequest, opts: HTTPGetOptions): Promise<ProbeOutcome> {
  let res: HTTPGetResponse;
  try {
    res = await doHTTPGet(req, opts);
  } catch (err) {
    if (err instanceof HTTPGetError) return { result: 'failure', output: err.message };
    return { result: 'failure', output: '', error: err instanceof Error ? err.message : String(err) };
  }
  const body = res.body.toString('utf8');
  if (res.statusCode >= 200 && res.statusCode < 400) {
    if (res.statusCode >= 300) return { result: 'warning', output: `Probe terminated redirects, Response body: ${body}` };
    return { result: 'success', output: body };
  }
  // Upstream keeps the body out of the message (it may hold secrets).
  return { result: 'failure', output: `HTTP probe failed with statuscode: ${res.statusCode}` };
}

/** The action's request, or the outcome of a port that does not resolve. */
export function probeRequest(action: HTTPGetAction, container: Container, podIP: string): HTTPGetRequest | ProbeOutcome {
  try {
    return newRequestForHTTPGetAction(action, container, podIP, 'probe');
  } catch (err) {
    if (err instanceof ProbeError) return { result: 'unknown', output: '', error: err.message };
    throw err;
  }
}

