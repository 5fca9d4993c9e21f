import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { CONTROLLER_NAME, LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, reconcile, type ReconcileInput } from './reconciler.js';

const service = (extra: Partial<Service['spec']> = {}, labels?: Record<string, string>): Service => ({
  metadata: { name: 'web', namespace: 'ns', uid: 'svc-uid', labels, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { selector: { app: 'web' }, clusterIP: '10.96.0.5', ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }], ...extra },
});

function pod(name: string, ip: string, opts: { ready?: boolean; port?: number; deleting?: boolean; node?: string; phase?: string; hostname?: string } = {}): Pod {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'web' }, ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:01:00Z' } : {}) },
    spec: {
      nodeName: opts.node ?? 'n1',
      hostname: opts.hostname,
      subdomain: opts.hostname ? 'web' : undefined,
      containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: opts.port ?? 8080 }] }],
    },
    status: { phase: opts.phase ?? 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

const nodes: Record<string, Node> = { n1: { metadata: { name: 'n1', labels: { 'topology.kubernetes.io/zone': 'zone-a' } } }, n2: { metadata: { name: 'n2' } } };

function input(svc: Service, pods: Pod[], existing: EndpointSlice[] = [], max = 100): ReconcileInput {
  return { service: svc, pods, existing, node: (n) => nodes[n], maxEndpointsPerSlice: max, triggerTime: Date.UTC(2026, 0, 1) };
}

/** The plan's slices as the API would store them (names for creates). */
let serial = 0;
const stored = (slices: EndpointSlice[]) => slices.map((s) => ({ ...s, metadata: { ...s.metadata, name: s.metadata?.name ?? `web-${serial++}`, uid: s.metadata?.uid ?? `u${serial}` } }));
const ips = (s: EndpointSlice) => s.endpoints.map((e) => e.addresses[0]).sort();

describe('EndpointSlice planner', () => {
  it('new Service: one slice with the labels, owner, ports resolved by name, conditions, node, zone, trigger time', () => {
    const plan = reconcile(input(service({}, { team: 'a', [LABEL_MANAGED_BY]: 'spoof' }), [pod('a', '10.0.0.1'), pod('b', '10.0.0.2', { ready: false }), pod('c', '10.0.0.3', { deleting: true })]));
    assert.equal(plan.create.length, 1);
    assert.deepEqual([plan.update.length, plan.delete.length], [0, 0]);
    const s = plan.create[0];
    assert.equal(s.metadata?.generateName, 'web-');
    assert.deepEqual(s.metadata?.labels, { team: 'a', [LABEL_SERVICE_NAME]: 'web', [LABEL_MANAGED_BY]: CONTROLLER_NAME });
    assert.deepEqual(s.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true }]);
    assert.equal(s.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'], '2026-01-01T00:00:00Z');
    assert.equal(s.addressType, 'IPv4');
    assert.deepEqual(s.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const byIP = Object.fromEntries(s.endpoints.map((e) => [e.addresses[0], e]));
    assert.deepEqual(byIP['10.0.0.1'].conditions, { ready: true, serving: true, terminating: false });
    assert.deepEqual(byIP['10.0.0.2'].conditions, { ready: false, serving: false, terminating: false });
    // Terminating endpoints stay, serving as long as the pod is ready, never ready.
    assert.deepEqual(byIP['10.0.0.3'].conditions, { ready: false, serving: true, terminating: true });
    assert.deepEqual([byIP['10.0.0.1'].nodeName, byIP['10.0.0.1'].zone], ['n1', 'zone-a']);
    assert.deepEqual(byIP['10.0.0.1'].targetRef, { kind: 'Pod', namespace: 'ns', name: 'a', uid: 'uid-a' });
  });

  it('pods whose named port resolves differently go to different slices; finished and IP-less pods are left out', () => {
    const plan = reconcile(input(service(), [pod('a', '10.0.0.1'), pod('b', '10.0.0.2', { port: 9090 }), pod('c', '10.0.0.3', { phase: 'Succeeded' }), pod('d', '')]));
    assert.deepEqual(
      plan.create.map((s) => [s.ports?.[0].port, ips(s)]).sort(),
      [
        [8080, ['10.0.0.1']],
        [9090, ['10.0.0.2']],
      ],
    );
  });

  it('publishNotReadyAddresses makes every endpoint ready; a headless Service gets the headless label; hostname for its subdomain', () => {
    const plan = reconcile(input(service({ clusterIP: 'None', publishNotReadyAddresses: true }), [pod('a', '10.0.0.1', { ready: false, hostname: 'a' })]));
    const s = plan.create[0];
    assert.equal(s.metadata?.labels?.[LABEL_HEADLESS], '');
    assert.equal(s.endpoints[0].conditions?.ready, true);
    assert.equal(s.endpoints[0].hostname, 'a');
  });

  it('a pod on a node not in the cache is left out and reported, unless publishNotReadyAddresses', () => {
    const plan = reconcile(input(service(), [pod('a', '10.0.0.1', { node: 'gone' })]));
    assert.match(plan.errors[0], /^skipping Pod a for Service ns\/web: Node gone Not Found$/);
    assert.equal(plan.create[0].endpoints.length, 0, 'the placeholder');
    assert.equal(reconcile(input(service({ publishNotReadyAddresses: true }), [pod('a', '10.0.0.1', { node: 'gone' })])).create[0].endpoints.length, 1);
  });

  it('at most maxEndpointsPerSlice per slice; an unchanged cluster plans nothing', () => {
    const pods = Array.from({ length: 250 }, (_, i) => pod(`p${i}`, `10.0.${i >> 8}.${i & 255}`));
    const first = reconcile(input(service(), pods));
    assert.deepEqual(first.create.map((s) => s.endpoints.length).sort(), [100, 100, 50]);
    const again = reconcile(input(service(), pods, stored(first.create)));
    assert.deepEqual([again.create.length, again.update.length, again.delete.length], [0, 0, 0]);
  });

  it('new endpoints fill the slices being updated, then the unchanged slice closest to full, before a new one', () => {
    const pods = Array.from({ length: 150 }, (_, i) => pod(`p${i}`, `10.1.0.${i}`));
    const existing = stored(reconcile(input(service(), pods, [], 100)).create); // 100 + 50
    // One pod of the full slice goes unready (an update); 30 new pods: they fill it up to 100 first.
    const full = existing.find((s) => s.endpoints.length === 100)!;
    const changedIP = full.endpoints[0].addresses[0];
    const next = pods.map((p) => (p.status?.podIP === changedIP ? pod(p.metadata!.name!, changedIP, { ready: false }) : p));
    const added = Array.from({ length: 30 }, (_, i) => pod(`n${i}`, `10.2.0.${i}`));
    const plan = reconcile(input(service(), [...next, ...added], existing));
    assert.equal(plan.create.length, 0);
    assert.deepEqual(
      plan.update.map((s) => [s.metadata?.name, s.endpoints.length]).sort(),
      [
        [existing.find((s) => s.endpoints.length === 50)!.metadata!.name, 80],
        [full.metadata!.name, 100],
      ].sort(),
    );
    // Only that one endpoint changed in the full slice: the 30 went to the other (it had room for all).
    assert.equal(plan.update.find((s) => s.metadata?.name === full.metadata?.name)!.endpoints.find((e) => e.addresses[0] === changedIP)!.conditions?.ready, false);
  });

  it('a slice left empty is deleted, or reused for a slice the plan would create; no endpoints keeps one placeholder', () => {
    const existing = stored(reconcile(input(service(), [pod('a', '10.0.0.1')])).create);
    // The pod's port changes: its old slice (port 8080) would go and a new one (9090) come: reused.
    const moved = reconcile(input(service(), [pod('a', '10.0.0.1', { port: 9090 })], existing));
    assert.deepEqual([moved.create.length, moved.delete.length], [0, 0]);
    assert.equal(moved.update[0].metadata?.name, existing[0].metadata?.name);
    assert.deepEqual(moved.update[0].ports, [{ name: 'http', port: 9090, protocol: 'TCP' }]);
    // All pods gone: the slice becomes the placeholder (an update of the same slice).
    const none = reconcile(input(service(), [], existing));
    assert.deepEqual([none.create.length, none.delete.length, none.update.length], [0, 0, 1]);
    assert.deepEqual([none.update[0].endpoints, none.update[0].ports], [[], []]);
    // The placeholder itself is left alone.
    const idle = reconcile(input(service(), [], stored(none.update)));
    assert.deepEqual([idle.create.length, idle.delete.length], [0, 0]);
  });

  it("a managed slice another Service (an older one of the same name) owns is deleted; nothing new while the Service is being deleted", () => {
    const foreign = stored(reconcile(input({ ...service(), metadata: { ...service().metadata, uid: 'old' } }, [pod('a', '10.0.0.1')])).create);
    const plan = reconcile(input(service(), [pod('a', '10.0.0.1')], foreign));
    assert.deepEqual([plan.create.length, plan.delete.map((s) => s.metadata?.name)], [1, [foreign[0].metadata?.name]]);
    const deleting = reconcile(input({ ...service(), metadata: { ...service().metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, [pod('a', '10.0.0.1')]));
    assert.equal(deleting.create.length, 0);
  });

  it('service label changes update the slices; no trigger time clears the annotation', () => {
    const existing = stored(reconcile(input(service(), [pod('a', '10.0.0.1')])).create);
    const plan = reconcile({ ...input(service({}, { tier: 'front' }), [pod('a', '10.0.0.1')], existing), triggerTime: 0 });
    assert.equal(plan.update[0].metadata?.labels?.tier, 'front');
    assert.equal(plan.update[0].metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'], undefined);
  });
});
