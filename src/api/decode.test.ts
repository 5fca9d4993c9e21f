import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkObject } from './decode.js';
import { StatusError } from './errors.js';

const pod = (spec: unknown, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec, ...extra });
const nginx = { name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '500m', memory: 1024 } } };

function failure(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StatusError);
    return err;
  }
  assert.fail('expected a StatusError');
}

void test('a valid pod passes in every mode', () => {
  for (const mode of ['Strict', 'Warn', 'Ignore'] as const) {
    assert.deepEqual(checkObject('', 'v1', 'Pod', pod({ containers: [nginx] }), mode), { warnings: [] });
  }
});

void test('unknown fields: Strict fails with all of them in document order, Warn warns, Ignore drops', () => {
  // Each check drops the unknown fields from the object it is given: one fresh object per mode.
  const obj = () => pod({ containers: [{ ...nginx, foo: 1 }], bar: true }, { extra: 'x' });
  const err = failure(() => checkObject('', 'v1', 'Pod', obj(), 'Strict'));
  assert.equal(err.code, 400);
  assert.equal(err.reason, 'BadRequest');
  assert.equal(
    err.message,
    'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].foo", unknown field "spec.bar", unknown field "extra"',
  );
  const warned = obj();
  assert.deepEqual(checkObject('', 'v1', 'Pod', warned, 'Warn').warnings, [
    'unknown field "spec.containers[0].foo"',
    'unknown field "spec.bar"',
    'unknown field "extra"',
  ]);
  assert.deepEqual(warned, pod({ containers: [nginx] }), 'unknown fields are dropped');
  assert.deepEqual(checkObject('', 'v1', 'Pod', obj(), 'Ignore').warnings, []);
});

void test('field names are case-sensitive', () => {
  const err = failure(() => checkObject('apps', 'v1', 'Deployment', { metadata: { Name: 'x' } }, 'Strict'));
  assert.match(err.message, /^Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "metadata.Name"$/);
});

void test('wrong types fail in every mode, worded as Go', () => {
  const cases: [unknown, string][] = [
    [{ containers: 'x' }, 'json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container'],
    [{ containers: ['x'] }, 'json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container'],
    [{ containers: [{ name: 'c', image: 5 }] }, 'json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string'],
    [{ containers: [{ name: 'c', ports: [{ containerPort: 1.5 }] }] }, 'json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32'],
    [{ hostNetwork: 'yes' }, 'json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool'],
    [{ nodeSelector: { a: 1 } }, 'json: cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string'],
    [{ containers: [{ name: 'c', resources: { limits: [] } }] }, 'json: cannot unmarshal array into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList'],
    [{ containers: [{ name: 'c', resources: { limits: { cpu: 'lots' } } }] }, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
    [{ containers: [{ name: 'c', livenessProbe: { httpGet: { port: true } } }] }, 'json: cannot unmarshal bool into Go value of type int32'],
  ];
  for (const [spec, why] of cases) {
    for (const mode of ['Strict', 'Ignore'] as const) {
      const err = failure(() => checkObject('', 'v1', 'Pod', pod(spec), mode));
      assert.equal(err.message, `Pod in version "v1" cannot be handled as a Pod: ${why}`);
    }
  }
  const meta = failure(() => checkObject('', 'v1', 'ConfigMap', { metadata: 'x' }, 'Ignore'));
  assert.equal(meta.message, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta');
});

void test('a type error wins over unknown fields', () => {
  const err = failure(() => checkObject('', 'v1', 'Pod', pod({ foo: 1, hostPID: 1 }), 'Strict'));
  assert.match(err.message, /of type bool$/);
});

void test('nulls, IntOrString strings, quantities as numbers and opaque fields pass', () => {
  const obj = pod({
    containers: [{ name: 'c', image: null, resources: { requests: { cpu: 1, memory: '1Gi' } }, readinessProbe: { tcpSocket: { port: 'http' } } }],
  });
  (obj.metadata as Record<string, unknown>).managedFields = [{ manager: 'kubectl', fieldsV1: { 'f:spec': { anything: 1 } } }];
  assert.deepEqual(checkObject('', 'v1', 'Pod', obj, 'Strict'), { warnings: [] });
});

void test('secret data must be base64', () => {
  assert.deepEqual(checkObject('', 'v1', 'Secret', { data: { a: 'aGVsbG8=' } }, 'Strict'), { warnings: [] });
  const err = failure(() => checkObject('', 'v1', 'Secret', { data: { a: 'plaintext' } }, 'Strict'));
  assert.equal(err.message, 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 8');
  const bad = failure(() => checkObject('', 'v1', 'Secret', { data: { a: 'ab!d' } }, 'Strict'));
  assert.match(bad.message, /illegal base64 data at input byte 2$/);
});

void test('kinds without a schema are not checked', () => {
  assert.deepEqual(checkObject('example.com', 'v1', 'Widget', { anything: 1 }, 'Strict'), { warnings: [] });
});
