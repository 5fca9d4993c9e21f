// /openapi/v2: one Swagger 2.0 document for every served group/version, converted from the same paths
// and component schemas as the v3 documents. kubectl up to 1.28 needs it for `apply` (client-side
// validation, and the strategic merge patch it computes from the schemas' patch extensions) and for
// `explain`; newer kubectl still reads it for apply's patch. Served as JSON or as gnostic's protobuf,
// negotiated, ETagged, gzipped and cached like kube-openapi's handler: both forms carry the ETag of
// the JSON (SHA-512, upper-case hex), the document is built once, on first use.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { groupVersions } from '../../api/resources.js';
import type { RawSchema } from '../../api/schema.js';
import { parseMediaRanges } from '../http/negotiation.js';
import { encodeOpenAPIV2 } from './v2proto.js';
import { BEARER_TOKEN, KUBERNETES_VERSION, groupVersionPaths, referencedSchemas, type Json } from './v3.js';

export const PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** The spelling client-go still sends; answered with the same bytes under PROTOBUF_TYPE. */
export const PROTOBUF_TYPE_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
// v2 lists the strategic merge patch, as upstream's does: kubectl then computes it from these schemas.
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];
const V3_REF = '#/components/schemas/';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** A component schema in v2 form: `#/definitions/` refs beside their siblings, int-or-string and quantity as strings. */
function v2Schema(s: RawSchema): Json {
  const { $ref, allOf, oneOf, properties, items, additionalProperties, ...rest } = s;
  const out: Json = {};
  const target = $ref ?? allOf?.[0]?.$ref;
  if (target) out.$ref = `#/definitions/${target.slice(V3_REF.length)}`;
  Object.assign(out, rest);
  // v2 has no oneOf: the served kinds use it only for IntOrString and Quantity, both strings there.
  if (oneOf) out.type = 'string';
  if (properties) out.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v2Schema(v)]));
  if (items) out.items = v2Schema(items);
  if (additionalProperties) out.additionalProperties = v2Schema(additionalProperties);
  return out;
}

/** Keys in order, as upstream's document has them. */
const byKey = (o: Json): Json => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

function v2Parameter(p: Json): Json {
  const { schema, ...rest } = p;
  return { ...rest, ...(schema as Json) };
}

function v2Operation(op: Json): Json {
  const { requestBody, responses, parameters, ...rest } = op as Json & { requestBody?: Json; responses: Record<string, Json>; parameters?: Json[] };
  const params = (parameters ?? []).map(v2Parameter);
  let consumes = ['*/*'];
  if (requestBody) {
    const content = requestBody.content as Record<string, { schema: RawSchema }>;
    const types = Object.keys(content);
    consumes = rest['x-kubernetes-action'] === 'patch' ? PATCH_TYPES : types;
    params.unshift({ in: 'body', name: 'body', ...(requestBody.required ? { required: true } : {}), schema: v2Schema(content[types[0]!]!.schema) });
  }
  let produces: string[] = [];
  const v2Responses: Json = {};
  for (const [code, r] of Object.entries(responses)) {
    const content = r.content as Record<string, { schema: RawSchema }> | undefined;
    if (!content) {
      v2Responses[code] = { description: r.description };
      continue;
    }
    if (!produces.length) produces = Object.keys(content);
    v2Responses[code] = { description: r.description, schema: v2Schema(Object.values(content)[0]!.schema) };
  }
  return byKey({ ...rest, consumes, ...(params.length ? { parameters: params } : {}), produces, responses: v2Responses, schemes: ['https'] });
}

/** The v2 document: every group/version's paths in one, and every schema they reference as definitions. */
export function buildOpenAPIV2(): Json {
  const v3Paths: Record<string, Json> = {};
  for (const { group, version } of groupVersions()) Object.assign(v3Paths, groupVersionPaths(group, version));
  const paths: Json = {};
  for (const path of Object.keys(v3Paths).sort()) {
    const item = v3Paths[path]!;
    const v2Item: Json = {};
    for (const m of METHODS) if (item[m]) v2Item[m] = v2Operation(item[m] as Json);
    v2Item.parameters = (item.parameters as Json[]).map(v2Parameter);
    paths[path] = byKey(v2Item);
  }
  const definitions = Object.fromEntries(Object.entries(referencedSchemas(v3Paths)).map(([name, s]) => [name, v2Schema(s)]));
  return {
    definitions,
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION },
    paths,
    security: [{ BearerToken: [] }],
    securityDefinitions: { BearerToken: BEARER_TOKEN },
    swagger: '2.0',
  };
}

interface Representation {
  contentType: string;
  body: Buffer;
  gzipped?: Buffer;
}

interface Served {
  etag: string;
  lastModified: Date;
  json: Representation;
  proto: Representation;
}

let served: Served | undefined;

function document(): Served {
  if (!served) {
    const doc = buildOpenAPIV2();
    const json = Buffer.from(JSON.stringify(doc));
    served = {
      etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"`,
      // HTTP dates have whole seconds; If-Modified-Since compares against this.
      lastModified: new Date(Math.floor(Date.now() / 1000) * 1000),
      json: { contentType: 'application/json', body: json },
      proto: { contentType: PROTOBUF_TYPE, body: encodeOpenAPIV2(doc) },
    };
  }
  return served;
}

/** The representation for an Accept header, as kube-openapi picks it: clauses by q then specificity, JSON first for wildcards. */
export function negotiateOpenAPIV2(accept: string | undefined): 'json' | 'proto' | undefined {
  const offered = [
    ['application/json', 'json'],
    [PROTOBUF_TYPE_DEPRECATED, 'proto'],
    [PROTOBUF_TYPE, 'proto'],
  ] as const;
  const clauses = parseMediaRanges(accept || '*/*')
    .map((r) => {
      const parts = r.type.split('/');
      const q = r.params.q === undefined ? 1 : Number.parseFloat(r.params.q) || 0;
      if (parts.length === 1 && parts[0] === '*') return { type: '*', sub: '*', q };
      return parts.length === 2 ? { type: parts[0]!, sub: parts[1]!, q } : undefined;
    })
    .filter((c) => c !== undefined)
    .sort((a, b) => b.q - a.q || Number(a.type === '*') - Number(b.type === '*') || Number(a.sub === '*') - Number(b.sub === '*'));
  for (const c of clauses) {
    for (const [type, kind] of offered) {
      const [t, s] = type.split('/');
      if ((c.type === t || c.type === '*') && (c.sub === s || c.sub === '*')) return kind;
    }
  }
  return undefined;
}

/** If-None-Match as Go's http.ServeContent reads it: a list of (weakly compared) tags, or `*`. */
function noneMatch(header: string, etag: string): boolean {
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

function acceptsGzip(header: string | undefined): boolean {
  return parseMediaRanges(header).some((r) => r.type === 'gzip' && (r.params.q === undefined || Number.parseFloat(r.params.q) > 0));
}

/** GET or HEAD /openapi/v2. */
export function serveOpenAPIV2(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Vary', ['Accept-Encoding', 'Accept']);
  const kind = negotiateOpenAPIV2(req.headers.accept);
  if (!kind) {
    res.writeHead(406);
    res.end();
    return;
  }
  const doc = document();
  const ifNoneMatch = req.headers['if-none-match'];
  const ifModifiedSince = Date.parse(req.headers['if-modified-since'] ?? '');
  const fresh = ifNoneMatch !== undefined ? noneMatch(ifNoneMatch, doc.etag) : ifModifiedSince >= doc.lastModified.getTime();
  if (fresh) {
    res.writeHead(304, { ETag: doc.etag });
    res.end();
    return;
  }
  const rep = doc[kind];
  const headers: Record<string, string> = { 'Content-Type': rep.contentType, ETag: doc.etag, 'Last-Modified': doc.lastModified.toUTCString() };
  let body = rep.body;
  if (acceptsGzip(req.headers['accept-encoding'])) {
    body = rep.gzipped ??= gzipSync(rep.body);
    headers['Content-Encoding'] = 'gzip';
  }
  headers['Content-Length'] = String(body.length);
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}
