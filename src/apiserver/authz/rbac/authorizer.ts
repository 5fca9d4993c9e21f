// The RBAC authorizer (plugin/pkg/auth/authorizer/rbac): a request is allowed when a rule of a role
// bound to the user (ClusterRoleBindings, then RoleBindings of the request's namespace) allows it;
// RBAC never denies. Roles and bindings come from the API server's watch caches; the bindings are
// indexed by subject and the index is rebuilt only when one of the four kinds changed, so a request
// costs a few map lookups however many bindings exist.
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject } from '../../../api/types.js';
import type { UserInfo } from '../../authn/user.js';
import type { AuthorizationAttributes, AuthorizationResult, Authorizer } from '../authorizer.js';
import { ruleAllows } from './rule.js';

/** The RBAC objects the authorizer reads; version changes whenever any of them changes. */
export interface RbacPolicySource {
  version(): number;
  roles(): readonly Role[];
  roleBindings(): readonly RoleBinding[];
  clusterRoles(): readonly ClusterRole[];
  clusterRoleBindings(): readonly ClusterRoleBinding[];
}

/** The answer of a rule resolver, in the shape SelfSubjectRulesReview reports. */
export interface SubjectRules {
  resourceRules: { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }[];
  nonResourceRules: { verbs: string[]; nonResourceURLs?: string[] }[];
  incomplete: boolean;
  evaluationError?: string;
}

export const serviceAccountUsernamePrefix = 'system:serviceaccount:';

type Binding = RoleBinding | ClusterRoleBinding;

/** The subject key a binding's subject matches, or undefined when it can match nobody. */
function subjectKey(s: Subject, bindingNamespace: string): string | undefined {
  switch (s.kind) {
    case 'User':
      return `u:${s.name}`;
    case 'Group':
      return `g:${s.name}`;
    case 'ServiceAccount': {
      // A RoleBinding's service account defaults to the binding's namespace; a ClusterRoleBinding's must name one.
      const ns = s.namespace || bindingNamespace;
      return ns ? `u:${serviceAccountUsernamePrefix}${ns}:${s.name}` : undefined;
    }
    default:
      return undefined;
  }
}

const userKeys = (user: UserInfo) => [`u:${user.name}`, ...user.groups.map((g) => `g:${g}`)];

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

class PolicyIndex {
  readonly clusterRoles = new Map<string, PolicyRule[]>();
  /** By namespace/name. */
  readonly roles = new Map<string, PolicyRule[]>();
  readonly clusterBindings = new Map<string, ClusterRoleBinding[]>();
  /** By namespace, NUL, subject key. */
  readonly bindings = new Map<string, RoleBinding[]>();

  constructor(src: RbacPolicySource) {
    for (const r of src.clusterRoles()) this.clusterRoles.set(r.metadata!.name!, r.rules ?? []);
    for (const r of src.roles()) this.roles.set(`${r.metadata!.namespace}/${r.metadata!.name}`, r.rules ?? []);
    for (const b of src.clusterRoleBindings()) {
      for (const key of new Set((b.subjects ?? []).map((s) => subjectKey(s, '')))) if (key) push(this.clusterBindings, key, b);
    }
    for (const b of src.roleBindings()) {
      const ns = b.metadata!.namespace!;
      for (const key of new Set((b.subjects ?? []).map((s) => subjectKey(s, ns)))) if (key) push(this.bindings, `${ns}\0${key}`, b);
    }
  }

  /** The rules a binding grants, or the error upstream's role getters give. */
  rulesOf(b: Binding): PolicyRule[] | Error {
    const ref = b.roleRef;
    if (ref.kind === 'ClusterRole') return this.clusterRoles.get(ref.name) ?? new Error(`clusterrole.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`);
    if (ref.kind === 'Role' && b.metadata?.namespace) {
      return this.roles.get(`${b.metadata.namespace}/${ref.name}`) ?? new Error(`role.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`);
    }
    return new Error(`unsupported role reference kind: ${JSON.stringify(ref.kind)}`);
  }

  /** The bindings that apply to user in namespace: cluster-wide first, as upstream visits them. */
  bindingsFor(user: UserInfo, namespace: string): Binding[] {
    const keys = userKeys(user);
    const seen = new Set<Binding>();
    const add = (list: readonly Binding[] | undefined) => list?.forEach((b) => seen.add(b));
    for (const k of keys) add(this.clusterBindings.get(k));
    if (namespace) for (const k of keys) add(this.bindings.get(`${namespace}\0${k}`));
    return [...seen];
  }
}

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  private index?: PolicyIndex;
  private indexVersion = -1;

  constructor(private readonly source: RbacPolicySource) {}

  private current(): PolicyIndex {
    const v = this.source.version();
    if (!this.index || v !== this.indexVersion) {
      this.index = new PolicyIndex(this.source);
      this.indexVersion = v;
    }
    return this.index;
  }

  async authorize(attrs: AuthorizationAttributes): Promise<AuthorizationResult> {
    const index = this.current();
    const errors: string[] = [];
    for (const b of index.bindingsFor(attrs.user, attrs.namespace)) {
      const rules = index.rulesOf(b);
      if (rules instanceof Error) errors.push(rules.message);
      else if (rules.some((r) => ruleAllows(attrs, r))) return { decision: 'allow' };
    }
    return { decision: 'noOpinion', reason: errors.length > 0 ? `RBAC: ${aggregate(errors)}` : undefined };
  }

  /** Every rule user holds in namespace ('' for cluster-wide only), as upstream's RulesFor. */
  async rulesFor(user: UserInfo, namespace: string): Promise<SubjectRules> {
    const { rules, errors } = this.policyRulesFor(user, namespace);
    const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: errors.length > 0 };
    for (const r of rules) {
      if ((r.resources ?? []).length > 0) {
        out.resourceRules.push({ verbs: [...r.verbs], apiGroups: r.apiGroups && [...r.apiGroups], resources: [...r.resources!], resourceNames: r.resourceNames && [...r.resourceNames] });
      }
      if ((r.nonResourceURLs ?? []).length > 0) out.nonResourceRules.push({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs!] });
    }
    if (errors.length > 0) out.evaluationError = aggregate(errors);
    return out;
  }

  /** The PolicyRules user holds in namespace and the errors met resolving them (escalation checks use these). */
  policyRulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const index = this.current();
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    for (const b of index.bindingsFor(user, namespace)) {
      const r = index.rulesOf(b);
      if (r instanceof Error) errors.push(r.message);
      else rules.push(...r);
    }
    return { rules, errors };
  }

  /** The rules of a role reference as seen from namespace (a RoleBinding's), or the lookup error. */
  roleRefRules(ref: { kind: string; name: string }, namespace: string): PolicyRule[] | Error {
    return this.current().rulesOf({ roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...ref }, metadata: { namespace } });
  }
}

// utilerrors.NewAggregate's text: one error alone, several in brackets.
const aggregate = (errs: readonly string[]) => (errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
