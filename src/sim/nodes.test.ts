import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { StatusError } from '../api/errors.js';
import { FakeClock } from '../util/clock.js';
import { Limiter } from './limiter.js';
import { LEASE_RENEW_INTERVAL_MS, NodeFleet } from './nodes.js';
import { compileTemplate } from './template.js';
import { FakeSimApi } from './testing.js';
import defaultNodeTemplate from './node-template.json' with { type: 'json' };

const logger = pino({ level: 'silent' });

function fleet(count: number, api = new FakeSimApi(), template: unknown = defaultNodeTemplate) {
  const clock = new FakeClock();
  let n = 0;
  // Evenly spaced "random" numbers: node i's first renewal lands at i/count of the interval.
  const random = () => (n++ % count) / count;
  const f = new NodeFleet({ count, template: compileTemplate(template), api, limiter: new Limiter(8), clock, logger, random });
  return { f, api, clock };
}

test('nodes are registered from the template as a kubelet registers itself', async () => {
  const { f, api } = fleet(3);
  await f.register();
  assert.deepEqual([...api.nodeTable.items.keys()], ['sim-0', 'sim-1', 'sim-2']);
  const node = api.nodeTable.items.get('sim-2')!;
  assert.equal(node.metadata?.labels?.['kubernetes.io/hostname'], 'sim-2');
  assert.equal(node.metadata?.labels?.['kubernetes.io/os'], 'linux');
  assert.equal(node.metadata?.labels?.type, 'kwok');
  assert.deepEqual(node.status?.addresses, [
    { type: 'InternalIP', address: '198.18.0.3' },
    { type: 'Hostname', address: 'sim-2' },
  ]);
  assert.equal(node.status?.capacity?.pods, '110');
  assert.equal(node.status?.nodeInfo?.kubeletVersion, 'v1.33.0');
  assert.equal(node.status?.nodeInfo?.containerRuntimeVersion, 'kite-sim://0.1.0');
  assert.equal(f.nodeIndex('sim-1'), 1);
  assert.equal(f.nodeIndex('worker-1'), undefined);
  f.stop();
});

test('a fleet numbered from --first-node adds sim-<first>.. with their own addresses', async () => {
  const api = new FakeSimApi();
  const f = new NodeFleet({ count: 2, first: 5, template: compileTemplate(defaultNodeTemplate), api, limiter: new Limiter(8), clock: new FakeClock(), logger });
  await f.register();
  assert.deepEqual([...api.nodeTable.items.keys()], ['sim-5', 'sim-6']);
  assert.equal(api.nodeTable.items.get('sim-6')!.status?.addresses?.[0]?.address, '198.18.0.7');
  assert.equal(f.nodeIndex('sim-5'), 5);
  assert.equal(f.nodeIndex('sim-0'), undefined, 'not this fleet\'s');
  f.stop();
});

test('a template without metadata.name names its nodes sim-<index>', async () => {
  for (const template of [{ kind: 'Node' }, { metadata: { labels: { a: 'b' } } }, { metadata: { name: '' } }, { metadata: null }, { metadata: { name: '{{ .name }}' } }]) {
    const { f, api } = fleet(2, undefined, template);
    await f.register();
    assert.deepEqual([...api.nodeTable.items.keys()], ['sim-0', 'sim-1'], JSON.stringify(template));
    f.stop();
  }
});

test('a template that cannot describe the fleet is refused before anything registers', () => {
  const cases: [unknown, RegExp][] = [
    [{ metadata: { name: 'fixed' } }, /: the node template names node 0 "fixed": nodes are named sim-<index>; leave metadata.name out or use "\{\{ \.name \}\}"$/],
    [{ metadata: { name: 'n-{{ .index }}' } }, /names node 0 "n-0"/],
    [['a'], /must be a Node manifest/],
    ['text', /must be a Node manifest/],
    [{ kind: 'Pod' }, /must be a Node manifest/],
    [{ metadata: 'x' }, /metadata must be an object/],
  ];
  for (const [template, want] of cases) {
    const api = new FakeSimApi();
    assert.throws(() => fleet(1, api, template), want, JSON.stringify(template));
    assert.equal(api.nodeTable.items.size, 0);
  }
});

test('existing nodes are adopted; failed registrations are retried', async () => {
  const api = new FakeSimApi();
  await api.createNode({ metadata: { name: 'sim-0', uid: 'old-uid' } });
  api.failures.set('createNode', [new StatusError(409, 'AlreadyExists', 'exists'), new StatusError(503, 'ServiceUnavailable', 'later')]);
  const { f, clock } = fleet(2, api);
  const done = f.register();
  await clock.advance(1000);
  await done;
  assert.equal(api.nodeTable.items.size, 2);
  assert.equal(api.count('getNode'), 1);
  await clock.advance(LEASE_RENEW_INTERVAL_MS);
  assert.equal(api.leaseTable.items.get('kube-node-lease/sim-0')?.metadata?.ownerReferences?.[0]?.uid, 'old-uid');
  f.stop();
});

test('leases are created at registration, then renewed every 10 s, spread over the interval on one timer', async () => {
  const { f, api, clock } = fleet(10);
  await f.register();
  const start = clock.now();
  await clock.advance(0);
  // Each node's Lease exists from its registration on, as the kubelet's does.
  assert.equal(api.count('createLease'), 10);
  // One timer serves every node's renewals.
  assert.equal(clock.pending(), 1);
  await clock.advance(LEASE_RENEW_INTERVAL_MS / 2 - 1);
  assert.equal(api.count('updateLease'), 5);
  await clock.advance(LEASE_RENEW_INTERVAL_MS / 2);
  assert.equal(api.count('updateLease'), 10);
  const lease = api.leaseTable.items.get('kube-node-lease/sim-3')!;
  assert.equal(lease.spec?.holderIdentity, 'sim-3');
  assert.equal(lease.spec?.leaseDurationSeconds, 40);
  assert.equal(lease.spec?.renewTime, new Date(start + 3000).toISOString().replace('Z', '000Z'));
  assert.deepEqual(lease.metadata?.ownerReferences?.[0]?.kind, 'Node');

  await clock.advance(LEASE_RENEW_INTERVAL_MS * 3);
  assert.equal(api.count('updateLease'), 40);
  assert.equal(api.leaseTable.items.get('kube-node-lease/sim-3')!.spec?.renewTime, new Date(start + 33_000).toISOString().replace('Z', '000Z'));
  f.stop();
  await clock.advance(LEASE_RENEW_INTERVAL_MS);
  assert.equal(api.count('updateLease'), 40);
});

test('a lease written by someone else is renewed on top of its current version', async () => {
  const { f, api, clock } = fleet(1);
  await f.register();
  await clock.advance(LEASE_RENEW_INTERVAL_MS);
  const lease = api.leaseTable.items.get('kube-node-lease/sim-0')!;
  api.leaseTable.put({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' } }, 'MODIFIED');
  await clock.advance(LEASE_RENEW_INTERVAL_MS);
  assert.equal(api.count('getLease'), 1);
  assert.equal(api.leaseTable.items.get('kube-node-lease/sim-0')!.spec?.holderIdentity, 'sim-0');
  f.stop();
});
