import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resources } from './resources.js';
import { componentSchemas, refName, schemaForKind, schemaNameForKind } from './schema.js';

void test('every served kind and list kind has a schema', () => {
  for (const r of resources) {
    for (const kind of [r.kind, r.listKind]) assert.ok(schemaForKind(r.group, r.version, kind), `${r.group}/${r.version} ${kind}`);
  }
  assert.equal(schemaNameForKind('events.k8s.io', 'v1', 'Event'), 'io.k8s.api.events.v1.Event');
  assert.equal(schemaNameForKind('', 'v1', 'Event'), 'io.k8s.api.core.v1.Event');
  assert.equal(schemaForKind('', 'v1', 'NoSuchKind'), undefined);
});

void test('meta and subresource kinds resolve in every served group', () => {
  assert.ok(schemaForKind('apps', 'v1', 'DeleteOptions')?.properties?.propagationPolicy);
  assert.ok(schemaForKind('', 'v1', 'Status')?.properties?.details);
  assert.ok(schemaForKind('autoscaling', 'v1', 'Scale')?.properties?.spec);
  assert.ok(schemaForKind('policy', 'v1', 'Eviction')?.properties?.deleteOptions);
  assert.ok(schemaForKind('', 'v1', 'Binding')?.properties?.target);
});

void test('patch metadata of the pod spec', () => {
  const spec = schemaForKind('', 'v1', 'Pod')!.properties!.spec!;
  const containers = spec.properties!.containers!;
  assert.deepEqual(
    { s: containers.patchStrategy, k: containers.patchMergeKey, t: containers.listType, keys: containers.listMapKeys },
    { s: 'merge', k: 'name', t: 'map', keys: ['name'] },
  );
  const container = containers.items!;
  assert.equal(container.properties!.ports!.patchMergeKey, 'containerPort');
  assert.deepEqual(container.properties!.ports!.listMapKeys, ['containerPort', 'protocol']);
  assert.equal(container.properties!.env!.patchMergeKey, 'name');
  assert.equal(container.properties!.volumeMounts!.patchMergeKey, 'mountPath');
  assert.equal(container.properties!.command!.listType, 'atomic');
  assert.equal(spec.properties!.volumes!.patchStrategy, 'merge,retainKeys');
  assert.equal(spec.properties!.tolerations!.listType, 'atomic');
  assert.equal(spec.properties!.nodeSelector!.mapType, 'atomic');
  assert.equal(spec.properties!.nodeSelector!.additionalProperties!.type, 'string');
  const status = schemaForKind('', 'v1', 'Pod')!.properties!.status!;
  assert.equal(status.properties!.conditions!.patchMergeKey, 'type');
  const meta = schemaForKind('apps', 'v1', 'Deployment')!.properties!.metadata!;
  assert.equal(meta.properties!.ownerReferences!.patchMergeKey, 'uid');
  assert.equal(meta.properties!.finalizers!.listType, 'set');
  assert.equal(meta.properties!.managedFields!.items!.properties!.fieldsV1!.preserveUnknownFields, true);
  assert.equal(schemaForKind('apps', 'v1', 'Deployment')!.properties!.spec!.properties!.selector!.mapType, 'atomic');
});

void test('IntOrString, Quantity and Time resolve to their wire forms', () => {
  const container = schemaForKind('', 'v1', 'Pod')!.properties!.spec!.properties!.containers!.items!;
  assert.equal(container.properties!.livenessProbe!.properties!.httpGet!.properties!.port!.intOrString, true);
  assert.equal(container.properties!.resources!.properties!.limits!.additionalProperties!.type, 'string');
  assert.equal(schemaForKind('', 'v1', 'Pod')!.properties!.metadata!.properties!.creationTimestamp!.type, 'string');
});

void test('fields upstream added up to 1.33 are present, and removed ones absent', () => {
  const podSpec = componentSchemas['io.k8s.api.core.v1.PodSpec'].properties!;
  assert.ok(podSpec.resources);
  assert.equal(podSpec.hostnameOverride, undefined); // 1.34
  const claim = componentSchemas['io.k8s.api.core.v1.PodResourceClaim'].properties!;
  assert.ok(claim.resourceClaimName);
  assert.equal(claim.source, undefined);
  assert.ok(componentSchemas['io.k8s.api.apps.v1.DeploymentStatus'].properties!.terminatingReplicas);
});

void test('every $ref points at a generated component', () => {
  const visit = (s: unknown): void => {
    if (!s || typeof s !== 'object') return;
    const ref = refName(s as never);
    if (ref) assert.ok(componentSchemas[ref], ref);
    for (const v of Object.values(s)) visit(v);
  };
  visit(componentSchemas);
});
