// Fixtures for admission plugin tests: a request's attributes, and lookups over fixed objects (what
// the plugins would find in the registries' caches).
import assert from 'node:assert/strict';
import { isStatusError, type StatusError } from '../../api/errors.js';
import type { ResourceName, ResourceTypes } from '../../api/kinds.js';
import type { KubeObject } from '../../api/meta.js';
import { findResource } from '../../api/resources.js';
import { changedPaths } from '../timeline/trace.js';
import type { AdmissionAttributes, AdmissionLookups, AdmissionTrace, MutatingAdmissionPlugin } from './interface.js';

/** What a test may set besides the resource: objects as plain test data. */
export type AttributeOverrides = Partial<Omit<AdmissionAttributes, 'object' | 'oldObject' | 'resource'>> & { object?: object; oldObject?: object };

/**
 * A request on group/version/resource: a CREATE by user "u", in the namespace and with the name of
 * its object unless `overrides` say otherwise.
 */
export function admissionAttributes(group: string, version: string, resource: string, overrides: AttributeOverrides = {}): AdmissionAttributes {
  const info = findResource(group, version, resource);
  if (!info) throw new Error(`unknown resource ${group}/${version}/${resource}`);
  const object = overrides.object as KubeObject | undefined;
  return {
    operation: 'CREATE',
    subresource: '',
    namespace: object?.metadata?.namespace ?? '',
    name: object?.metadata?.name ?? '',
    user: { name: 'u', groups: [] },
    dryRun: false,
    ...overrides,
    resource: info,
    object,
    oldObject: overrides.oldObject as KubeObject | undefined,
  };
}

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

/** The Status error a plugin call rejects with; fails the test when it resolves or throws anything else. */
export async function statusRefusal(p: Promise<void>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    assert.ok(isStatusError(err), String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

/** The message of a 403 refusal, as the plugins that deny answer. */
export async function forbiddenMessage(p: Promise<void>): Promise<string> {
  const err = await statusRefusal(p);
  assert.equal(err.code, 403);
  return err.message;
}

/** Whether a field path is `path` itself or below it (`spec.volumes` covers `spec.volumes[0].name`). */
const covers = (path: string, other: string) => other === path || other.startsWith(`${path}.`) || other.startsWith(`${path}[`);

/**
 * Runs a mutating plugin on a traced request and checks what it named against what it changed (a
 * walk of the object before and after, at the plugin's own granularity either way): every change
 * named, nothing named that did not change. Returns the paths it named.
 */
export async function admitNamingChanges(plugin: MutatingAdmissionPlugin, a: AdmissionAttributes): Promise<string[]> {
  const named: string[] = [];
  const trace: AdmissionTrace = { mark: () => 0, mutated: (path) => void named.push(path), admitted: () => {} };
  const before = structuredClone(a.object);
  await plugin.admit({ ...a, timeline: trace });
  const changed = changedPaths(before, a.object);
  for (const c of changed) assert.ok(named.some((n) => covers(n, c) || covers(c, n)), `${plugin.name} changed ${c} without naming it (named: ${named.join(', ')})`);
  for (const n of named) assert.ok(changed.some((c) => covers(n, c) || covers(c, n)), `${plugin.name} named ${n}, which did not change (changed: ${changed.join(', ')})`);
  return named;
}
