// RFC 6902 JSON patch (application/json-patch+json) with the behaviour of evanphx/json-patch v4, the
// library the API server uses: negative array indices count from the end, `replace` of a missing object
// key adds it, a `test` of null matches an absent value, and `copy` operations may add at most
// 3 MiB between them (the API server's JSONPatchMaxCopyBytes, armed as the library's AccumulatedCopySizeLimit).
import { badRequest, requestEntityTooLarge, StatusError } from '../errors.js';
import { getOwn, setOwn } from '../../util/own.js';
import { deepClone, deepEqual, isObject, type JsonObject } from './json.js';

/** Upstream's cap on the number of operations in one JSON patch. */
const maxJsonPatchOperations = 10000;

/** Upstream's default JSONPatchMaxCopyBytes: how much all `copy` operations of one patch may add together. */
export const maxAccumulatedCopyBytes = 3 * 1024 * 1024;

export type JsonPatchOperation = Record<string, unknown>;

/** A failed operation; its message is the library's, which the API server does not pass on to clients. */
export class JsonPatchError extends Error {
  override name = 'JsonPatchError';
}

/**
 * Applies a decoded JSON patch body to `doc` (not mutated) and returns the patched document.
 * A body that is not a list of objects is a 400, more than 10000 operations a 413, and an operation that
 * does not apply a 422 Invalid with upstream's generic message (the library's reason is not exposed).
 */
export function applyJsonPatch(doc: JsonObject, body: unknown): JsonObject {
  const ops = decodeJsonPatch(body);
  if (ops.length > maxJsonPatchOperations) {
    throw requestEntityTooLarge(
      `Request entity too large: The allowed maximum operations in a JSON patch is ${maxJsonPatchOperations}, got ${ops.length}`,
    );
  }
  try {
    return applyOperations(doc, ops);
  } catch (err) {
    if (err instanceof JsonPatchError) {
      throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
    }
    throw err;
  }
}

/** Checks the body's shape as Go's decoder into `[]map[string]json.RawMessage` does (null is an empty patch). */
function decodeJsonPatch(body: unknown): (JsonPatchOperation | null)[] {
  if (body === null) return [];
  if (!Array.isArray(body)) throw badRequest(`json: cannot unmarshal ${goJsonType(body)} into Go value of type jsonpatch.Patch`);
  for (const op of body) {
    if (op !== null && !isObject(op)) {
      throw badRequest(`json: cannot unmarshal ${goJsonType(op)} into Go value of type jsonpatch.Operation`);
    }
  }
  return body as (JsonPatchOperation | null)[];
}

function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (isObject(v)) return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** Applies operations in order; throws JsonPatchError on the first that does not apply. */
export function applyOperations(doc: JsonObject, ops: (JsonPatchOperation | null)[]): JsonObject {
  const root = deepClone(doc);
  let copied = 0;
  for (const op of ops) {
    const kind = op && typeof op.op === 'string' ? op.op : 'unknown';
    switch (kind) {
      case 'add':
        add(root, opPath(op, 'path', kind), valueOf(op));
        break;
      case 'remove': {
        const path = opPath(op, 'path', kind);
        remove(locate(root, path, `remove operation does not apply: doc is missing path: "${path}"`), path);
        break;
      }
      case 'replace': {
        const path = opPath(op, 'path', kind);
        const target = locate(root, path, `replace operation does not apply: doc is missing path: ${path}`);
        if (Array.isArray(target.container)) {
          get(target, `replace operation does not apply: doc is missing key: ${path}`);
          target.container[arrayIndex(target.key, path)] = valueOf(op);
        } else {
          setOwn(target.container, target.key, valueOf(op));
        }
        break;
      }
      case 'move': {
        const from = opPath(op, 'from', kind);
        const source = locate(root, from, `move operation does not apply: doc is missing from path: ${from}`);
        const value = get(source, `error in move for path: '${source.key}'`);
        remove(source, from);
        const path = opPath(op, 'path', kind);
        add(root, path, value, `move operation does not apply: doc is missing destination path: ${path}`);
        break;
      }
      case 'copy': {
        const from = opPath(op, 'from', kind);
        const source = locate(root, from, `copy operation does not apply: doc is missing from path: ${from}`);
        const value = get(source, `error in copy for from: '${from}'`) ?? null;
        // The library measures each copy by its JSON encoding, before copying it.
        copied += Buffer.byteLength(JSON.stringify(value));
        if (copied > maxAccumulatedCopyBytes) {
          throw new JsonPatchError(
            `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${maxAccumulatedCopyBytes}`,
          );
        }
        const path = opPath(op, 'path', kind);
        add(root, path, deepClone(value), `copy operation does not apply: doc is missing destination path: ${path}`);
        break;
      }
      case 'test': {
        const path = opPath(op, 'path', kind);
        const actual = get(locate(root, path, `test operation does not apply: is missing path: ${path}`), `error in test for path: '${path}'`);
        const expected = op?.value ?? null;
        if (!((actual ?? null) === null ? expected === null : deepEqual(actual, expected))) {
          throw new JsonPatchError(`testing value ${path} failed: test failed`);
        }
        break;
      }
      default:
        throw new JsonPatchError(`Unexpected kind: ${kind}`);
    }
  }
  return root;
}

function opPath(op: JsonPatchOperation | null, field: 'path' | 'from', kind: string): string {
  const v = op?.[field];
  if (typeof v !== 'string') throw new JsonPatchError(`${kind} operation failed to decode ${field}`);
  return v;
}

// An absent value is added as null, as the library does.
function valueOf(op: JsonPatchOperation | null): unknown {
  return deepClone(op?.value ?? null);
}

interface Target {
  container: JsonObject | unknown[];
  key: string;
}

/** Resolves all but the last reference token; the last one is returned unresolved as `key`. */
function locate(root: JsonObject, path: string, missing: string): Target {
  if (!path.startsWith('/')) throw new JsonPatchError(`${missing}: missing value`);
  const tokens = path.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
  let cur: unknown = root;
  for (const t of tokens.slice(0, -1)) {
    cur = Array.isArray(cur) ? cur[goAtoi(t) ?? -1] : isObject(cur) ? getOwn(cur, t) : undefined;
    if (!Array.isArray(cur) && !isObject(cur)) throw new JsonPatchError(`${missing}: missing value`);
  }
  return { container: cur as JsonObject | unknown[], key: tokens[tokens.length - 1] };
}

function get(t: Target, context: string): unknown {
  if (!Array.isArray(t.container)) return getOwn(t.container, t.key);
  const i = goAtoi(t.key);
  if (i === undefined) throw new JsonPatchError(`${context}: strconv.Atoi: parsing "${t.key}": invalid syntax`);
  if (i >= t.container.length || i < 0) throw new JsonPatchError(`${context}: Unable to access invalid index: ${i}: invalid index referenced`);
  return t.container[i];
}

function add(root: JsonObject, path: string, value: unknown, missing = `add operation does not apply: doc is missing path: "${path}"`): void {
  const t = locate(root, path, missing);
  if (!Array.isArray(t.container)) {
    setOwn(t.container, t.key, value);
    return;
  }
  if (t.key === '-') {
    t.container.push(value);
    return;
  }
  const size = t.container.length + 1;
  let i = arrayIndex(t.key, path);
  if (i >= size || i < -size) throw new JsonPatchError(`error in add for path: '${path}': Unable to access invalid index: ${i}: invalid index referenced`);
  if (i < 0) i += size;
  t.container.splice(i, 0, value);
}

function remove(t: Target, path: string): void {
  if (!Array.isArray(t.container)) {
    if (!Object.hasOwn(t.container, t.key)) {
      throw new JsonPatchError(`error in remove for path: '${path}': Unable to remove nonexistent key: ${t.key}: missing value`);
    }
    delete t.container[t.key];
    return;
  }
  const n = t.container.length;
  let i = arrayIndex(t.key, path);
  if (i >= n || i < -n) throw new JsonPatchError(`error in remove for path: '${path}': Unable to access invalid index: ${i}: invalid index referenced`);
  if (i < 0) i += n;
  t.container.splice(i, 1);
}

function arrayIndex(key: string, path: string): number {
  const i = goAtoi(key);
  if (i === undefined) throw new JsonPatchError(`value was not a proper array index: '${key}' (path ${path})`);
  return i;
}

// strconv.Atoi: optional sign, decimal digits.
function goAtoi(s: string): number | undefined {
  return /^[+-]?\d+$/.test(s) ? Number(s) : undefined;
}
