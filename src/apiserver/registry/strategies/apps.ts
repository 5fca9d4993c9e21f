// Strategies of the workload kinds with rules of their own: the DaemonSet's template generation,
// the StatefulSet's fields behind disabled gates, the replicated kinds' status.replicas field.
import type { StoredObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import { deepEqual } from '../../../api/validation/meta.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy, metadataFields } from './generic.js';

type Obj = Record<string, any>;

/** apps/v1's DeprecatedTemplateGeneration: the internal spec.templateGeneration, carried as an annotation. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const r = (group: string, resource: string) => findResource(group, 'v1', resource)!;
const spec = (o: StoredObject): Obj => (o.spec ?? {}) as Obj;

function templateGeneration(obj: StoredObject): number {
  const n = Number(obj.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION]);
  return Number.isSafeInteger(n) ? n : 0;
}

function setTemplateGeneration(obj: StoredObject, n: number): void {
  obj.metadata.annotations = { ...obj.metadata.annotations, [TEMPLATE_GENERATION_ANNOTATION]: String(n) };
}

/** Upstream's daemonset strategy: templateGeneration starts at 1 and rises by one with each template change, whatever the writer sent. */
export function daemonSetStrategy(): ResourceStrategy {
  const base = genericStrategy(r('apps', 'daemonsets'), { tracksGeneration: true });
  return {
    ...base,
    prepareForCreate(obj, ctx) {
      base.prepareForCreate(obj, ctx);
      setTemplateGeneration(obj, Math.max(templateGeneration(obj), 1));
    },
    prepareForUpdate(obj, old, ctx) {
      base.prepareForUpdate(obj, old, ctx);
      const changed = !deepEqual(spec(obj).template, spec(old).template);
      setTemplateGeneration(obj, templateGeneration(old) + (changed ? 1 : 0));
    },
  };
}

/** MaxUnavailableStatefulSet is off in 1.33: rollingUpdate.maxUnavailable is dropped unless the stored object uses it. */
function dropMaxUnavailable(obj: StoredObject, old?: StoredObject): void {
  if (old && spec(old).updateStrategy?.rollingUpdate?.maxUnavailable != null) return;
  const ru = spec(obj).updateStrategy?.rollingUpdate;
  if (ru && typeof ru === 'object') delete ru.maxUnavailable;
}

export function statefulSetStrategy(): ResourceStrategy {
  const base = genericStrategy(r('apps', 'statefulsets'), { tracksGeneration: true });
  return {
    ...base,
    prepareForCreate(obj, ctx) {
      base.prepareForCreate(obj, ctx);
      dropMaxUnavailable(obj);
    },
    prepareForUpdate(obj, old, ctx) {
      base.prepareForUpdate(obj, old, ctx);
      dropMaxUnavailable(obj, old);
    },
  };
}

/**
 * ReplicaSets and ReplicationControllers: generation, and status.replicas as a field selector; a
 * ReplicationController's delete orphans its pods unless told otherwise, as before server-side GC.
 */
export function replicatedStrategy(group: string, resource: string): ResourceStrategy {
  return genericStrategy(r(group, resource), {
    tracksGeneration: true,
    ...(group === '' ? { defaultGarbageCollectionPolicy: 'Orphan' as const } : {}),
    selectableFields: (obj) => ({
      ...metadataFields(obj),
      'status.replicas': String((obj.status as { replicas?: number } | undefined)?.replicas ?? 0),
    }),
  });
}
