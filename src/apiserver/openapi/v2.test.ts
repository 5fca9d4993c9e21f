import { createHash } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';
import { resources } from '../../api/resources.js';
import { componentSchemas } from '../../api/schema.js';
import { buildOpenAPIV2, negotiateOpenAPIV2, PROTOBUF_TYPE, PROTOBUF_TYPE_DEPRECATED, serveOpenAPIV2 } from './v2.js';
import { encodeOpenAPIV2, openapiV2Type } from './v2proto.js';
import { groupVersionPath } from './v3.js';

type Json = Record<string, any>;
const doc: Json = buildOpenAPIV2();
const defs: Record<string, Json> = doc.definitions;

void test('the document is Swagger 2.0 with a path per served resource and operation', () => {
  assert.equal(doc.swagger, '2.0');
  assert.match(doc.info.version, /^v1\.\d+\.\d+$/);
  assert.deepEqual(doc.security, [{ BearerToken: [] }]);
  assert.equal(doc.securityDefinitions.BearerToken.type, 'apiKey');
  for (const r of resources) {
    const base = `/${groupVersionPath(r.group, r.version)}/${r.namespaced ? 'namespaces/{namespace}/' : ''}${r.resource}`;
    const item = doc.paths[`${base}/{name}`];
    assert.ok(item, base);
    assert.deepEqual(item.get['x-kubernetes-group-version-kind'], { group: r.group, kind: r.kind, version: r.version });
    assert.equal(item.get.responses['200'].schema.$ref, `#/definitions/${Object.keys(defs).find((n) => defs[n]!['x-kubernetes-group-version-kind']?.some((g: Json) => g.kind === r.kind && g.group === r.group && g.version === r.version))}`);
    assert.deepEqual(item.get.schemes, ['https']);
    // kubectl's client-side apply looks for the strategic merge patch among PATCH's consumes.
    assert.ok(item.patch.consumes.includes('application/strategic-merge-patch+json'), base);
    assert.equal(item.patch.parameters[0].in, 'body');
    assert.equal(item.patch.parameters[0].schema.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
    assert.ok(item.patch.parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query' && p.type === 'string'));
    assert.deepEqual(item.parameters[0], { description: `name of the ${r.kind}`, in: 'path', name: 'name', required: true, type: 'string', uniqueItems: true });
    assert.equal(doc.paths[base].get['x-kubernetes-action'], 'list');
    for (const s of r.subresources) assert.ok(doc.paths[`${base}/{name}/${s.name}`], `${r.resource}/${s.name}`);
  }
  const pods = doc.paths['/api/v1/namespaces/{namespace}/pods'];
  assert.deepEqual(pods.post.consumes, ['*/*']);
  assert.ok(pods.get.produces.includes('application/json;stream=watch'));
  assert.deepEqual(pods.post.responses['201'], { description: 'Created', schema: { $ref: '#/definitions/io.k8s.api.core.v1.Pod' } });
  assert.equal(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'].post['x-kubernetes-action'], 'connect');
  assert.deepEqual(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}/log'].get.responses['200'].schema, { type: 'string' });
});

void test('definitions are the v3 component schemas with #/definitions refs, as kubectl parses them', () => {
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(refs.length > 100);
  for (const ref of refs) {
    assert.ok(ref.startsWith('#/definitions/'), ref);
    assert.ok(defs[ref.slice('#/definitions/'.length)], ref);
  }
  // kube-openapi's proto models reject a $ref beside a type or properties, and oneOf has no v2 form.
  const walk = (s: Json, at: string): void => {
    if (s.$ref) assert.ok(s.type === undefined && s.properties === undefined, at);
    assert.equal(s.oneOf, undefined, at);
    assert.equal(s.allOf, undefined, at);
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v as Json, `${at}.${k}`);
    if (s.items) walk(s.items, `${at}[]`);
    if (s.additionalProperties) walk(s.additionalProperties, `${at}{}`);
  };
  for (const [name, s] of Object.entries(defs)) walk(s, name);
  for (const name of Object.keys(defs)) assert.ok(componentSchemas[name], name);

  const spec = defs['io.k8s.api.core.v1.PodSpec']!;
  assert.equal(defs['io.k8s.api.core.v1.Pod']!.properties.spec.$ref, '#/definitions/io.k8s.api.core.v1.PodSpec');
  assert.ok(defs['io.k8s.api.core.v1.Pod']!.properties.spec.description);
  const containers = spec.properties.containers;
  assert.equal(containers['x-kubernetes-patch-strategy'], 'merge');
  assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
  assert.equal(containers['x-kubernetes-list-type'], 'map');
  assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
  assert.deepEqual(containers.items, { $ref: '#/definitions/io.k8s.api.core.v1.Container' });
  assert.deepEqual(defs['io.k8s.api.core.v1.Container']!.properties.ports['x-kubernetes-list-map-keys'], ['containerPort', 'protocol']);
  const intOrString = defs['io.k8s.apimachinery.pkg.util.intstr.IntOrString']!;
  assert.equal(intOrString.type, 'string');
  assert.equal(intOrString.format, 'int-or-string');
  assert.equal(defs['io.k8s.apimachinery.pkg.api.resource.Quantity']!.type, 'string');
});

void test('the protobuf form decodes back to the same document', () => {
  const bytes = encodeOpenAPIV2(doc);
  // Field 1 (swagger) comes first: tag 0x0a, length 3, "2.0".
  assert.deepEqual([...bytes.subarray(0, 5)], [0x0a, 3, ...Buffer.from('2.0')]);
  const type = openapiV2Type('Document');
  const m = type.toObject(type.decode(bytes)) as Json;
  assert.equal(m.info.title, 'Kubernetes');
  assert.equal(m.info.version, doc.info.version);
  assert.deepEqual(
    m.paths.path.map((p: Json) => p.name),
    Object.keys(doc.paths),
  );
  assert.deepEqual(
    m.definitions.additional_properties.map((d: Json) => d.name),
    Object.keys(defs),
  );
  const podItem = m.paths.path.find((p: Json) => p.name === '/api/v1/namespaces/{namespace}/pods/{name}').value;
  const gvk = podItem.patch.vendor_extension.find((e: Json) => e.name === 'x-kubernetes-group-version-kind');
  assert.deepEqual(parse(gvk.value.yaml), { group: '', kind: 'Pod', version: 'v1' });
  assert.ok(podItem.patch.consumes.includes('application/strategic-merge-patch+json'));
  assert.equal(podItem.parameters[0].parameter.non_body_parameter.path_parameter_sub_schema.name, 'name');
  const fieldValidation = podItem.patch.parameters.find((p: Json) => p.parameter.non_body_parameter?.query_parameter_sub_schema?.name === 'fieldValidation');
  assert.ok(fieldValidation);
  assert.equal(podItem.patch.parameters[0].parameter.body_parameter.schema._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
  const code200 = podItem.get.responses.response_code.find((r: Json) => r.name === '200');
  assert.equal(code200.value.response.schema.schema._ref, '#/definitions/io.k8s.api.core.v1.Pod');

  const spec = m.definitions.additional_properties.find((d: Json) => d.name === 'io.k8s.api.core.v1.PodSpec').value;
  assert.deepEqual(spec.type.value, ['object']);
  const containers = spec.properties.additional_properties.find((p: Json) => p.name === 'containers').value;
  assert.deepEqual(containers.type.value, ['array']);
  assert.equal(containers.items.schema[0]._ref, '#/definitions/io.k8s.api.core.v1.Container');
  const ext = Object.fromEntries(containers.vendor_extension.map((e: Json) => [e.name, parse(e.value.yaml)]));
  assert.deepEqual(ext, { 'x-kubernetes-list-map-keys': ['name'], 'x-kubernetes-list-type': 'map', 'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' });
  const labels = m.definitions.additional_properties
    .find((d: Json) => d.name === 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta')
    .value.properties.additional_properties.find((p: Json) => p.name === 'labels').value;
  assert.deepEqual(labels.additional_properties.schema.type.value, ['string']);
  assert.equal(m.security[0].additional_properties[0].name, 'BearerToken');
  assert.equal(m.security_definitions.additional_properties[0].value.api_key_security.in, 'header');
});

void test('Accept negotiation follows kube-openapi: JSON for wildcards, both protobuf spellings, q and specificity order', () => {
  assert.equal(negotiateOpenAPIV2(undefined), 'json');
  assert.equal(negotiateOpenAPIV2('*/*'), 'json');
  assert.equal(negotiateOpenAPIV2('*'), 'json');
  assert.equal(negotiateOpenAPIV2('application/*'), 'json');
  assert.equal(negotiateOpenAPIV2('application/json'), 'json');
  assert.equal(negotiateOpenAPIV2(PROTOBUF_TYPE), 'proto');
  assert.equal(negotiateOpenAPIV2(PROTOBUF_TYPE_DEPRECATED), 'proto');
  assert.equal(negotiateOpenAPIV2(`application/json;q=0.5, ${PROTOBUF_TYPE_DEPRECATED}`), 'proto');
  assert.equal(negotiateOpenAPIV2(`*/*, ${PROTOBUF_TYPE}`), 'proto');
  assert.equal(negotiateOpenAPIV2('application/yaml, text/html'), undefined);
  assert.equal(negotiateOpenAPIV2('application/vnd.kubernetes.protobuf'), undefined);
  assert.equal(negotiateOpenAPIV2('application/json/x'), undefined);
});

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let port = 0;
const server = createServer((req, res) => serveOpenAPIV2(req, res));
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

function get(headers: Record<string, string>, method = 'GET'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/openapi/v2', method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

void test('served with one ETag (the JSON hash) for both forms, 304 on If-None-Match, gzip when asked, 406 otherwise', async () => {
  const json = await get({ accept: 'application/json' });
  assert.equal(json.status, 200);
  assert.equal(json.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(json.body.toString()), doc);
  const etag = `"${createHash('sha512').update(json.body).digest('hex').toUpperCase()}"`;
  assert.equal(json.headers.etag, etag);
  assert.equal(json.headers.vary, 'Accept-Encoding, Accept');
  assert.ok(json.headers['last-modified']);

  const proto = await get({ accept: PROTOBUF_TYPE_DEPRECATED });
  assert.equal(proto.status, 200);
  assert.equal(proto.headers['content-type'], PROTOBUF_TYPE);
  assert.equal(proto.headers.etag, etag);
  assert.deepEqual(proto.body, encodeOpenAPIV2(doc));
  assert.deepEqual((await get({ accept: PROTOBUF_TYPE })).body, proto.body);
  assert.equal((await get({ accept: '*/*' })).headers['content-type'], 'application/json');
  assert.equal((await get({})).headers['content-type'], 'application/json');

  const notAcceptable = await get({ accept: 'text/html' });
  assert.equal(notAcceptable.status, 406);
  assert.equal(notAcceptable.body.length, 0);

  for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const cached = await get({ accept: PROTOBUF_TYPE, 'if-none-match': inm });
    assert.equal(cached.status, 304, inm);
    assert.equal(cached.headers.etag, etag);
    assert.equal(cached.body.length, 0);
  }
  assert.equal((await get({ accept: PROTOBUF_TYPE, 'if-none-match': '"stale"' })).status, 200);
  assert.equal((await get({ 'if-modified-since': json.headers['last-modified']! })).status, 304);
  assert.equal((await get({ 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).status, 200);

  const gz = await get({ accept: PROTOBUF_TYPE, 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gz.body), proto.body);
  assert.equal((await get({ 'accept-encoding': 'gzip;q=0' })).headers['content-encoding'], undefined);

  const head = await get({ accept: 'application/json' }, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], String(json.body.length));
  assert.equal(head.body.length, 0);
});
