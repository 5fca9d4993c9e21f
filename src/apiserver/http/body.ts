// Reading and decoding request bodies: a size limit, JSON or YAML, and upstream's errors.
import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from '../../api/errors.js';
import { mediaType } from './negotiation.js';
import { decodeProtobufObject } from '../../api/protobuf/decode.js';
import { maxNestingDepth, nestingDepth, recordDuplicateFields, scanJson } from '../../api/jsonscan.js';

/** Upstream's default --max-request-body-bytes. */
export const maxBodyBytes = 3 * 1024 * 1024;

/** The bodies handlers read, for the audit log's requestObject (kept as long as the request is). */
const readBodies = new WeakMap<IncomingMessage, Buffer>();

/** The body a handler read from req, if one did. */
export function requestBodyOf(req: IncomingMessage): Buffer | undefined {
  return readBodies.get(req);
}

export function readBody(req: IncomingMessage, limit = maxBodyBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) {
      req.resume();
      return reject(requestEntityTooLarge(`limit is ${limit}`));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(requestEntityTooLarge(`limit is ${limit}`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (failed) return;
      const body = Buffer.concat(chunks);
      readBodies.set(req, body);
      resolve(body);
    });
    req.on('error', (err) => failed || reject(err));
  });
}

const objectMediaTypes = 'application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor';

/**
 * Decodes an object body by its Content-Type; the result must be a JSON object. `scan: false` skips
 * the pass for duplicate keys and depth, for a decoder that copies known fields of bounded depth
 * only (JSON.parse itself does not recurse).
 */
export function decodeObjectBody(contentType: string | undefined, body: Buffer, opts: { scan?: boolean } = {}): Record<string, unknown> {
  const type = mediaType(contentType);
  let value: unknown;
  if (type === 'application/json' || type === '') {
    value = parseJson(body, opts.scan);
  } else if (type === 'application/yaml') {
    value = parseYaml(body);
  } else if (type === 'application/vnd.kubernetes.protobuf') {
    // client-go's typed clients (kubectl create namespace, ...) send protobuf; it decodes to the same JSON.
    value = decodeProtobufObject(body);
  } else {
    throw unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: ${objectMediaTypes}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest(`couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeName(value)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  }
  checkTypeMeta(value as Record<string, unknown>);
  return value as Record<string, unknown>;
}

/**
 * Upstream reads an object's apiVersion and kind first (the JSON serializer's Interpret), into two
 * strings: Go matches the names case-insensitively, null is "", and any other type is refused.
 */
export function checkTypeMeta(obj: Record<string, unknown>): void {
  for (const [key, v] of Object.entries(obj)) {
    const field = key.toLowerCase() === 'apiversion' ? 'apiVersion' : key.toLowerCase() === 'kind' ? 'kind' : undefined;
    if (field === undefined || v === null || typeof v === 'string') continue;
    const type = typeof v === 'boolean' ? 'bool' : jsonTypeName(v);
    throw badRequest(`couldn't get version/kind; json parse error: json: cannot unmarshal ${type} into Go struct field .${field} of type string`);
  }
}

export function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

export function parseJson(body: Buffer, scan = true): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest("couldn't get version/kind; json parse error: unexpected end of JSON input");
  let duplicates: readonly string[];
  let value: unknown;
  try {
    duplicates = scan ? scanJson(text) : [];
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
  recordDuplicateFields(value, duplicates);
  return value;
}

export function parseYaml(body: Buffer): unknown {
  try {
    const docs = YAML.parseAllDocuments(body.toString('utf8'));
    if (docs.length !== 1) throw new Error(docs.length === 0 ? 'empty document' : 'multiple documents are not allowed');
    const doc = docs[0]!;
    const tooDeep = new Error(`exceeded max depth of ${maxNestingDepth}`);
    // The parser recurses per level and reports its stack running out as RESOURCE_EXHAUSTION.
    if (doc.errors.length) throw doc.errors[0]!.code === 'RESOURCE_EXHAUSTION' ? tooDeep : doc.errors[0]!;
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    if (nestingDepth(value) > maxNestingDepth) throw tooDeep;
    return value;
  } catch (err) {
    throw badRequest(`error converting YAML to JSON: yaml: ${(err as Error).message}`);
  }
}
