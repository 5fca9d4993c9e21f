// The request path as upstream's DefaultBuildHandlerChain has it: a named, ordered list of filters
// in front of the router. Each filter is (ctx, next): it may answer and stop, or hand the request on.
// The chain is composed once at start, so a request costs one call per filter, no closures.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UpgradeRequest } from '../streaming/upgrade.js';
import type { Clock } from '../util/clock.js';
import type { RequestAuthenticator } from './authn/union.js';
import type { UserInfo } from './authn/user.js';
import { checkAuthorized, type Authorizer } from './authz/authorizer.js';
import type { RequestInfo } from './http/requestinfo.js';
import { asksImpersonation, impersonationOf } from './authn/impersonation.js';
import { auditFilter, type AuditDependencies } from './audit/filter.js';
import { PodRequestTrace, tracesPod, type PodStepQueue } from './timeline/trace.js';
import { InflightLimiter, isLongRunning, requestDeadlineMs, withDeadline, writeTooManyRequests, type RequestLimits } from './http/filters.js';
import type { AddAuditAnnotation } from './audit/policy.js';

/** One request on its way through the chain; filters fill in what they establish. */
export interface RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Only the query is read from it; the path is info.path, as sent (a URL would resolve dot segments). */
  readonly url: URL;
  readonly info: RequestInfo;
  /** The connection of an upgrade request (exec, attach, portforward). */
  readonly upgrade?: UpgradeRequest;
  /** The listener's authenticator: the loopback listener knows only the components' tokens. */
  readonly authenticator: RequestAuthenticator;
  /** Whether the request came in on the loopback listener (the components in this process). */
  readonly loopback: boolean;
  /** Who is asking: set by the authentication filter. */
  user?: UserInfo;
  /**
   * Adds an annotation to the request's audit events (authorization's decision, admission plugins'
   * findings). A no-op unless the audit policy records the request.
   */
  annotate: AddAuditAnnotation;
  /** A pod write's timeline steps: set by the podTimeline filter, marked down the chain. */
  timeline?: PodRequestTrace;
}

/** RequestContext.annotate until the audit filter takes the request. */
export const ignoreAnnotation = (): void => undefined;

export type Handler = (ctx: RequestContext) => Promise<void>;
export type Filter = (ctx: RequestContext, next: Handler) => Promise<void>;

export interface NamedFilter {
  readonly name: string;
  readonly filter: Filter;
}

/** handler behind filters, the first filter outermost. */
export function buildHandlerChain(filters: readonly NamedFilter[], handler: Handler): Handler {
  let next = handler;
  for (let i = filters.length - 1; i >= 0; i--) {
    const { filter } = filters[i]!;
    const inner = next;
    next = (ctx) => filter(ctx, inner);
  }
  return next;
}

export interface FilterDependencies {
  authorizer: Authorizer;
  limits: RequestLimits;
  inflight: InflightLimiter;
  clock: Clock;
  /** A handler that failed after its request had timed out: its client has its 504 already. */
  onLateError(req: IncomingMessage, err: unknown): void;
  /** --audit-policy-file with a backend: absent, requests are not audited at all. */
  audit?: AuditDependencies;
  /** Where pod writes' timeline steps go (absent: --pod-timeline=false, nothing is traced). */
  podSteps?: PodStepQueue;
}

/** kite's filters in upstream's order (outermost first); audit follows authentication, before impersonation. */
export function defaultFilters(deps: FilterDependencies): NamedFilter[] {
  return [
    { name: 'timeout', filter: timeoutFilter(deps) },
    ...(deps.podSteps ? [{ name: 'podTimeline', filter: podTimelineFilter(deps.clock, deps.podSteps) }] : []),
    { name: 'authentication', filter: authenticationFilter },
    ...(deps.audit ? [{ name: 'audit', filter: auditFilter(deps.audit) }] : []),
    { name: 'impersonation', filter: impersonationFilter(deps.authorizer) },
    { name: 'priority', filter: priorityFilter(deps.inflight) },
    { name: 'authorization', filter: authorizationFilter(deps.authorizer) },
  ];
}

/**
 * WithRequestDeadline and WithTimeoutForNonLongRunningRequests: a non-long-running request gets
 * --request-timeout (or its shorter `timeout`), then a 504 while the work runs on to its end.
 */
function timeoutFilter({ limits, clock, onLateError }: FilterDependencies): Filter {
  return (ctx, next) => {
    if (ctx.upgrade || isLongRunning(ctx.info)) return next(ctx);
    // Read before the work starts: a malformed timeout is a 400 and nothing runs.
    const ms = requestDeadlineMs(ctx.url.searchParams, limits.requestTimeoutMs);
    return withDeadline(next(ctx), ms, clock, (err) => onLateError(ctx.req, err));
  };
}

/** WithAuthentication: the listener's authenticator names the user, or the request is a 401. */
const authenticationFilter: Filter = async (ctx, next) => {
  ctx.user = await ctx.authenticator.authenticate(ctx.req);
  ctx.timeline?.authenticated();
  return next(ctx);
};

/**
 * kite's pod timeline: a pod write (create, update, patch, delete) carries a trace through the rest
 * of the chain and the registry; when it is done its steps are queued for the store. Inside the
 * timeout filter, so a request answered 504 still records what it did.
 */
function podTimelineFilter(clock: Clock, queue: PodStepQueue): Filter {
  return async (ctx, next) => {
    if (!tracesPod(ctx.info)) return next(ctx);
    const traceparent = ctx.req.headers.traceparent;
    const trace = new PodRequestTrace(clock, clock.now(), ctx.req.headers['user-agent'], typeof traceparent === 'string' ? traceparent : undefined);
    ctx.timeline = trace;
    try {
      await next(ctx);
    } finally {
      queue.push(trace.notes);
    }
  };
}

/**
 * WithImpersonation: the requester must be allowed `impersonate` on every user, group, uid and
 * extra the headers name; from here on the request is the impersonated user's.
 */
function impersonationFilter(authorizer: Authorizer): Filter {
  return async (ctx, next) => {
    // headersDistinct builds a second header object: only requests that impersonate pay for it.
    if (!asksImpersonation(ctx.req.rawHeaders)) return next(ctx);
    const wanted = impersonationOf(ctx.req.headersDistinct);
    if (!wanted) return next(ctx);
    const requester = ctx.user!;
    for (const r of wanted.requests) {
      await checkAuthorized(authorizer, { user: requester, verb: 'impersonate', isResourceRequest: true, path: ctx.info.path, apiVersion: '', ...r });
    }
    ctx.user = wanted.user;
    return next(ctx);
  };
}

/**
 * WithMaxInFlightLimit (APF's place): a 429 when the request's pool is full; the slot is held until
 * the handler is done, even when its client got a 504 before that. The loopback components are
 * exempt, as upstream's loopback client is (system:masters).
 */
function priorityFilter(inflight: InflightLimiter): Filter {
  return async (ctx, next) => {
    if (ctx.loopback) return next(ctx);
    const release = inflight.acquire(ctx.info, ctx.user);
    if (!release) return writeTooManyRequests(ctx.res);
    try {
      await next(ctx);
    } finally {
      release();
    }
  };
}

const streamingSubresources = new Set(['exec', 'attach', 'portforward']);

/** WithAuthorization: the authorizers' union allows the request, or it is upstream's 403. */
function authorizationFilter(authorizer: Authorizer): Filter {
  return async (ctx, next) => {
    const { info } = ctx;
    const user = ctx.user!;
    const decision = await checkAuthorized(authorizer, { user, ...info, fieldSelector: ctx.url.searchParams.get('fieldSelector') ?? undefined }, ctx.annotate);
    ctx.timeline?.authorized(decision.authorizer);
    // Upstream's AuthorizePodWebsocketUpgradeCreatePermission: a streaming GET also needs create.
    if (ctx.upgrade && info.verb === 'get' && info.resource === 'pods' && streamingSubresources.has(info.subresource)) {
      await checkAuthorized(authorizer, { user, ...info, verb: 'create' });
    }
    return next(ctx);
  };
}
