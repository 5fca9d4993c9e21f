// Server-side apply and managed-fields tracking with structured-merge-diff's semantics: lists and maps
// merge by their schema's list type and keys, every write records which manager owns which fields, and
// an apply that changes fields another manager owns fails with a 409 unless forced.
import type { ManagedFieldsEntry } from 'kubernetes-types/meta/v1.js';
import { parseApiVersion } from '../meta.js';
import type { FieldSchema } from '../schema.js';
import { forbidden, invalid as invalidField, Path, required, tooLong, type FieldError } from '../field.js';
import { badRequest, invalid, type StatusError } from '../errors.js';
import { getOwn, setOwn } from '../../util/own.js';
import { deepClone, deepEqual, isObject, type JsonObject } from './json.js';
import {
  compareTimes,
  conflictError,
  decodeManagedFields,
  encodeManagedFields,
  FieldSet,
  managerKey,
  type Conflict,
  type ManagerFields,
  type Managers,
  type PathElement,
} from './managedfields.js';

/** Upstream's limit on fieldManager names. */
const fieldManagerMaxLength = 128;

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** The manager recorded when a write names none: the User-Agent up to its first '/', printable, at most 128 bytes. */
export function managerFromUserAgent(userAgent: string): string {
  let out = '';
  for (const ch of userAgent.split('/')[0]!) {
    if (!printable.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > fieldManagerMaxLength) break;
    out += ch;
  }
  return out;
}

/** `fieldManager` if given, else the User-Agent's prefix (upstream's managerOrUserAgent). */
export function managerOrUserAgent(fieldManager: string | undefined, userAgent: string): string {
  return fieldManager ? fieldManager : managerFromUserAgent(userAgent);
}

/**
 * Upstream's PatchOptions validation: apply needs a fieldManager, only apply takes force, and the name
 * must be short and printable. Returns the 422 to answer with, if any.
 */
export function validatePatchOptions(isApply: boolean, opts: { fieldManager?: string; force?: boolean }): StatusError | undefined {
  const errs: FieldError[] = [];
  const fm = opts.fieldManager ?? '';
  if (!isApply && opts.force !== undefined) errs.push(forbidden(Path.root('force'), 'may not be specified for non-apply patch'));
  if (isApply && fm === '') errs.push(required(Path.root('fieldManager'), 'is required for apply patch'));
  if (Buffer.byteLength(fm) > fieldManagerMaxLength) errs.push(tooLong(Path.root('fieldManager'), fm, fieldManagerMaxLength));
  let offset = 0; // Go reports the byte offset
  for (const ch of fm) {
    if (!printable.test(ch)) {
      const cp = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errs.push(invalidField(Path.root('fieldManager'), fm, `invalid character U+${cp} (at position ${offset})`));
    }
    offset += Buffer.byteLength(ch);
  }
  return errs.length ? invalid('PatchOptions', 'meta.k8s.io', '', errs) : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Schema-driven walks over JSON values.

type ListType = 'atomic' | 'set' | 'map';

interface ListKind {
  type: ListType;
  /** The list-map keys, sorted as they appear in a `k:` element. */
  keys: readonly string[];
}

// Schemas are static: each one's list kind is worked out once (it is asked for at every list node and item).
const listKinds = new WeakMap<FieldSchema, ListKind>();
const untypedList: ListKind = { type: 'atomic', keys: [] };

/** Built-in lists carry only patch tags; upstream derives the list type from them when none is declared. */
function listTypeOf(s: FieldSchema | undefined): ListKind {
  if (!s) return untypedList;
  let kind = listKinds.get(s);
  if (!kind) {
    const merge = (s.patchStrategy ?? '').split(',').includes('merge');
    const type = s.listType ?? (merge ? (s.patchMergeKey ? 'map' : 'set') : 'atomic');
    kind = { type, keys: [...(s.listMapKeys ?? (s.patchMergeKey ? [s.patchMergeKey] : []))].sort() };
    listKinds.set(s, kind);
  }
  return kind;
}

function isAtomicMap(s: FieldSchema | undefined): boolean {
  return s?.mapType === 'atomic';
}

function fieldSchema(s: FieldSchema | undefined, key: string): FieldSchema | undefined {
  return (s?.properties && (getOwn(s.properties, key) as FieldSchema | undefined)) ?? s?.additionalProperties;
}

/** A declared struct field (not a map key or an unknown field). */
function isNamedField(s: FieldSchema | undefined, key: string): boolean {
  return !!s?.properties && Object.hasOwn(s.properties, key);
}

// Upstream fills an omitted list-map key from its OpenAPI default; the only defaulted keys of built-in kinds
// are the ports' `protocol` (containers, services, endpoints), and the generated schemas carry no defaults.
const listMapKeyDefaults: Readonly<Record<string, unknown>> = { protocol: 'TCP' };

function itemElement(listSchema: FieldSchema | undefined, item: unknown, index: number): PathElement {
  const { type, keys } = listTypeOf(listSchema);
  if (type === 'map' && isObject(item)) {
    const key: JsonObject = {};
    for (const k of keys) {
      const v = getOwn(item, k) ?? getOwn(listMapKeyDefaults, k);
      if (v !== undefined) setOwn(key, k, v);
    }
    return `k:${JSON.stringify(key)}`;
  }
  if (type === 'set') return `v:${JSON.stringify(item)}`;
  return `i:${index}`;
}

function isGranularList(s: FieldSchema | undefined, v: unknown): v is unknown[] {
  return Array.isArray(v) && listTypeOf(s).type !== 'atomic';
}

function isGranularMap(s: FieldSchema | undefined, v: unknown): v is JsonObject {
  return isObject(v) && !isAtomicMap(s);
}

/** The fields a value sets (upstream's ToFieldSet): leaves, list items, map keys, and null or empty struct fields. */
function toFieldSet(value: unknown, schema: FieldSchema | undefined): FieldSet {
  const set = new FieldSet();
  const path: PathElement[] = []; // one stack for the walk: insert copies nothing
  const walk = (v: unknown, s: FieldSchema | undefined) => {
    if (isGranularList(s, v)) {
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        path.push(itemElement(s, item, i));
        walk(item, s?.items);
        set.insert(path);
        path.pop();
      }
    } else if (isGranularMap(s, v)) {
      for (const k of Object.keys(v)) {
        const x = v[k];
        path.push(`f:${k}`);
        walk(x, fieldSchema(s, k));
        if (!isNamedField(s, k) || x === null || (isObject(x) && Object.keys(x).length === 0)) set.insert(path);
        path.pop();
      }
    } else {
      set.insert(path);
    }
  };
  walk(value, schema);
  return set;
}

/** Makes every declared struct field that has owned children a member itself (upstream's EnsureNamedFieldsAreMembers). */
function ensureNamedFieldsAreMembers(set: FieldSet, schema: FieldSchema | undefined): FieldSet {
  const out = new FieldSet();
  for (const m of set.members) out.members.add(m);
  for (const [pe, child] of set.children) {
    const isField = pe.startsWith('f:');
    const name = pe.slice(2);
    if (isField && isNamedField(schema, name)) out.members.add(pe);
    out.children.set(pe, ensureNamedFieldsAreMembers(child, isField ? fieldSchema(schema, name) : schema?.items));
  }
  return out;
}

/** Merges an applied configuration into the live object: the configuration wins, granular lists and maps combine. */
function mergeValues(lhs: unknown, rhs: unknown, s: FieldSchema | undefined): unknown {
  if (rhs === undefined) return lhs;
  if (lhs === undefined) return dropNulls(deepClone(rhs));
  if (isGranularList(s, lhs) && isGranularList(s, rhs) && (lhs.length > 0 || rhs.length > 0)) {
    return mergeListItems(lhs, rhs, s);
  }
  if (isGranularMap(s, lhs) && isGranularMap(s, rhs)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(lhs)) {
      const m = mergeValues(v, getOwn(rhs, k), fieldSchema(s, k));
      if (m !== null) setOwn(out, k, m);
    }
    for (const [k, v] of Object.entries(rhs)) if (!Object.hasOwn(lhs, k) && v !== null) setOwn(out, k, dropNulls(deepClone(v)));
    return out;
  }
  return dropNulls(deepClone(rhs));
}

/**
 * Merges list items preferring the applied order (structured-merge-diff ≥ 4.2): items both sides have come
 * out in the applied order, live-only items stay where they were relative to them.
 */
function mergeListItems(lhs: unknown[], rhs: unknown[], s: FieldSchema | undefined): unknown[] {
  const lhsOrder = lhs.map((item, i) => itemElement(s, item, i));
  const rhsOrder = rhs.map((item, i) => itemElement(s, item, i));
  const left = new Map(lhsOrder.map((pe, i) => [pe, lhs[i]]));
  const right = new Map(rhsOrder.map((pe, i) => [pe, rhs[i]]));
  const shared = rhsOrder.filter((pe) => left.has(pe));
  let nextShared = shared.shift();
  const done = new Set<PathElement>();
  const out: unknown[] = [];
  const emit = (pe: PathElement) => {
    done.add(pe);
    out.push(mergeValues(left.get(pe), right.get(pe), s?.items));
  };
  let l = 0;
  let r = 0;
  while (l < lhsOrder.length || r < rhsOrder.length) {
    if (l < lhsOrder.length && r < rhsOrder.length) {
      const pe = lhsOrder[l]!;
      if (pe === rhsOrder[r]) {
        emit(pe);
        l++;
        r++;
        nextShared = shared.shift();
        continue;
      }
      // A shared item that the applied order places later: it is emitted when the applied side reaches it.
      if (right.has(pe) && nextShared !== undefined && nextShared !== pe) {
        l++;
        continue;
      }
    }
    if (l < lhsOrder.length) {
      const pe = lhsOrder[l]!;
      if (!right.has(pe) || done.has(pe)) {
        if (!done.has(pe)) emit(pe);
        l++;
        continue;
      }
    }
    if (r < rhsOrder.length) {
      const pe = rhsOrder[r++]!;
      emit(pe);
      if (nextShared === pe) nextShared = shared.shift();
    }
  }
  return out;
}

// An applied null means "owned and unset": the stored object omits it, as decoding into Go types does.
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (!isObject(v)) return v;
  for (const [k, x] of Object.entries(v)) {
    if (x === null) delete v[k];
    else dropNulls(x);
  }
  return v;
}

/** Removes the nodes at the set's member paths (and everything below them). */
function removeItems(value: unknown, set: FieldSet, s: FieldSchema | undefined): unknown {
  if (isGranularList(s, value)) {
    const out: unknown[] = [];
    value.forEach((item, i) => {
      const pe = itemElement(s, item, i);
      if (set.members.has(pe)) return;
      const child = set.children.get(pe);
      out.push(child ? removeItems(item, child, s?.items) : item);
    });
    return out;
  }
  if (isGranularMap(s, value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const pe = `f:${k}`;
      if (set.members.has(pe)) continue;
      const child = set.children.get(pe);
      setOwn(out, k, child ? removeItems(v, child, fieldSchema(s, k)) : v);
    }
    return out;
  }
  return value;
}

interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

const isEmptyContainer = (v: unknown) =>
  v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/**
 * What changed from `lhs` to `rhs`, per path (upstream's TypedValue.Compare). Struct-typed fields are not
 * recorded as added or removed themselves: upstream's typed objects always carry them (non-pointer structs).
 */
function compare(lhs: unknown, rhs: unknown, schema: FieldSchema | undefined): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const path: PathElement[] = []; // one stack for the walk: insert copies nothing
  const walk = (l: unknown, r: unknown, s: FieldSchema | undefined) => {
    const lists = (l === undefined || isGranularList(s, l)) && (r === undefined || isGranularList(s, r));
    const maps = (l === undefined || isGranularMap(s, l)) && (r === undefined || isGranularMap(s, r));
    if ((!lists && !maps) || (isEmptyContainer(l) && isEmptyContainer(r))) {
      if (path.length === 0) return;
      if (l === undefined) c.added.insert(path);
      else if (r === undefined) c.removed.insert(path);
      else if (!deepEqual(l, r)) c.modified.insert(path);
      return;
    }
    if (lists) {
      const right = new Map<PathElement, unknown>();
      ((r as unknown[] | undefined) ?? []).forEach((item, i) => right.set(itemElement(s, item, i), item));
      const seen = new Set<PathElement>();
      const left = (l as unknown[] | undefined) ?? [];
      for (let i = 0; i < left.length; i++) {
        const item = left[i];
        const pe = itemElement(s, item, i);
        seen.add(pe);
        path.push(pe);
        walk(item, right.get(pe), s?.items);
        path.pop();
      }
      for (const [pe, item] of right) {
        if (seen.has(pe)) continue;
        path.push(pe);
        walk(undefined, item, s?.items);
        path.pop();
      }
    } else {
      const lm = (l as JsonObject | undefined) ?? {};
      const rm = (r as JsonObject | undefined) ?? {};
      for (const k of Object.keys(lm)) {
        path.push(`f:${k}`);
        walk(lm[k], getOwn(rm, k), fieldSchema(s, k));
        path.pop();
      }
      for (const k of Object.keys(rm)) {
        if (Object.hasOwn(lm, k)) continue;
        path.push(`f:${k}`);
        walk(undefined, rm[k], fieldSchema(s, k));
        path.pop();
      }
    }
    if (path.length === 0 || (path[path.length - 1]!.startsWith('f:') && s?.properties)) return;
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  };
  walk(lhs, rhs, schema);
  return c;
}

// ---------------------------------------------------------------------------------------------------
// Ownership bookkeeping.

/** Fields no manager is recorded as owning (upstream's stripMeta set). */
const strippedFields = FieldSet.of(
  [['apiVersion'], ['kind'], ['metadata'], ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => ['metadata', f])].map(
    (p) => p.map((f) => `f:${f}`),
  ),
);

/** Paths (as field names, e.g. `['status']`) a write through this endpoint never owns: upstream's reset fields. */
export type ResetFields = readonly (readonly string[])[];

function resetFieldSet(reset: ResetFields | undefined): FieldSet {
  return FieldSet.of((reset ?? []).map((p) => p.map((f) => `f:${f}`)));
}

/**
 * Records a write by `workflow`: other managers lose fields the write changed (conflicts unless `force`)
 * or removed. Returns the comparison of the two objects.
 */
function update(live: unknown, next: unknown, managers: Managers, workflow: string, force: boolean, schema: FieldSchema | undefined): Comparison {
  const c = compare(live, next, schema);
  const changed = c.modified.union(c.added);
  const conflicts: Conflict[] = [];
  const lost = new Map<string, FieldSet>();
  for (const key of [...managers.keys()].sort()) {
    if (key === workflow) continue;
    const m = managers.get(key)!;
    const clash = m.set.intersection(changed);
    if (!clash.isEmpty()) {
      lost.set(key, clash);
      // Forced writes take the fields without reporting them.
      if (!force) for (const path of clash.paths()) conflicts.push({ manager: m, path });
    }
  }
  if (!force && conflicts.length > 0) throw new Conflicts(conflicts);
  for (const [key, m] of managers) {
    if (key === workflow) continue;
    let set = m.set.difference(c.removed);
    const clash = lost.get(key);
    if (clash) set = set.difference(clash);
    if (set.isEmpty()) managers.delete(key);
    else managers.set(key, { ...m, set });
  }
  return c;
}

function entryFor(manager: string, operation: 'Apply' | 'Update', apiVersion: string, subresource: string | undefined, set: FieldSet): ManagerFields {
  const m: ManagerFields = { manager, operation, apiVersion, set };
  if (subresource) m.subresource = subresource;
  return m;
}

/** Apply conflicts, before they become the 409 (kubectl's last-applied upgrade may still waive them). */
class Conflicts extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super('apply conflicts');
  }
}

function withoutManagedFields(obj: JsonObject | undefined): JsonObject {
  const out = deepClone(obj ?? {});
  if (isObject(out.metadata)) delete out.metadata.managedFields;
  return out;
}

/**
 * The object without managedFields, sharing everything below metadata with `obj`: for the ordinary
 * write path, where neither side is mutated below the top level and a deep copy per write is costly.
 */
function shallowWithoutManagedFields(obj: JsonObject | undefined): JsonObject {
  if (!obj) return {};
  const out = { ...obj };
  if (isObject(obj.metadata)) {
    const metadata = { ...obj.metadata };
    delete metadata.managedFields;
    out.metadata = metadata;
  }
  return out;
}

function withManagedFields(obj: JsonObject, managers: Managers): JsonObject {
  const entries = encodeManagedFields(managers);
  const metadata = isObject(obj.metadata) ? obj.metadata : (obj.metadata = {});
  if (entries.length > 0) metadata.managedFields = entries;
  else delete metadata.managedFields;
  return obj;
}

function decodeOrEmpty(entries: unknown): Managers {
  try {
    return decodeManagedFields(Array.isArray(entries) ? (entries as ManagedFieldsEntry[]) : undefined);
  } catch {
    return new Map();
  }
}

function managedFieldsOf(obj: JsonObject | undefined): unknown {
  return isObject(obj?.metadata) ? obj.metadata.managedFields : undefined;
}

export interface ApplyOptions {
  manager: string;
  force: boolean;
  /** The request's group/version, which the applied object must declare. */
  apiVersion: string;
  /** The kind served at the URL; when given, a body of another kind or version is refused as upstream does first. */
  kind?: string;
  /** RFC 3339 time recorded on the manager's entry when the apply changes the object. */
  now: string;
  schema: FieldSchema | undefined;
  subresource?: string;
  resetFields?: ResetFields;
}

export interface PatchResult {
  /** The object to store, with metadata.managedFields set. */
  object: JsonObject;
  managedFields: ManagedFieldsEntry[];
}

/** kubectl's client-side apply record; `kubectl apply --server-side` keeps it in step. */
export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Server-side apply of `applied` (the decoded apply body) onto `live` (undefined when creating).
 * Throws 400 for a body of the wrong version or carrying managedFields, and 409 on conflicts unless forced.
 * As upstream, the manager `kubectl` may take over fields its client-side apply annotation still matches.
 */
export function applyPatch(live: JsonObject | undefined, applied: JsonObject, opts: ApplyOptions): PatchResult {
  const appliedVersion = typeof applied.apiVersion === 'string' ? applied.apiVersion : '';
  const appliedKind = typeof applied.kind === 'string' ? applied.kind : '';
  if (opts.kind !== undefined && (appliedVersion !== opts.apiVersion || appliedKind !== opts.kind)) {
    const { group, version } = parseApiVersion(appliedVersion);
    throw badRequest(`invalid object type: ${group}/${version}, Kind=${appliedKind}`);
  }
  if (appliedVersion !== opts.apiVersion) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${appliedVersion}, expected: ${opts.apiVersion}`);
  }
  if (managedFieldsOf(applied) !== undefined) throw badRequest('metadata.managedFields must be nil');

  const current = withoutManagedFields(live);
  const startingManagers = () => {
    const managers = decodeOrEmpty(managedFieldsOf(live));
    // The first apply to an untracked object credits what is there to a stand-in updater (skipNonAppliedManager).
    if (live && managers.size === 0) recordUpdate({}, current, managers, { ...opts, manager: 'before-first-apply' });
    return managers;
  };
  let result: { object: JsonObject; managers: Managers };
  try {
    result = applyOnce(current, applied, startingManagers(), opts, opts.force);
  } catch (err) {
    if (!(err instanceof Conflicts)) throw err;
    const allowed = opts.manager === 'kubectl' ? allowedByLastApplied(current, opts) : new FieldSet();
    const remaining = err.conflicts.filter((c) => !allowed.has(c.path));
    if (remaining.length > 0) throw conflictError(remaining);
    result = applyOnce(current, applied, startingManagers(), opts, true);
  }
  const { object, managers } = result;
  if (opts.manager === 'kubectl') syncLastApplied(object, applied);
  withManagedFields(object, managers);
  return { object, managedFields: ((object.metadata as JsonObject).managedFields as ManagedFieldsEntry[] | undefined) ?? [] };
}

/** structured-merge-diff's Apply plus the entry bookkeeping around it; throws Conflicts. */
function applyOnce(current: JsonObject, applied: JsonObject, managers: Managers, opts: ApplyOptions, force: boolean): { object: JsonObject; managers: Managers } {
  const { schema } = opts;
  const key = managerKey({ manager: opts.manager, operation: 'Apply', apiVersion: opts.apiVersion, subresource: opts.subresource });
  const previous = managers.get(key);
  const merged = mergeValues(current, applied, schema) as JsonObject;
  const own = entryFor(opts.manager, 'Apply', opts.apiVersion, opts.subresource, toFieldSet(applied, schema).recursiveDifference(resetFieldSet(opts.resetFields)));
  managers.set(key, own);
  const pruned = prune(merged, managers, previous?.set, schema);
  update(current, pruned, managers, key, force, schema);

  const changed = !deepEqual(current, pruned);
  own.set = own.set.difference(strippedFields);
  // Upstream stamps the time only when the apply changed the object.
  const time = changed ? opts.now : previous?.time;
  if (time) own.time = time;
  if (own.set.isEmpty()) managers.delete(key);
  return { object: changed ? pruned : deepClone(current), managers };
}

/**
 * Fields a `kubectl` apply may take without conflict: those of the last-applied annotation whose values
 * still match the live object (upstream's lastAppliedManager).
 */
function allowedByLastApplied(live: JsonObject, opts: ApplyOptions): FieldSet {
  const text = annotationsOf(live)?.[lastAppliedAnnotation];
  if (typeof text !== 'string' || text === '') return new FieldSet();
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return new FieldSet();
  }
  if (!isObject(last) || last.apiVersion !== opts.apiVersion) return new FieldSet();
  const c = compare(last, live, opts.schema);
  return toFieldSet(last, opts.schema).difference(c.modified).difference(c.added).difference(c.removed);
}

/** When the object carries a last-applied annotation, a `kubectl` apply rewrites it from the applied body. */
function syncLastApplied(object: JsonObject, applied: JsonObject): void {
  const annotations = annotationsOf(object);
  if (!annotations || !Object.hasOwn(annotations, lastAppliedAnnotation)) return;
  const body = deepClone(applied);
  delete annotationsOf(body)?.[lastAppliedAnnotation];
  annotations[lastAppliedAnnotation] = `${goJson(sortKeys(body))}\n`;
}

function annotationsOf(obj: JsonObject): JsonObject | undefined {
  const metadata = obj.metadata;
  return isObject(metadata) && isObject(metadata.annotations) ? metadata.annotations : undefined;
}

// Go's encoder escapes these characters; clients compare the annotation as text.
function goJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// Go encodes maps with sorted keys.
function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}

/**
 * Drops what the applier applied last time but no longer does, unless another manager (or the new
 * configuration) owns it: upstream's prune, addBackOwnedItems and addBackDanglingItems.
 */
function prune(merged: JsonObject, managers: Managers, last: FieldSet | undefined, schema: FieldSchema | undefined): JsonObject {
  if (!last || last.isEmpty()) return merged;
  const ensure = (s: FieldSet) => ensureNamedFieldsAreMembers(s, schema);
  const lastSet = ensure(last);
  let owned = new FieldSet();
  for (const m of managers.values()) owned = owned.union(m.set);
  const mergedSet = ensure(toFieldSet(merged, schema));
  const removed = removeItems(merged, lastSet, schema);
  const addedBack = removeItems(merged, mergedSet.difference(ensure(toFieldSet(removed, schema)).union(ensure(owned))), schema);
  return removeItems(merged, mergedSet.difference(ensure(toFieldSet(addedBack, schema))).intersection(lastSet), schema) as JsonObject;
}

export interface UpdateOptions {
  manager: string;
  apiVersion: string;
  now: string;
  schema: FieldSchema | undefined;
  subresource?: string;
  resetFields?: ResetFields;
}

/**
 * Records an ordinary write (create, update, non-apply patch) by `manager` in `updated`'s managedFields.
 * On the main resource a request may set managedFields itself (`[]` clears them); otherwise the live
 * object's entries carry over.
 */
export function updateManagedFields(old: JsonObject | undefined, updated: JsonObject, opts: UpdateOptions): PatchResult {
  const requested = managedFieldsOf(updated);
  let managers: Managers;
  if (!opts.subresource && Array.isArray(requested) && (requested.length === 0 || (requested.length === 1 && isObject(requested[0]) && Object.keys(requested[0]).length === 0))) {
    managers = new Map();
  } else {
    const fromRequest = opts.subresource ? new Map() : decodeOrEmpty(requested);
    managers = fromRequest.size > 0 ? fromRequest : decodeOrEmpty(managedFieldsOf(old));
  }
  const object = shallowWithoutManagedFields(updated);
  recordUpdate(shallowWithoutManagedFields(old), object, managers, opts);
  withManagedFields(object, managers);
  return { object, managedFields: ((object.metadata as JsonObject).managedFields as ManagedFieldsEntry[] | undefined) ?? [] };
}

/**
 * Upstream's managedFieldsUpdater: the write is first recorded under a temporary manager (taking changed
 * and removed fields from everyone), then merged into the writer's entry, whose time moves only if it took any.
 */
function recordUpdate(before: JsonObject, after: JsonObject, managers: Managers, opts: UpdateOptions): void {
  const self = '\u0000current-operation';
  const key = managerKey({ manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource });
  const owned = managers.get(key)?.set;
  const c = update(before, after, managers, self, true, opts.schema);
  const set = c.modified.union(c.added).recursiveDifference(resetFieldSet(opts.resetFields)).difference(strippedFields);
  if (set.isEmpty()) return;
  const prev = managers.get(key);
  let merged = prev ? set.union(prev.set) : set;
  // A writer that rewrote the fields it owned ends up with its old set: keep that set, whose stored encoding carries over.
  if (owned && merged.equals(owned)) merged = owned;
  const m = entryFor(opts.manager, 'Update', opts.apiVersion, opts.subresource, merged);
  m.time = opts.now;
  managers.set(key, m);
  capUpdateManagers(managers);
}

/** Upstream keeps at most this many Update entries; older ones merge into per-version buckets. */
const maxUpdateManagers = 10;
const oldUpdatesManager = 'ancient-changes';

/** Merges the oldest Update entries into an `ancient-changes` entry per version (upstream's capManagersManager). */
function capUpdateManagers(managers: Managers): void {
  const updaters = [...managers.entries()]
    .filter(([, m]) => m.operation === 'Update')
    .sort(([ka, a], [kb, b]) => compareTimes(a.time, b.time) || (ka < kb ? -1 : ka > kb ? 1 : 0));
  let count = updaters.length;
  const firstOfVersion = new Map<string, string>();
  for (const [key, m] of updaters) {
    if (count <= maxUpdateManagers) break;
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, key);
      continue;
    }
    const bucketKey = managerKey({ manager: oldUpdatesManager, operation: 'Update', apiVersion: m.apiVersion });
    let bucket = managers.get(bucketKey);
    if (!bucket) {
      bucket = entryFor(oldUpdatesManager, 'Update', m.apiVersion, undefined, managers.get(first)!.set);
      managers.delete(first);
    }
    bucket.set = m.set.union(bucket.set);
    if (m.time) bucket.time = m.time;
    managers.delete(key);
    managers.set(bucketKey, bucket);
    count--;
  }
}
