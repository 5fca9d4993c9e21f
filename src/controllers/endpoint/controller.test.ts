import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoints, Pod, Service } from 'kubernetes-types/core/v1.js';
import { rfc3339 } from '../../api/time.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';
import { EndpointsController } from './controller.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:endpoint-controller', groups: ['system:authenticated'] };

class Cluster extends ControllerHarness<EndpointsController> {
  constructor() {
    super({ user: controllerUser, now: NOW, steps: 20 });
  }

  protected newController(deps: ControllerDeps): EndpointsController {
    return new EndpointsController(deps);
  }

  services() {
    return this.admin.resource<Service>('', 'v1', 'services').namespace('ns');
  }

  endpointsClient() {
    return this.admin.resource<Endpoints>('', 'v1', 'endpoints').namespace('ns');
  }

  async endpoints(name = 'web'): Promise<Endpoints | undefined> {
    return this.endpointsClient()
      .get(name)
      .catch(() => undefined);
  }

  async until(cond: (ep: Endpoints | undefined) => boolean, name = 'web'): Promise<Endpoints | undefined> {
    await this.settle(async () => cond(await this.endpoints(name)));
    return this.endpoints(name);
  }

  async pod(name: string, ip: string, ready: boolean, port = 8080): Promise<Pod> {
    const created = await this.pods().create({
      metadata: { name, labels: { app: 'web' } },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: port }] }] },
    });
    const conditions = [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339(this.clock.now()) }];
    return this.pods().updateStatus({ ...created, status: { ...created.status, phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions } });
  }
}

const ips = (ep: Endpoints | undefined) => ({
  ready: (ep?.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort(),
  notReady: (ep?.subsets ?? []).flatMap((s) => (s.notReadyAddresses ?? []).map((a) => a.ip)).sort(),
});

describe('Endpoints controller', () => {
  it('writes the Service-named Endpoints: ready and not-ready addresses, named ports, labels; terminating pods leave; deleted with the Service', async () => {
    const c = await new Cluster().start();
    try {
      await c.services().create({ metadata: { name: 'web', labels: { team: 'a' } }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } });
      await c.pod('a', '10.217.0.2', true);
      await c.pod('b', '10.217.0.3', false);
      let ep = await c.until((e) => ips(e).ready.length + ips(e).notReady.length === 2);
      assert.deepEqual(ips(ep), { ready: ['10.217.0.2'], notReady: ['10.217.0.3'] });
      assert.deepEqual(ep?.subsets?.[0].ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
      assert.deepEqual(ep?.metadata?.labels, { team: 'a', 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' });
      assert.equal(ep?.subsets?.[0].addresses?.[0].targetRef?.name, 'a');
      assert.ok(ep?.metadata?.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']);

      await c.pods().delete('a', { gracePeriodSeconds: 30 });
      ep = await c.until((e) => ips(e).ready.length === 0);
      assert.deepEqual(ips(ep), { ready: [], notReady: ['10.217.0.3'] });

      await c.services().delete('web');
      assert.equal(await c.until((e) => e === undefined), undefined);
    } finally {
      await c.stop();
    }
  });

  it('a headless Service gets the headless label; Services without a selector keep their own Endpoints', async () => {
    const c = await new Cluster().start();
    try {
      await c.services().create({ metadata: { name: 'db' }, spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ port: 5432 }] } });
      const ep = await c.until((e) => e !== undefined, 'db');
      assert.equal(ep?.metadata?.labels?.['service.kubernetes.io/headless'], '');
      await c.services().create({ metadata: { name: 'manual' }, spec: { ports: [{ port: 80 }] } });
      await c.endpointsClient().create({ metadata: { name: 'manual' }, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 80 }] }] });
      await c.settle();
      assert.equal((await c.endpoints('manual'))?.subsets?.[0].addresses?.[0].ip, '192.0.2.1');
    } finally {
      await c.stop();
    }
  });
});
