// RFC 7386 JSON merge patch (application/merge-patch+json), as evanphx/json-patch v4 applies it for the
// API server: null deletes a key, objects merge recursively, anything else (arrays included) replaces.
import { badRequest } from '../errors.js';
import { getOwn, setOwn } from '../../util/own.js';
import { deepClone, isObject, type JsonObject } from './json.js';

/**
 * Applies `patch` to `original` without mutating either. A patch that is not a JSON object is rejected
 * with upstream's 400 `Invalid JSON Patch` (upstream lets a top-level array through only to fail decoding it).
 */
export function applyMergePatch(original: JsonObject, patch: unknown): JsonObject {
  if (!isObject(patch)) throw badRequest('Invalid JSON Patch');
  return mergeObject(deepClone(original), patch);
}

function mergeObject(doc: JsonObject, patch: JsonObject): JsonObject {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete doc[k];
      continue;
    }
    const cur = getOwn(doc, k);
    setOwn(doc, k, isObject(cur) && isObject(v) ? mergeObject(cur, v) : pruneNulls(deepClone(v)));
  }
  return doc;
}

// A replacing value carries no deletions of its own: nulls inside its objects are dropped (array slots stay).
function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (x === null ? x : pruneNulls(x)));
  if (!isObject(v)) return v;
  for (const [k, x] of Object.entries(v)) {
    if (x === null) delete v[k];
    else pruneNulls(x);
  }
  return v;
}
