// EndpointSlices and Endpoints inside `kite server` (the endpointslice and endpoints controllers),
// with pods run by `kite sim`, checked with the real kubectl: the Service's slice and Endpoints
// list its Ready pods, the v1 Endpoints deprecation warning reaches kubectl's stderr, a pod going
// unready stays in the slice as not ready (and moves to notReadyAddresses), and a deleted pod's
// endpoint turns terminating while it shuts down.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, simCluster, webReplicaSet } from './harness.js';

interface SliceList {
  items: {
    metadata: { name: string; labels: Record<string, string>; ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
    addressType: string;
    ports?: { name: string; port: number; protocol: string }[];
    endpoints?: { addresses: string[]; conditions: { ready?: boolean; serving?: boolean; terminating?: boolean }; nodeName?: string; targetRef?: { name: string } }[];
  }[];
}

// A grace period long enough to see the deleted pod's endpoint terminating.
const manifests = `${webReplicaSet(3, { terminationGracePeriodSeconds: 30, containerPort: 8080 })}---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels:
    team: a
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: http
`;

const DEPRECATION = 'Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice';

describe('EndpointSlices and Endpoints (kite server + kite sim)', () => {
  const cluster = simCluster(2);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const slices = () => JSON.parse(k(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'json'])) as SliceList;
  const endpoints = () => slices().items.flatMap((s) => s.endpoints ?? []);

  it('publishes the Ready pods in a slice and in Endpoints; unready and terminating pods are marked', async () => {
    k(['apply', '-f', '-'], manifests);
    const ready = await eventually(() => {
      const eps = endpoints().filter((e) => e.conditions.ready);
      return eps.length === 3 ? eps : undefined;
    }, 'three ready endpoints', 60_000);
    const [slice] = slices().items;
    assert.equal(slices().items.length, 1);
    assert.match(slice!.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(slice!.metadata.labels, { team: 'a', 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' });
    assert.deepEqual(slice!.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.controller]), [['Service', 'web', true]]);
    assert.deepEqual(slice!.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.ok(ready.every((e) => e.nodeName?.startsWith('sim-')));

    const table = k(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web']);
    assert.deepEqual(table.split('\n')[0]!.trim().split(/\s+/), ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE']);
    assert.match(table.split('\n')[1]!, new RegExp(`^${slice!.metadata.name}\\s+IPv4\\s+8080\\s+\\d+\\.\\d+\\.\\d+\\.\\d+,\\d+\\.\\d+\\.\\d+\\.\\d+,\\d+\\.\\d+\\.\\d+\\.\\d+ \\+ 1 more\\.\\.\\.|^${slice!.metadata.name}\\s+IPv4\\s+8080\\s+[\\d.,]+\\s`));

    // v1 Endpoints: the same pods, and the deprecation warning on every request.
    const got = kubectl(cluster.server, ['get', 'endpoints', 'web']);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stderr.trim(), DEPRECATION);
    assert.match(got.stdout.split('\n')[1]!, /^web\s+(\d+\.\d+\.\d+\.\d+:8080,?){3}\s/);

    // One pod's readiness fails: it stays in the slice, not ready, and moves to notReadyAddresses.
    const victim = ready[0]!.targetRef!.name;
    const conditions = JSON.parse(k(['get', 'pod', victim, '-o', 'jsonpath={.status.conditions}'])) as { type: string; status: string }[];
    const unready = conditions.map((c) => (c.type === 'Ready' || c.type === 'ContainersReady' ? { ...c, status: 'False', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } : c));
    k(['patch', 'pod', victim, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions: unready } })]);
    await eventually(() => {
      const ep = endpoints().find((e) => e.targetRef?.name === victim);
      return ep && ep.conditions.ready === false ? ep : undefined;
    }, 'the unready endpoint', 20_000);
    await eventually(() => {
      const subsets = JSON.parse(k(['get', 'endpoints', 'web', '-o', 'jsonpath={.subsets}'])) as { notReadyAddresses?: { targetRef: { name: string } }[] }[];
      return subsets.some((s) => s.notReadyAddresses?.some((a) => a.targetRef.name === victim)) ? true : undefined;
    }, 'the unready address in Endpoints', 20_000);

    // A deleted pod: its endpoint turns terminating (not ready) before it goes.
    const leaving = ready[1]!.targetRef!.name;
    k(['delete', 'pod', leaving, '--wait=false']);
    const terminating = await eventually(() => {
      const ep = endpoints().find((e) => e.targetRef?.name === leaving);
      return ep?.conditions.terminating ? ep : undefined;
    }, 'the terminating endpoint', 20_000);
    assert.equal(terminating.conditions.ready, false);
    // The ReplicaSet's replacement joins; the deleted pod leaves once it is gone.
    await eventually(() => {
      const eps = endpoints();
      return !eps.some((e) => e.targetRef?.name === leaving) && eps.filter((e) => e.conditions.ready).length === 2 ? true : undefined;
    }, 'the deleted pod gone and its replacement ready', 60_000);
  });

  it('Services without a selector keep the slices their users write', async () => {
    k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Service
metadata:
  name: manual
spec:
  ports:
  - port: 80
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: manual-1
  labels:
    kubernetes.io/service-name: manual
    endpointslice.kubernetes.io/managed-by: my-controller.example.com
addressType: IPv4
ports:
- name: ""
  port: 80
  protocol: TCP
endpoints:
- addresses: ["10.217.9.9"]
`,
    );
    // A Service with a selector made after it gets its slice: the controller has looked at both by then.
    k(['create', 'service', 'clusterip', 'later', '--tcp=80:80']);
    await eventually(() => ((JSON.parse(k(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=later', '-o', 'json'])) as SliceList).items.length ? true : undefined), 'the later Service\'s slice');
    const list = JSON.parse(k(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=manual', '-o', 'json'])) as SliceList;
    assert.deepEqual(
      list.items.map((s) => s.metadata.name),
      ['manual-1'],
    );
    const loopback = kubectl(cluster.server, ['create', '-f', '-'], `apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: lo\nsubsets:\n- addresses: [{ip: 127.0.0.1}]\n  ports: [{port: 80}]\n`);
    assert.notEqual(loopback.code, 0);
    assert.match(loopback.stderr, /subsets\[0\]\.addresses\[0\]\.ip: Invalid value: "127\.0\.0\.1": may not be in the loopback range \(127\.0\.0\.0\/8, ::1\/128\)/);
  });
});
