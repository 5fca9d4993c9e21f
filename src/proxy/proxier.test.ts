import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeApi } from '../apiserver/testing/fakeapi.js';
import type { EndpointSlice, Service } from '../api/types.js';
import { realClock } from '../util/clock.js';
import { newLogger } from '../util/log.js';
import { FakeNftables } from './nftables.js';
import { Proxier, type SyncInfo } from './proxier.js';
import type { ProxyNode } from './plan.js';

const node: ProxyNode = { nodeName: 'n1', bridge: 'kite-px', gateway: '10.217.240.1', serviceCIDR: '10.96.0.0/12', clusterCIDR: '10.217.0.0/16' };

async function eventually(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('Proxier', () => {
  let api: FakeApi;
  const nft = new FakeNftables();
  const syncs: SyncInfo[] = [];
  let proxier: Proxier;

  before(async () => {
    api = await FakeApi.start();
    proxier = new Proxier({ client: api.client(), node, nft, clock: realClock, logger: newLogger('test'), minSyncIntervalMs: 10, onSync: (s) => syncs.push(s) });
    await proxier.start();
  });
  after(async () => {
    await proxier.stop();
    await api.stop();
  });

  const slices = () => api.client().resource('endpointslices.discovery.k8s.io').namespace('default');
  const slice = (ips: string[]): EndpointSlice => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  });

  it('writes the whole table once the informers have synced', () => {
    assert.equal(nft.scripts.length, 1);
    assert.match(nft.scripts[0], /^add table ip kite-proxy-kite-px\ndelete table ip kite-proxy-kite-px\n/);
    assert.equal(syncs[0].full, true);
  });

  it('applies only the changed Service (a partial sync)', async () => {
    const svc: Service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { clusterIP: '10.96.7.7', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } };
    await api.client().resource('services').namespace('default').create(svc);
    await slices().create(slice(['10.217.240.5']));
    await eventually('the service in the rules', () => nft.scripts.some((s) => s.includes('service-ips { 10.96.7.7 . tcp . 80 : goto service-')));
    const last = nft.scripts.at(-1)!;
    assert.ok(!last.startsWith('add table'), 'a partial sync');
    assert.ok(last.includes('dnat to 10.217.240.5:80'));
    assert.ok(!last.includes('kubernetes'), 'other Services untouched');
  });

  it('follows an endpoint change with a flush of the service chain and the new endpoint chain only', async () => {
    const n = nft.scripts.length;
    const cur = await slices().get('web-1');
    await slices().update({ ...slice(['10.217.240.5', '10.217.240.6']), metadata: cur.metadata });
    await eventually('a sync', () => nft.scripts.length > n);
    const s = nft.scripts.at(-1)!;
    assert.match(s, /^flush chain ip kite-proxy-kite-px service-\S+-default\/web\/tcp\/http\n/);
    assert.ok(s.includes('dnat to 10.217.240.6:80'));
    assert.ok(!s.includes('dnat to 10.217.240.5:80'), 'the unchanged endpoint chain is not rewritten');
  });

  it('after a failed apply, rewrites the whole table', async () => {
    const n = nft.scripts.length;
    nft.failNext = new Error('nft: boom');
    const cur = await slices().get('web-1');
    await slices().update({ ...slice(['10.217.240.6']), metadata: cur.metadata });
    await eventually('the retry', () => nft.scripts.length > n);
    const s = nft.scripts.at(-1)!;
    assert.match(s, /^add table ip kite-proxy-kite-px\ndelete table/);
    assert.ok(s.includes('dnat to 10.217.240.6:80') && !s.includes('dnat to 10.217.240.5:80'));
  });
});
