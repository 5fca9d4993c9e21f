// Rule resolution (upstream's authorizer.RuleResolver): what a user may do in a namespace, for
// SelfSubjectRulesReview (`kubectl auth can-i --list`). The RBAC authorizer implements it; an
// authorizer without rules to list leaves the answer incomplete, as upstream.
import type { UserInfo } from '../authn/user.js';

export interface RuleResolver {
  rulesFor(
    user: UserInfo,
    namespace: string,
  ): Promise<{
    resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
    nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
    incomplete: boolean;
    evaluationError?: string;
  }>;
}
