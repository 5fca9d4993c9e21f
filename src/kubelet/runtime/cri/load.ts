// Loads the CRI proto once per process. protobufjs parses the embedded source with keepCase, so
// objects carry the CRI's snake_case names as types.ts declares them, and the gRPC service
// definitions are built straight from that root with proto-loader's conversion options (longs and
// enums as strings, defaults filled in). proto-loader's own fromJSON is skipped: it rebuilds
// descriptor protos for every type, which cost ~35 ms of start-up here for nothing kite uses.
import type { ServiceDefinition } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { CRI_PROTO } from './proto.js';

export const CRI_PACKAGE = 'runtime.v1';

export type CriServiceName = 'RuntimeService' | 'ImageService';

export const CONVERSION_OPTIONS: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true };

/** int64 fields holding nanoseconds since the epoch: kept as strings (they overflow a double). */
const TIMESTAMP_FIELDS = new Set(['created_at', 'started_at', 'finished_at', 'timestamp']);

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

let root: protobuf.Root | undefined;
const services = new Map<CriServiceName, ServiceDefinition>();

export function criRoot(): protobuf.Root {
  if (!root) {
    root = protobuf.parse(CRI_PROTO, { keepCase: true }).root;
    root.resolveAll();
  }
  return root;
}

/** The message type `name` (unqualified, e.g. 'PodSandboxConfig'). */
export function criType(name: string): protobuf.Type {
  return criRoot().lookupType(`${CRI_PACKAGE}.${name}`);
}

export function encodeMessage(type: protobuf.Type, obj: object): Buffer {
  const bytes = type.encode(type.fromObject(obj as Record<string, unknown>)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function decodeMessage(type: protobuf.Type, buf: Uint8Array): Record<string, unknown> {
  return type.toObject(type.decode(buf), CONVERSION_OPTIONS);
}

/**
 * The grpc-js definition of a CRI service (unary methods only), usable both by a client's
 * makeUnaryRequest and by a grpc.Server (the tests' fake runtime).
 */
export function criService(name: CriServiceName): ServiceDefinition {
  let def = services.get(name);
  if (!def) {
    const methods: Record<string, ServiceDefinition[string]> = {};
    const service = criRoot().lookupService(`${CRI_PACKAGE}.${name}`);
    for (const method of service.methodsArray) {
      method.resolve();
      const req = method.resolvedRequestType!;
      const res = method.resolvedResponseType!;
      methods[method.name] = {
        path: `/${CRI_PACKAGE}.${name}/${method.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (o: object) => encodeMessage(req, o),
        requestDeserialize: (b: Buffer) => decodeMessage(req, b),
        responseSerialize: (o: object) => encodeMessage(res, o),
        responseDeserialize: (b: Buffer) => decodeMessage(res, b),
        originalName: method.name.charAt(0).toLowerCase() + method.name.slice(1),
      };
    }
    def = methods as ServiceDefinition;
    services.set(name, def);
  }
  return def;
}

/**
 * Rewrites a decoded message in place into types.ts's shape: non-timestamp int64s become numbers,
 * and unset singular message fields (null under defaults: true) are removed so they read as
 * undefined.
 */
export function normalizeMessage(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  for (const field of type.fieldsArray) {
    const value = obj[field.name];
    if (value === null) {
      delete obj[field.name];
      continue;
    }
    if (value === undefined) continue;
    const toValue = fieldConverter(field);
    if (!toValue) continue;
    if (field.map) {
      const map = value as Record<string, unknown>;
      for (const k of Object.keys(map)) map[k] = toValue(map[k]);
    } else if (field.repeated) {
      obj[field.name] = (value as unknown[]).map(toValue);
    } else {
      obj[field.name] = toValue(value);
    }
  }
  return obj;
}

function fieldConverter(field: protobuf.Field): ((v: unknown) => unknown) | undefined {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return (v) => normalizeMessage(resolved, v as Record<string, unknown>);
  if (LONG_TYPES.has(field.type) && !TIMESTAMP_FIELDS.has(field.name)) return (v) => Number(v);
  return undefined;
}
