// The review kinds served as upstream's create-only REST storage: authentication.k8s.io/v1 and
// authorization.k8s.io/v1 group versions registered with the router beside the stored ones, so
// discovery lists them. A POST decodes and checks the object as any create does, asks the
// authenticators or authorizers, and answers 201 with the object and its status; nothing is stored,
// so dryRun changes nothing.
import type { TokenReview, SelfSubjectReview } from 'kubernetes-types/authentication/v1.js';
import type { LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview } from 'kubernetes-types/authorization/v1.js';
import { methodNotAllowed, notFoundPath } from '../../api/errors.js';
import { reviewResources } from '../../api/resources.js';
import type { Clock } from '../../util/clock.js';
import type { UserInfo } from '../authn/user.js';
import type { Authorizer } from '../authz/authorizer.js';
import type { RuleResolver } from '../authz/rules.js';
import { dryRunOf } from '../handlers/context.js';
import { decodeInput } from '../handlers/crud.js';
import { negotiateOutput } from '../http/negotiation.js';
import { writeObject } from '../http/respond.js';
import type { APIGroupVersion, ResourceContext } from '../router.js';
import { selfSubjectReview, tokenReview, type TokenAuthenticator } from './authentication.js';
import { localSubjectAccessReview, selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview } from './authorization.js';

export interface ReviewDependencies {
  authorizer: Authorizer;
  /** Lists a user's rules for SelfSubjectRulesReview (the RBAC authorizer); without one the answer is incomplete. */
  ruleResolver?: RuleResolver;
  /** The server's token authenticators, for TokenReview. */
  tokenAuthenticator: TokenAuthenticator;
  /** --api-audiences: what a TokenReview without audiences asks for. */
  apiAudiences: readonly string[];
  clock: Clock;
}

type Review = (body: never, user: UserInfo, namespace: string) => Promise<unknown> | unknown;

/** The two group versions, each serving its reviews. */
export function reviewGroupVersions(deps: ReviewDependencies): APIGroupVersion[] {
  const reviews: Record<string, Review> = {
    tokenreviews: (body: TokenReview) => tokenReview(deps.tokenAuthenticator, deps.apiAudiences, body),
    selfsubjectreviews: (body: SelfSubjectReview, user) => selfSubjectReview(user, deps.clock.now(), body),
    subjectaccessreviews: (body: SubjectAccessReview) => subjectAccessReview(deps.authorizer, body),
    localsubjectaccessreviews: (body: LocalSubjectAccessReview, _user, namespace) => localSubjectAccessReview(deps.authorizer, namespace, body),
    selfsubjectaccessreviews: (body: SelfSubjectAccessReview, user) => selfSubjectAccessReview(deps.authorizer, user, body),
    selfsubjectrulesreviews: (body: SelfSubjectRulesReview, user) => selfSubjectRulesReview(deps.ruleResolver, user, body),
  };
  const groups = [...new Set(reviewResources.map((r) => `${r.group}/${r.version}`))];
  return groups.map((gv) => {
    const resources = reviewResources.filter((r) => `${r.group}/${r.version}` === gv);
    return {
      group: resources[0]!.group,
      version: resources[0]!.version,
      resources,
      serve: async (ctx: ResourceContext, user: UserInfo) => {
        const { info, req, res, url } = ctx;
        const resource = resources.find((r) => r.resource === info.resource);
        const review = resource && reviews[resource.resource];
        if (!resource || !review || info.subresource) throw notFoundPath();
        // Only the collection takes POST: a namespace on a cluster-scoped review, or none on the local one, routes nowhere.
        if (resource.namespaced !== (info.namespace !== '')) throw notFoundPath();
        if (info.verb !== 'create' || info.name) throw methodNotAllowed('the server does not allow this method on the requested resource');
        dryRunOf(url.searchParams.getAll('dryRun'));
        const output = negotiateOutput(req.headers.accept, false);
        const { obj, warnings } = await decodeInput({ req, url, info, resource });
        // As upstream's create handler: an object without a namespace takes the request's.
        if (resource.namespaced) obj.metadata = { ...obj.metadata, namespace: obj.metadata?.namespace || info.namespace };
        const body = await review(obj as never, user, info.namespace);
        writeObject(res, 201, body, output.yaml, warnings);
      },
    };
  });
}
