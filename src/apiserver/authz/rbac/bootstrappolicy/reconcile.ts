// Upstream's ensureRBACPolicy with reconciliation, run at every API server start: a missing default
// object is created; one whose autoupdate annotation is not "false" gets the rules, aggregation
// selectors, subjects, labels and annotations it lacks (nothing is removed); a binding whose roleRef
// changed is made again. Objects annotated autoupdate=false are the operator's and left alone.
import { hasStatusCode } from '../../../../api/errors.js';
import type { KubeObject } from '../../../../api/meta.js';
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding } from '../../../../api/types.js';
import { applyDefaults } from '../../../../api/defaults/index.js';
import type { Registries } from '../../../registry/registries.js';
import { uncoveredRules } from '../rule.js';
import { rbacGroup } from '../../../../api/validation/rbac.js';
import {
  autoUpdateAnnotation,
  clusterRoleBindings,
  clusterRoles,
  controllerRoleBindings,
  controllerRoles,
  kiteClusterRoleBindings,
  kiteClusterRoles,
  kiteRoleBindings,
  kiteRoles,
  namespaceRoleBindings,
  namespaceRoles,
} from './policy.js';

const systemUser = { name: 'system:apiserver', groups: ['system:masters'] };
const write = { dryRun: false, user: systemUser, subresource: '' };

type RoleLike = Role | ClusterRole;
type BindingLike = RoleBinding | ClusterRoleBinding;

/** The labels and annotations of both, the existing object's values winning. */
function mergedMeta(existing: { metadata?: KubeObject['metadata'] }, expected: { metadata?: KubeObject['metadata'] }): KubeObject['metadata'] {
  const m = { ...existing.metadata };
  const labels = { ...expected.metadata?.labels, ...m.labels };
  const annotations = { ...expected.metadata?.annotations, ...m.annotations };
  if (Object.keys(labels).length > 0) m.labels = labels;
  if (Object.keys(annotations).length > 0) m.annotations = annotations;
  return m;
}

/** The reconciled role, or undefined when existing already has everything expected has. */
export function reconcileRole(existing: RoleLike, expected: RoleLike): RoleLike | undefined {
  const missing: PolicyRule[] = (expected.rules ?? []).filter((r) => uncoveredRules(existing.rules ?? [], [r]).length > 0);
  const result = { ...existing, metadata: mergedMeta(existing, expected) } as ClusterRole;
  if (missing.length > 0) result.rules = [...(existing.rules ?? []), ...missing];
  const want = (expected as ClusterRole).aggregationRule?.clusterRoleSelectors ?? [];
  if (want.length > 0) {
    const have = (existing as ClusterRole).aggregationRule?.clusterRoleSelectors ?? [];
    const add = want.filter((w) => !have.some((h) => JSON.stringify(h) === JSON.stringify(w)));
    if (add.length > 0) result.aggregationRule = { clusterRoleSelectors: [...have, ...add] };
  }
  return JSON.stringify(result) === JSON.stringify(existing) ? undefined : result;
}

/** The reconciled binding (subjects added), or undefined when nothing is missing. */
export function reconcileBinding(existing: BindingLike, expected: BindingLike): BindingLike | undefined {
  const have = existing.subjects ?? [];
  const key = (s: { kind: string; name: string; namespace?: string }) => `${s.kind}/${s.namespace ?? ''}/${s.name}`;
  const add = (expected.subjects ?? []).filter((s) => !have.some((h) => key(h) === key(s)));
  const result = { ...existing, metadata: mergedMeta(existing, expected), ...(add.length > 0 && { subjects: [...have, ...add] }) };
  return JSON.stringify(result) === JSON.stringify(existing) ? undefined : result;
}

async function ensure(registries: Registries, resource: string, kind: string, expected: RoleLike | BindingLike, reconcile: (existing: never, expected: never) => object | undefined): Promise<void> {
  const reg = registries.of(rbacGroup, resource);
  const ns = expected.metadata!.namespace ?? '';
  const name = expected.metadata!.name!;
  const obj = structuredClone(expected) as unknown as KubeObject;
  applyDefaults(rbacGroup, kind, obj);
  let existing: KubeObject | undefined;
  try {
    existing = (await reg.get(ns, name)) as KubeObject;
  } catch (err) {
    if (!hasStatusCode(err, 404)) throw err;
  }
  if (!existing) {
    try {
      await reg.create(ns, obj, write);
    } catch (err) {
      if (!hasStatusCode(err, 409)) throw err; // another API server made it first
    }
    return;
  }
  if (existing.metadata?.annotations?.[autoUpdateAnnotation] === 'false') return;
  if (existing.roleRef !== undefined && JSON.stringify(existing.roleRef) !== JSON.stringify(obj.roleRef)) {
    // roleRef is immutable: the binding is made again with its old subjects and the expected ones.
    await reg.delete(ns, name, { preconditions: { uid: existing.metadata!.uid } }, write);
    const merged = reconcileBinding(obj as unknown as BindingLike, { ...obj, subjects: existing.subjects } as unknown as BindingLike);
    await reg.create(ns, { ...obj, subjects: merged?.subjects ?? obj.subjects }, write);
    return;
  }
  const updated = reconcile(existing as never, obj as never);
  if (updated) await reg.update(ns, name, () => updated as KubeObject, write);
}

/** Creates and reconciles the whole bootstrap policy. */
export async function ensureRbacPolicy(registries: Registries): Promise<void> {
  for (const r of [...clusterRoles, ...controllerRoles, ...kiteClusterRoles]) await ensure(registries, 'clusterroles', 'ClusterRole', r, reconcileRole);
  for (const b of [...clusterRoleBindings, ...controllerRoleBindings, ...kiteClusterRoleBindings]) await ensure(registries, 'clusterrolebindings', 'ClusterRoleBinding', b, reconcileBinding);
  for (const r of [...namespaceRoles, ...kiteRoles]) await ensure(registries, 'roles', 'Role', r, reconcileRole);
  for (const b of [...namespaceRoleBindings, ...kiteRoleBindings]) await ensure(registries, 'rolebindings', 'RoleBinding', b, reconcileBinding);
}
