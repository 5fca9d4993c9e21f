import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults, imageTag } from './index.js';

type Obj = Record<string, any>;

function defaulted(group: string, kind: string, obj: Obj): Obj {
  applyDefaults(group, kind, obj);
  return obj;
}

test('imageTag tells tags from registry ports and digests', () => {
  const cases: [string, string | undefined][] = [
    ['nginx', 'latest'],
    ['nginx:latest', 'latest'],
    ['nginx:1.25', '1.25'],
    ['localhost:5000/nginx', 'latest'],
    ['localhost:5000/nginx:1', '1'],
    [`busybox@sha256:${'a'.repeat(64)}`, ''],
    ['Nginx', undefined],
    ['', undefined],
  ];
  for (const [image, want] of cases) assert.equal(imageTag(image), want, image);
});

test('Pod defaults as upstream SetDefaults_Pod and SetDefaults_PodSpec', () => {
  const pod = defaulted('', 'Pod', {
    metadata: { name: 'p' },
    spec: {
      containers: [
        {
          name: 'a',
          image: 'nginx',
          ports: [{ containerPort: 80 }],
          env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          resources: { limits: { cpu: '0.5', memory: '128Mi' } },
          livenessProbe: { httpGet: { port: 80 } },
          readinessProbe: { grpc: { port: 9 }, periodSeconds: 5 },
        },
      ],
      initContainers: [{ name: 'i', image: 'busybox:1.36' }],
      volumes: [{ name: 'v' }, { name: 'c', configMap: { name: 'cm' } }, { name: 'h', hostPath: { path: '/x' } }],
    },
  });
  const s = pod.spec;
  assert.equal(s.restartPolicy, 'Always');
  assert.equal(s.terminationGracePeriodSeconds, 30);
  assert.equal(s.dnsPolicy, 'ClusterFirst');
  assert.equal(s.schedulerName, 'default-scheduler');
  assert.deepEqual(s.securityContext, {});
  assert.equal(s.enableServiceLinks, true);
  const c = s.containers[0];
  assert.equal(c.imagePullPolicy, 'Always');
  assert.equal(c.terminationMessagePath, '/dev/termination-log');
  assert.equal(c.terminationMessagePolicy, 'File');
  assert.equal(c.ports[0].protocol, 'TCP');
  assert.equal(c.env[0].valueFrom.fieldRef.apiVersion, 'v1');
  assert.deepEqual(c.resources, { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '500m', memory: '128Mi' } });
  assert.deepEqual(c.resizePolicy, [
    { resourceName: 'cpu', restartPolicy: 'NotRequired' },
    { resourceName: 'memory', restartPolicy: 'NotRequired' },
  ]);
  assert.deepEqual(c.livenessProbe, { httpGet: { port: 80, path: '/', scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 });
  assert.equal(c.readinessProbe.periodSeconds, 5);
  assert.equal(c.readinessProbe.grpc.service, '');
  assert.equal(s.initContainers[0].imagePullPolicy, 'IfNotPresent');
  assert.deepEqual(s.initContainers[0].resources, {});
  assert.equal(s.initContainers[0].resizePolicy, undefined);
  assert.deepEqual(s.volumes[0], { name: 'v', emptyDir: {} });
  assert.equal(s.volumes[1].configMap.defaultMode, 420);
  assert.equal(s.volumes[2].hostPath.type, '');
});

test('hostNetwork pods get host ports; templates do not', () => {
  const spec = () => ({ hostNetwork: true, containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 8080 }] }] });
  const pod = defaulted('', 'Pod', { spec: spec() });
  assert.equal(pod.spec.containers[0].ports[0].hostPort, 8080);
  const d = defaulted('apps', 'Deployment', { spec: { template: { spec: spec() } } });
  assert.equal(d.spec.template.spec.containers[0].ports[0].hostPort, undefined);
});

test('workloads: Deployment and ReplicaSet', () => {
  const d = defaulted('apps', 'Deployment', { spec: { template: { spec: { containers: [{ name: 'a', image: 'x:1' }] } } } });
  assert.equal(d.spec.replicas, 1);
  assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  assert.equal(d.spec.revisionHistoryLimit, 10);
  assert.equal(d.spec.progressDeadlineSeconds, 600);
  assert.equal(d.spec.template.spec.restartPolicy, 'Always');
  // enableServiceLinks and requests-from-limits are pod-only defaults.
  assert.equal(d.spec.template.spec.enableServiceLinks, undefined);
  const recreate = defaulted('apps', 'Deployment', { spec: { replicas: 0, strategy: { type: 'Recreate' } } });
  assert.deepEqual(recreate.spec.strategy, { type: 'Recreate' });
  assert.equal(recreate.spec.replicas, 0);
  const rs = defaulted('apps', 'ReplicaSet', { spec: {} });
  assert.equal(rs.spec.replicas, 1);
});

test('Service defaults', () => {
  const svc = defaulted('', 'Service', { spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 'dns' }] } });
  assert.equal(svc.spec.type, 'ClusterIP');
  assert.equal(svc.spec.sessionAffinity, 'None');
  assert.equal(svc.spec.internalTrafficPolicy, 'Cluster');
  assert.equal(svc.spec.externalTrafficPolicy, undefined);
  // The registry settles the families (they depend on the cluster's ServiceCIDRs).
  assert.equal(svc.spec.ipFamilyPolicy, undefined);
  assert.deepEqual(svc.spec.ports, [
    { port: 80, protocol: 'TCP', targetPort: 80 },
    { port: 53, protocol: 'UDP', targetPort: 'dns' },
  ]);
  const lb = defaulted('', 'Service', { spec: { type: 'LoadBalancer', ports: [{ port: 80 }] } });
  assert.equal(lb.spec.externalTrafficPolicy, 'Cluster');
  assert.equal(lb.spec.allocateLoadBalancerNodePorts, true);
  const sticky = defaulted('', 'Service', { spec: { sessionAffinity: 'ClientIP', ports: [{ port: 80 }] } });
  assert.deepEqual(sticky.spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10800 } });
  const ext = defaulted('', 'Service', { spec: { type: 'ExternalName', externalName: 'example.com' } });
  assert.equal(ext.spec.internalTrafficPolicy, undefined);
  assert.equal(ext.spec.ipFamilyPolicy, undefined);
});

test('other kinds', () => {
  const ns = defaulted('', 'Namespace', { metadata: { name: 'team' } });
  assert.deepEqual(ns.metadata.labels, { 'kubernetes.io/metadata.name': 'team' });
  assert.equal(ns.status.phase, 'Active');
  const secret = defaulted('', 'Secret', { data: { a: 'eA==' }, stringData: { b: 'hi' } });
  assert.equal(secret.type, 'Opaque');
  assert.deepEqual(secret.data, { a: 'eA==', b: 'aGk=' });
  assert.equal(secret.stringData, undefined);
  const node = defaulted('', 'Node', { status: { capacity: { cpu: '4', memory: '8192Mi' } } });
  assert.deepEqual(node.status.allocatable, { cpu: '4', memory: '8Gi' });
  const slice = defaulted('discovery.k8s.io', 'EndpointSlice', { ports: [{ port: 80 }] });
  assert.deepEqual(slice.ports, [{ port: 80, name: '', protocol: 'TCP' }]);
  const pc = defaulted('scheduling.k8s.io', 'PriorityClass', { value: 1 });
  assert.equal(pc.preemptionPolicy, 'PreemptLowerPriority');
  const ep = defaulted('', 'Endpoints', { subsets: [{ ports: [{ port: 1 }] }] });
  assert.equal(ep.subsets[0].ports[0].protocol, 'TCP');
  const cm = defaulted('', 'ConfigMap', { data: { a: 'b' } });
  assert.deepEqual(cm, { data: { a: 'b' } });
});

test('nulls are zeroed before defaulting, as Go decodes them', () => {
  const pod = defaulted('', 'Pod', { metadata: { name: 'p' }, spec: { containers: [null], tolerations: [null], terminationGracePeriodSeconds: null } });
  assert.equal(pod.spec.terminationGracePeriodSeconds, 30);
  assert.deepEqual(pod.spec.tolerations, [{}]);
  assert.equal(pod.spec.containers[0].terminationMessagePolicy, 'File');
  const node = defaulted('', 'Node', { metadata: { name: 'n' }, status: { capacity: { cpu: null } } });
  assert.deepEqual(node.status.allocatable, { cpu: '0' });
});
