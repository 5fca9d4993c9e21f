import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerRestConfig } from './manager.js';
import { controllerDescriptors } from './descriptors.js';

const base = { server: 'http://localhost', socketPath: '\0kite', token: 'manager-token', userAgent: 'kite-kube-controller-manager/v1.33.0' };

test('a controller identity with its own token is its own user; the user agent names it', () => {
  const tokens = { 'namespace-controller': 'ns-token' };
  assert.deepEqual(controllerRestConfig(base, 'namespace-controller', tokens), { ...base, token: 'ns-token', userAgent: 'kite-kube-controller-manager/v1.33.0/namespace-controller' });
  assert.deepEqual(controllerRestConfig(base, 'generic-garbage-collector', tokens), { ...base, userAgent: 'kite-kube-controller-manager/v1.33.0/generic-garbage-collector' });
});

test('a token map cannot hand out a prototype member as a token', () => {
  assert.equal(controllerRestConfig(base, 'constructor', {}).token, 'manager-token');
});

test('every controller names the service account upstream runs it as', () => {
  assert.deepEqual(
    Object.fromEntries(controllerDescriptors.map((d) => [d.name, d.identity])),
    {
      'namespace-controller': 'namespace-controller',
      'replicaset-controller': 'replicaset-controller',
      'replicationcontroller-controller': 'replication-controller',
      'cronjob-controller': 'cronjob-controller',
      'daemonset-controller': 'daemon-set-controller',
      'statefulset-controller': 'statefulset-controller',
      'deployment-controller': 'deployment-controller',
      'job-controller': 'job-controller',
      'ttl-after-finished-controller': 'ttl-after-finished-controller',
      'validatingadmissionpolicy-status-controller': 'validatingadmissionpolicy-status-controller',
      'garbage-collector-controller': 'generic-garbage-collector',
      'node-lifecycle-controller': 'node-controller',
      'pod-garbage-collector-controller': 'pod-garbage-collector',
      'taint-eviction-controller': 'node-controller',
      'horizontal-pod-autoscaler-controller': 'horizontal-pod-autoscaler',
      'disruption-controller': 'disruption-controller',
      'endpoints-controller': 'endpoint-controller',
      'endpointslice-controller': 'endpointslice-controller',
      'resourcequota-controller': 'resourcequota-controller',
      'serviceaccount-token-controller': 'tokens-controller',
      'service-cidr-controller': 'service-cidrs-controller',
      'serviceaccount-controller': 'service-account-controller',
      'root-ca-certificate-publisher-controller': 'root-ca-cert-publisher',
      'certificatesigningrequest-approving-controller': 'certificate-controller',
      'certificatesigningrequest-signing-controller': 'certificate-controller',
      'clusterrole-aggregation-controller': 'clusterrole-aggregation-controller',
    },
  );
});
