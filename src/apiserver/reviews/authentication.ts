// authentication.k8s.io/v1's reviews (upstream's pkg/registry/authentication/*): TokenReview
// authenticates spec.token with the server's token authenticators; SelfSubjectReview tells the
// requester who the server thinks it is (`kubectl auth whoami`). Nothing is stored.
import type { IncomingMessage } from 'node:http';
import type { SelfSubjectReview, TokenReview, UserInfo as ReviewUserInfo } from 'kubernetes-types/authentication/v1.js';
import { badRequest, internalError } from '../../api/errors.js';
import { rfc3339 } from '../../api/time.js';
import type { Authenticator } from '../authn/authenticator.js';
import type { UserInfo } from '../authn/user.js';

export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** A token authentication's answer: the user and the audiences the token was found valid for. */
export interface TokenAuthentication {
  user: UserInfo;
  audiences: string[];
}

/** Authenticates a bare token for the given audiences (none: any); undefined when it proves nobody. Throws why it is bad. */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: readonly string[]): Promise<TokenAuthentication | undefined>;
}

/**
 * Request authenticators that know nothing of audiences (the token file, bootstrap tokens), as a
 * TokenAuthenticator: as upstream's audience-agnostic wrapper, their tokens are good only for the
 * server's own audiences (apiAudiences), so asking for others finds nobody.
 */
export function audienceAgnostic(authenticator: Authenticator, apiAudiences: readonly string[]): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences) {
      const granted = audiences.length === 0 ? [...apiAudiences] : audiences.filter((a) => apiAudiences.includes(a));
      if (audiences.length > 0 && granted.length === 0) return undefined;
      // A request carrying only the token: no client certificate, no other header.
      const req = { headers: { authorization: `Bearer ${token}` }, socket: {} } as IncomingMessage;
      const user = await authenticator.authenticate(req);
      return user && { user, audiences: granted };
    },
  };
}

function reviewUser(user: UserInfo): ReviewUserInfo {
  return { username: user.name, ...(user.uid && { uid: user.uid }), groups: user.groups, ...(user.extra && { extra: user.extra }) };
}

/** apiAudiences: the server's audiences, asked for when the spec names none. */
export async function tokenReview(authenticator: TokenAuthenticator, apiAudiences: readonly string[], review: TokenReview): Promise<TokenReview> {
  const token = review.spec?.token ?? '';
  if (!token) throw badRequest('token is required for TokenReview in authentication');
  const audiences = review.spec.audiences?.length ? review.spec.audiences : apiAudiences;
  let result: TokenAuthentication | undefined;
  let error: string | undefined;
  try {
    result = await authenticator.authenticateToken(token, audiences);
  } catch (err) {
    // A refused credential's reason is kept as its cause (authenticationFailed).
    const why = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    error = why instanceof Error ? why.message : String(why);
  }
  if (result && audiences.length > 0 && !result.audiences.some((a) => audiences.includes(a))) {
    throw internalError('token audiences did not match the audiences requested');
  }
  if (!result && error === undefined) error = 'invalid bearer token';
  return {
    ...review,
    status: {
      authenticated: result !== undefined,
      ...(result && { user: reviewUser(result.user), audiences: result.audiences }),
      ...(error !== undefined && { error }),
    },
  };
}

/** The requester as authenticated (after impersonation); the answer carries its creation time, as upstream's. */
export function selfSubjectReview(user: UserInfo, now: number, review: SelfSubjectReview): SelfSubjectReview {
  return { apiVersion: review.apiVersion, kind: review.kind, metadata: { creationTimestamp: rfc3339(now) }, status: { userInfo: reviewUser(user) } };
}
