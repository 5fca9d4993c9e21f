// API errors carry a metav1.Status: every failure a client sees is one of these, with upstream's
// code, reason and message, so kubectl prints `Error from server (<reason>): <message>`.
import type { Status, StatusCause } from './meta.js';
import { aggregateMessage, fieldErrorMessage, type FieldError } from './field.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason };
    if (this.details) s.details = this.details;
    s.code = this.code;
    return s;
  }
}

export function isStatusError(err: unknown): err is StatusError {
  return err instanceof StatusError;
}

/** Whether err is an API error with one of these HTTP codes (404, 409, ...). */
export function hasStatusCode(err: unknown, ...codes: number[]): err is StatusError {
  return err instanceof StatusError && codes.includes(err.code);
}

/** The request's answer, or undefined when it is 404 NotFound. */
export async function unlessNotFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (hasStatusCode(err, 404)) return undefined;
    throw err;
  }
}

/** "pods" or "deployments.apps": upstream's qualified resource in messages. */
export interface QualifiedResource {
  group: string;
  resource: string;
}
const qualified = (r: QualifiedResource) => (r.group ? `${r.resource}.${r.group}` : r.resource);

export const notFound = (r: QualifiedResource, name: string) =>
  new StatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, { name, group: r.group || undefined, kind: r.resource });

export const alreadyExists = (r: QualifiedResource, name: string) =>
  new StatusError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, { name, group: r.group || undefined, kind: r.resource });

export const conflict = (r: QualifiedResource, name: string, why: string) =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`, {
    name,
    group: r.group || undefined,
    kind: r.resource,
  });

/** The optimistic-concurrency conflict, worded as upstream. */
export const staleConflict = (r: QualifiedResource, name: string) =>
  conflict(r, name, 'the object has been modified; please apply your changes to the latest version and try again');

/** 422 with every field error, e.g. `Pod "web" is invalid: spec.containers[0].image: Required value`. */
export function invalid(kind: string, group: string, name: string, errs: FieldError[]): StatusError {
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: fieldErrorMessage(e).slice(e.field.length + 2), field: e.field }));
  const gk = group ? `${kind}.${group}` : kind;
  return new StatusError(422, 'Invalid', `${gk} "${name}" is invalid: ${aggregateMessage(errs)}`, {
    name,
    group: group || undefined,
    kind,
    causes,
  });
}

/** A path that routes nowhere: upstream's 404 with empty details. */
export const notFoundPath = () => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
export const badRequest = (message: string) => new StatusError(400, 'BadRequest', message);
export const unauthorized = (message = 'Unauthorized') => new StatusError(401, 'Unauthorized', message);
export const forbidden = (message: string, details?: StatusDetails) => new StatusError(403, 'Forbidden', message, details);
export const methodNotAllowed = (message = 'the server does not allow this method on the requested resource') => new StatusError(405, 'MethodNotAllowed', message, {});
export const notAcceptable = (message: string) => new StatusError(406, 'NotAcceptable', message);
export const unsupportedMediaType = (message: string) => new StatusError(415, 'UnsupportedMediaType', message);
export const requestEntityTooLarge = (message: string) => new StatusError(413, 'RequestEntityTooLarge', message);
/** A resourceVersion below the compacted revision (watch or list). */
export const expired = (message: string) => new StatusError(410, 'Expired', message);
export const gone = (message: string) => new StatusError(410, 'Gone', message);
export const tooManyRequests = (message: string, retryAfterSeconds = 1) =>
  new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds });
export const internalError = (message: string) =>
  new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
export const serviceUnavailable = (message: string) => new StatusError(503, 'ServiceUnavailable', message);
export const timeout = (message: string) => new StatusError(504, 'Timeout', message);
