// What the namespace controller does for one terminating namespace, as upstream's deleter: delete
// every namespaced object in it, report what remains in the namespace's conditions, and remove the
// "kubernetes" finalizer once nothing is left.
import type { Namespace, NamespaceCondition } from 'kubernetes-types/core/v1.js';
import { resources, type ResourceInfo } from '../../api/resources.js';
import type { Client } from '../../client/client.js';
import { hasStatusCode } from '../../api/errors.js';
import type { Clock } from '../../util/clock.js';
import { rfc3339 } from '../../api/time.js';

export const finalizerKubernetes = 'kubernetes';

/** The resources whose content a namespace owns; events.k8s.io events are core events by another name. */
const contentResources: ResourceInfo[] = resources.filter(
  (r) => r.namespaced && r.verbs.includes('list') && r.verbs.includes('delete') && !(r.group === 'events.k8s.io'),
);

export interface DeleteResult {
  /** Objects still present (graceful deletions in progress, finalizers pending). */
  remaining: Map<string, number>;
  /** Finalizers that hold remaining objects. */
  finalizers: Map<string, number>;
  done: boolean;
}


export async function deleteContent(client: Client, namespace: string): Promise<DeleteResult> {
  const remaining = new Map<string, number>();
  const finalizers = new Map<string, number>();
  for (const info of contentResources) {
    const rc = client.resource(info).namespace(namespace);
    const { items } = await rc.list();
    for (const item of items) {
      const meta = item.metadata ?? {};
      if (!meta.deletionTimestamp) {
        try {
          const out = await rc.delete(meta.name!, { propagationPolicy: 'Background' });
          // A Status means it is gone; an object means it lingers (grace period, finalizers).
          if ((out as { kind?: string }).kind === 'Status') continue;
        } catch (err) {
          if (hasStatusCode(err, 404)) continue;
          throw err;
        }
      }
      const key = `${info.resource}${info.group ? `.${info.group}` : '.'}`;
      remaining.set(key, (remaining.get(key) ?? 0) + 1);
      for (const f of meta.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    }
  }
  return { remaining, finalizers, done: remaining.size === 0 };
}

/** The conditions upstream's namespace controller reports on a terminating namespace. */
export function deletionConditions(result: DeleteResult, now: number, old: NamespaceCondition[] = []): NamespaceCondition[] {
  const t = rfc3339(now);
  const remainingText = [...result.remaining].map(([r, n]) => `${r} has ${n} resource instances`).join(', ');
  const finalizerText = [...result.finalizers].map(([f, n]) => `${f} in ${n} resource instances`).join(', ');
  const wanted: NamespaceCondition[] = [
    { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    result.remaining.size
      ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${remainingText}` }
      : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    result.finalizers.size
      ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${finalizerText}` }
      : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
  return wanted.map((c) => {
    const prev = old.find((o) => o.type === c.type);
    const unchanged = prev && prev.status === c.status && prev.reason === c.reason && prev.message === c.message;
    return { ...c, lastTransitionTime: unchanged ? prev.lastTransitionTime : t };
  });
}

/** Drops the "kubernetes" finalizer through namespaces/finalize; the API server then removes the namespace. */
export async function finalize(client: Client, ns: Namespace): Promise<void> {
  const rc = client.resource('namespaces');
  const finalizers = (ns.spec?.finalizers ?? []).filter((f) => f !== finalizerKubernetes);
  try {
    await rc.subresource('PUT', ns.metadata!.name!, 'finalize', { ...ns, spec: { ...ns.spec, finalizers } });
  } catch (err) {
    if (!hasStatusCode(err, 404)) throw err;
  }
}

/** Records the deletion conditions; resolves with the namespace as now stored, so finalizing does not conflict with this write. */
export async function updateConditions(client: Client, ns: Namespace, result: DeleteResult, clock: Clock): Promise<Namespace> {
  const conditions = deletionConditions(result, clock.now(), ns.status?.conditions);
  if (JSON.stringify(conditions) === JSON.stringify(ns.status?.conditions ?? [])) return ns;
  try {
    return await client.resource('namespaces').updateStatus({ ...ns, status: { ...ns.status, conditions } });
  } catch (err) {
    // A newer version will be synced again; a vanished namespace needs nothing.
    if (!hasStatusCode(err, 404, 409)) throw err;
    return ns;
  }
}
