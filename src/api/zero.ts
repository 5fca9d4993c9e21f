// What upstream's JSON decoder leaves where a request says `null`: Go decodes null into the zero
// value of the field's type, so an object reaching defaulting and validation never holds a null.
// A null struct field is absent (a nil pointer, slice or map, or a zero scalar, which kite reads
// as absent); a null list item or map value is the item type's zero value: `containers: [null]`
// holds one empty Container, `requests: {cpu: null}` a zero Quantity ("0"), labels `{a: null}` "".
// Driven by the kind's OpenAPI schema, so the walk is as deep as the schema and no deeper.
import { componentSchemas, INT_OR_STRING, OPAQUE, QUANTITY, refName, schemaNameForKind, TIME, type RawSchema } from './schema.js';
import { isObj } from './validation/meta.js';

type Obj = Record<string, unknown>;

/** The JSON form of the zero value of a list item or map value of schema `s`. */
function zeroOf(s: RawSchema): unknown {
  const ref = refName(s);
  if (ref === QUANTITY) return '0';
  if (ref === INT_OR_STRING) return 0;
  // A zero metav1.Time marshals as null; an empty RawExtension has no JSON of its own.
  if (ref !== undefined && (TIME.has(ref) || OPAQUE.has(ref))) return null;
  if (ref !== undefined) return {};
  switch (s.type) {
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return {};
  }
}

function zeroValue(v: unknown, s: RawSchema): void {
  const ref = refName(s);
  if (ref !== undefined) {
    const component = componentSchemas[ref];
    if (component?.properties && isObj(v)) zeroFields(v, component);
    return;
  }
  if (Array.isArray(v)) {
    const items = s.items ?? {};
    for (let i = 0; i < v.length; i++) {
      if (v[i] === null) v[i] = zeroOf(items);
      else zeroValue(v[i], items);
    }
    return;
  }
  if (!isObj(v)) return;
  if (s.properties) zeroFields(v, s);
  const values = s.additionalProperties;
  if (values) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) v[k] = zeroOf(values);
      else zeroValue(v[k], values);
    }
  }
}

function zeroFields(obj: Obj, schema: RawSchema): void {
  const props = schema.properties ?? {};
  for (const k of Object.keys(obj)) {
    if (!Object.hasOwn(props, k)) continue;
    if (obj[k] === null) delete obj[k];
    else zeroValue(obj[k], props[k]);
  }
}

/**
 * Replaces, in place, every null in `obj` (an object of group/version/kind) with what Go's decoder
 * would have left there. Values of the wrong type are left alone (the decode check refuses them);
 * kinds without a schema are left as they are.
 */
export function zeroNulls(group: string, version: string, kind: string, obj: Obj): void {
  const name = schemaNameForKind(group, version, kind);
  if (name !== undefined) zeroFields(obj, componentSchemas[name]);
}
