// Test helpers for the RBAC authorizer.
import type { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from '../../../api/types.js';
import type { RbacPolicySource } from './authorizer.js';

/** A policy source over plain arrays; bump() stands for a watch cache change. */
export function fakePolicy(p: { roles?: Role[]; roleBindings?: RoleBinding[]; clusterRoles?: ClusterRole[]; clusterRoleBindings?: ClusterRoleBinding[] }) {
  let v = 0;
  const source: RbacPolicySource & { bump(): void } = {
    version: () => v,
    bump: () => v++,
    roles: () => p.roles ?? [],
    roleBindings: () => p.roleBindings ?? [],
    clusterRoles: () => p.clusterRoles ?? [],
    clusterRoleBindings: () => p.clusterRoleBindings ?? [],
  };
  return source;
}
