// The privileged-groups authorizer, first in the union as upstream's: system:masters may do anything,
// whatever RBAC holds. The public-info paths are where anonymous requests are authenticated at all;
// RBAC's system:public-info-viewer binding is what lets them through.
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from './authorizer.js';

export const privilegedGroup = 'system:masters';

/** The non-resource URLs system:public-info-viewer grants `get` on. */
export const publicInfoPaths: readonly string[] = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/** Allows members of the given groups everything, as upstream's privileged-groups authorizer; first in the union. */
export class PrivilegedGroupsAuthorizer implements Authorizer {
  readonly name = 'Privileged';
  constructor(private readonly groups: readonly string[] = [privilegedGroup]) {}

  async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
    return { decision: attrs.user.groups.some((g) => this.groups.includes(g)) ? 'allow' : 'noOpinion' };
  }
}
