// Authorization as upstream's authorizer.Authorizer: each authorizer allows, denies or has no opinion;
// a union asks them in order and the first allow or deny decides. RBAC joins the union later.
import { internalError, isStatusError } from '../../api/errors.js';
import type { UserInfo } from '../authn/user.js';
import { forbiddenError } from './forbidden.js';

/** Upstream's authorizer.Attributes; the field names match RequestInfo so `{ user, ...requestInfo }` fits. */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** get, list, watch, create, update, patch, delete, deletecollection, ...; the lowercase method for non-resource paths. */
  verb: string;
  isResourceRequest: boolean;
  /** The URL path; what non-resource requests are authorized on. */
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  /** The request's fieldSelector query parameter (the Node authorizer reads spec.nodeName and metadata.name). */
  fieldSelector?: string;
}

export type Decision = 'allow' | 'deny' | 'noOpinion';

export interface AuthorizationResult {
  decision: Decision;
  /** Which authorizer decided (the union's member's name; the pod timeline's Authorized step). */
  authorizer?: string;
  /** Appended to the Forbidden message when the request is refused. */
  reason?: string;
}

export interface Authorizer {
  /** As --authorization-mode names it (Node, RBAC). */
  readonly name?: string;
  /** Throws only when it could not decide (an evaluation error), never to refuse. */
  authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult>;
}

export class UnionAuthorizer implements Authorizer {
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
    const reasons: string[] = [];
    let failure: unknown;
    for (const a of this.authorizers) {
      let result: AuthorizationResult;
      try {
        result = await a.authorize(attrs);
      } catch (err) {
        // One authorizer failing must not stop a later one from allowing.
        failure ??= err;
        continue;
      }
      if (result.decision !== 'noOpinion') return a.name ? { ...result, authorizer: a.name } : result;
      if (result.reason) reasons.push(result.reason);
    }
    if (failure !== undefined) throw failure;
    return { decision: 'noOpinion', reason: reasons.length > 0 ? reasons.join('\n') : undefined };
  }
}

/**
 * The authorization filter: resolves when allowed, throws 403 Forbidden when not, 500 when the
 * authorizer failed. annotate gets upstream's audit annotations of the decision and its reason.
 */
export async function checkAuthorized(authorizer: Authorizer, attrs: AuthorizationAttributes, annotate?: (key: string, value: string) => void): Promise<AuthorizationResult> {
  let result: AuthorizationResult;
  try {
    result = await authorizer.authorize(attrs);
  } catch (err) {
    throw isStatusError(err) ? err : internalError(err instanceof Error ? err.message : String(err));
  }
  annotate?.('authorization.k8s.io/decision', result.decision === 'allow' ? 'allow' : 'forbid');
  annotate?.('authorization.k8s.io/reason', result.reason ?? '');
  if (result.decision !== 'allow') throw forbiddenError(attrs, result.reason);
  return result;
}
