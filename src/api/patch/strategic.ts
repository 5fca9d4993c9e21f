// Strategic merge patch (application/strategic-merge-patch+json) as upstream's strategicpatch package
// applies it on the server: field schemas carry the patch strategy and merge key that Go struct tags carry
// upstream. Where no schema is known the patch merges maps and replaces lists, like a JSON merge patch.
import type { FieldSchema } from '../schema.js';
import { badRequest, StatusError } from '../errors.js';
import { getOwn, setOwn } from '../../util/own.js';
import { deepClone, goFormat, isObject, type JsonObject } from './json.js';

const directiveMarker = '$patch';
const retainKeysDirective = '$retainKeys';
const setElementOrderPrefix = '$setElementOrder';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList';

/**
 * How the API server answers each failure: upstream maps a few sentinel errors to 400 or 422 and
 * answers the rest (a missing merge key, an unknown $patch, ...) with a 500. Those are the client's
 * mistakes, not the server's: kite answers them 400 with the library's message.
 */
type SmpFailure = 'BadRequest' | 'Invalid' | 'Unclassified';

class SmpError extends Error {
  constructor(
    readonly failure: SmpFailure,
    message: string,
  ) {
    super(message);
  }
}

const errBadPatchFormatForPrimitiveList = () => new SmpError('BadRequest', 'invalid patch format of primitive list');
const errBadPatchFormatForRetainKeys = () => new SmpError('BadRequest', 'invalid patch format of retainKeys');
const errBadPatchFormatForSetElementOrderList = () => new SmpError('BadRequest', 'invalid patch format of setElementOrder list');
const errNoListOfLists = () => new SmpError('Invalid', 'lists of lists are not supported');
const errNoMergeKey = (m: JsonObject, key: string) =>
  new SmpError('Unclassified', `map: ${goFormat(m)} does not contain declared merge key: ${key}`);
const errBadArgType = (expected: string, actual: unknown) =>
  new SmpError('Unclassified', `expected a ${expected}, but received a ${goTypeName(actual)}`);
const errBadPatchType = (t: unknown, m: JsonObject) => new SmpError('Unclassified', `unknown patch type: ${goFormat(t)} in map: ${goFormat(m)}`);

const goMap = 'map[string]interface {}';
const goSlice = '[]interface {}';

function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return goSlice;
  if (isObject(v)) return goMap;
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v;
}

/**
 * Applies a decoded strategic merge patch to `original` (not mutated) using `schema`, the kind's schema.
 * Throws StatusErrors: 422 for lists of lists (as upstream), 400 for the rest.
 */
export function applyStrategicMergePatch(original: JsonObject, patch: unknown, schema: FieldSchema | undefined): JsonObject {
  if (patch === null) return deepClone(original);
  if (!isObject(patch)) throw badRequest(`json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`);
  try {
    return mergeMap(deepClone(original), deepClone(patch), schema);
  } catch (err) {
    if (!(err instanceof SmpError)) throw err;
    if (err.failure === 'Invalid') {
      // Upstream answers with a generic server response, which drops the library's message.
      throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
    }
    // Upstream's 500 for the unclassified ones says nothing of a server fault: the patch is wrong.
    throw badRequest(err.message);
  }
}

interface FieldStrategy {
  schema: FieldSchema | undefined;
  strategy: string; // 'merge', 'replace' or '' (retainKeys is patch-driven and needs no lookup)
  mergeKey: string;
}

function lookup(schema: FieldSchema | undefined, key: string): FieldStrategy {
  const field = (schema?.properties && (getOwn(schema.properties, key) as FieldSchema | undefined)) ?? schema?.additionalProperties;
  const strategies = (field?.patchStrategy ?? '').split(',').filter((s) => s !== '' && s !== 'retainKeys');
  return { schema: field, strategy: strategies[0] ?? '', mergeKey: field?.patchMergeKey ?? '' };
}

// Both arguments are owned by the caller's clones, so merging in place is safe.
function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: FieldSchema | undefined): JsonObject {
  if (Object.hasOwn(patch, directiveMarker)) {
    const directive = patch[directiveMarker];
    if (directive === 'replace') {
      delete patch[directiveMarker];
      return patch;
    }
    if (directive === 'delete') return {};
    throw errBadPatchType(directive, patch);
  }
  const out = original ?? {};
  applyRetainKeys(out, patch);
  mergeOrderedLists(out, patch, schema);

  for (const [patchKey, patchV] of Object.entries(patch)) {
    let k = patchKey;
    const isDeleteList = patchKey.startsWith(`${deleteFromPrimitiveListPrefix}/`);
    if (isDeleteList) k = patchKey.slice(deleteFromPrimitiveListPrefix.length + 1);
    else if (patchKey.startsWith(deleteFromPrimitiveListPrefix)) throw errBadPatchFormatForPrimitiveList();

    if (patchV === null) {
      delete out[k];
      continue;
    }
    const f = lookup(schema, k);
    const cur = getOwn(out, k);
    if (cur === undefined) {
      // A new map still goes through the merge so its directives take effect; upstream keeps a new list as sent.
      // Deleting from an absent list is a no-op (upstream would store the deletion list itself).
      if (!isDeleteList) setOwn(out, k, isObject(patchV) ? mergeValue(undefined, patchV, f, false) : patchV);
      continue;
    }
    if (kindOf(cur) !== kindOf(patchV)) {
      setOwn(out, k, patchV);
      continue;
    }
    setOwn(out, k, mergeValue(cur, patchV, f, isDeleteList));
  }
  return out;
}

function mergeValue(cur: unknown, patchV: unknown, f: FieldStrategy, isDeleteList: boolean): unknown {
  if (isObject(patchV)) {
    if (f.strategy === 'replace') return patchV;
    return mergeMap(isObject(cur) ? cur : undefined, patchV, f.schema);
  }
  if (Array.isArray(patchV)) {
    if (f.strategy !== 'merge') return patchV;
    return mergeSlice(Array.isArray(cur) ? cur : [], patchV, f.schema?.items, f.mergeKey, isDeleteList);
  }
  return patchV;
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? 'array' : isObject(v) ? 'object' : 'scalar';
}

/** `$retainKeys`: keys of `original` not listed are cleared; every non-null patch field must be listed. */
function applyRetainKeys(original: JsonObject, patch: JsonObject): void {
  if (!Object.hasOwn(patch, retainKeysDirective)) return;
  const list = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(list)) throw errBadPatchFormatForRetainKeys();
  const retained = new Set(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(deleteFromPrimitiveListPrefix) || k.startsWith(setElementOrderPrefix)) continue;
    if (!retained.has(k)) throw errBadPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!retained.has(k)) delete original[k];
}

/**
 * `$setElementOrder/<list>`: merges the list with its patch (removed from `patch` afterwards) and orders the
 * result: the directive's order first, then the live order for items only the server has.
 */
function mergeOrderedLists(original: JsonObject, patch: JsonObject, schema: FieldSchema | undefined): void {
  for (const [key, order] of Object.entries(patch)) {
    if (!key.startsWith(setElementOrderPrefix)) continue;
    delete patch[key];
    if (!Array.isArray(order)) throw errBadArgType(goSlice, order);
    if (!key.startsWith(`${setElementOrderPrefix}/`)) throw errBadPatchFormatForSetElementOrderList();
    const listKey = key.slice(setElementOrderPrefix.length + 1);
    const originalList = getOwn(original, listKey);
    const patchList = getOwn(patch, listKey);
    if (originalList !== undefined && !Array.isArray(originalList)) throw errBadArgType(goSlice, originalList);
    if (patchList !== undefined && !Array.isArray(patchList)) throw errBadArgType(goSlice, patchList);
    const f = lookup(schema, listKey);
    validatePatchWithSetOrderList(patchList ?? [], order, f.mergeKey);

    let merged: unknown[];
    if (originalList === undefined && patchList === undefined) continue;
    if (patchList === undefined) merged = originalList as unknown[];
    else if (originalList === undefined) merged = patchList;
    else merged = mergeValue(originalList, patchList, f, false) as unknown[];

    const [patchItems, serverOnly] = partition(merged, order, f.mergeKey);
    const isMap = elementKind(originalList ?? [], patchList ?? []) === 'map';
    setOwn(original, listKey, normalizeElementOrder(patchItems, serverOnly, order, (originalList as unknown[] | undefined) ?? [], f.mergeKey, isMap));
    delete patch[listKey];
  }
}

// The relative order of the patch list's items must agree with the directive, and the items must be among its entries.
function validatePatchWithSetOrderList(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  let nonDelete = patchList;
  if (mergeKey) {
    nonDelete = [];
    for (const v of patchList) {
      if (!isObject(v)) throw errBadArgType(goMap, v);
      if (v[directiveMarker] !== 'delete') nonDelete.push(v);
    }
  }
  let p = 0;
  let s = 0;
  while (p < nonDelete.length && s < order.length) {
    if (isObject(nonDelete[p]) && Object.hasOwn(nonDelete[p] as JsonObject, directiveMarker)) {
      p++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[p], order[s], mergeKey)) p++;
    s++;
  }
  if (p < nonDelete.length && s >= order.length) {
    throw new SmpError(
      'Unclassified',
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goFormat(order)}\n`,
    );
  }
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (!mergeKey) return left === right;
  if (!isObject(left)) throw errBadArgType(goMap, left);
  if (!isObject(right)) throw errBadArgType(goMap, right);
  if (!Object.hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!Object.hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

/** A list with the merge strategy: maps merge by `mergeKey`, scalars merge as a set. */
function mergeSlice(original: unknown[], patch: unknown[], itemSchema: FieldSchema | undefined, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const isMap = elementKind(original, patch) === 'map';
  let merged: unknown[];
  if (!isMap) {
    if (isDeleteList) return original.filter((v) => !patch.includes(v));
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (!mergeKey) throw new SmpError('Unclassified', 'cannot merge lists without merge key for type struct');
    [original, patch] = applySpecialElements(original as JsonObject[], patch as JsonObject[], mergeKey);
    merged = [...original];
    for (const item of patch as JsonObject[]) {
      if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      const i = merged.findIndex((m) => (m as JsonObject)[mergeKey] === item[mergeKey]);
      if (i >= 0) merged[i] = mergeMap(merged[i] as JsonObject, item, itemSchema);
      else merged.push(mergeMap(undefined, item, itemSchema));
    }
  }
  const [patchItems, serverOnly] = partition(merged, patch, mergeKey);
  return normalizeElementOrder(patchItems, serverOnly, patch, original, mergeKey, isMap);
}

/** Handles list items carrying `$patch`: delete removes matching live items, replace drops the live list. */
function applySpecialElements(original: JsonObject[], patch: JsonObject[], mergeKey: string): [JsonObject[], JsonObject[]] {
  const plain: JsonObject[] = [];
  let replace = false;
  for (const item of patch) {
    if (!Object.hasOwn(item, directiveMarker)) {
      plain.push(item);
      continue;
    }
    switch (item[directiveMarker]) {
      case 'delete':
        if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
        original = original.filter((o) => !(Object.hasOwn(o, mergeKey) && o[mergeKey] === item[mergeKey]));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw new SmpError('Unclassified', 'merging lists cannot yet be specified in the patch');
      default:
        throw errBadPatchType(item[directiveMarker], item);
    }
  }
  return replace ? [plain, []] : [original, plain];
}

/** All items must share one Go type (maps, or one scalar type); lists of lists are refused. */
function elementKind(...lists: unknown[][]): string {
  let kind: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const k = Array.isArray(v) ? 'slice' : isObject(v) ? 'map' : v === null ? 'nil' : typeof v;
      if (kind === undefined) {
        if (k === 'slice') throw errNoListOfLists();
        kind = k;
      } else if (kind !== k) {
        throw new SmpError('Unclassified', `list element types are not identical: ${goFormat(lists)}`);
      }
    }
  }
  if (kind === undefined) throw new SmpError('Unclassified', 'no elements in any of the given slices');
  return kind;
}

// Upstream's in-place deduplication, which moves the last element into each duplicate's slot.
function deduplicateScalars(s: unknown[]): unknown[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

function itemId(v: unknown, mergeKey: string): unknown {
  return mergeKey && isObject(v) ? v[mergeKey] : v;
}

function indexIn(list: unknown[], v: unknown, mergeKey: string): number {
  const id = itemId(v, mergeKey);
  return list.findIndex((x) => itemId(x, mergeKey) === id);
}

/** Splits `items` into those present in `by` and the rest, keeping their order. */
function partition(items: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of items) {
    if (mergeKey) {
      if (!isObject(v)) throw errBadArgType(goMap, v);
      if (!Object.hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    }
    (indexIn(by, v, mergeKey) >= 0 ? inBy : rest).push(v);
  }
  return [inBy, rest];
}

/**
 * Sorts patch items by `patchOrder` and server-only items by the live order, then interleaves them:
 * a server-only item goes first only when both are in the live list and it came first there.
 */
function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  isMap: boolean,
): unknown[] {
  const right = sortByOrder(patch, patchOrder, mergeKey, isMap);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, isMap);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey);
      const ri = indexIn(serverOrder, right[j], mergeKey);
      out.push(li >= 0 && ri >= 0 && li < ri ? left[i++] : right[j++]);
    }
  }
  return out;
}

function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, isMap: boolean): unknown[] {
  let toSort = items;
  let toDelete: unknown[] = [];
  if (isMap) {
    for (const v of [...items, ...order]) {
      if (!isObject(v)) throw errBadArgType(goMap, v);
      if (!Object.hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    }
    toSort = items.filter((v) => (v as JsonObject)[directiveMarker] !== 'delete');
    toDelete = items.filter((v) => (v as JsonObject)[directiveMarker] === 'delete');
  }
  const rank = (v: unknown) => {
    const i = indexIn(order, v, mergeKey);
    return i < 0 ? Infinity : i;
  };
  return [...toSort.map((v, pos) => ({ v, pos, r: rank(v) })).sort((a, b) => a.r - b.r || a.pos - b.pos).map((x) => x.v), ...toDelete];
}
