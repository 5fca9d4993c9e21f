import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { rfc3339 } from '../../api/time.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';
import { EndpointSliceController } from './controller.js';
import { FakeTimelineRecorder } from '../../client/timeline/recorder.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:endpointslice-controller', groups: ['system:authenticated'] };

class Cluster extends ControllerHarness<EndpointSliceController> {
  readonly timeline = new FakeTimelineRecorder();

  constructor(private readonly max = 100) {
    super({ user: controllerUser, now: NOW, steps: 20 });
  }

  protected newController(deps: ControllerDeps): EndpointSliceController {
    return new EndpointSliceController({ ...deps, maxEndpointsPerSlice: this.max, recorder: this.recorder, timeline: this.timeline });
  }

  services() {
    return this.admin.resource<Service>('', 'v1', 'services').namespace('ns');
  }

  sliceClient() {
    return this.admin.resource<EndpointSlice>('discovery.k8s.io', 'v1', 'endpointslices').namespace('ns');
  }

  async slices(service = 'web'): Promise<EndpointSlice[]> {
    return (await this.sliceClient().list({ labelSelector: `kubernetes.io/service-name=${service}` })).items;
  }

  async service(spec: Service['spec'], name = 'web'): Promise<Service> {
    return this.services().create({ metadata: { name }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }], ...spec } });
  }

  async node(name: string): Promise<void> {
    await this.admin.resource('', 'v1', 'nodes').create({ metadata: { name, labels: { 'topology.kubernetes.io/zone': 'z1' } } });
  }

  async pod(name: string, ip: string, ready: boolean): Promise<Pod> {
    const created = await this.pods().create({ metadata: { name, labels: { app: 'web' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] } });
    return this.setReady(created, ready, ip);
  }

  async setReady(pod: Pod, ready: boolean, ip = pod.status?.podIP): Promise<Pod> {
    const cur = await this.pods().get(pod.metadata!.name!);
    const conditions = [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339(this.clock.now()) }];
    return this.pods().updateStatus({ ...cur, status: { ...cur.status, phase: 'Running', podIP: ip, podIPs: [{ ip: ip! }], conditions } });
  }

  /** Settles until the Service's endpoints are exactly these (address → ready), then returns its slices. */
  async endpoints(expected: Record<string, boolean>, service = 'web'): Promise<EndpointSlice[]> {
    const view = async () => {
      const all = (await this.slices(service)).flatMap((s) => s.endpoints ?? []);
      return Object.fromEntries(all.map((e) => [e.addresses[0], e.conditions?.ready ?? false]));
    };
    await this.settle(async () => JSON.stringify(await view()) === JSON.stringify(expected));
    assert.deepEqual(await view(), expected);
    return this.slices(service);
  }
}

describe('EndpointSlice controller', () => {
  it('keeps a slice of the selected pods: readiness, terminating on delete, gone when the pod is', async () => {
    const c = await new Cluster().start();
    try {
      await c.node('n1');
      const svc = await c.service({ selector: { app: 'web' } });
      const a = await c.pod('a', '10.217.0.2', true);
      await c.pod('b', '10.217.0.3', false);
      const [slice] = await c.endpoints({ '10.217.0.2': true, '10.217.0.3': false });
      assert.match(slice.metadata!.name!, /^web-[a-z0-9]{5}$/);
      assert.equal(slice.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'], 'endpointslice-controller.k8s.io');
      assert.equal(slice.metadata?.ownerReferences?.[0].uid, svc.metadata?.uid);
      assert.deepEqual(slice.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
      assert.equal(slice.endpoints[0].zone, 'z1');

      await c.setReady(a, false);
      await c.endpoints({ '10.217.0.2': false, '10.217.0.3': false });
      await c.setReady(a, true);
      await c.endpoints({ '10.217.0.2': true, '10.217.0.3': false });
      // A graceful delete: the endpoint stays, terminating, serving, not ready.
      await c.pods().delete('a', { gracePeriodSeconds: 30 });
      const [terminating] = await c.endpoints({ '10.217.0.2': false, '10.217.0.3': false });
      assert.deepEqual(terminating.endpoints.find((e) => e.addresses[0] === '10.217.0.2')?.conditions, { ready: false, serving: true, terminating: true });
      await c.pods().delete('a', { gracePeriodSeconds: 0 });
      const slices = await c.endpoints({ '10.217.0.3': false });
      assert.equal(slices.length, 1, 'the same slice, updated, never a second one');
      assert.equal(slices[0].metadata?.name, slice.metadata?.name);
    } finally {
      await c.stop();
    }
  });

  it('splits at --max-endpoints-per-slice; Services without a selector and ExternalName get none; a user-deleted slice comes back', async () => {
    const c = await new Cluster(2).start();
    try {
      await c.node('n1');
      await c.service({ selector: { app: 'web' } });
      await c.service({}, 'manual');
      await c.service({ type: 'ExternalName', externalName: 'example.com', selector: { app: 'web' }, ports: undefined }, 'ext');
      for (let i = 0; i < 5; i++) await c.pod(`p${i}`, `10.217.0.${10 + i}`, true);
      const slices = await c.endpoints(Object.fromEntries([10, 11, 12, 13, 14].map((n) => [`10.217.0.${n}`, true])));
      assert.deepEqual(slices.map((s) => s.endpoints.length).sort(), [1, 2, 2]);
      assert.deepEqual([(await c.slices('manual')).length, (await c.slices('ext')).length], [0, 0]);

      await c.sliceClient().delete(slices[0].metadata!.name!);
      await c.endpoints(Object.fromEntries([10, 11, 12, 13, 14].map((n) => [`10.217.0.${n}`, true])));
      assert.equal((await c.slices()).length, 3);
    } finally {
      await c.stop();
    }
  });

  it("a pod whose node is not known is left out, with upstream's Warning event on the Service", async () => {
    const c = await new Cluster().start();
    try {
      await c.service({ selector: { app: 'web' } });
      await c.pod('a', '10.217.0.2', true);
      await c.settle(() => c.recorder.events.length > 0);
      assert.deepEqual(
        c.recorder.events.map((e) => [e.object.kind, e.object.name, e.type, e.reason, e.message]).slice(0, 1),
        [['Service', 'web', 'Warning', 'FailedToUpdateEndpointSlices', 'Error updating Endpoint Slices for Service ns/web: skipping Pod a for Service ns/web: Node n1 Not Found']],
      );
      // The slice is written without it meanwhile; the node's arrival brings it in.
      await c.node('n1');
      await c.endpoints({ '10.217.0.2': true });
    } finally {
      await c.stop();
    }
  });

  it('a Service without endpoints has one empty placeholder slice', async () => {
    const c = await new Cluster().start();
    try {
      await c.service({ selector: { app: 'none' }, clusterIP: 'None' });
      await c.settle(async () => (await c.slices()).length > 0);
      const slices = await c.slices();
      assert.equal(slices.length, 1);
      assert.deepEqual([slices[0].endpoints ?? [], slices[0].ports ?? []], [[], []]);
      assert.equal(slices[0].metadata?.labels?.['service.kubernetes.io/headless'], '');
      await c.settle();
      assert.equal((await c.slices()).length, 1, 'no second placeholder');
    } finally {
      await c.stop();
    }
  });

  it("records a pod's endpoint steps once each slice write succeeded: added, added again when ready, terminating, removed", async () => {
    const c = await new Cluster().start();
    try {
      await c.node('n1');
      await c.service({ selector: { app: 'web' } });
      const a = await c.pod('a', '10.217.0.2', false);
      const [slice] = await c.endpoints({ '10.217.0.2': false });
      await c.setReady(a, true);
      await c.endpoints({ '10.217.0.2': true });
      await c.pods().delete('a', { gracePeriodSeconds: 30 });
      await c.endpoints({ '10.217.0.2': false });
      await c.pods().delete('a', { gracePeriodSeconds: 0 });
      await c.endpoints({});
      const steps = c.timeline.steps(a.metadata!.uid!);
      const name = slice.metadata!.name!;
      assert.deepEqual(
        steps.map((s) => [s.step, s.component, s.attributes]),
        [
          ['EndpointAdded', 'endpointslice-controller', { slice: name, service: 'web', ready: false }],
          ['EndpointAdded', 'endpointslice-controller', { slice: name, service: 'web', ready: true }],
          ['EndpointTerminating', 'endpointslice-controller', { slice: name, service: 'web' }],
          ['EndpointRemoved', 'endpointslice-controller', { slice: name, service: 'web' }],
        ],
      );
      assert.deepEqual(c.timeline.records[0]?.pod, { namespace: 'ns', name: 'a', uid: a.metadata!.uid });
      assert.equal(steps[0]?.detail, `added to EndpointSlice ${name} of Service web (not ready)`);
    } finally {
      await c.stop();
    }
  });
});
