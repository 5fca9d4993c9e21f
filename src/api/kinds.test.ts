import { test } from 'node:test';
import assert from 'node:assert/strict';
import { qualifiedResourceName, resourceNamed, type ResourceName } from './kinds.js';
import { resources } from './resources.js';

// Type-checked both ways: a name ResourceTypes lacks, or one it has and this list does not, fails the build.
const typed = {
  namespaces: true,
  pods: true,
  nodes: true,
  events: true,
  configmaps: true,
  secrets: true,
  services: true,
  serviceaccounts: true,
  endpoints: true,
  replicationcontrollers: true,
  podtemplates: true,
  'leases.coordination.k8s.io': true,
  'deployments.apps': true,
  'replicasets.apps': true,
  'daemonsets.apps': true,
  'statefulsets.apps': true,
  'controllerrevisions.apps': true,
  'jobs.batch': true,
  'cronjobs.batch': true,
  'poddisruptionbudgets.policy': true,
  'horizontalpodautoscalers.autoscaling': true,
  'endpointslices.discovery.k8s.io': true,
  'networkpolicies.networking.k8s.io': true,
  'servicecidrs.networking.k8s.io': true,
  'ipaddresses.networking.k8s.io': true,
  'events.events.k8s.io': true,
  'priorityclasses.scheduling.k8s.io': true,
  'certificatesigningrequests.certificates.k8s.io': true,
  resourcequotas: true,
  limitranges: true,
  'ingresses.networking.k8s.io': true,
  'ingressclasses.networking.k8s.io': true,
  'runtimeclasses.node.k8s.io': true,
  'roles.rbac.authorization.k8s.io': true,
  'rolebindings.rbac.authorization.k8s.io': true,
  'clusterroles.rbac.authorization.k8s.io': true,
  'clusterrolebindings.rbac.authorization.k8s.io': true,
  'mutatingwebhookconfigurations.admissionregistration.k8s.io': true,
  'validatingwebhookconfigurations.admissionregistration.k8s.io': true,
  'validatingadmissionpolicies.admissionregistration.k8s.io': true,
  'validatingadmissionpolicybindings.admissionregistration.k8s.io': true,
} satisfies Record<ResourceName, true>;

test('every served resource has its object type, and every typed name is served', () => {
  assert.deepEqual([...new Set(resources.map(qualifiedResourceName))].sort(), Object.keys(typed).sort());
});

test('a name finds its group and resource', () => {
  const lease = resourceNamed('leases.coordination.k8s.io');
  assert.deepEqual([lease.group, lease.version, lease.resource, lease.kind], ['coordination.k8s.io', 'v1', 'leases', 'Lease']);
  assert.equal(resourceNamed('events').group, '');
  assert.equal(resourceNamed('events.events.k8s.io').group, 'events.k8s.io');
});
