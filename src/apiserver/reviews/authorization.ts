// authorization.k8s.io/v1's reviews (upstream's pkg/registry/authorization/*): ask the server's
// authorizers about a subject and answer with the request object and its status. Nothing is stored.
import type {
  LocalSubjectAccessReview,
  NonResourceAttributes,
  ResourceAttributes,
  SelfSubjectAccessReview,
  SelfSubjectRulesReview,
  SubjectAccessReview,
  SubjectAccessReviewStatus,
} from 'kubernetes-types/authorization/v1.js';
import { badRequest, invalid as invalidObject } from '../../api/errors.js';
import { invalid, Path, type FieldError } from '../../api/field.js';
import type { UserInfo } from '../authn/user.js';
import type { AuthorizationAttributes, Authorizer } from '../authz/authorizer.js';
import type { RuleResolver } from '../authz/rules.js';

export const AUTHORIZATION_GROUP = 'authorization.k8s.io';

/** The attributes spec.resourceAttributes or spec.nonResourceAttributes describe, as upstream's authorizationutil. */
export function attributesOf(user: UserInfo, spec: { resourceAttributes?: ResourceAttributes; nonResourceAttributes?: NonResourceAttributes }): AuthorizationAttributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? '',
      isResourceRequest: true,
      path: '',
      namespace: r.namespace ?? '',
      apiGroup: r.group ?? '',
      apiVersion: r.version ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource ?? '',
      name: r.name ?? '',
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { user, verb: n.verb ?? '', isResourceRequest: false, path: n.path ?? '', namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' };
}

/** The review's status: allowed or denied with the authorizers' reason; an evaluation error is reported, not thrown. */
export async function decide(authorizer: Authorizer, attrs: AuthorizationAttributes): Promise<SubjectAccessReviewStatus> {
  try {
    const { decision, reason } = await authorizer.authorize(attrs);
    return { allowed: decision === 'allow', ...(decision === 'deny' && { denied: true }), ...(reason && { reason }) };
  } catch (err) {
    return { allowed: false, evaluationError: err instanceof Error ? err.message : String(err) };
  }
}

type AttributesSpec = { resourceAttributes?: ResourceAttributes; nonResourceAttributes?: NonResourceAttributes };

/** Exactly one of resourceAttributes and nonResourceAttributes (upstream's ValidateSelfSubjectAccessReviewSpec). */
function attributesErrors(spec: AttributesSpec, path: Path): FieldError[] {
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    return [invalid(path.child('nonResourceAttributes'), spec.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes')];
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    return [invalid(path.child('resourceAttributes'), null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  }
  return [];
}

/** Metadata beyond what the kind allows (managedFields always; namespace for the local review). */
function metadataErrors(meta: Record<string, unknown> | undefined, allowed: readonly string[], detail: string): FieldError[] {
  const extra = Object.entries(meta ?? {}).filter(([k, v]) => !allowed.includes(k) && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0));
  return extra.length ? [invalid(Path.root('metadata'), meta, detail)] : [];
}

function subjectErrors(spec: SubjectAccessReview['spec']): FieldError[] {
  const errs = attributesErrors(spec, Path.root('spec'));
  if (!spec.user && !spec.groups?.length) errs.push(invalid(Path.root('spec').child('user'), spec.user ?? '', 'at least one of user or group must be specified'));
  return errs;
}

function throwInvalid(kind: string, errs: FieldError[]): void {
  if (errs.length) throw invalidObject(kind, AUTHORIZATION_GROUP, '', errs);
}

/** The subject a (Local)SubjectAccessReview names: exactly the spec's user, groups, uid and extra (no group is added). */
function subjectOf(spec: SubjectAccessReview['spec']): UserInfo {
  return { name: spec.user ?? '', groups: spec.groups ?? [], ...(spec.uid && { uid: spec.uid }), ...(spec.extra && { extra: spec.extra }) };
}

export async function subjectAccessReview(authorizer: Authorizer, review: SubjectAccessReview): Promise<SubjectAccessReview> {
  throwInvalid('SubjectAccessReview', [...subjectErrors(review.spec), ...metadataErrors(review.metadata as Record<string, unknown>, ['managedFields'], 'must be empty')]);
  return { ...review, status: await decide(authorizer, attributesOf(subjectOf(review.spec), review.spec)) };
}

/** namespace: the request's; the object's metadata.namespace has been checked against it and filled in. */
export async function localSubjectAccessReview(authorizer: Authorizer, namespace: string, review: LocalSubjectAccessReview): Promise<LocalSubjectAccessReview> {
  const { spec } = review;
  const objectNamespace = review.metadata?.namespace ?? '';
  const errs = [...subjectErrors(spec), ...metadataErrors(review.metadata as Record<string, unknown>, ['managedFields', 'namespace'], 'must be empty except for namespace')];
  if (spec.resourceAttributes && (spec.resourceAttributes.namespace ?? '') !== objectNamespace) {
    errs.push(invalid(Path.root('spec.resourceAttributes.namespace'), spec.resourceAttributes.namespace ?? '', 'must match metadata.namespace'));
  }
  if (spec.nonResourceAttributes) errs.push(invalid(Path.root('spec.nonResourceAttributes'), spec.nonResourceAttributes, 'disallowed on this kind of request'));
  throwInvalid('LocalSubjectAccessReview', errs);
  if (!namespace) throw badRequest(`namespace is required on this type: ${namespace}`);
  if (namespace !== objectNamespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  return { ...review, status: await decide(authorizer, attributesOf(subjectOf(spec), spec)) };
}

export async function selfSubjectAccessReview(authorizer: Authorizer, user: UserInfo, review: SelfSubjectAccessReview): Promise<SelfSubjectAccessReview> {
  throwInvalid('SelfSubjectAccessReview', attributesErrors(review.spec, Path.root('spec')));
  return { ...review, status: await decide(authorizer, attributesOf(user, review.spec)) };
}

/**
 * The requester's rules in spec.namespace from the rule resolver; without one (no authorizer that can
 * list its rules) the answer is incomplete and empty, as upstream for such authorizers.
 */
export async function selfSubjectRulesReview(resolver: RuleResolver | undefined, user: UserInfo, review: SelfSubjectRulesReview): Promise<SelfSubjectRulesReview> {
  const namespace = review.spec?.namespace ?? '';
  if (!namespace) throw badRequest('no namespace on request');
  let rules: Awaited<ReturnType<RuleResolver['rulesFor']>> = { resourceRules: [], nonResourceRules: [], incomplete: true };
  if (resolver) {
    try {
      rules = await resolver.rulesFor(user, namespace);
    } catch (err) {
      rules = { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: err instanceof Error ? err.message : String(err) };
    }
  }
  // Upstream answers with a new object: its status only.
  return {
    apiVersion: review.apiVersion,
    kind: review.kind,
    metadata: {},
    spec: {},
    status: {
      resourceRules: rules.resourceRules,
      nonResourceRules: rules.nonResourceRules,
      incomplete: rules.incomplete,
      ...(rules.evaluationError && { evaluationError: rules.evaluationError }),
    },
  };
}
