// The audit filter (upstream's WithAudit), right after authentication: the policy picks the
// request's level from the authenticated user; at level None the request costs that lookup and
// nothing else. Otherwise the request gets an audit ID (the client's `Audit-ID` header, else a new
// UUID, sent back as `Audit-ID`) and events for its stages: RequestReceived before the handler,
// ResponseStarted when a long-running answer's headers go out, ResponseComplete at the end, or
// Panic when the handler failed unexpectedly. Bodies are read from what was exchanged: the request
// body the handler read (http/body.ts) and, at RequestResponse, the JSON answer written.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStatusError } from '../../api/errors.js';
import { microTime } from '../../api/time.js';
import type { Clock } from '../../util/clock.js';
import { getOwn } from '../../util/own.js';
import type { UserInfo } from '../authn/user.js';
import type { Filter, RequestContext } from '../chain.js';
import { decodeObjectBody, parseJson, parseYaml, requestBodyOf } from '../http/body.js';
import { isLongRunning } from '../http/filters.js';
import { mediaType } from '../http/negotiation.js';
import { inFieldOrder, levelAtLeast, type AuditEvent, type AuditUser, type ObjectReference, type ResponseStatus } from './event.js';
import type { AuditBackend } from './log.js';
import type { Policy, RequestAuditConfig, Stage } from './policy.js';

export interface AuditDependencies {
  policy: Policy;
  backend: AuditBackend;
  clock: Clock;
}

/** A client-sent Audit-ID is kept when it is printable ASCII and short (it is echoed in a header and logged). */
const usableAuditID = /^[\x21-\x7e]{1,256}$/;

export function auditFilter({ policy, backend, clock }: AuditDependencies): Filter {
  return async (ctx, next) => {
    const requester = ctx.user!;
    const config = policy.evaluate(requester, ctx.info);
    if (config.level === 'None') return next(ctx);
    const received = clock.now();
    const sent = ctx.req.headers['audit-id'];
    const auditID = typeof sent === 'string' && usableAuditID.test(sent) ? sent : randomUUID();
    ctx.res.setHeader('Audit-ID', auditID);
    const annotations = new Map<string, string>();
    // Upstream keeps the first value of a key, and drops one meant for a higher level.
    ctx.annotate = (key, value, level = 'Metadata') => void (levelAtLeast(config.level, level) && !annotations.has(key) && annotations.set(key, value));
    const base = (stage: Stage): AuditEvent => ({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: config.level,
      auditID,
      stage,
      requestURI: ctx.req.url ?? '/',
      verb: ctx.info.verb,
      user: auditUser(requester),
      ...(ctx.user !== requester ? { impersonatedUser: auditUser(ctx.user!) } : {}),
      sourceIPs: sourceIPs(ctx.req),
      ...(ctx.req.headers['user-agent'] ? { userAgent: ctx.req.headers['user-agent'] } : {}),
      ...(ctx.info.isResourceRequest ? { objectRef: objectRefOf(ctx) } : {}),
      requestReceivedTimestamp: microTime(received),
      stageTimestamp: microTime(clock.now()),
      ...(annotations.size > 0 ? { annotations: Object.fromEntries(annotations) } : {}),
    });
    const emit = (event: AuditEvent) => {
      if (!config.omitStages.has(event.stage)) backend.write(inFieldOrder(event));
    };
    emit(base('RequestReceived'));
    const capture = config.level === 'RequestResponse' && !isLongRunning(ctx.info) ? captureResponse(ctx.res) : undefined;
    if (isLongRunning(ctx.info)) onHeaders(ctx.res, (code) => emit({ ...base('ResponseStarted'), responseStatus: { metadata: {}, code } }));
    let status: ResponseStatus;
    let panicked = false;
    // An error's Status is written after the chain (server.ts): at RequestResponse it is the response object.
    let errorBody: unknown;
    try {
      await next(ctx);
      status = { metadata: {}, code: ctx.res.statusCode };
    } catch (err) {
      if (isStatusError(err)) {
        const s = err.toStatus() as unknown as Omit<ResponseStatus, 'metadata'>;
        status = { metadata: {}, status: s.status, message: s.message, reason: s.reason, ...(s.details ? { details: s.details } : {}), code: s.code };
        if (capture) errorBody = err.toStatus();
      } else {
        panicked = true;
        status = { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}`, reason: 'InternalError', code: 500 };
      }
      throw err;
    } finally {
      const event = { ...base(panicked ? 'Panic' : 'ResponseComplete'), responseStatus: status! };
      completeEvent(event, ctx, config, errorBody ?? capture?.());
      emit(event);
    }
  };
}

/** The bodies and what the request body says of the object (upstream's LogRequestObject fills objectRef from it). */
function completeEvent(event: AuditEvent, ctx: RequestContext, config: RequestAuditConfig, response: unknown): void {
  const request = requestObjectOf(ctx);
  if (request !== undefined && event.objectRef) fillObjectRef(event.objectRef, request);
  if (levelAtLeast(config.level, 'Request') && request !== undefined) event.requestObject = config.omitManagedFields ? withoutManagedFields(request) : request;
  if (response !== undefined) event.responseObject = config.omitManagedFields ? withoutManagedFields(response) : response;
}

function auditUser(u: UserInfo): AuditUser {
  return { username: u.name, ...(u.uid ? { uid: u.uid } : {}), ...(u.groups.length > 0 ? { groups: u.groups } : {}), ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}) };
}

/** Upstream's utilnet.SourceIPs: X-Forwarded-For, then X-Real-Ip, then the peer, each once. */
function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const add = (ip: string | undefined) => {
    const trimmed = ip?.trim();
    if (trimmed && !ips.includes(trimmed)) ips.push(trimmed);
  };
  const forwarded = req.headers['x-forwarded-for'];
  if (typeof forwarded === 'string') forwarded.split(',').forEach(add);
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string') add(real);
  // The in-process components come over a Unix socket: upstream's loopback client is 127.0.0.1.
  add(req.socket?.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1');
  return ips;
}

function objectRefOf({ info }: RequestContext): ObjectReference {
  const ref: ObjectReference = { resource: info.resource };
  if (info.namespace) ref.namespace = info.namespace;
  if (info.name) ref.name = info.name;
  ref.apiGroup = info.apiGroup;
  ref.apiVersion = info.apiVersion;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

function fillObjectRef(ref: ObjectReference, obj: unknown): void {
  const meta = typeof obj === 'object' && obj !== null ? getOwn(obj, 'metadata') : undefined;
  if (typeof meta !== 'object' || meta === null) return;
  const field = (k: string) => {
    const v = getOwn(meta, k);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  ref.namespace ??= field('namespace');
  ref.name ??= field('name');
  ref.uid ??= field('uid');
  ref.resourceVersion ??= field('resourceVersion');
  for (const k of ['namespace', 'name', 'uid', 'resourceVersion'] as const) if (ref[k] === undefined) delete ref[k];
}

/** The body the handler read, decoded; undefined when there was none or it does not decode. */
function requestObjectOf(ctx: RequestContext): unknown {
  const body = requestBodyOf(ctx.req);
  if (!body || body.length === 0) return undefined;
  try {
    if (ctx.info.verb !== 'patch') return decodeObjectBody(ctx.req.headers['content-type'], body);
    // A patch is logged as sent (upstream's LogRequestPatch).
    return mediaType(ctx.req.headers['content-type']) === 'application/apply-patch+yaml' ? parseYaml(body) : parseJson(body);
  } catch {
    return undefined;
  }
}

function withoutManagedFields(obj: unknown): unknown {
  const strip = (o: unknown) => {
    const meta = typeof o === 'object' && o !== null ? getOwn(o, 'metadata') : undefined;
    if (typeof meta === 'object' && meta !== null) delete (meta as Record<string, unknown>).managedFields;
  };
  strip(obj);
  const items = typeof obj === 'object' && obj !== null ? getOwn(obj, 'items') : undefined;
  if (Array.isArray(items)) items.forEach(strip);
  return obj;
}

/** Calls fn with the status code when the headers are written (Node writes implicit headers through writeHead too). */
function onHeaders(res: ServerResponse, fn: (code: number) => void): void {
  const writeHead = res.writeHead;
  let called = false;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!called) {
      called = true;
      fn(typeof args[0] === 'number' ? args[0] : res.statusCode);
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

/** Keeps what is written to res; the returned function gives it as an object when it was JSON. */
function captureResponse(res: ServerResponse): () => unknown {
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown) => {
    if (typeof chunk === 'string') chunks.push(Buffer.from(chunk));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (typeof chunk !== 'function') keep(chunk);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as ServerResponse['end'];
  return () => {
    if (chunks.length === 0 || mediaType(String(res.getHeader('content-type') ?? '')) !== 'application/json') return undefined;
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    } catch {
      return undefined;
    }
  };
}
