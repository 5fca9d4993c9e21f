// Reading and decoding request bodies: a size limit, JSON or YAML, and upstream's errors.
import type { IncomingMessage } from 'node:http';
import YAML from 'yaml';
import { StatusError, badRequest, requestEntityTooLarge, unsupportedMediaType } from '../errors.js';
import { mediaType } from './negotiation.js';
import { decodeProtobufObject } from '../../api/protobuf/decode.js';

/** Upstream's default --max-request-body-bytes. */
export const maxBodyBytes = 3 * 1024 * 1024;

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
    req.on('end', () => failed || resolve(Buffer.concat(chunks)));
    req.on('error', (err) => failed || reject(err));
  });
}

const objectMediaTypes = 'application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor';

/** Decodes an object body by its Content-Type; the result must be a JSON object. */
export function decodeObjectBody(contentType: string | undefined, body: Buffer): Record<string, unknown> {
  const type = mediaType(contentType);
  let value: unknown;
  if (type === 'application/json' || type === '') {
    value = parseJson(body);
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
  return value as Record<string, unknown>;
}

export function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Go's encoding/json limit; deeper documents are refused before anything walks them recursively. */
export const maxNestingDepth = 10_000;

function checkNesting(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91 /* { [ */) {
      if (++depth > maxNestingDepth) throw badRequest(`couldn't get version/kind; json parse error: exceeded max depth of ${maxNestingDepth}`);
    } else if (c === 125 || c === 93) depth--;
  }
}

export function parseJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  if (text.trim() === '') throw badRequest("couldn't get version/kind; json parse error: unexpected end of JSON input");
  checkNesting(text);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

export function parseYaml(body: Buffer): unknown {
  try {
    const docs = YAML.parseAllDocuments(body.toString('utf8'));
    if (docs.length !== 1) throw new Error(docs.length === 0 ? 'empty document' : 'multiple documents are not allowed');
    const doc = docs[0]!;
    if (doc.errors.length) throw doc.errors[0]!;
    const value: unknown = doc.toJS({ maxAliasCount: 100 });
    // YAML nests with indentation as well as brackets: check the decoded value's depth.
    checkNesting(JSON.stringify(value) ?? '');
    return value;
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw badRequest(`error converting YAML to JSON: yaml: ${(err as Error).message}`);
  }
}
