import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Service, ServiceCIDR } from '../../api/types.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { hasStatusCode } from '../../api/errors.js';
import { deletionGracePeriodMs, serviceCIDRFinalizer, ServiceCIDRController } from './controller.js';
import { until } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);

describe('ServiceCIDR controller', () => {
  it('adds the finalizer and Ready; a deletion waits while IPs lie only in the range, then for the grace period', async () => {
    const clock = new FakeClock(NOW);
    const api = await FakeApi.start({ clock });
    const client = api.client({ name: 'system:serviceaccount:kube-system:service-cidrs-controller', groups: ['system:authenticated'] });
    const informers = new SharedInformerFactory({ client, clock });
    const controller = new ServiceCIDRController({ client, informers, clock, logger: pino({ level: 'silent' }) });
    controller.start();
    informers.start();
    const admin = api.client();
    const cidrs = admin.resource<ServiceCIDR>('networking.k8s.io', 'v1', 'servicecidrs');
    try {
      await cidrs.create({ metadata: { name: 'extra' }, spec: { cidrs: ['10.200.0.0/24'] } } as ServiceCIDR);
      const ready = await until(async () => {
        const c = await cidrs.get('extra');
        return c.metadata?.finalizers?.includes(serviceCIDRFinalizer) && c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ? c : undefined;
      }, 'finalizer and Ready=True');
      assert.equal(ready.status?.conditions?.find((x) => x.type === 'Ready')?.message, 'Kubernetes Service CIDR is ready');
      // The default one gets the finalizer too.
      await until(async () => ((await cidrs.get('kubernetes')).metadata?.finalizers?.includes(serviceCIDRFinalizer) ? true : undefined), 'kubernetes finalizer');

      const services = admin.resource<Service>('', 'v1', 'services').namespace('default');
      await services.create({ metadata: { name: 'in-extra' }, spec: { clusterIP: '10.200.0.5', ports: [{ port: 80 }] } });
      await cidrs.delete('extra');
      const blocked = await until(async () => {
        const c = await cidrs.get('extra');
        const r = c.status?.conditions?.find((x) => x.type === 'Ready');
        return r?.status === 'False' ? r : undefined;
      }, 'Ready=False');
      assert.equal(blocked.reason, 'Terminating');
      assert.equal(blocked.message, 'There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR');
      // No new IPs come from a ServiceCIDR being deleted.
      await assert.rejects(services.create({ metadata: { name: 'late' }, spec: { clusterIP: '10.200.0.6', ports: [{ port: 80 }] } }), /does not match the current range/);

      await services.delete('in-extra');
      // Unblocked, it still waits out the grace period before the finalizer goes.
      await new Promise((r) => setTimeout(r, 200));
      assert.ok((await cidrs.get('extra')).metadata?.finalizers?.includes(serviceCIDRFinalizer));
      await clock.advance(deletionGracePeriodMs + 1);
      await until(async () => {
        try {
          await cidrs.get('extra');
          return undefined;
        } catch (err) {
          return hasStatusCode(err, 404) ? true : undefined;
        }
      }, 'the ServiceCIDR to go');
    } finally {
      await controller.stop();
      await informers.shutdown();
      await api.stop();
    }
  });
});
