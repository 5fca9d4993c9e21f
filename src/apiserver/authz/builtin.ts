// The built-in policy until RBAC arrives: system:masters may do anything, every authenticated user
// is allowed, and anyone may read the public-info endpoints (upstream's system:public-info-viewer
// role, bound to system:authenticated and system:unauthenticated).
import { authenticatedGroup } from '../authn/union.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from './authorizer.js';

export const privilegedGroup = 'system:masters';

/** The non-resource URLs system:public-info-viewer grants `get` on. */
export const publicInfoPaths: readonly string[] = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

const allow: AuthorizationResult = { decision: 'allow' };
const noOpinion: AuthorizationResult = { decision: 'noOpinion' };

/** Allows members of the given groups everything, as upstream's privileged-groups authorizer; first in the union. */
export class PrivilegedGroupsAuthorizer implements Authorizer {
  constructor(private readonly groups: readonly string[] = [privilegedGroup]) {}

  async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
    return attrs.user.groups.some((g) => this.groups.includes(g)) ? allow : noOpinion;
  }
}

/** Allows `get` on the public-info paths to everyone, anonymous included. */
export class PublicInfoAuthorizer implements Authorizer {
  private readonly paths = new Set(publicInfoPaths);

  async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
    return !attrs.isResourceRequest && attrs.verb === 'get' && this.paths.has(attrs.path) ? allow : noOpinion;
  }
}

/** Allows every authenticated user everything: the stand-in for RBAC. */
export class AuthenticatedAuthorizer implements Authorizer {
  async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
    return attrs.user.groups.includes(authenticatedGroup) ? allow : noOpinion;
  }
}
