import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Endpoints } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { FakeApi } from './testing/fakeapi.js';
import { FakeClock } from '../util/clock.js';
import { LEASE_TTL_MS, LeaseEndpointReconciler, RECONCILE_INTERVAL_MS } from './endpointreconciler.js';

const logger = pino({ level: 'silent' });

describe('the kubernetes Service endpoints (lease reconciler)', () => {
  it('publishes every live server, drops one whose lease expired, and removes itself on stop unless last', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const api = await FakeApi.start({ clock });
    try {
      const admin = api.client();
      const server = (ip: string) => new LeaseEndpointReconciler({ store: api.store, registries: api.registries, clock, logger, ip, port: 6443 });
      const endpoints = async () => (await admin.resource<Endpoints>('', 'v1', 'endpoints').namespace('default').get('kubernetes')).subsets;
      const slice = () => admin.resource<EndpointSlice>('discovery.k8s.io', 'v1', 'endpointslices').namespace('default').get('kubernetes');

      const a = server('10.217.0.1');
      const b = server('10.217.1.1');
      await a.reconcile();
      await b.reconcile();
      assert.deepEqual(await endpoints(), [{ addresses: [{ ip: '10.217.0.1' }, { ip: '10.217.1.1' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]);
      const s = await slice();
      assert.deepEqual(s.metadata?.labels, { 'kubernetes.io/service-name': 'kubernetes' });
      assert.equal(s.metadata?.ownerReferences, undefined);
      assert.deepEqual(s.endpoints.map((e) => [e.addresses, e.conditions?.ready]), [[['10.217.0.1'], true], [['10.217.1.1'], true]]);
      assert.equal((await admin.resource<Endpoints>('', 'v1', 'endpoints').namespace('default').get('kubernetes')).metadata?.labels?.['endpointslice.kubernetes.io/skip-mirror'], 'true');

      // b stops renewing (killed): once its lease is older than the TTL, a's next pass drops it.
      await clock.advance(LEASE_TTL_MS + RECONCILE_INTERVAL_MS);
      await a.reconcile();
      assert.deepEqual((await endpoints())?.[0]?.addresses, [{ ip: '10.217.0.1' }]);
      assert.deepEqual((await slice()).endpoints.map((e) => e.addresses[0]), ['10.217.0.1']);

      // A clean stop removes the server, unless it is the last one.
      await b.reconcile();
      await b.stop();
      assert.deepEqual((await endpoints())?.[0]?.addresses, [{ ip: '10.217.0.1' }]);
      await a.stop();
      assert.deepEqual((await endpoints())?.[0]?.addresses, [{ ip: '10.217.0.1' }], 'the last server leaves its address');
    } finally {
      await api.stop();
    }
  });
});
