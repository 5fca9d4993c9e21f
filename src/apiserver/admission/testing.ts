// Lookups over fixed objects, for admission plugin tests: what the plugins would find in the
// registries' caches.
import type { ResourceName, ResourceTypes } from '../../api/kinds.js';
import type { AdmissionLookups } from './interface.js';

export type LookupObjects = { [R in ResourceName]?: ResourceTypes[R][] };

/** Finds objects by resource, namespace and name; `objects` may change between calls. */
export function fakeLookups(objects: LookupObjects, onGet?: (resource: ResourceName, name: string) => void): AdmissionLookups {
  const of = <R extends ResourceName>(resource: R): ResourceTypes[R][] => objects[resource] ?? [];
  return {
    get: async (resource, namespace, name) => {
      onGet?.(resource, name);
      return of(resource).find((o) => (o.metadata?.namespace ?? '') === namespace && o.metadata?.name === name);
    },
    list: async (resource) => of(resource),
  };
}
