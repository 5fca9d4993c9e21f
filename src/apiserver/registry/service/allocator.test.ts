import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SqliteStore } from '../../../storage/sqlite/sqlite-store.js';
import { FakeClock } from '../../../util/clock.js';
import { applyDefaults } from '../../../api/defaults/index.js';
import { StatusError } from '../../../api/errors.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Service } from '../../../api/types.js';
import { Registries } from '../registries.js';
import { bootstrapObjects, ensureClusterServices } from '../../bootstrap.js';
import { rangeOffset, usableRange } from './ipallocator.js';
import { parsePortRange, portRangeOffset } from './portallocator.js';
import { parseAddr, parsePrefix } from '../../../api/netip.js';
import { parseLabelSelector } from '../../../api/labels.js';
import { parseFieldSelector } from '../../../api/fields.js';
import { Selection } from '../selection.js';
import { ServiceAllocationRepair } from './repair.js';
import { FakeRecorder } from '../../../client/record/recorder.js';
import { pino } from 'pino';

const everything = () => new Selection(parseLabelSelector(''), parseFieldSelector(''));

const user = { name: 'tester', groups: ['system:masters'] };
const write = { dryRun: false, user, subresource: '' };
const noAdmission = { mutate: async () => undefined, validate: async () => undefined };

function svc(name: string, spec: Record<string, unknown> = {}): KubeObject {
  const obj: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } };
  applyDefaults('', 'Service', obj);
  return obj;
}

async function failure(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return err;
  }
  assert.fail('expected a failure');
}

describe('service IP and node port allocation', () => {
  let store: SqliteStore;
  let a: Registries;
  let b: Registries;
  const clock = new FakeClock(Date.UTC(2026, 0, 1));

  // Two API servers' registries over one store, as two kite servers on one etcd.
  async function start(range: string, nodePorts = '30000-32767'): Promise<void> {
    store = new SqliteStore(':memory:');
    const opts = { store, clock, admitter: noAdmission, synchronousWatch: store.synchronousWatch, nodePortRange: parsePortRange(nodePorts) };
    a = new Registries(opts);
    b = new Registries(opts);
    await a.start();
    await b.start();
    await bootstrapObjects(a, { ip: '127.0.0.1', port: 6443 }, { serviceClusterIPRange: range });
    await bootstrapObjects(b, { ip: '127.0.0.1', port: 6443 }, { serviceClusterIPRange: range });
  }
  beforeEach(() => start('10.96.0.0/12'));
  afterEach(async () => {
    a.stop();
    b.stop();
    await store.close();
  });

  const ipAddresses = async (r: Registries) => (await r.of('networking.k8s.io', 'ipaddresses').list('', { selection: everything() })).items;

  it('the static band, as upstream computes it', () => {
    assert.equal(rangeOffset(2n ** 20n - 2n), 256n);
    assert.equal(rangeOffset(254n), 16n);
    assert.equal(rangeOffset(14n), 0n);
    assert.deepEqual(usableRange(parsePrefix('10.0.0.0/30')!), { first: 0x0a000001n, last: 0x0a000002n });
    assert.equal(portRangeOffset(2768), 86);
    assert.equal(portRangeOffset(16), 0);
    assert.equal(portRangeOffset(100), 16);
  });

  it('bootstraps the default ServiceCIDR, kubernetes at the first address and kube-dns at the tenth', async () => {
    const cidr = await a.read('servicecidrs.networking.k8s.io', '', 'kubernetes');
    assert.deepEqual(cidr.spec?.cidrs, ['10.96.0.0/12']);
    assert.equal(cidr.status?.conditions?.[0]?.type, 'Ready');
    const k = await a.read('services', 'default', 'kubernetes');
    assert.equal(k.spec?.clusterIP, '10.96.0.1');
    const dns = await a.read('services', 'kube-system', 'kube-dns');
    assert.equal(dns.spec?.clusterIP, '10.96.0.10');
    assert.equal(dns.spec?.internalTrafficPolicy, 'Local');
    assert.deepEqual(dns.spec?.ports?.map((p) => `${p.name}/${p.port}/${p.protocol}`), ['dns/53/UDP', 'dns-tcp/53/TCP']);
    const ips = await ipAddresses(a);
    assert.deepEqual(ips.map((i) => i.metadata.name).sort(), ['10.96.0.1', '10.96.0.10']);
    const ref = ips.find((i) => i.metadata.name === '10.96.0.10')!;
    assert.deepEqual(ref.spec, { parentRef: { group: '', resource: 'services', namespace: 'kube-system', name: 'kube-dns' } });
    assert.deepEqual(ref.metadata.labels, { 'ipaddress.kubernetes.io/ip-family': 'IPv4', 'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io' });
    // Deleted, they come back at the same addresses.
    await a.of('', 'services').delete('default', 'kubernetes', {}, write);
    await a.of('', 'services').delete('kube-system', 'kube-dns', {}, write);
    assert.equal((await ipAddresses(a)).length, 0);
    await ensureClusterServices(b, 6443);
    assert.equal((await a.read('services', 'default', 'kubernetes')).spec?.clusterIP, '10.96.0.1');
    assert.equal((await a.read('services', 'kube-system', 'kube-dns')).spec?.clusterIP, '10.96.0.10');
  });

  it('allocates dynamic IPs in the upper band, and never one twice across two servers', async () => {
    await start('10.0.0.0/27', '30000-30019');
    // 30 usable addresses, 2 taken by bootstrap: 28 services fill the range.
    const created = await Promise.all(Array.from({ length: 28 }, (_, i) => (i % 2 ? a : b).of('', 'services').create('default', svc(`s${i}`, { type: 'NodePort' }), write).catch((e: unknown) => e)));
    const ok = created.filter((c): c is KubeObject => !(c instanceof Error)) as Service[];
    // Twenty node ports only: the rest fail with upstream's message, and give their IPs back.
    const failed = created.filter((c) => c instanceof StatusError);
    assert.equal(ok.length, 20);
    assert.equal(failed.length, 8);
    for (const f of failed) assert.match((f as StatusError).message, /failed to allocate a nodePort: range is full/);
    const ips = ok.map((s) => s.spec!.clusterIP!);
    assert.equal(new Set(ips).size, ok.length);
    const ports = ok.map((s) => s.spec!.ports![0]!.nodePort!);
    assert.equal(new Set(ports).size, ok.length);
    assert.ok(ports.every((p) => p >= 30000 && p <= 30019));
    const names = (await ipAddresses(b)).map((i) => i.metadata.name).sort();
    assert.deepEqual(names, [...ips, '10.0.0.1', '10.0.0.10'].sort());
    assert.equal((await a.nodePorts.claims()).size, 20);
  });

  it('fills the range under concurrent creates on two servers, each address once', async () => {
    await start('10.0.0.0/27');
    const created = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).of('', 'services').create('default', svc(`s${i}`), write).catch((e: unknown) => e)));
    const ok = created.filter((c) => !(c instanceof Error)) as Service[];
    assert.equal(ok.length, 28);
    assert.equal(new Set(ok.map((s) => s.spec!.clusterIP)).size, 28);
    const full = created.filter((c) => c instanceof StatusError) as StatusError[];
    assert.equal(full.length, 2);
    assert.equal(full[0]!.code, 500);
    assert.equal(full[0]!.message, 'Internal error occurred: failed to allocate a serviceIP: range is full');
  });

  it('requested IPs and node ports: duplicates and out of range as upstream says them', async () => {
    const services = a.of('', 'services');
    const dup = await failure(services.create('default', svc('dup', { clusterIP: '10.96.0.1' }), write));
    assert.equal(dup.code, 422);
    assert.equal(dup.message, 'Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated');
    const out = await failure(services.create('default', svc('out', { clusterIP: '192.168.0.1' }), write));
    assert.match(out.message, /failed to allocate IP 192\.168\.0\.1: the provided network does not match the current range$/);
    const net = await failure(services.create('default', svc('net', { clusterIP: '10.96.0.0' }), write));
    assert.match(net.message, /the provided IP \(10\.96\.0\.0\) is not in the valid range\. The range of valid IPs is 10\.96\.0\.0\/12$/);
    const first = (await services.create('default', svc('np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }), write)) as Service;
    assert.equal(first.spec?.ports?.[0]?.nodePort, 30080);
    const taken = await failure(b.of('', 'services').create('default', svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }), write));
    assert.equal(taken.message, 'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated');
    const range = await failure(services.create('default', svc('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] }), write));
    assert.match(range.message, /spec\.ports\[0\]\.nodePort: Invalid value: 8080: provided port is not in the valid range\. The range of valid ports is 30000-32767$/);
    // None of the failures kept anything.
    assert.equal((await ipAddresses(a)).length, 3);
    assert.deepEqual([...(await a.nodePorts.claims()).keys()], [30080]);
    const requested = (await services.create('default', svc('mine', { clusterIP: '10.96.0.42' }), write)) as Service;
    assert.deepEqual(requested.spec?.clusterIPs, ['10.96.0.42']);
    // Dynamic addresses stay out of the static band (the first 256 of a /12).
    for (let i = 0; i < 10; i++) {
      const dyn = (await services.create('default', svc(`dyn${i}`), write)) as Service;
      assert.ok(parseAddr(dyn.spec!.clusterIP!)!.value >= parseAddr('10.96.1.1')!.value, dyn.spec!.clusterIP);
    }
  });

  it('IP families as upstream settles them on a single-stack cluster', async () => {
    const services = a.of('', 'services');
    const plain = (await services.create('default', svc('plain'), write)) as Service;
    assert.deepEqual([plain.spec?.ipFamilyPolicy, plain.spec?.ipFamilies], ['SingleStack', ['IPv4']]);
    const prefer = (await services.create('default', svc('prefer', { ipFamilyPolicy: 'PreferDualStack' }), write)) as Service;
    assert.deepEqual([prefer.spec?.ipFamilyPolicy, prefer.spec?.ipFamilies, prefer.spec?.clusterIPs?.length], ['PreferDualStack', ['IPv4'], 1]);
    // Headless without selector: RequireDualStack over the families the cluster has; no address.
    const headless = (await services.create('default', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hl' }, spec: { clusterIP: 'None', ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }], type: 'ClusterIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' } }, write)) as Service;
    assert.deepEqual([headless.spec?.ipFamilyPolicy, headless.spec?.ipFamilies, headless.spec?.clusterIPs], ['RequireDualStack', ['IPv4'], ['None']]);
    const v6 = await failure(services.create('default', svc('v6', { ipFamilies: ['IPv6'] }), write));
    assert.equal(v6.message, 'Service "v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster');
    const dual = await failure(services.create('default', svc('dual', { ipFamilyPolicy: 'RequireDualStack' }), write));
    assert.equal(dual.message, 'Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
  });

  it('a failed create, a dry run and a delete leave nothing allocated', async () => {
    const services = a.of('', 'services');
    await services.create('default', svc('x'), write);
    const before = (await ipAddresses(a)).length;
    const exists = await failure(services.create('default', svc('x', { type: 'NodePort' }), write));
    assert.equal(exists.reason, 'AlreadyExists');
    await services.create('default', svc('dry', { type: 'NodePort' }), { ...write, dryRun: true });
    assert.equal((await ipAddresses(a)).length, before);
    assert.equal((await a.nodePorts.claims()).size, 0);
    const np = (await services.create('default', svc('gone', { type: 'NodePort' }), write)) as Service;
    assert.equal((await ipAddresses(a)).length, before + 1);
    await services.delete('default', 'gone', {}, write);
    assert.equal((await ipAddresses(a)).length, before);
    assert.equal((await a.nodePorts.claims()).has(np.spec!.ports![0]!.nodePort!), false);
  });

  it('a delete gives back only what names the Service', async () => {
    const services = a.of('', 'services');
    await services.create('default', svc('first', { clusterIP: '10.96.0.50', type: 'NodePort', ports: [{ port: 80, nodePort: 30050 }] }), write);
    // Lost behind the registry's back, then given to another Service: both now claim them.
    await a.of('networking.k8s.io', 'ipaddresses').delete('', '10.96.0.50', {}, write);
    await a.nodePorts.release(30050);
    await services.create('default', svc('second', { clusterIP: '10.96.0.50', type: 'NodePort', ports: [{ port: 80, nodePort: 30050 }] }), write);
    await services.delete('default', 'first', {}, write);
    assert.equal((await a.read('ipaddresses.networking.k8s.io', '', '10.96.0.50')).spec?.parentRef?.name, 'second');
    assert.equal((await a.nodePorts.claims()).get(30050)?.name, 'second');
  });

  it('type changes allocate and release', async () => {
    const services = a.of('', 'services');
    const np = (await services.create('default', svc('t', { type: 'NodePort' }), write)) as Service;
    const port = np.spec!.ports![0]!.nodePort!;
    const ip = np.spec!.clusterIP!;
    const update = (f: (s: Service) => void) =>
      services.update('default', 't', (cur) => {
        const next = structuredClone(cur!) as Service;
        f(next);
        return next as KubeObject;
      }, write);
    // NodePort → ClusterIP: the node port the user left in place is dropped and released.
    let cur = (await update((s) => (s.spec!.type = 'ClusterIP'))).object as Service;
    assert.equal(cur.spec?.ports?.[0]?.nodePort, undefined);
    assert.equal(cur.spec?.clusterIP, ip);
    assert.equal((await a.nodePorts.claims()).has(port), false);
    // → ExternalName: the cluster IP goes back.
    cur = (await update((s) => {
      s.spec!.type = 'ExternalName';
      s.spec!.externalName = 'example.com';
    })).object as Service;
    assert.equal(cur.spec?.clusterIP, undefined);
    assert.equal(a.cached('ipaddresses.networking.k8s.io', '', ip), undefined);
    // → ClusterIP again: a new address.
    cur = (await update((s) => {
      s.spec!.type = 'ClusterIP';
      delete s.spec!.externalName;
      s.spec!.ipFamilies = ['IPv4'];
      s.spec!.ipFamilyPolicy = 'SingleStack';
      s.spec!.internalTrafficPolicy = 'Cluster';
    })).object as Service;
    assert.ok(cur.spec?.clusterIP);
    assert.ok(a.cached('ipaddresses.networking.k8s.io', '', cur.spec!.clusterIP!));
    // LoadBalancer with externalTrafficPolicy Local: node ports and a health check port; back to ClusterIP frees both.
    cur = (await update((s) => {
      s.spec!.type = 'LoadBalancer';
      s.spec!.externalTrafficPolicy = 'Local';
      s.spec!.allocateLoadBalancerNodePorts = true;
    })).object as Service;
    const lbPorts = [cur.spec!.ports![0]!.nodePort!, cur.spec!.healthCheckNodePort!];
    assert.ok(lbPorts.every((p) => p >= 30000), String(lbPorts));
    assert.ok(lbPorts.every((p) => a.nodePorts.contains(p)));
    assert.deepEqual([...(await a.nodePorts.claims()).keys()].sort(), [...lbPorts].sort());
    cur = (await update((s) => {
      s.spec!.type = 'ClusterIP';
      delete s.spec!.externalTrafficPolicy;
    })).object as Service;
    assert.equal(cur.spec?.healthCheckNodePort, undefined);
    assert.equal((await a.nodePorts.claims()).size, 0);
    // An update may not move the cluster IP.
    const moved = await failure(update((s) => {
      s.spec!.clusterIP = '10.96.0.99';
      s.spec!.clusterIPs = ['10.96.0.99'];
    }));
    assert.match(moved.message, /spec\.clusterIPs\[0\]: Invalid value: \[\]string\{"10\.96\.0\.99"\}: may not change once set/);
  });
});

describe('allocation repair', () => {
  it('re-creates missing IPAddresses and node port claims, frees leaked ones after the grace, with upstream events', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const store = new SqliteStore(':memory:');
    const r = new Registries({ store, clock, admitter: noAdmission, synchronousWatch: store.synchronousWatch });
    await r.start();
    await bootstrapObjects(r, { ip: '127.0.0.1', port: 6443 });
    const recorder = new FakeRecorder();
    const repair = new ServiceAllocationRepair({ registries: r, clock, logger: pino({ level: 'silent' }), recorder });
    try {
      const s = (await r.of('', 'services').create('default', svc('web', { type: 'NodePort' }), write)) as Service;
      const ip = s.spec!.clusterIP!;
      const port = s.spec!.ports![0]!.nodePort!;
      // Lost allocations: the IPAddress deleted behind the registry's back, the port's claim too.
      await r.of('networking.k8s.io', 'ipaddresses').delete('', ip, {}, write);
      await r.nodePorts.release(port);
      // Leaks: an IPAddress and a port claim for a Service that never got stored.
      await r.clusterIPs.allocate({ namespace: 'default', name: 'ghost' }, '10.96.0.77', false);
      await r.nodePorts.allocate({ namespace: 'default', name: 'ghost' }, 30999, false);
      await repair.runOnce();
      assert.ok(r.cached('ipaddresses.networking.k8s.io', '', ip));
      assert.ok((await r.nodePorts.claims()).has(port));
      assert.deepEqual(recorder.events.map((e) => [e.object.name, e.reason, e.message]), [
        ['web', 'ClusterIPNotAllocated', `Cluster IP [IPv4]: ${ip} is not allocated; repairing`],
        ['web', 'PortNotAllocated', `Port ${port} is not allocated; repairing`],
      ]);
      // Within the grace the leaks stay (a create may be in flight), after it they go.
      assert.ok(r.cached('ipaddresses.networking.k8s.io', '', '10.96.0.77'));
      assert.ok((await r.nodePorts.claims()).has(30999));
      await clock.advance(61_000);
      await repair.runOnce();
      assert.equal(r.cached('ipaddresses.networking.k8s.io', '', '10.96.0.77'), undefined);
      assert.equal((await r.nodePorts.claims()).has(30999), false);
      assert.deepEqual(recorder.events.slice(2).map((e) => [e.object.kind, e.reason, e.message]), [
        ['IPAddress', 'IPAddressNotAllocated', 'IPAddress: 10.96.0.77 for Service default/ghost appears to have leaked: cleaning up'],
      ]);
      // What belongs to live services stays.
      assert.ok(r.cached('ipaddresses.networking.k8s.io', '', ip));
      assert.ok(r.cached('ipaddresses.networking.k8s.io', '', '10.96.0.1'));
      assert.ok((await r.nodePorts.claims()).has(port));
    } finally {
      await repair.stop();
      r.stop();
      await store.close();
    }
  });
});
