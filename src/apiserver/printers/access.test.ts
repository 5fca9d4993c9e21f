import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { Ingress, IngressClass, ResourceQuota, RoleBinding, ValidatingAdmissionPolicyBinding } from '../../api/types.js';
import { resourceQuotaPrinter } from './config.js';
import { ingressClassPrinter, ingressPrinter } from './network.js';
import { roleBindingPrinter } from './rbac.js';
import { validatingAdmissionPolicyBindingPrinter } from './admission.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const meta = (name: string) => ({ name, namespace: 'default', creationTimestamp: new Date(NOW - 3 * 86400_000).toISOString() });
const stored = <T>(o: T) => o as T & StoredObject;

void test('ROLE is kind/name; the wide cells list users, groups and namespace/name of service accounts', () => {
  const rb: RoleBinding = {
    metadata: meta('readers'),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'devs' },
      { kind: 'User', name: 'bob' },
      { kind: 'ServiceAccount', name: 'default', namespace: 'web' },
    ],
  };
  assert.deepEqual(roleBindingPrinter.print(stored(rb), NOW).cells, ['readers', 'ClusterRole/view', '3d', 'alice, bob', 'devs', 'web/default']);
});

void test('quota cells are used/hard, sorted, limits.* apart; a resource not yet counted is 0', () => {
  const quota: ResourceQuota = {
    metadata: meta('q'),
    status: { hard: { pods: '2', 'limits.memory': '1Gi', 'requests.cpu': '1' }, used: { pods: '1', 'limits.memory': '256Mi' } },
  };
  assert.deepEqual(resourceQuotaPrinter.print(stored(quota), NOW).cells, ['q', '3d', 'pods: 1/2, requests.cpu: 0/1', 'limits.memory: 256Mi/1Gi']);
});

void test('ingress hosts, ports and class; ingress class parameters', () => {
  const ing: Ingress = {
    metadata: meta('web'),
    spec: { rules: ['a', 'b', 'c', 'd'].map((h) => ({ host: `${h}.example` })), tls: [{ hosts: ['a.example'] }] },
    status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }, { hostname: 'lb.example' }] } },
  };
  assert.deepEqual(ingressPrinter.print(stored(ing), NOW).cells, ['web', '<none>', 'a.example,b.example,c.example + 1 more...', '10.0.0.1,lb.example', '80, 443', '3d']);
  assert.deepEqual(ingressPrinter.print(stored({ metadata: meta('all'), spec: { ingressClassName: 'nginx' } } as Ingress), NOW).cells, ['all', 'nginx', '*', '', '80', '3d']);
  const ic: IngressClass = { metadata: meta('nginx'), spec: { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'p' } } };
  assert.deepEqual(ingressClassPrinter.print(stored(ic), NOW).cells, ['nginx', 'k8s.io/ingress-nginx', 'IngressParameters.k8s.example.com/p', '3d']);
});

void test('a policy binding names its param as namespace/name, * for any namespace, <unset> without one', () => {
  const b = (paramRef?: { name?: string; namespace?: string }): ValidatingAdmissionPolicyBinding => ({ metadata: meta('b'), spec: { policyName: 'max-replicas', paramRef } });
  const cells = (x: ValidatingAdmissionPolicyBinding) => validatingAdmissionPolicyBindingPrinter.print(stored(x), NOW).cells[2];
  assert.equal(cells(b({ name: 'limits', namespace: 'team' })), 'team/limits');
  assert.equal(cells(b({ name: 'limits' })), '*/limits');
  assert.equal(cells(b()), '<unset>');
});
