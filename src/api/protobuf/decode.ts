// Decodes a Kubernetes protobuf request body (`Content-Type: application/vnd.kubernetes.protobuf`,
// sent by client-go's typed clientsets, e.g. `kubectl create namespace`) into the JSON object the
// same client would have sent as JSON. The body is the magic `k8s\0` followed by a runtime.Unknown
// whose typeMeta names the kind and whose raw holds the object's own message.
//
// Go's protobuf encoder writes every non-pointer scalar, zero or not, while its JSON encoder omits
// zero values of `omitempty` fields; the field tables (descriptors.json, from
// scripts/gen-protobuf.ts) mark the scalars whose zero still belongs in JSON (`keepZero`), so the
// result matches the JSON body field for field.
import protobuf from 'protobufjs';
import { badRequest } from '../errors.js';
import descriptors from './descriptors.json' with { type: 'json' };

export interface FieldDescriptor {
  name: string;
  id: number;
  /** A scalar type (string, bool, bytes, int32, int64, ...) or a full message name. */
  type: string;
  rule?: 'repeated';
  /** Set for map fields; `type` is then the value type. */
  keyType?: string;
  /** A Go field embedded with `json:",inline"`: its members belong to the parent object. */
  inline?: true;
  /** A scalar whose zero value is still serialized to JSON (a pointer, or no `omitempty`). */
  keepZero?: true;
}

interface Descriptors {
  /** apiVersion → kind → message */
  kinds: Record<string, Record<string, string>>;
  messages: Record<string, FieldDescriptor[]>;
}

const table = descriptors as Descriptors;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const TIME = `${META}.Time`;
const MICRO_TIME = `${META}.MicroTime`;
const FIELDS_V1 = `${META}.FieldsV1`;
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const RAW_EXTENSION = 'k8s.io.apimachinery.pkg.runtime.RawExtension';
const UNKNOWN = 'k8s.io.apimachinery.pkg.runtime.Unknown';

const MAGIC = Buffer.from('k8s\0', 'latin1');
/** Seconds from the Unix epoch to Go's zero time.Time (0001-01-01T00:00:00Z), which JSON writes as null. */
const GO_ZERO_SECONDS = -62135596800;

const VARINT = 0;
const LENGTH_DELIMITED = 2;
const VARINT_TYPES = new Set(['int32', 'int64', 'uint32', 'uint64', 'bool']);
const SCALAR_TYPES = new Set([...VARINT_TYPES, 'string', 'bytes']);

/** protobufjs reports reads past the end as RangeError, which Go's decoder calls io.ErrUnexpectedEOF. */
const wireMessage = (err: Error) => (err instanceof RangeError ? 'unexpected EOF' : err.message);

const fieldTables = new Map<string, Map<number, FieldDescriptor>>();
function fieldsOf(message: string): Map<number, FieldDescriptor> {
  let fields = fieldTables.get(message);
  if (!fields) {
    const list = table.messages[message];
    if (!list) throw new Error(`no protobuf field table for ${message}`);
    fields = new Map(list.map((f) => [f.id, f]));
    fieldTables.set(message, fields);
  }
  return fields;
}

function wrongWireType(wireType: number, f: FieldDescriptor): Error {
  // gogo-protobuf names the Go field, which is the JSON name capitalized.
  return new Error(`proto: wrong wireType = ${wireType} for field ${f.name[0].toUpperCase()}${f.name.slice(1)}`);
}

function int64(r: protobuf.Reader): number {
  const v = r.int64();
  return typeof v === 'number' ? v : protobuf.util.LongBits.from(v).toNumber(false);
}

function readVarint(r: protobuf.Reader, type: string): number | boolean {
  switch (type) {
    case 'bool':
      return r.bool();
    case 'int32':
      return r.int32();
    case 'uint32':
      return r.uint32();
    default:
      return int64(r);
  }
}

/** Calls `read` with each field's number and wire type; `read` must consume or skip the value. */
function eachField(buf: Uint8Array, read: (id: number, wireType: number, r: protobuf.Reader) => void): void {
  const r = protobuf.Reader.create(buf);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 0) throw new Error('proto: illegal tag 0');
    read(tag >>> 3, tag & 7, r);
  }
}

function rfc3339(seconds: number, nanos: number, micro: boolean): string | null {
  if (seconds === GO_ZERO_SECONDS && nanos === 0) return null;
  const whole = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${whole}.${String(Math.trunc(nanos / 1000)).padStart(6, '0')}Z` : `${whole}Z`;
}

/** metav1.Time and MicroTime: an empty message is Go's zero time, which JSON writes as null. */
function decodeTime(buf: Uint8Array, micro: boolean): string | null {
  if (buf.length === 0) return null;
  let seconds = 0;
  let nanos = 0;
  eachField(buf, (id, wireType, r) => {
    if (id === 1 && wireType === VARINT) seconds = int64(r);
    else if (id === 2 && wireType === VARINT) nanos = r.int32();
    else r.skipType(wireType);
  });
  return rfc3339(seconds, nanos, micro);
}

/** RawExtension and FieldsV1 carry a JSON document in field 1. */
function decodeEmbeddedJSON(buf: Uint8Array): unknown {
  let raw: Uint8Array | undefined;
  eachField(buf, (id, wireType, r) => {
    if (id === 1 && wireType === LENGTH_DELIMITED) raw = r.bytes();
    else r.skipType(wireType);
  });
  if (!raw || raw.length === 0) return null;
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch (err) {
    throw new Error(`invalid embedded JSON: ${(err as Error).message}`, { cause: err });
  }
}

/** The JSON value of a message-typed field. */
function decodeValue(buf: Uint8Array, message: string): unknown {
  switch (message) {
    case TIME:
      return decodeTime(buf, false);
    case MICRO_TIME:
      return decodeTime(buf, true);
    case RAW_EXTENSION:
    case FIELDS_V1:
      return decodeEmbeddedJSON(buf);
    case QUANTITY: {
      const q = decodeMessage(buf, message);
      return q.string ?? '0';
    }
    case INT_OR_STRING: {
      const v = decodeMessage(buf, message);
      return v.type === 1 ? (v.strVal ?? '') : (v.intVal ?? 0);
    }
    default:
      return decodeMessage(buf, message);
  }
}

/** One value of field `f`, whose wire type has been checked against its type. */
function readSingle(r: protobuf.Reader, f: FieldDescriptor): unknown {
  if (VARINT_TYPES.has(f.type)) return readVarint(r, f.type);
  if (f.type === 'string') return r.string();
  if (f.type === 'bytes') return Buffer.from(r.bytes()).toString('base64');
  return decodeValue(r.bytes(), f.type);
}

function readMapEntry(buf: Uint8Array, f: FieldDescriptor): [string, unknown] {
  const key: FieldDescriptor = { name: 'key', id: 1, type: f.keyType! };
  const value: FieldDescriptor = { name: 'value', id: 2, type: f.type };
  let k: unknown = '';
  let v: unknown;
  eachField(buf, (id, wireType, r) => {
    const entry = id === 1 ? key : id === 2 ? value : undefined;
    if (!entry) return r.skipType(wireType);
    checkWireType(wireType, entry);
    if (id === 1) k = readSingle(r, entry);
    else v = readSingle(r, entry);
  });
  // An absent value is the value type's zero, as in Go.
  v ??= zeroOf(f.type);
  return [String(k), v];
}

function zeroOf(type: string): unknown {
  if (type === 'bool') return false;
  if (VARINT_TYPES.has(type)) return 0;
  if (SCALAR_TYPES.has(type)) return '';
  return decodeValue(new Uint8Array(0), type);
}

function checkWireType(wireType: number, f: FieldDescriptor): void {
  const expected = VARINT_TYPES.has(f.type) ? VARINT : LENGTH_DELIMITED;
  if (wireType !== expected) throw wrongWireType(wireType, f);
}

const isZero = (v: unknown) => v === '' || v === 0 || v === false;

function decodeMessage(buf: Uint8Array, message: string): Record<string, unknown> {
  const fields = fieldsOf(message);
  const out: Record<string, unknown> = {};
  eachField(buf, (id, wireType, r) => {
    const f = fields.get(id);
    // Fields this table lacks are skipped, as Go's generated Unmarshal skips unknown fields.
    if (!f) return r.skipType(wireType);
    if (f.keyType) {
      if (wireType !== LENGTH_DELIMITED) throw wrongWireType(wireType, f);
      const [k, v] = readMapEntry(r.bytes(), f);
      // defineProperty keeps a key such as "__proto__" an ordinary entry, as JSON.parse does.
      Object.defineProperty((out[f.name] ??= {}) as object, k, { value: v, enumerable: true, writable: true, configurable: true });
    } else if (f.rule === 'repeated') {
      const list = (out[f.name] ??= []) as unknown[];
      if (wireType === LENGTH_DELIMITED && VARINT_TYPES.has(f.type)) {
        // A packed run of varints.
        const packed = protobuf.Reader.create(r.bytes());
        while (packed.pos < packed.len) list.push(readVarint(packed, f.type));
      } else {
        checkWireType(wireType, f);
        list.push(readSingle(r, f));
      }
    } else {
      checkWireType(wireType, f);
      const v = readSingle(r, f);
      if (f.inline) Object.assign(out, v);
      else out[f.name] = v;
    }
  });
  // omitempty: a zero scalar is left out unless it is a pointer or a field without omitempty.
  for (const f of fields.values()) {
    if (!f.keepZero && !f.rule && !f.keyType && SCALAR_TYPES.has(f.type) && isZero(out[f.name])) delete out[f.name];
  }
  return out;
}

/** The envelope's typeMeta (field 1) and raw (field 2); contentEncoding and contentType are unused. */
function decodeUnknown(buf: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  const fields = fieldsOf(UNKNOWN);
  let typeMeta: Record<string, unknown> = {};
  let raw: Uint8Array = new Uint8Array(0);
  eachField(buf, (id, wireType, r) => {
    const f = fields.get(id);
    if (!f || id > 2) return r.skipType(wireType);
    checkWireType(wireType, f);
    if (id === 1) typeMeta = decodeMessage(r.bytes(), f.type);
    else raw = r.bytes();
  });
  return { apiVersion: String(typeMeta.apiVersion ?? ''), kind: String(typeMeta.kind ?? ''), raw };
}

/**
 * The JSON object equivalent to a `application/vnd.kubernetes.protobuf` request body. Throws a
 * 400 BadRequest StatusError for a body that is not such a message, names an unserved kind, or is
 * malformed.
 */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest(`provided data does not appear to be a protobuf message, expected prefix [${[...MAGIC].join(' ')}]`);
  }
  if (body.length === MAGIC.length) throw badRequest('empty body');

  let envelope: ReturnType<typeof decodeUnknown>;
  try {
    envelope = decodeUnknown(body.subarray(MAGIC.length));
  } catch (err) {
    // Any failure here comes from the client's bytes (protobufjs also throws plain Errors, e.g. for
    // an invalid wire type), so it is the client's 400, never a 500.
    throw badRequest(`the object provided is unrecognized: ${wireMessage(err as Error)}`);
  }
  const { apiVersion, kind, raw } = envelope;
  if (!kind) throw badRequest(`Object 'Kind' is missing in 'runtime.TypeMeta{APIVersion:"${apiVersion}", Kind:""}'`);
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  const message = table.kinds[apiVersion]?.[kind];
  if (!message) throw badRequest(`no kind "${kind}" is registered for version "${apiVersion}"`);

  try {
    return { apiVersion, kind, ...decodeMessage(raw, message) };
  } catch (err) {
    throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${wireMessage(err as Error)}`);
  }
}
