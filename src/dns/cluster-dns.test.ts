import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice, Node } from '../api/types.js';
import { FakeApi } from '../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../client/factory.js';
import { FakeClock } from '../util/clock.js';
import { ClusterDns, dnsNamespace } from './cluster-dns.js';

/** Lets the in-process requests and informer events of one step settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

test('the node DNS slice is owned by its Node once the kubelet has registered it', async (t) => {
  const clock = new FakeClock();
  const api = await FakeApi.start({ clock });
  const client = api.client();
  const dns = new ClusterDns({ informers: new SharedInformerFactory({ client, clock }), address: '127.0.0.1', port: 0, node: { name: 'n1', client, address: '10.217.0.1' }, clock });
  t.after(async () => {
    await dns.stop();
    await api.stop();
  });
  const startup = dns.start();
  await settle();
  await clock.advance(5000);
  await startup;
  const slices = client.resource('endpointslices.discovery.k8s.io').namespace(dnsNamespace);
  const before = (await slices.get('kube-dns-n1')) as EndpointSlice;
  assert.equal(before.endpoints[0]?.addresses[0], '10.217.0.1');
  assert.equal(before.metadata?.ownerReferences, undefined, 'no Node yet: no owner');

  const node = (await client.resource('nodes').create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } })) as Node;
  await clock.advance(2000);
  await settle();
  const after = (await slices.get('kube-dns-n1')) as EndpointSlice;
  assert.deepEqual(after.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata?.uid }]);
  assert.deepEqual(after.endpoints, before.endpoints);
});
