// Checks a decoded request body against its kind's schema the way upstream's JSON decoder
// (sigs.k8s.io/json over encoding/json) would have failed or complained while decoding it:
// - a value of the wrong JSON type fails the request in every fieldValidation mode, worded as Go's
//   UnmarshalTypeError (`json: cannot unmarshal string into Go struct field PodSpec.spec.containers
//   of type []v1.Container`), as do malformed quantities and base64 `byte` strings;
// - unknown fields are collected in document order as `unknown field "spec.containers[0].foo"`:
//   Strict fails with them, Warn returns them as warnings, Ignore drops them.
// - duplicate keys, which JSON.parse collapses (keeping the last value, as Go does), were noted by the
//   body scan (jsonscan.ts) and are reported like unknown fields as `duplicate field "metadata.name"`,
//   after them (upstream interleaves both in document order).
// Named Go types are approximated by their underlying types (a v1.Protocol reads `string`), except
// v1.ResourceList for maps of quantities.
import { badRequest } from './errors.js';
import { duplicateFields } from './jsonscan.js';
import { componentSchemas, INT_OR_STRING, OPAQUE, QUANTITY, refName, schemaNameForKind, type RawSchema } from './schema.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const TIME = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime']);
const QUANTITY_FORMAT = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const QUANTITY_SUFFIX = /^(|[numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)$/;
const INT_RANGE: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
};

/** Thrown for a value the decoder cannot store; its message is the text after upstream's `cannot be handled as a X: `. */
class DecodeError extends Error {}

interface Where {
  struct: string; // innermost Go struct holding the field, e.g. PodSpec
  field: string; // JSON names from the root without indices, e.g. spec.containers
  path: string; // upstream's unknown-field path, e.g. spec.containers[0]
}

const shortName = (component: string) => component.slice(component.lastIndexOf('.') + 1);

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v; // string, number, object
}

function goType(s: RawSchema): string {
  const ref = refName(s);
  if (ref) {
    if (ref === INT_OR_STRING) return 'intstr.IntOrString';
    if (ref === QUANTITY) return 'resource.Quantity';
    if (OPAQUE.has(ref)) return ref.endsWith('RawExtension') ? 'runtime.RawExtension' : 'v1.FieldsV1';
    const parts = ref.split('.');
    return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
  }
  switch (s.type) {
    case 'string':
      return s.format === 'byte' ? '[]uint8' : 'string';
    case 'boolean':
      return 'bool';
    case 'integer':
      return s.format ?? 'int';
    case 'number':
      return 'float64';
    case 'array':
      return `[]${goType(s.items ?? {})}`;
    default:
      if (s.additionalProperties && refName(s.additionalProperties) === QUANTITY) return 'v1.ResourceList';
      return `map[string]${goType(s.additionalProperties ?? {})}`;
  }
}

function typeError(value: string, s: RawSchema, at: Where): DecodeError {
  const target = at.field ? `Go struct field ${at.struct}.${at.field}` : 'Go value';
  return new DecodeError(`json: cannot unmarshal ${value} into ${target} of type ${goType(s)}`);
}

/** Index Go's base64.StdEncoding reports for a malformed string, or -1 when it decodes. */
function badBase64At(text: string): number {
  const s = text.replace(/[\r\n]/g, '');
  const body = s.replace(/={1,2}$/, '');
  const bad = body.search(/[^A-Za-z0-9+/]/);
  if (bad >= 0) return bad;
  return s.length % 4 === 0 ? -1 : s.length - (s.length % 4);
}

class Walker {
  readonly unknown: string[] = [];
  constructor(private readonly collectUnknown: boolean) {}

  value(v: unknown, s: RawSchema, at: Where): void {
    if (v === null) return; // null leaves a Go field at its zero value
    const ref = refName(s);
    if (ref) return this.component(v, ref, s, at);
    switch (s.type) {
      case 'string':
        if (typeof v !== 'string') throw typeError(jsonType(v), s, at);
        if (s.format === 'byte') {
          const bad = badBase64At(v);
          if (bad >= 0) throw new DecodeError(`illegal base64 data at input byte ${bad}`);
        }
        return;
      case 'boolean':
        if (typeof v !== 'boolean') throw typeError(jsonType(v), s, at);
        return;
      case 'integer': {
        if (typeof v !== 'number') throw typeError(jsonType(v), s, at);
        const [min, max] = INT_RANGE[s.format ?? 'int64'] ?? INT_RANGE.int64;
        if (!Number.isInteger(v) || v < min || v > max) throw typeError(`number ${v}`, s, at);
        return;
      }
      case 'number':
        if (typeof v !== 'number') throw typeError(jsonType(v), s, at);
        return;
      case 'array':
        if (!Array.isArray(v)) throw typeError(jsonType(v), s, at);
        v.forEach((item, i) => this.value(item, s.items ?? {}, { ...at, path: `${at.path}[${i}]` }));
        return;
      case 'object':
        if (typeof v !== 'object' || Array.isArray(v)) throw typeError(jsonType(v), s, at);
        if (s.additionalProperties) {
          for (const [k, item] of Object.entries(v)) this.value(item, s.additionalProperties, { ...at, path: `${at.path}[${k}]` });
        }
        return;
    }
  }

  private component(v: unknown, name: string, s: RawSchema, at: Where): void {
    if (OPAQUE.has(name)) return;
    if (name === QUANTITY) {
      // resource.Quantity parses whatever JSON it is given, quoted or not.
      const text = typeof v === 'string' ? v.trim() : JSON.stringify(v);
      const m = QUANTITY_FORMAT.exec(text);
      if (!m) throw new DecodeError(`quantities must match the regular expression '${QUANTITY_FORMAT.source}'`);
      if (!QUANTITY_SUFFIX.test(m[2])) throw new DecodeError("unable to parse quantity's suffix");
      return;
    }
    if (name === INT_OR_STRING) {
      // intstr.IntOrString decodes anything but a string as an int32, outside any struct context.
      if (typeof v === 'string') return;
      if (typeof v !== 'number') throw new DecodeError(`json: cannot unmarshal ${jsonType(v)} into Go value of type int32`);
      if (!Number.isInteger(v) || v < INT_RANGE.int32[0] || v > INT_RANGE.int32[1]) {
        throw new DecodeError(`json: cannot unmarshal number ${v} into Go value of type int32`);
      }
      return;
    }
    if (TIME.has(name)) {
      if (typeof v !== 'string') throw new DecodeError(`json: cannot unmarshal ${jsonType(v)} into Go value of type string`);
      return;
    }
    const schema = componentSchemas[name];
    if (typeof v !== 'object' || Array.isArray(v)) throw typeError(jsonType(v), s, at);
    this.fields(v as Record<string, unknown>, name, schema, at);
  }

  fields(obj: Record<string, unknown>, name: string, schema: RawSchema, at: Where): void {
    const props = schema.properties ?? {};
    for (const [k, item] of Object.entries(obj)) {
      const path = at.path ? `${at.path}.${k}` : k;
      const prop = Object.hasOwn(props, k) ? props[k] : undefined;
      if (!prop) {
        if (this.collectUnknown) this.unknown.push(`unknown field "${path}"`);
        // Decoding into the typed object drops what it has no field for, whatever the mode.
        delete obj[k];
        continue;
      }
      this.value(item, prop, { struct: shortName(name), field: at.field ? `${at.field}.${k}` : k, path });
    }
  }
}

/**
 * Checks `obj`, decoded from a request body for group/version/kind, as upstream's decoder does, and
 * drops its unknown fields. Throws a 400 StatusError when the request must fail; returns the
 * unknown- and duplicate-field warnings for Warn. Kinds without a schema are checked for duplicates only.
 */
export function checkObject(group: string, version: string, kind: string, obj: unknown, mode: FieldValidation): { warnings: string[] } {
  const name = schemaNameForKind(group, version, kind);
  const walker = new Walker(mode !== 'Ignore');
  const fail = (why: string) => badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${why}`);
  if (name && typeof obj === 'object' && obj !== null && !Array.isArray(obj)) {
    try {
      walker.fields(obj as Record<string, unknown>, name, componentSchemas[name], { struct: kind, field: '', path: '' });
    } catch (err) {
      if (err instanceof DecodeError) throw fail(err.message);
      throw err;
    }
  }
  if (mode === 'Ignore') return { warnings: [] };
  const strict = [...walker.unknown, ...duplicateFields(obj).map((path) => `duplicate field "${path}"`)];
  if (mode === 'Strict' && strict.length) throw fail(`strict decoding error: ${strict.join(', ')}`);
  return { warnings: mode === 'Warn' ? strict : [] };
}
