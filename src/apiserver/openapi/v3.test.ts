import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resources } from '../../api/resources.js';
import { groupVersionPath, openapiV3Doc, openapiV3Root } from './v3.js';

type Json = Record<string, any>;
const doc = (gvPath: string): Json => JSON.parse(openapiV3Doc(gvPath)!.body);

void test('the root lists every served group/version with its hash', () => {
  const root = openapiV3Root();
  for (const r of resources) {
    const gv = groupVersionPath(r.group, r.version);
    const entry = root.paths[gv];
    assert.ok(entry, gv);
    const d = openapiV3Doc(gv)!;
    assert.match(d.hash, /^[0-9A-F]{128}$/);
    assert.equal(entry.serverRelativeURL, `/openapi/v3/${gv}?hash=${d.hash}`);
  }
  assert.equal(openapiV3Doc('apis/nosuch/v1'), undefined);
});

void test('the hash is a content hash: documents differ, so do their hashes', () => {
  const hashes = new Set(Object.keys(openapiV3Root().paths).map((gv) => openapiV3Doc(gv)!.hash));
  assert.equal(hashes.size, Object.keys(openapiV3Root().paths).length);
  const core = openapiV3Doc('api/v1')!;
  assert.equal(createHash('sha512').update(core.body).digest('hex').toUpperCase(), core.hash);
});

void test('documents are OpenAPI 3.0 with a path per resource and operation', () => {
  for (const r of resources) {
    const d = doc(groupVersionPath(r.group, r.version));
    assert.equal(d.openapi, '3.0.0');
    const base = `/${groupVersionPath(r.group, r.version)}/${r.namespaced ? 'namespaces/{namespace}/' : ''}${r.resource}`;
    assert.ok(d.paths[base]?.get, `${base} list`);
    assert.equal(d.paths[base].get['x-kubernetes-action'], 'list');
    const item = d.paths[`${base}/{name}`];
    assert.deepEqual(item.get['x-kubernetes-group-version-kind'], { group: r.group, kind: r.kind, version: r.version });
    assert.equal(item.patch['x-kubernetes-action'], 'patch');
    assert.ok(item.patch.parameters.some((p: Json) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.ok(!('application/strategic-merge-patch+json' in item.patch.requestBody.content));
    if (r.namespaced) assert.ok(d.paths[`/${groupVersionPath(r.group, r.version)}/${r.resource}`].get, `${r.resource} for all namespaces`);
    for (const s of r.subresources) assert.ok(d.paths[`${base}/{name}/${s.name}`], `${r.resource}/${s.name}`);
    // Every schema a path references is in the document.
    for (const m of JSON.stringify(d.paths).matchAll(/#\/components\/schemas\/([\w.-]+)/g)) assert.ok(d.components.schemas[m[1]], m[1]);
  }
  const core = doc('api/v1');
  assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/status'].patch.operationId, 'patchCoreV1NamespacedPodStatus');
  assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/exec'].post.operationId, 'connectCoreV1PostNamespacedPodExec');
  assert.equal(core.paths['/api/v1/namespaces/{namespace}/pods/{name}/eviction'].post['x-kubernetes-group-version-kind'].group, 'policy');
  assert.equal(core.paths['/api/v1/namespaces'].delete, undefined); // namespaces have no deletecollection
  const apps = doc('apis/apps/v1');
  assert.equal(apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].get.responses[200].content['application/json'].schema.$ref, '#/components/schemas/io.k8s.api.autoscaling.v1.Scale');
  assert.ok(apps.paths['/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}'].get);
});

void test('explain can walk pod.spec.containers through allOf refs', () => {
  const schemas = doc('api/v1').components.schemas;
  const pod = schemas['io.k8s.api.core.v1.Pod'];
  assert.deepEqual(pod['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Pod', version: 'v1' }]);
  assert.ok(pod.description);
  const specRef = pod.properties.spec.allOf[0].$ref.split('/').pop();
  const containers = schemas[specRef].properties.containers;
  assert.equal(containers.type, 'array');
  const container = schemas[containers.items.$ref.split('/').pop()];
  assert.ok(container.properties.image.description);
  assert.ok(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
  // apps documents carry the core types a pod template needs, not unrelated groups' kinds.
  const apps = doc('apis/apps/v1').components.schemas;
  assert.ok(apps['io.k8s.api.core.v1.PodSpec']);
  assert.equal(apps['io.k8s.api.coordination.v1.Lease'], undefined);
});
