// RoleBinding and ClusterRoleBinding (Role and ClusterRole have no printer upstream: NAME and CREATED AT).
import type { ClusterRoleBinding, RoleBinding, Subject } from '../../api/types.js';
import { age, ageColumn, column, nameColumn, printer, wide } from './printer.js';

/** rbac.SubjectsStrings: user names, group names and namespace/name of service accounts. */
function subjectsStrings(subjects: readonly Subject[] | undefined): [users: string, groups: string, serviceAccounts: string] {
  const of = (kind: string) => (subjects ?? []).filter((s) => s.kind === kind);
  return [
    of('User').map((s) => s.name).join(', '),
    of('Group').map((s) => s.name).join(', '),
    of('ServiceAccount').map((s) => `${s.namespace ?? ''}/${s.name}`).join(', '),
  ];
}

function bindingPrinter(what: string) {
  return printer<RoleBinding | ClusterRoleBinding>(
    [
      nameColumn,
      column('Role', 'string', 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.'),
      ageColumn,
      wide('Users', 'string', `Users in the ${what}`),
      wide('Groups', 'string', `Groups in the ${what}`),
      wide('ServiceAccounts', 'string', `ServiceAccounts in the ${what}`),
    ],
    (b, now) => ({ cells: [b.metadata.name, `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`, age(b, now), ...subjectsStrings(b.subjects)] }),
  );
}

export const roleBindingPrinter = bindingPrinter('roleBinding');
export const clusterRoleBindingPrinter = bindingPrinter('clusterRoleBinding');
