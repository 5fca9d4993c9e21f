// Schemas of the served kinds, from the generated OpenAPI v3 components (scripts/gen-schemas.ts).
// Two views: the raw components as upstream's /openapi/v3 serves them, and FieldSchema, the resolved
// tree that strategic merge patch, server-side apply and strict decoding walk.
import components from './schemas/components.json' with { type: 'json' };

/** An OpenAPI v3 schema as stored and served (x-kubernetes-* extensions included). */
export interface RawSchema {
  description?: string;
  type?: string;
  format?: string;
  properties?: Record<string, RawSchema>;
  additionalProperties?: RawSchema;
  items?: RawSchema;
  required?: string[];
  $ref?: string;
  allOf?: RawSchema[];
  oneOf?: RawSchema[];
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[];
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

export interface FieldSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, FieldSchema>;
  additionalProperties?: FieldSchema;
  items?: FieldSchema;
  patchStrategy?: string;
  patchMergeKey?: string;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'atomic' | 'granular';
  intOrString?: boolean;
  preserveUnknownFields?: boolean;
}

/** Every component schema, keyed `io.k8s.api.core.v1.Pod` etc. */
export const componentSchemas: Readonly<Record<string, RawSchema>> = components as Record<string, RawSchema>;

export const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
export const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
/** metav1.Time and MicroTime: RFC 3339 strings whose zero value marshals as null. */
export const TIME = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.Time', 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime']);
/** Opaque JSON: managedFields[].fieldsV1 and WatchEvent.object hold any object. */
export const OPAQUE = new Set(['io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1', 'io.k8s.apimachinery.pkg.runtime.RawExtension']);

const REF_PREFIX = '#/components/schemas/';

/** The component a schema points at (`$ref`, or `allOf: [{$ref}]` when the property carries siblings). */
export function refName(s: RawSchema): string | undefined {
  const ref = s.$ref ?? s.allOf?.[0]?.$ref;
  return ref?.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
}

const byGvk = new Map<string, string>();
for (const [name, s] of Object.entries(componentSchemas)) {
  for (const g of s['x-kubernetes-group-version-kind'] ?? []) byGvk.set(`${g.group}/${g.version}/${g.kind}`, name);
}

/** The component name of a kind, e.g. ('apps','v1','Deployment') → io.k8s.api.apps.v1.Deployment. */
export function schemaNameForKind(group: string, version: string, kind: string): string | undefined {
  return byGvk.get(`${group}/${version}/${kind}`);
}

const resolved = new Map<string, FieldSchema>();

function componentField(name: string): FieldSchema {
  // Served kinds reference no schema recursively (JSONSchemaProps is not served), so plain recursion ends.
  let out = resolved.get(name);
  if (out) return out;
  const raw = componentSchemas[name];
  if (!raw) throw new Error(`schema ${name} is not generated`);
  if (name === INT_OR_STRING) out = { intOrString: true };
  else if (name === QUANTITY) out = { type: 'string' };
  else if (OPAQUE.has(name)) out = { type: 'object', preserveUnknownFields: true };
  else out = convert(raw);
  resolved.set(name, out);
  return out;
}

function convert(raw: RawSchema): FieldSchema {
  const ref = refName(raw);
  const out: FieldSchema = ref ? { ...componentField(ref) } : {};
  if (raw.type) out.type = raw.type as FieldSchema['type'];
  if (raw.properties) out.properties = Object.fromEntries(Object.entries(raw.properties).map(([k, v]) => [k, convert(v)]));
  if (raw.additionalProperties) out.additionalProperties = convert(raw.additionalProperties);
  if (raw.items) out.items = convert(raw.items);
  if (raw['x-kubernetes-patch-strategy']) out.patchStrategy = raw['x-kubernetes-patch-strategy'];
  if (raw['x-kubernetes-patch-merge-key']) out.patchMergeKey = raw['x-kubernetes-patch-merge-key'];
  if (raw['x-kubernetes-list-type']) out.listType = raw['x-kubernetes-list-type'];
  if (raw['x-kubernetes-list-map-keys']) out.listMapKeys = raw['x-kubernetes-list-map-keys'];
  if (raw['x-kubernetes-map-type']) out.mapType = raw['x-kubernetes-map-type'];
  return out;
}

/** The resolved schema of a served kind (or a meta kind such as Status, DeleteOptions), cached. */
export function schemaForKind(group: string, version: string, kind: string): FieldSchema | undefined {
  const name = schemaNameForKind(group, version, kind);
  return name === undefined ? undefined : componentField(name);
}
