// Escalation prevention on RBAC writes, as upstream's policybased storages: a user may write a Role or
// ClusterRole only with rules it already holds (or the `escalate` verb on it), and a binding only to a
// role whose rules it holds (or the `bind` verb on that role); system:masters may do either.
import { notFound, type QualifiedResource } from '../../../api/errors.js';
import type { ClusterRole, PolicyRule, Role, RoleBinding } from '../../../api/types.js';
import type { UserInfo } from '../../authn/user.js';
import { newForbidden } from '../forbidden.js';
import { privilegedGroup } from '../builtin.js';
import type { Authorizer } from '../authorizer.js';
import type { RbacAuthorizer } from './authorizer.js';
import { rbacGroup } from '../../../api/validation/rbac.js';
import { compactRules, compactString, goStrings, uncoveredRules } from './rule.js';

/** What the checks consult: the server's whole authorizer (for escalate and bind) and RBAC's rule resolver. */
export interface EscalationDeps {
  authorizer: Authorizer;
  rbac: RbacAuthorizer;
}

/** The rules that grant everything; setting an aggregationRule needs them, as it can gather anything. */
const fullAuthority: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const escalationAllowed = (user: UserInfo) => user.groups.includes(privilegedGroup);

async function allowedVerb(deps: EscalationDeps, user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
  const attrs = { user, verb, isResourceRequest: true, path: '', namespace, apiGroup: rbacGroup, apiVersion: '*', resource, subresource: '', name };
  return (await deps.authorizer.authorize(attrs)).decision === 'allow';
}

/** Upstream's ConfirmNoEscalation: the missing rules, compacted, one per line; undefined when user holds them all. */
export function escalationMessage(deps: EscalationDeps, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const held = deps.rbac.policyRulesFor(user, namespace);
  const missing = uncoveredRules(held.rules, rules);
  if (missing.length === 0) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.name)} (groups=${goStrings(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (held.errors.length > 0) msg += `; resolution errors: [${held.errors.join(' ')}]`;
  return msg;
}

type RoleLike = Role | ClusterRole;

/** A Role (namespace set) or ClusterRole (namespace '') write: throws 403 when it would grant what user lacks. */
export async function confirmRoleWrite(deps: EscalationDeps, user: UserInfo, r: QualifiedResource, role: RoleLike, old: RoleLike | undefined, namespace: string): Promise<void> {
  const aggregation = (role as ClusterRole).aggregationRule;
  if (old && JSON.stringify(old.rules ?? []) === JSON.stringify(role.rules ?? []) && JSON.stringify((old as ClusterRole).aggregationRule) === JSON.stringify(aggregation)) return;
  const name = role.metadata?.name ?? '';
  if (escalationAllowed(user) || (await allowedVerb(deps, user, 'escalate', r.resource, namespace, name))) return;
  const msg = escalationMessage(deps, user, namespace, role.rules ?? []);
  if (msg) throw newForbidden(r, name, msg);
  if (aggregation && escalationMessage(deps, user, namespace, fullAuthority)) throw newForbidden(r, name, 'must have cluster-admin privileges to use the aggregationRule');
}

/** A RoleBinding (namespace set) or ClusterRoleBinding (namespace '') write: throws when user may not bind its role. */
export async function confirmBindingWrite(deps: EscalationDeps, user: UserInfo, r: QualifiedResource, binding: RoleBinding, old: RoleBinding | undefined, namespace: string): Promise<void> {
  if (old && JSON.stringify(old.roleRef) === JSON.stringify(binding.roleRef) && JSON.stringify(old.subjects ?? []) === JSON.stringify(binding.subjects ?? [])) return;
  if (escalationAllowed(user)) return;
  const ref = binding.roleRef;
  const roleResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
  if (await allowedVerb(deps, user, 'bind', roleResource, namespace, ref.name)) return;
  const rules = deps.rbac.roleRefRules(ref, namespace);
  if (rules instanceof Error) throw notFound({ group: rbacGroup, resource: roleResource }, ref.name);
  const msg = escalationMessage(deps, user, namespace, rules);
  if (msg) throw newForbidden(r, binding.metadata?.name ?? '', msg);
}
