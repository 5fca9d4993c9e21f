// fast-check arbitraries for hostile API requests: objects from the served kinds' OpenAPI schemas
// and their valid templates, then mutated (nulls, wrong types, deep nesting, huge strings,
// prototype keys, unicode, duplicate keys); patches of every type; odd names, paths, selectors,
// query parameters, content types and Accept headers.
import fc from 'fast-check';
import YAML from 'yaml';
import { schemaForKind, type FieldSchema } from '../../src/api/schema.js';
import type { ResourceInfo } from '../../src/api/resources.js';
import { NAME, NAMESPACE, NEW_NAME, RV, groupPrefix, type Target } from './templates.js';

type Json = unknown;
type Path = string[];

/** A request before the run's object name and resourceVersion are filled in. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The resource whose stored state the request may change. */
  resource: ResourceInfo;
  writes: boolean;
}

/** An object whose keys are all own data properties, `__proto__` included. */
export function own(entries: [string, Json][]): Record<string, Json> {
  const o: Record<string, Json> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

const protoKeys = ['__proto__', 'constructor', 'prototype'] as const;

/** `{"__proto__": {"polluted": ...}}` and its relatives: each would reach a prototype through naive merging. */
const prototypePayload: fc.Arbitrary<Json> = fc
  .tuple(fc.constantFrom(...protoKeys), fc.constantFrom('fuzzPolluted', 'toString', 'hasOwnProperty', 'valueOf', 'length'))
  .map(([k, probe]) => own([[k, own([[probe, 'yes'], ['prototype', own([[probe, 'yes']])]])]]));

const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'a', '0', '-1', 'null', 'true', '__proto__', 'constructor', 'prototype', 'toString', '../..', '%', '\u0000', '\ud800', 'ü', '😀', 'x'.repeat(300), '${x}', "'", '"', '\\', '\r\n', 'A_B', '1e3'),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);

const oddKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...protoKeys), oddString);

/** Any JSON value, small, with prototype-shaped keys among its keys. */
const anyValue: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.constantFrom(2 ** 53 + 1, -0, 1e308, 1.5, -2147483649, 4294967296),
    oddString,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.array(fc.tuple(oddKey, tie('v')), { maxLength: 3 }).map(own),
    prototypePayload,
  ),
})).v;

// Placeholders replaced in the serialized text: nesting too deep to build as an object here.
const deepMarker = (depth: number, open: '[' | '{') => `@@deep-${depth}-${open === '[' ? 'a' : 'o'}@@`;
const deepText = (depth: number, open: string) => (open === 'a' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

// Over the annotation limit, over 1 MiB, and (rarely) over the 3 MiB body limit; shrinks to the smallest.
const hugeString = fc
  .tuple(fc.oneof({ withCrossShrink: true }, { weight: 8, arbitrary: fc.constantFrom(70_000, 300_000, 600_000) }, { weight: 1, arbitrary: fc.constant(3_300_000) }), fc.constantFrom('x', 'é'))
  .map(([n, c]) => c.repeat(n));

const deepValue = fc.tuple(fc.constantFrom(60, 1_000, 10_000, 100_000), fc.constantFrom('[' as const, '{' as const)).map(([d, o]) => deepMarker(d, o));

/** Replaces deep-nesting markers (quoted in JSON, bare in YAML) with the nesting itself. */
function expandMarkers(text: string): string {
  return text.replace(/"?@@deep-(\d+)-([ao])@@"?/g, (_m, d: string, o: string) => deepText(Number(d), o));
}

// --- the schema side -------------------------------------------------------------------------

const stringPool = ['a', 'fz', NAME, '10.0.0.1', '::1', 'TCP', 'UDP', 'Always', 'Never', '1Gi', '100m', '-1', '2024-01-01T00:00:00Z', '', 'Exists', 'Equal', 'NoSchedule', 'ClusterIP', 'NodePort', 'kubernetes.io/x', 'a=b', 'http', 'IPv4', 'Opaque'];

const valueCache = new Map<FieldSchema, Map<number, fc.Arbitrary<Json>>>();

/** A value shaped by a schema: mostly plausible, nested at most `depth` levels, built lazily. */
export function valueFor(s: FieldSchema | undefined, depth: number): fc.Arbitrary<Json> {
  if (!s) return anyValue;
  let byDepth = valueCache.get(s);
  if (!byDepth) valueCache.set(s, (byDepth = new Map()));
  let arb = byDepth.get(depth);
  if (arb) return arb;
  arb = schemaValue(s, depth);
  byDepth.set(depth, arb);
  return arb;
}

function schemaValue(s: FieldSchema, depth: number): fc.Arbitrary<Json> {
  if (s.intOrString) return fc.oneof(fc.integer({ min: -1, max: 70_000 }), fc.constantFrom('http', '80', '50%', '', 'x y'));
  switch (s.type) {
    case 'string':
      return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...stringPool) }, { weight: 1, arbitrary: oddString });
    case 'integer':
    case 'number':
      return fc.oneof(fc.integer({ min: -2, max: 100_000 }), fc.constantFrom(2 ** 31, 2 ** 53 + 2, 1.5, -1, 0));
    case 'boolean':
      return fc.boolean();
    case 'array':
      return depth <= 0 ? fc.constant([]) : fc.array(valueFor(s.items, depth - 1), { maxLength: 2 });
    case 'object': {
      if (depth <= 0) return fc.constant({});
      const props = Object.keys(s.properties ?? {});
      if (props.length === 0) {
        return fc.array(fc.tuple(fc.oneof(fc.constantFrom('a', 'b.c', 'example.com/k'), oddKey), valueFor(s.additionalProperties, depth - 1)), { maxLength: 2 }).map(own);
      }
      return fc
        .shuffledSubarray(props, { maxLength: Math.min(3, props.length) })
        .chain((keys) => fc.tuple(...keys.map((k) => valueFor(s.properties![k], depth - 1))).map((vals) => own(keys.map((k, i) => [k, vals[i]]))));
    }
    default:
      return anyValue;
  }
}

interface SchemaPath {
  path: Path;
  schema: FieldSchema;
}

/** Every property path of a kind's schema down to `maxDepth` (array items as index 0). */
function schemaPaths(schema: FieldSchema | undefined, maxDepth = 5): SchemaPath[] {
  const out: SchemaPath[] = [];
  const walk = (s: FieldSchema, path: Path) => {
    if (path.length > 0) out.push({ path, schema: s });
    if (path.length >= maxDepth) return;
    if (s.type === 'array' && s.items) walk(s.items, [...path, '0']);
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, [...path, k]);
  };
  if (schema) walk(schema, []);
  return out;
}

function schemaAt(schema: FieldSchema | undefined, path: Path): FieldSchema | undefined {
  let s = schema;
  for (const seg of path) {
    if (!s) return undefined;
    s = s.type === 'array' ? s.items : (s.properties?.[seg] ?? s.additionalProperties);
  }
  return s;
}

/** Paths of the lists strategic merge patch merges by key, and of their primitive cousins. */
function patchLists(paths: SchemaPath[]): { path: Path; mergeKey?: string }[] {
  return paths.filter((p) => p.schema.type === 'array' && (p.schema.patchStrategy || p.schema.listType)).map((p) => ({ path: p.path, mergeKey: p.schema.patchMergeKey }));
}

// --- mutating objects ------------------------------------------------------------------------

function clone<T>(v: T): T {
  // Not v.map: a mutation may have given the array an own `constructor`, which map would call.
  if (Array.isArray(v)) return Array.from({ length: v.length }, (_, i) => clone(v[i])) as T;
  if (v && typeof v === 'object') return own(Object.keys(v).map((k) => [k, clone((v as Record<string, Json>)[k])])) as T;
  return v;
}

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Sets path in root (creating objects on the way, replacing non-containers) with own properties only. */
function setPath(root: Record<string, Json>, path: Path, value: Json): void {
  let node: Json = root;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i]!;
    const last = i === path.length - 1;
    const container = node as Record<string, Json>;
    if (last) {
      Object.defineProperty(container, seg, { value, enumerable: true, writable: true, configurable: true });
      return;
    }
    let next = Object.prototype.hasOwnProperty.call(container, seg) ? container[seg] : undefined;
    if (typeof next !== 'object' || next === null) {
      next = /^\d+$/.test(path[i + 1]!) ? [] : own([]);
      Object.defineProperty(container, seg, { value: next, enumerable: true, writable: true, configurable: true });
    }
    node = next;
  }
}

function deletePath(root: Record<string, Json>, path: Path): void {
  let node: Json = root;
  for (const seg of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, seg)) return;
    node = (node as Record<string, Json>)[seg];
  }
  if (typeof node === 'object' && node !== null) delete (node as Record<string, Json>)[path[path.length - 1]!];
}

function getPath(root: Json, path: Path): Json {
  let node = root;
  for (const seg of path) {
    if (typeof node !== 'object' || node === null || !Object.prototype.hasOwnProperty.call(node, seg)) return undefined;
    node = (node as Record<string, Json>)[seg];
  }
  return node;
}

/** Every path in a concrete object (leaves and containers). */
function objectPaths(v: Json, path: Path = []): Path[] {
  const out: Path[] = path.length ? [path] : [];
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...objectPaths(x, [...path, String(i)])));
  else if (isObject(v)) for (const k of Object.keys(v)) out.push(...objectPaths(v[k], [...path, k]));
  return out;
}

type Mutation = { op: 'set'; path: Path; value: Json } | { op: 'delete'; path: Path };

/** Mutations of an object of this target: schema-shaped values at schema paths, and every kind of garbage anywhere. */
function mutationArb(t: Target): fc.Arbitrary<Mutation> {
  const schema = schemaForKind(t.resource.group, t.resource.version, t.resource.kind);
  const sPaths = schemaPaths(schema);
  const tPaths = objectPaths(t.template);
  const anyPath = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...tPaths) },
    { weight: 3, arbitrary: fc.constantFrom(...sPaths.map((p) => p.path)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom([], ...tPaths), oddKey).map(([p, k]) => [...p, k]) },
  );
  const garbage = fc.oneof(
    { withCrossShrink: true },
    { weight: 4, arbitrary: fc.constant(null) },
    { weight: 4, arbitrary: anyValue },
    { weight: 3, arbitrary: prototypePayload },
    { weight: 2, arbitrary: deepValue },
    { weight: 1, arbitrary: hugeString },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }) },
  );
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...sPaths).chain((p) => valueFor(p.schema, 2).map((value): Mutation => ({ op: 'set', path: p.path, value }))) },
    { weight: 5, arbitrary: fc.tuple(anyPath, garbage).map(([path, value]): Mutation => ({ op: 'set', path, value })) },
    { weight: 2, arbitrary: fc.constantFrom(...tPaths).map((path): Mutation => ({ op: 'delete', path })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...tPaths), fc.constantFrom(...protoKeys)).map(([path, k]): Mutation => ({ op: 'set', path: [...path.slice(0, -1), k], value: clone(getPath(t.template, path)) })) },
  );
}

function applyMutations(base: Record<string, Json>, ms: Mutation[]): Record<string, Json> {
  const out = clone(base);
  for (const m of ms) {
    if (m.op === 'set') setPath(out, m.path, clone(m.value));
    else deletePath(out, m.path);
  }
  return out;
}

/** Objects derived from the target's template: valid ones, lightly and heavily mutated ones. */
function objectArb(t: Target): fc.Arbitrary<Record<string, Json>> {
  return fc.array(mutationArb(t), { maxLength: 4 }).map((ms) => applyMutations(t.template, ms));
}

// --- serializing bodies ----------------------------------------------------------------------

/** Repeated keys, spliced into the text after its first `{`: JSON.parse keeps the last, others the first. */
const duplicateKeys = [
  '"kind":"Secret",',
  '"apiVersion":"v2",',
  '"metadata":{"name":"fz-dup","namespace":"other"},',
  '"__proto__":{"fuzzPolluted":"dup"},',
  '"spec":null,',
  '"metadata":null,',
];

type Encoding = 'json' | 'json-dup' | 'yaml' | 'yaml-raw' | 'protobuf' | 'garbage' | 'empty';

const encodingArb: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('json' as const) },
  { weight: 2, arbitrary: fc.constant('json-dup' as const) },
  { weight: 3, arbitrary: fc.constant('yaml' as const) },
  { weight: 1, arbitrary: fc.constant('yaml-raw' as const) },
  { weight: 1, arbitrary: fc.constant('protobuf' as const) },
  { weight: 1, arbitrary: fc.constant('garbage' as const) },
  { weight: 1, arbitrary: fc.constant('empty' as const) },
);

/** YAML a parser must refuse or bound: alias expansion, merge keys, tags, several documents, odd keys. */
const rawYaml = fc.constantFrom(
  ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...[1, 2, 3, 4, 5, 6].map((i) => `a${i}: &a${i} [${Array(9).fill(i === 1 ? '*a' : `*a${i - 1}`).join(',')}]`)].join('\n'),
  `apiVersion: v1\n<<: {kind: Pod, metadata: {name: ${NAME}}}\n`,
  `kind: !!js/function "x"\nmetadata: {name: ${NAME}}\n`,
  `metadata: {name: ${NAME}}\n---\nmetadata: {name: b}\n`,
  `__proto__: {fuzzPolluted: yes}\nmetadata:\n  name: ${NAME}\n  __proto__: {fuzzPolluted: yes}\n`,
  `metadata: {name: ${NAME}}\nmetadata: {name: b}\n`,
  `? [complex, key]\n: value\nmetadata: {name: ${NAME}}\n`,
  `1: 2\nnull: x\n~: y\ntrue: z\n`,
  `data: !!binary AAEC\nmetadata: {name: ${NAME}}\n`,
  `a: &a [*a]\n`,
  `metadata:\n\tname: tab\n`,
  `- just\n- a list\n`,
  `"unterminated`,
  `metadata: {name: ${NAME}, labels: {a: 0x1F, b: 1_000, c: .inf, d: 2001-12-14}}\n`,
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
);

const protobufBody = fc.oneof(
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.concat([Buffer.from('k8s\0'), Buffer.from(b)])),
  fc.constantFrom(
    Buffer.from('k8s\0\x0a\xff\xff\xff\xff\x0f', 'latin1'),
    Buffer.from('k8s\0\x12\x05\x0a\x03\x0a\x01', 'latin1'),
    Buffer.from('k8s\0', 'latin1'),
    Buffer.from('k8s'),
    Buffer.from('\x0a\x02v1\x12\x03Pod', 'latin1'),
  ),
);

const garbageBody = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constantFrom('{', '{"a":', '[', 'null', 'true', '1', '"s"', '[]', '{}', '{"a":1}}', '\ufeff{}', '{"a":1,}', "{'a':1}", 'NaN', '{"a":1e99999}', '{"\\ud800":1}'),
);

/** The text of an object in one encoding, and the Content-Type that names it. */
function encode(obj: Json, enc: Encoding): fc.Arbitrary<{ body: string | Buffer; contentType: string }> {
  switch (enc) {
    case 'json':
      return fc.constant({ body: expandMarkers(JSON.stringify(obj)), contentType: 'application/json' });
    case 'json-dup':
      return fc.constantFrom(...duplicateKeys).map((dup) => {
        const text = expandMarkers(JSON.stringify(obj));
        return { body: text.startsWith('{') && text.length > 2 ? `{${dup}${text.slice(1)}` : text, contentType: 'application/json' };
      });
    case 'yaml':
      return fc.constant({ body: expandMarkers(YAML.stringify(obj, { aliasDuplicateObjects: false, lineWidth: 0 })), contentType: 'application/yaml' });
    case 'yaml-raw':
      return rawYaml.map((body) => ({ body, contentType: 'application/yaml' }));
    case 'protobuf':
      return protobufBody.map((body) => ({ body, contentType: 'application/vnd.kubernetes.protobuf' }));
    case 'garbage':
      return garbageBody.map((body) => ({ body, contentType: 'application/json' }));
    case 'empty':
      return fc.constant({ body: '', contentType: 'application/json' });
  }
}

// --- patches ---------------------------------------------------------------------------------

const escapedPointers = [
  '/metadata/annotations/example.com~1a',
  '/metadata/annotations/a~0b',
  '/metadata/annotations/a~2',
  '/metadata/annotations/~',
  '/metadata/annotations/~1~0~01',
  '/metadata/labels/app~1x',
];
const oddPointers = ['', '/', 'metadata', '//', '/metadata//name', '/metadata/name/x', '/%', '/metadata/labels/'];
const protoPointers = [
  '/__proto__/fuzzPolluted',
  '/constructor/prototype/fuzzPolluted',
  '/metadata/__proto__/fuzzPolluted',
  '/metadata/labels/__proto__',
  '/metadata/labels/__proto__/fuzzPolluted',
  '/metadata/annotations/constructor/prototype/fuzzPolluted',
  '/spec/__proto__',
  '/metadata/finalizers/__proto__',
  '/metadata/labels/constructor',
];

function pointerOf(path: Path): string {
  return path.map((s) => '/' + s.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

function pointerArb(t: Target): fc.Arbitrary<string> {
  const existing = objectPaths(t.template).map(pointerOf);
  const arrays = objectPaths(t.template).filter((p) => Array.isArray(getPath(t.template, p))).map(pointerOf);
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...existing) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...(arrays.length ? arrays : existing)), fc.constantFrom('/-', '/99', '/-1', '/01', '/1e0', '/0/x', '/ 0', '/4294967296')).map(([a, b]) => a + b) },
    { weight: 2, arbitrary: fc.constantFrom(...escapedPointers) },
    { weight: 1, arbitrary: fc.constantFrom(...oddPointers) },
    { weight: 2, arbitrary: fc.constantFrom(...protoPointers) },
  );
}

function jsonPatchArb(t: Target): fc.Arbitrary<string> {
  const pointer = pointerArb(t);
  const value = fc.oneof(
    fc.constantFrom(...objectPaths(t.template)).map((p) => clone(getPath(t.template, p))),
    anyValue,
    prototypePayload,
    fc.constantFrom(NAME, 'fz', '', 1, null),
    deepValue,
  );
  const op = fc
    .record(
      {
        op: fc.oneof({ weight: 10, arbitrary: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test') }, { weight: 1, arbitrary: fc.constantFrom('bogus', '', 'ADD', null, 1, '__proto__') }),
        path: fc.oneof({ weight: 10, arbitrary: pointer }, { weight: 1, arbitrary: fc.constantFrom(null, 1, ['a']) }),
        from: pointer,
        value,
      },
      { requiredKeys: ['op'] },
    )
    .map((o) => own(Object.entries(o)));
  const ops = fc.array(op, { minLength: 1, maxLength: 6 }).map((list) => expandMarkers(JSON.stringify(list)));
  // Copies of a subtree into itself double it each time: a patch must be bounded by what it builds.
  const doubling = fc.integer({ min: 8, max: 20 }).map((n) =>
    JSON.stringify([
      { op: 'add', path: '/metadata/annotations', value: { z: 'x' } },
      ...Array.from({ length: n }, (_, i) => ({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/k${i}` })),
    ]),
  );
  const tooMany = fc.constant(JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/metadata/name', value: NAME }))));
  const notAList = fc.constantFrom('{"op":"add","path":"/a","value":1}', 'null', '"x"', '[]', '[null]', '[1]', '[[]]', '[{}]', '{}');
  return fc.oneof({ weight: 12, arbitrary: ops }, { weight: 1, arbitrary: doubling }, { weight: 1, arbitrary: tooMany }, { weight: 2, arbitrary: notAList });
}

/** A partial object: a few of the template's subtrees, values and nulls, then mutated. */
function partialArb(t: Target): fc.Arbitrary<Record<string, Json>> {
  const paths = objectPaths(t.template);
  const piece = fc.constantFrom(...paths).chain((p) =>
    fc.oneof(fc.constant(clone(getPath(t.template, p))), fc.constant(null), valueFor(schemaAt(schemaForKind(t.resource.group, t.resource.version, t.resource.kind), p), 2)).map((v) => [p, v] as const),
  );
  return fc.tuple(fc.array(piece, { minLength: 1, maxLength: 4 }), fc.array(mutationArb(t), { maxLength: 2 })).map(([pieces, ms]) => {
    const out = own([]);
    for (const [p, v] of pieces) setPath(out, p, clone(v));
    return applyMutations(out, ms);
  });
}

/** A strategic merge patch: a partial object with `$patch`, `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…` directives, good and bad. */
function strategicArb(t: Target): fc.Arbitrary<Record<string, Json>> {
  const schema = schemaForKind(t.resource.group, t.resource.version, t.resource.kind);
  const lists = patchLists(schemaPaths(schema, 6));
  const objects = [[], ...objectPaths(t.template).filter((p) => isObject(getPath(t.template, p)))];
  const directive: fc.Arbitrary<[Path, Json]> = fc.oneof(
    fc.tuple(fc.constantFrom(...objects), fc.constantFrom('replace', 'delete', 'merge', 'bogus', null, 1, {}, [])).map(([p, v]): [Path, Json] => [[...p, '$patch'], v]),
    fc.tuple(fc.constantFrom(...objects), fc.constantFrom(['a'], ['containers', 'nope'], 'x', null, [1], [], [{}])).map(([p, v]): [Path, Json] => [[...p, '$retainKeys'], v]),
    fc.tuple(fc.constantFrom(...objects), fc.constantFrom('$setElementOrder/', '$setElementOrder/__proto__', '$deleteFromPrimitiveList/', '$deleteFromPrimitiveList/__proto__', '$unknownDirective', '$patch/x')).map(([p, k]): [Path, Json] => [[...p, k], ['x']]),
  );
  const listDirectives: fc.Arbitrary<[Path, Json]>[] = lists.length
    ? [
        fc.tuple(fc.constantFrom(...lists), fc.integer({ min: 0, max: 6 })).map(([l, pick]): [Path, Json] => {
          const field = l.path[l.path.length - 1]!;
          const parent = l.path.slice(0, -1).filter((s) => s !== '0');
          const mk = l.mergeKey ?? 'name';
          const at = (key: string): Path => [...parent, key];
          switch (pick) {
            case 0:
              return [at(`$setElementOrder/${field}`), [own([[mk, 'c']]), own([[mk, 'zz']])]];
            case 1:
              return [at(`$setElementOrder/${field}`), 'x'];
            case 2:
              return [at(`$deleteFromPrimitiveList/${field}`), ['kubernetes', 'x']];
            case 3:
              return [at(`$deleteFromPrimitiveList/${field}`), [own([])]];
            case 4:
              return [at(field), [own([[mk, 'c'], ['$patch', 'delete']])]];
            case 5:
              return [at(field), [own([['$patch', 'replace']])]];
            default:
              return [at(field), [own([['$patch', 'delete']]), null, 'x']];
          }
        }),
      ]
    : [];
  return fc.tuple(partialArb(t), fc.array(fc.oneof(directive, ...listDirectives), { minLength: 1, maxLength: 3 })).map(([base, ds]) => {
    const out = clone(base);
    for (const [p, v] of ds) setPath(out, p, clone(v));
    return out;
  });
}

// --- names, paths, query parameters, headers -------------------------------------------------

/** encodeURIComponent, with lone surrogates made U+FFFD first (it throws on them). */
function escape(s: string): string {
  return encodeURIComponent(Buffer.from(s, 'utf8').toString('utf8'));
}

/** Path segments as sent on the wire (already escaped where they must be). */
const oddSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('.', '..', '%2e', '%2E', '%2e%2e', '%2E%2E', '.%2e', 'a%2Fb', 'a/b', `${NAME}/..`, `${NAME}/.`, 'a'.repeat(300), '%C3%BC', '%F0%9F%98%80', '%00', '%zz', '%', '%E0%A4%A', '%C0%AE', '~', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', `${NAME};x`, `${NAME}%3Fa=b`, NAME.toUpperCase(), '%20', '+', 'default', 'kube-system'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }).map(escape),
);

const boolish = ['true', 'false', '1', '0', '', 'yes', 'TRUE', 'True', 't', 'f', 'on', '2', '-1', 'null'];
const intish = ['0', '1', '-1', '5', '', 'abc', '1.5', '1e3', '9223372036854775808', '99999999999999999999', ' 1', '0x10', 'NaN', '%zz'];
const queryValues: Record<string, string[]> = {
  watch: boolish,
  limit: intish,
  continue: ['', 'abc', '%%%', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJhIn0', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTF9', 'e30', 'bnVsbA', 'W10'],
  resourceVersion: ['0', '1', '', RV, 'abc', '-1', '99999999999', '18446744073709551616', '1.5', '00'],
  resourceVersionMatch: ['NotOlderThan', 'Exact', '', 'exact', 'Bogus'],
  timeoutSeconds: ['1', '0', '-1', '', 'abc', '1.5', '99999999999999999999'],
  dryRun: ['All', '', 'all', 'Some', 'All,All'],
  fieldValidation: ['Strict', 'Warn', 'Ignore', '', 'strict', 'Loud'],
  pretty: boolish,
  labelSelector: ['app=fz', 'app in (fz,b)', 'app notin (x)', '!app', 'app', 'a=b,c!=d', 'app in (', '==', 'a=b=c', `${'x'.repeat(300)}=a`, 'a.b/c=d', '%C3%BC=1', '  ', ',', 'a in ()', 'a>1', 'a<x', 'a=%zz', 'a=b,,c=d', '!'],
  fieldSelector: [`metadata.name=${NAME}`, 'metadata.namespace!=x', 'spec.nodeName=', 'status.phase=Running', 'spec.bogus=x', 'metadata.name', '=x', 'metadata.name==a', 'a=b,c', 'metadata.name=a,metadata.name=b', 'metadata.name=%C3%BC', 'type=Opaque', 'involvedObject.name=p', 'spec.signerName=x'],
  fieldManager: ['fz', '', 'x'.repeat(200), '%C3%BC', 'kubectl', 'a b'],
  force: boolish,
  propagationPolicy: ['Foreground', 'Background', 'Orphan', '', 'Sideways'],
  gracePeriodSeconds: intish,
  orphanDependents: boolish,
  allowWatchBookmarks: boolish,
  sendInitialEvents: boolish,
  includeObject: ['Object', 'Metadata', 'None', '', 'x'],
  container: ['c', '', 'nope'],
  tailLines: intish,
  limitBytes: intish,
  sinceSeconds: intish,
  timestamps: boolish,
  previous: boolish,
};
const queryKeys = Object.keys(queryValues);

const queryPair: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...queryKeys).chain((k) => fc.constantFrom(...queryValues[k]!).map((v) => `${k}=${v.startsWith('%') ? v : escape(v)}`)) },
  { weight: 1, arbitrary: fc.constantFrom('watch', 'limit', 'dryRun', '=x', '&', '__proto__=1', 'constructor=x', 'limit=1&limit=2', 'dryRun=All&dryRun=', '%zz=1') },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...queryKeys), oddString).map(([k, v]) => `${k}=${escape(v)}`) },
);

const queryArb = fc.array(queryPair, { maxLength: 4 });

const accepts = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/vnd.kubernetes.protobuf, application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
  'application/json;as=Table;v=v9;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/yaml;as=Table;v=v1;g=meta.k8s.io',
  '*/*',
  'text/html',
  '',
  'application/json;q=0',
  ';;;',
  'application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io',
  'application/cbor',
  'application/json, */*;q=0.1',
  'application/json;stream=watch',
  'application/json;q=abc',
];
const contentTypes = [
  'application/json',
  'application/json; charset=utf-8',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
  'application/apply-patch+cbor',
  'application/cbor',
  'text/plain',
  '',
  'APPLICATION/JSON',
  'application/json;;',
  'application/json; charset=latin1',
  'multipart/form-data; boundary=x',
];
const extraHeaders: Record<string, string>[] = [
  { 'Impersonate-User': 'system:anonymous' },
  { 'Impersonate-Group': 'system:unauthenticated' },
  { 'X-Remote-User': 'mallory', 'X-Remote-Group': 'system:masters' },
  { 'Content-Encoding': 'gzip' },
  { 'If-None-Match': '"x"' },
  { Authorization: 'Bearer not-a-token' },
  { Authorization: 'Basic Zm9vOmJhcg==' },
];

interface Parts {
  ns: string;
  name: string;
  sub: string;
  prefix: string;
}

const nsArb = fc.oneof({ weight: 12, arbitrary: fc.constant(NAMESPACE) }, { weight: 2, arbitrary: oddSegment });
const nameArb = fc.oneof({ weight: 12, arbitrary: fc.constant(NAME) }, { weight: 2, arbitrary: oddSegment });

function prefixArb(r: ResourceInfo): fc.Arbitrary<string> {
  const normal = groupPrefix(r);
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant(normal) },
    { weight: 1, arbitrary: fc.constantFrom(`${normal}/watch`, `${normal.replace(/v1$/, 'v2')}`, r.group ? '/api/v1' : '/apis/apps/v1', `${normal}/`, `/${normal}`, normal.toUpperCase(), `${normal}/.`, `${normal}/..`) },
  );
}

function subArb(r: ResourceInfo, verb: 'get' | 'write'): fc.Arbitrary<string> {
  const subs = r.subresources.map((s) => s.name).filter((s) => (verb === 'get' ? true : !['log', 'exec', 'attach', 'portforward'].includes(s)));
  return fc.oneof({ weight: 8, arbitrary: fc.constant('') }, { weight: 2, arbitrary: subs.length ? fc.constantFrom(...subs) : fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('bogus', '..', '.', 'status/x', '%2e%2e') });
}

function partsArb(r: ResourceInfo, verb: 'get' | 'write'): fc.Arbitrary<Parts> {
  return fc.record({ ns: nsArb, name: nameArb, sub: subArb(r, verb), prefix: prefixArb(r) });
}

function itemPath(r: ResourceInfo, p: Parts): string {
  const scope = r.namespaced ? `/namespaces/${p.ns}` : '';
  return `${p.prefix}${scope}/${r.resource}/${p.name}${p.sub ? `/${p.sub}` : ''}`;
}

function listPath(r: ResourceInfo, p: Parts, allNamespaces: boolean): string {
  return allNamespaces || !r.namespaced ? `${p.prefix}/${r.resource}` : `${p.prefix}/namespaces/${p.ns}/${r.resource}`;
}

function withQuery(path: string, query: string[]): string {
  return query.length ? `${path}?${query.join('&')}` : path;
}

const acceptArb = fc.option(
  fc.oneof({ weight: 3, arbitrary: fc.constantFrom('application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io', '*/*') }, { weight: 2, arbitrary: fc.constantFrom(...accepts) }),
  { freq: 3 },
);
const extraArb = fc.option(fc.constantFrom(...extraHeaders), { freq: 10 });

function headersOf(contentType: string | undefined, accept: string | null, extra: Record<string, string> | null): Record<string, string> {
  return { ...(contentType !== undefined ? { 'Content-Type': contentType } : {}), ...(accept !== null ? { Accept: accept } : {}), ...(extra ?? {}) };
}

/** Mostly the Content-Type that names the body, sometimes another. */
function contentTypeArb(natural: string): fc.Arbitrary<string> {
  return fc.oneof({ weight: 8, arbitrary: fc.constant(natural) }, { weight: 1, arbitrary: fc.constantFrom(...contentTypes) });
}

const deleteOptions = fc
  .record(
    {
      kind: fc.constantFrom('DeleteOptions', 'Pod', ''),
      apiVersion: fc.constantFrom('v1', 'meta.k8s.io/v1', 'x'),
      propagationPolicy: fc.constantFrom('Foreground', 'Background', 'Orphan', 'Sideways', '', null),
      gracePeriodSeconds: fc.oneof(fc.integer({ min: -2, max: 60 }), fc.constantFrom('x', null, 1.5)),
      preconditions: fc.oneof(fc.constant(null), fc.record({ uid: fc.constantFrom('x', '', null), resourceVersion: fc.constantFrom(RV, '1', 'x', null) }, { requiredKeys: [] })),
      dryRun: fc.constantFrom(['All'], ['Some'], [], 'All', null),
      orphanDependents: fc.constantFrom(true, false, 'x', null),
    },
    { requiredKeys: [] },
  )
  .chain((o) => fc.tuple(fc.constant(o), fc.option(prototypePayload, { freq: 5 })))
  .map(([o, p]) => (p ? Object.assign(own(Object.entries(o)), p as object) : own(Object.entries(o))));

/** One hostile request against the target's resource. */
export function requestArb(t: Target): fc.Arbitrary<FuzzRequest> {
  const r = t.resource;
  const base = { resource: r };
  const bodyOf = (enc: Encoding) => objectArb(t).chain((obj) => encode(obj, enc));

  const get = fc
    .record({
      parts: partsArb(r, 'get'),
      shape: fc.constantFrom('item', 'item', 'list', 'all', 'watch'),
      query: queryArb,
      accept: acceptArb,
      extra: extraArb,
      method: fc.oneof({ weight: 12, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constant('HEAD') }),
    })
    .map(({ parts, shape, query, accept, extra, method }): FuzzRequest => {
      const path = shape === 'item' ? itemPath(r, parts) : shape === 'watch' ? `${parts.prefix}/watch${listPath(r, parts, false).slice(parts.prefix.length)}` : listPath(r, parts, shape === 'all');
      return { ...base, method, path: withQuery(path, query), headers: headersOf(undefined, accept, extra), writes: false };
    });

  // Nodes are read only (see fuzzTargets); everything else is written too.
  // A new object beside the run's own (NEW_NAME), or one with a generated name.
  const createBody = (enc: Encoding) =>
    fc
      .tuple(objectArb(t), fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }))
      .map(([obj, generate]) => {
        if (isObject(obj.metadata) && obj.metadata.name === NAME) {
          if (generate) {
            delete obj.metadata.name;
            setPath(obj, ['metadata', 'generateName'], `${NAME}-`);
          } else setPath(obj, ['metadata', 'name'], NEW_NAME);
        }
        return obj;
      })
      .chain((obj) => encode(obj, enc));
  const create = fc
    .record({ parts: partsArb(r, 'write'), enc: encodingArb, query: queryArb, accept: acceptArb, extra: extraArb })
    .chain(({ parts, enc, query, accept, extra }) =>
      createBody(enc).chain(({ body, contentType }) =>
        contentTypeArb(contentType).map((ct): FuzzRequest => ({
          ...base,
          method: 'POST',
          path: withQuery(parts.sub ? itemPath(r, parts) : listPath(r, parts, false), query),
          headers: headersOf(ct, accept, extra),
          body,
          writes: true,
        })),
      ),
    );

  const update = fc
    .record({ parts: partsArb(r, 'write'), enc: encodingArb, query: queryArb, accept: acceptArb, extra: extraArb, rv: fc.constantFrom(undefined, RV, '1', '', 'abc') })
    .chain(({ parts, enc, query, accept, extra, rv }) =>
      objectArb(t)
        .map((obj) => {
          if (rv !== undefined && isObject(obj.metadata)) setPath(obj, ['metadata', 'resourceVersion'], rv);
          return obj;
        })
        .chain((obj) => encode(obj, enc))
        .chain(({ body, contentType }) =>
          contentTypeArb(contentType).map((ct): FuzzRequest => ({ ...base, method: 'PUT', path: withQuery(itemPath(r, parts), query), headers: headersOf(ct, accept, extra), body, writes: true })),
        ),
    );

  const patchBody: fc.Arbitrary<{ body: string; contentType: string; query: string[] }> = fc.oneof(
    { weight: 3, arbitrary: partialArb(t).map((p) => ({ body: expandMarkers(JSON.stringify(p)), contentType: 'application/merge-patch+json', query: [] })) },
    { weight: 4, arbitrary: jsonPatchArb(t).map((body) => ({ body, contentType: 'application/json-patch+json', query: [] })) },
    { weight: 4, arbitrary: strategicArb(t).map((p) => ({ body: expandMarkers(JSON.stringify(p)), contentType: 'application/strategic-merge-patch+json', query: [] })) },
    {
      weight: 3,
      arbitrary: fc
        .record({ obj: objectArb(t), yaml: fc.boolean(), manager: fc.constantFrom('fieldManager=fz', 'fieldManager=fz', 'fieldManager=other', '', 'fieldManager=', `fieldManager=${'m'.repeat(200)}`), force: fc.constantFrom('', '', 'force=true', 'force=false', 'force=x') })
        .map(({ obj, yaml, manager, force }) => ({
          body: expandMarkers(yaml ? YAML.stringify(obj, { aliasDuplicateObjects: false, lineWidth: 0 }) : JSON.stringify(obj)),
          contentType: 'application/apply-patch+yaml',
          query: [manager, force].filter(Boolean),
        })),
    },
    { weight: 1, arbitrary: fc.tuple(encodingArb, fc.constantFrom('application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json', 'application/apply-patch+yaml')).chain(([enc, ct]) => bodyOf(enc).map(({ body }) => ({ body: typeof body === 'string' ? body : body.toString('latin1'), contentType: ct, query: ['fieldManager=fz'] }))) },
  );

  const patch = fc
    .record({ parts: partsArb(r, 'write'), body: patchBody, query: queryArb, accept: acceptArb, extra: extraArb })
    .chain(({ parts, body, query, accept, extra }) =>
      fc.tuple(contentTypeArb(body.contentType), fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })).map(([ct, onList]): FuzzRequest => ({
        ...base,
        method: 'PATCH',
        path: withQuery(onList ? listPath(r, parts, false) : itemPath(r, parts), [...body.query, ...query]),
        headers: headersOf(ct, accept, extra),
        body: body.body,
        writes: true,
      })),
    );

  const del = fc
    .record({ parts: partsArb(r, 'write'), query: queryArb, accept: acceptArb, extra: extraArb, collection: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }), opts: fc.option(deleteOptions, { freq: 2 }), enc: encodingArb })
    .chain(({ parts, query, accept, extra, collection, opts, enc }) =>
      (opts === null ? fc.constant(undefined) : encode(opts, enc === 'protobuf' || enc === 'yaml-raw' ? 'json' : enc)).map((b): FuzzRequest => ({
        ...base,
        method: 'DELETE',
        // deletecollection only with a selector that matches nothing of the other runs' objects.
        path: withQuery(collection ? listPath(r, parts, false) : itemPath(r, parts), collection ? [`fieldSelector=metadata.name%3D${NAME}`, ...query] : query),
        headers: headersOf(b?.contentType, accept, extra),
        body: b?.body,
        writes: true,
      })),
    );

  const odd = fc
    .record({ parts: partsArb(r, 'get'), method: fc.constantFrom('OPTIONS', 'PROPFIND', 'TRACE', 'get', 'PURGE'), query: queryArb, body: fc.option(garbageBody) })
    .map(({ parts, method, query, body }): FuzzRequest => ({ ...base, method, path: withQuery(itemPath(r, parts), query), headers: body === null ? {} : { 'Content-Type': 'application/json' }, body: body ?? undefined, writes: method !== 'TRACE' }));

  return fc.oneof({ weight: 4, arbitrary: get }, { weight: 3, arbitrary: create }, { weight: 3, arbitrary: update }, { weight: 7, arbitrary: patch }, { weight: 2, arbitrary: del }, { weight: 1, arbitrary: odd });
}

