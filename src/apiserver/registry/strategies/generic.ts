// The default strategy, and the pieces the per-kind strategies share.
import type { StoredObject } from '../../../api/meta.js';
import type { ResourceInfo } from '../../../api/resources.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from '../../../api/validation/index.js';
import type { ResourceStrategy } from '../strategy.js';

export function metadataFields(obj: StoredObject): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
  fields['metadata.namespace'] = obj.metadata.namespace ?? '';
  return fields;
}

/** Upstream's ResetObjectMetaForStatus: a status write cannot change these. */
export function resetMetaForStatus(obj: StoredObject, old: StoredObject): void {
  const m = obj.metadata;
  const o = old.metadata;
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    if (o[k] === undefined) delete m[k];
    else (m as Record<string, unknown>)[k] = o[k];
  }
}

export function hasStatusSubresource(info: ResourceInfo): boolean {
  return info.subresources.some((s) => s.name === 'status');
}

/** Keep the old status on main-resource writes; keep everything but status on status writes. */
function statusSplit(info: ResourceInfo): Pick<ResourceStrategy, 'prepareForUpdate' | 'prepareForSubresourceUpdate'> {
  const split = hasStatusSubresource(info);
  return {
    prepareForUpdate(obj, old) {
      if (!split) return;
      if (old.status === undefined) delete obj.status;
      else obj.status = old.status;
    },
    prepareForSubresourceUpdate(_sub, obj, old) {
      for (const k of Object.keys(obj)) if (k !== 'metadata' && k !== 'status' && k !== 'apiVersion' && k !== 'kind') delete obj[k];
      for (const [k, v] of Object.entries(old)) if (k !== 'metadata' && k !== 'status') obj[k] = v;
      resetMetaForStatus(obj, old);
    },
  };
}

export function genericStrategy(info: ResourceInfo, overrides: Partial<ResourceStrategy> = {}): ResourceStrategy {
  const { group, kind } = info;
  const base: ResourceStrategy = {
    info,
    storagePrefix: `/registry/${info.resource}/`,
    tracksGeneration: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    returnDeletedObject: false,
    prepareForCreate(obj) {
      if (hasStatusSubresource(info)) delete obj.status;
    },
    ...statusSplit(info),
    validate: (obj) => validateCreate(group, kind, obj),
    validateUpdate: (obj, old) => validateUpdate(group, kind, obj, old),
    validateSubresourceUpdate: (sub, obj, old) => (sub === 'status' ? validateStatusUpdate(group, kind, obj, old) : validateUpdate(group, kind, obj, old)),
    selectableFields: metadataFields,
  };
  return { ...base, ...overrides };
}
