// managedFields bookkeeping for ordinary writes: who set which fields, so server-side apply knows
// owners and conflicts. The manager is ?fieldManager= or the User-Agent's product name.
import type { KubeObject, StoredObject } from '../../api/meta.js';
import { apiVersionOf } from '../../api/meta.js';
import { rfc3339 } from '../../api/time.js';
import { schemaForKind } from '../../api/schema.js';
import { managerOrUserAgent, updateManagedFields, validatePatchOptions, type ResetFields } from '../../api/patch/apply.js';
import type { JsonObject } from '../../api/patch/json.js';
import { hasStatusSubresource } from '../registry/strategies/generic.js';
import { query, type ResourceRequest } from './context.js';

export function fieldManagerFor(r: ResourceRequest): string {
  const given = query(r, 'fieldManager');
  if (given !== undefined) {
    const err = validatePatchOptions(false, { fieldManager: given });
    if (err) throw err;
  }
  return managerOrUserAgent(given, r.req.headers['user-agent'] ?? '');
}

/** Fields a write through this endpoint never owns: status on the main resource, the rest on /status. */
export function resetFieldsFor(r: ResourceRequest, subresource: string, obj: KubeObject): ResetFields {
  if (!hasStatusSubresource(r.resource)) return [];
  if (subresource === 'status') return Object.keys(obj).filter((k) => !['apiVersion', 'kind', 'metadata', 'status'].includes(k)).map((k) => [k]);
  return [['status']];
}

export function trackManagedFields(r: ResourceRequest, manager: string, _op: 'Update', subresource: string) {
  const { group, version, kind } = r.resource;
  return (obj: KubeObject, old: StoredObject | undefined): void => {
    const result = updateManagedFields(old as JsonObject | undefined, obj as JsonObject, {
      manager,
      apiVersion: apiVersionOf(group, version),
      now: rfc3339(r.clock.now()),
      schema: schemaForKind(group, version, kind),
      subresource: subresource || undefined,
      resetFields: resetFieldsFor(r, subresource, obj),
    });
    obj.metadata ??= {};
    if (result.managedFields.length) obj.metadata.managedFields = result.managedFields as never;
    else delete obj.metadata.managedFields;
  };
}
