// The request chain's limits, as upstream's DefaultBuildHandlerChain has them: the long-running
// check, --request-timeout with the `timeout` query parameter (WithRequestDeadline and
// WithTimeoutForNonLongRunningRequests) and --max-requests-inflight /
// --max-mutating-requests-inflight (WithMaxInFlightLimit).
import type { ServerResponse } from 'node:http';
import { parseDuration } from '../../api/duration.js';
import type { Clock } from '../../util/clock.js';
import type { UserInfo } from '../authn/user.js';
import { badRequest, StatusError } from '../../api/errors.js';
import type { RequestInfo } from './requestinfo.js';

export interface RequestLimits {
  /** --request-timeout: the longest a non-long-running request may take (default 60 s). */
  requestTimeoutMs: number;
  /** --max-requests-inflight: concurrent non-mutating requests (0: no limit). */
  maxRequestsInflight: number;
  /** --max-mutating-requests-inflight: concurrent mutating requests (0: no limit). */
  maxMutatingRequestsInflight: number;
}

export const defaultRequestLimits: RequestLimits = { requestTimeoutMs: 60_000, maxRequestsInflight: 400, maxMutatingRequestsInflight: 200 };

/**
 * Upstream's read-header bound (SecureServingInfo's ReadHeaderTimeout, 32 s: just under the request
 * timeout's upper bound), shortened with a shorter --request-timeout.
 */
export function readHeaderTimeoutMs(limits: RequestLimits): number {
  return Math.min(32_000, limits.requestTimeoutMs);
}

const longRunningVerbs = new Set(['watch', 'proxy']);
const longRunningSubresources = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** kube-apiserver's BasicLongRunningRequestCheck: watches, proxies and the streaming subresources. */
export function isLongRunning(info: RequestInfo): boolean {
  return longRunningVerbs.has(info.verb) || (info.isResourceRequest && longRunningSubresources.has(info.subresource));
}

/**
 * The deadline of a non-long-running request: the `timeout` query parameter (a Go duration) when
 * it is shorter than --request-timeout, else --request-timeout; a malformed one is a 400.
 */
export function requestDeadlineMs(query: URLSearchParams, maxMs: number): number {
  const text = query.get('timeout');
  if (text === null) return maxMs;
  let ms: number;
  try {
    ms = text === '0' ? 0 : parseDuration(text);
  } catch {
    throw badRequest(`invalid timeout specified in the request URL - time: invalid duration ${JSON.stringify(text)}`);
  }
  return ms > 0 && ms < maxMs ? ms : maxMs;
}

/** The handler's answer once the deadline has passed (upstream's finishRequest on a done context). */
export const deadlineExceeded = () =>
  new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded', {});

/** Resolves with work, or rejects with the 504 once ms have passed on clock (work keeps running, its result unused). */
export async function withDeadline<T>(work: Promise<T>, ms: number, clock: Clock, onLateError: (err: unknown) => void): Promise<T> {
  let timer: { cancel(): void } | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = clock.setTimer(ms, () => reject(deadlineExceeded()));
  });
  let timedOut = false;
  expired.catch(() => (timedOut = true));
  try {
    return await Promise.race([work, expired]);
  } finally {
    timer?.cancel();
    if (timedOut) work.catch(onLateError);
  }
}

const noop = () => undefined;
const readOnlyVerbs = new Set(['get', 'list', 'watch', 'proxy']);
/** APF's exempt "probes" flow schema: health checks are never throttled. */
const probePaths = ['/healthz', '/livez', '/readyz'];

/**
 * Upstream's max-in-flight filter: two bounded pools (non-mutating and mutating); long-running
 * requests, health probes and system:masters (the exempt flow schemas) are not counted.
 */
export class InflightLimiter {
  private readonly inUse = { readOnly: 0, mutating: 0 };

  constructor(private readonly limits: RequestLimits) {}

  /** A release function, or undefined when the request's pool is full (answer 429). */
  acquire(info: RequestInfo, user: UserInfo | undefined): (() => void) | undefined {
    if (isLongRunning(info) || probePaths.some((p) => info.path === p || info.path.startsWith(`${p}/`))) return noop;
    if (user?.groups.includes('system:masters')) return noop;
    const pool = readOnlyVerbs.has(info.verb) || info.verb === 'head' ? 'readOnly' : 'mutating';
    const max = pool === 'readOnly' ? this.limits.maxRequestsInflight : this.limits.maxMutatingRequestsInflight;
    if (max > 0 && this.inUse[pool] >= max) return undefined;
    this.inUse[pool]++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse[pool]--;
    };
  }
}

/** Upstream's 429 here is plain text (http.Error), with Retry-After: 1. */
export function writeTooManyRequests(res: ServerResponse): void {
  const body = 'Too many requests, please try again later.\n';
  res.writeHead(429, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Retry-After': '1',
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}
