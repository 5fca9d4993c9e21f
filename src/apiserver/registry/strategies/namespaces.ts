// Namespaces: created Active with the "kubernetes" finalizer in spec; a delete turns them
// Terminating, and they go once the namespace controller has emptied and finalized them.
import { findResource } from '../../../api/resources.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy, metadataFields, resetMetaForStatus } from './generic.js';
import { validateNamespaceFinalizeUpdate, validateStatusUpdate } from '../../../api/validation/index.js';

const info = findResource('', 'v1', 'namespaces')!;

export const finalizerKubernetes = 'kubernetes';

export function namespaceStrategy(): ResourceStrategy {
  return genericStrategy(info, {
    returnDeletedObject: true,
    prepareForCreate(obj) {
      const spec = (obj.spec ?? {}) as { finalizers?: string[] };
      const finalizers = new Set(spec.finalizers ?? []);
      finalizers.add(finalizerKubernetes);
      obj.spec = { ...spec, finalizers: [...finalizers] };
      obj.status = { phase: 'Active' };
    },
    prepareForUpdate(obj, old) {
      obj.spec = { ...(obj.spec as object), finalizers: (old.spec as { finalizers?: string[] } | undefined)?.finalizers };
      obj.status = old.status;
    },
    prepareForSubresourceUpdate(sub, obj, old) {
      if (sub === 'finalize') {
        // Only spec.finalizers changes through /finalize.
        const finalizers = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers;
        Object.assign(obj, { ...old, metadata: obj.metadata, spec: { ...(old.spec as object), finalizers } });
        obj.status = old.status;
      } else {
        obj.spec = old.spec;
      }
      resetMetaForStatus(obj, old);
    },
    validateSubresourceUpdate: (sub, obj, old) =>
      sub === 'finalize' ? validateNamespaceFinalizeUpdate(obj, old) : validateStatusUpdate('', 'Namespace', obj, old),
    holdsDeletion(obj) {
      return ((obj.spec as { finalizers?: string[] } | undefined)?.finalizers?.length ?? 0) > 0;
    },
    markDeleting(obj) {
      obj.status = { ...(obj.status as object), phase: 'Terminating' };
    },
    selectableFields(obj) {
      return { ...metadataFields(obj), 'status.phase': (obj.status as { phase?: string } | undefined)?.phase ?? '' };
    },
  });
}
