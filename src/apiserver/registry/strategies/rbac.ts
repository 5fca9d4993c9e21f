// The four RBAC kinds: generic storage with escalation prevention before every write (upstream's
// policybased storages). Without deps (a server built without RBAC, unit tests) writes are unchecked.
import { findResource } from '../../../api/resources.js';
import type { ClusterRole, RoleBinding } from '../../../api/types.js';
import { confirmBindingWrite, confirmRoleWrite, type EscalationDeps } from '../../authz/rbac/escalation.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy } from './generic.js';

const group = 'rbac.authorization.k8s.io';

export function rbacStrategies(deps: () => EscalationDeps | undefined): ResourceStrategy[] {
  const strategy = (resource: string, confirm: (d: EscalationDeps, ...a: Parameters<NonNullable<ResourceStrategy['authorizeWrite']>>) => Promise<void>) => {
    const info = findResource(group, 'v1', resource)!;
    return genericStrategy(info, {
      async authorizeWrite(obj, old, user) {
        const d = deps();
        if (d) await confirm(d, obj, old, user);
      },
    });
  };
  const qualified = (resource: string) => ({ group, resource });
  const ns = (obj: { metadata?: { namespace?: string } }) => obj.metadata?.namespace ?? '';
  return [
    strategy('roles', (d, obj, old, user) => confirmRoleWrite(d, user, qualified('roles'), obj as ClusterRole, old as ClusterRole | undefined, ns(obj))),
    strategy('clusterroles', (d, obj, old, user) => confirmRoleWrite(d, user, qualified('clusterroles'), obj as ClusterRole, old as ClusterRole | undefined, '')),
    strategy('rolebindings', (d, obj, old, user) => confirmBindingWrite(d, user, qualified('rolebindings'), obj as unknown as RoleBinding, old as unknown as RoleBinding | undefined, ns(obj))),
    strategy('clusterrolebindings', (d, obj, old, user) => confirmBindingWrite(d, user, qualified('clusterrolebindings'), obj as unknown as RoleBinding, old as unknown as RoleBinding | undefined, '')),
  ];
}
