import { test } from 'node:test';
import assert from 'node:assert/strict';
import { zeroNulls } from './zero.js';

type Obj = Record<string, unknown>;

test('zeroNulls leaves what Go decoding null into typed fields leaves', () => {
  const cases: { name: string; group?: string; kind: string; obj: Obj; want: Obj }[] = [
    { name: 'null container is an empty Container', kind: 'Pod', obj: { spec: { containers: [null] } }, want: { spec: { containers: [{}] } } },
    { name: 'null toleration is an empty Toleration', kind: 'Pod', obj: { spec: { tolerations: [null, { key: 'k' }] } }, want: { spec: { tolerations: [{}, { key: 'k' }] } } },
    {
      name: 'null quantity in a ResourceList is zero',
      kind: 'Pod',
      obj: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: null }, limits: null } }] } },
      want: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '0' } } }] } },
    },
    { name: 'null struct field is absent', kind: 'Pod', obj: { metadata: null, spec: null, status: null }, want: {} },
    { name: 'null scalar field is absent', kind: 'Pod', obj: { spec: { nodeName: null, hostNetwork: null, priority: null } }, want: { spec: {} } },
    { name: 'null string list item is empty', kind: 'Pod', obj: { spec: { containers: [{ command: [null, 'sh'] }] } }, want: { spec: { containers: [{ command: ['', 'sh'] }] } } },
    { name: 'null int list item is zero', kind: 'Pod', obj: { spec: { securityContext: { supplementalGroups: [null] } } }, want: { spec: { securityContext: { supplementalGroups: [0] } } } },
    { name: 'null map value of strings is empty', kind: 'Pod', obj: { metadata: { labels: { a: null } }, spec: { nodeSelector: { b: null } } }, want: { metadata: { labels: { a: '' } }, spec: { nodeSelector: { b: '' } } } },
    { name: 'null int-or-string field is absent', kind: 'Pod', obj: { spec: { containers: [{ livenessProbe: { httpGet: { port: null } } }] } }, want: { spec: { containers: [{ livenessProbe: { httpGet: {} } }] } } },
    { name: 'null owner reference is empty', kind: 'ConfigMap', obj: { metadata: { ownerReferences: [null], finalizers: [null] } }, want: { metadata: { ownerReferences: [{}], finalizers: [''] } } },
    { name: 'null secret data is empty bytes', kind: 'Secret', obj: { data: { a: null }, stringData: { b: null } }, want: { data: { a: '' }, stringData: { b: '' } } },
    { name: 'node capacity', kind: 'Node', obj: { status: { capacity: { cpu: null }, conditions: [null] } }, want: { status: { capacity: { cpu: '0' }, conditions: [{}] } } },
    {
      name: 'pod template in a Deployment',
      group: 'apps',
      kind: 'Deployment',
      obj: { spec: { template: { spec: { containers: [null], initContainers: null } }, strategy: { rollingUpdate: { maxSurge: null } } } },
      want: { spec: { template: { spec: { containers: [{}] } }, strategy: { rollingUpdate: {} } } },
    },
    { name: 'metav1.Time list items stay null (its zero marshals as null)', kind: 'Pod', obj: { status: { conditions: [{ lastProbeTime: null }] } }, want: { status: { conditions: [{}] } } },
    { name: 'wrong types are the decode check’s to refuse', kind: 'Pod', obj: { spec: { containers: 'x', tolerations: [3] } }, want: { spec: { containers: 'x', tolerations: [3] } } },
    { name: 'unknown fields are left alone', kind: 'Pod', obj: { spec: { bogus: null } }, want: { spec: { bogus: null } } },
    { name: 'prototype keys are ordinary data', kind: 'ConfigMap', obj: JSON.parse('{"data":{"__proto__":null}}') as Obj, want: JSON.parse('{"data":{"__proto__":""}}') as Obj },
    { name: 'kinds without a schema are left alone', kind: 'NoSuchKind', obj: { spec: null }, want: { spec: null } },
  ];
  for (const c of cases) {
    zeroNulls(c.group ?? '', 'v1', c.kind, c.obj);
    assert.deepEqual(c.obj, c.want, c.name);
  }
});
