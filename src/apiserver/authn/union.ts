// Composition as upstream wires it: the credential authenticators in a union (first success wins),
// system:authenticated added to whoever succeeds, then anonymous only when no credentials were
// offered at all (a bad token or certificate is a 401, never anonymous).
import type { IncomingMessage } from 'node:http';
import { isStatusError } from '../../api/errors.js';
import { authenticationFailed, type Authenticator } from './authenticator.js';
import { isAnonymous, type UserInfo } from './user.js';

export const authenticatedGroup = 'system:authenticated';
export const unauthenticatedGroup = 'system:unauthenticated';

/** Tries each authenticator in order; the first user wins even when an earlier one rejected its credentials. */
export class UnionAuthenticator implements Authenticator {
  constructor(private readonly authenticators: readonly Authenticator[]) {}

  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    let failure: unknown;
    for (const a of this.authenticators) {
      try {
        const user = await a.authenticate(req);
        if (user) return withAuthenticatedGroup(user);
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
    return undefined;
  }
}

/** Authenticates every request or throws 401: the entry point of the API server's authentication filter. */
export class RequestAuthenticator {
  private readonly credentials: UnionAuthenticator;

  /** anonymous: consulted only when none of the credential authenticators found credentials. */
  constructor(
    credentials: readonly Authenticator[],
    private readonly anonymous?: Authenticator,
  ) {
    this.credentials = new UnionAuthenticator(credentials);
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo> {
    let user: UserInfo | undefined;
    try {
      user = (await this.credentials.authenticate(req)) ?? (await this.anonymous?.authenticate(req));
    } catch (err) {
      throw isStatusError(err) ? err : authenticationFailed(String(err));
    }
    if (!user) throw authenticationFailed('no credentials');
    return user;
  }
}

// Upstream's AuthenticatedGroupAdder: anonymous and users already marked either way are left alone.
function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (isAnonymous(user) || user.groups.includes(authenticatedGroup) || user.groups.includes(unauthenticatedGroup)) return user;
  return { ...user, groups: [...user.groups, authenticatedGroup] };
}
