import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, ResourceQuota, Service } from 'kubernetes-types/core/v1.js';
import { evaluatorFor, objectCountName, quotaMatches } from './evaluators.js';
import { toResourceList } from './resources.js';

const NOW = Date.UTC(2026, 0, 1);
const pods = evaluatorFor('', 'pods')!;
const services = evaluatorFor('', 'services')!;

const pod = (spec: Partial<Pod['spec']> = {}, extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns' },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
  ...extra,
});
const withResources = (requests?: Record<string, string>, limits?: Record<string, string>) => ({ containers: [{ name: 'c', image: 'busybox', resources: { requests, limits } }] });

test('object count names: count/<resource> in the core group, count/<resource>.<group> elsewhere', () => {
  assert.equal(objectCountName('', 'pods'), 'count/pods');
  assert.equal(objectCountName('apps', 'deployments'), 'count/deployments.apps');
});

test('pod usage: the count always, compute while the pod is not terminal', () => {
  const cases: { name: string; pod: Pod; want: Record<string, string> }[] = [
    { name: 'best effort', pod: pod(), want: { 'count/pods': '1', pods: '1' } },
    {
      name: 'requests and limits',
      pod: pod(withResources({ cpu: '500m', memory: '1Gi', 'ephemeral-storage': '1G' }, { cpu: '1', memory: '2Gi' })),
      want: {
        'count/pods': '1', pods: '1', cpu: '500m', 'requests.cpu': '500m', memory: '1Gi', 'requests.memory': '1Gi',
        'ephemeral-storage': '1G', 'requests.ephemeral-storage': '1G', 'limits.cpu': '1', 'limits.memory': '2Gi',
      },
    },
    {
      name: 'an init container larger than the containers sets the request; extended resources as requests.<name>',
      pod: pod({
        containers: [{ name: 'c', image: 'b', resources: { requests: { cpu: '100m', 'example.com/gpu': '1' } } }],
        initContainers: [{ name: 'i', image: 'b', resources: { requests: { cpu: '300m' } } }],
      }),
      want: { 'count/pods': '1', pods: '1', cpu: '300m', 'requests.cpu': '300m', 'requests.example.com/gpu': '1' },
    },
    { name: 'succeeded', pod: pod(withResources({ cpu: '1' }), { status: { phase: 'Succeeded' } }), want: { 'count/pods': '1' } },
    {
      name: 'past its deletion grace',
      pod: pod({}, { metadata: { name: 'p', deletionTimestamp: new Date(NOW - 60_000).toISOString(), deletionGracePeriodSeconds: 30 } }),
      want: { 'count/pods': '1' },
    },
    {
      name: 'within its deletion grace',
      pod: pod({}, { metadata: { name: 'p', deletionTimestamp: new Date(NOW - 10_000).toISOString(), deletionGracePeriodSeconds: 30 } }),
      want: { 'count/pods': '1', pods: '1' },
    },
  ];
  for (const c of cases) assert.deepEqual(toResourceList(pods.usage(c.pod, NOW)), c.want, c.name);
});

test('pod constraints: a quota on cpu or memory makes every container set it', () => {
  const p = pod({ containers: [{ name: 'b', image: 'x', resources: { requests: { cpu: '1' } } }, { name: 'a', image: 'x' }] });
  assert.equal(pods.constraints(['pods', 'limits.cpu', 'requests.cpu'], p), 'must specify limits.cpu for: a,b; requests.cpu for: a');
  assert.equal(pods.constraints(['pods', 'requests.ephemeral-storage'], p), undefined);
});

test('pod scopes', () => {
  const quota = (scopes: string[], scopeSelector?: ResourceQuota['spec']): ResourceQuota => ({ spec: { hard: { pods: '1' }, scopes, ...scopeSelector } });
  const bestEffort = pod();
  const burstable = pod(withResources({ cpu: '1' }));
  const terminating = pod({ activeDeadlineSeconds: 10 });
  const hard = ['pods'];
  assert.equal(quotaMatches(pods, quota(['BestEffort']), bestEffort, hard), true);
  assert.equal(quotaMatches(pods, quota(['BestEffort']), burstable, hard), false);
  assert.equal(quotaMatches(pods, quota(['NotBestEffort']), burstable, hard), true);
  assert.equal(quotaMatches(pods, quota(['Terminating']), terminating, hard), true);
  assert.equal(quotaMatches(pods, quota(['NotTerminating']), terminating, hard), false);
  const highOnly = quota([], { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } });
  assert.equal(quotaMatches(pods, highOnly, pod({ priorityClassName: 'high' }), hard), true);
  assert.equal(quotaMatches(pods, highOnly, pod({ priorityClassName: 'low' }), hard), false);
  assert.equal(quotaMatches(pods, highOnly, pod(), hard), false);
  const crossNs = pod({ affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'k', namespaces: ['other'] }] } } });
  assert.equal(quotaMatches(pods, quota(['CrossNamespacePodAffinity']), crossNs, hard), true);
  assert.equal(quotaMatches(pods, quota(['CrossNamespacePodAffinity']), bestEffort, hard), false);
  // A quota tracking nothing the evaluator measures never matches.
  assert.equal(quotaMatches(pods, quota([]), bestEffort, ['services']), false);
  // Object count evaluators have no scopes: a scoped quota does not match them.
  assert.equal(quotaMatches(evaluatorFor('', 'configmaps')!, quota(['BestEffort']), {}, ['configmaps']), false);
});

test('service usage: node ports and load balancers', () => {
  const svc = (spec: Service['spec']): Service => ({ metadata: { name: 's' }, spec });
  const ports = [{ port: 80 }, { port: 443, nodePort: 30443 }];
  assert.deepEqual(toResourceList(services.usage(svc({ type: 'ClusterIP', ports }), NOW)), {
    'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '0',
  });
  assert.equal(toResourceList(services.usage(svc({ type: 'NodePort', ports }), NOW))['services.nodeports'], '2');
  const lb = toResourceList(services.usage(svc({ type: 'LoadBalancer', ports, allocateLoadBalancerNodePorts: false }), NOW));
  assert.equal(lb['services.nodeports'], '1');
  assert.equal(lb['services.loadbalancers'], '1');
  assert.equal(services.handles('UPDATE'), true);
});

test('every other resource is counted on create, under its legacy name too; events are never', () => {
  const cm = evaluatorFor('', 'configmaps')!;
  assert.deepEqual(toResourceList(cm.usage({}, NOW)), { configmaps: '1', 'count/configmaps': '1' });
  assert.equal(cm.handles('UPDATE'), false);
  assert.deepEqual(toResourceList(evaluatorFor('apps', 'deployments')!.usage({}, NOW)), { 'count/deployments.apps': '1' });
  assert.equal(evaluatorFor('', 'events'), undefined);
});
