import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice, Service } from '../api/types.js';
import { endpointsFor, fullScript, hashAndTruncate, partialScript, planService, type ProxyNode } from './plan.js';

const node: ProxyNode = { nodeName: 'n1', bridge: 'kite-px', gateway: '10.217.240.1', serviceCIDR: '10.96.0.0/12', clusterCIDR: '10.217.0.0/16' };
const T = 'ip kite-proxy-kite-px';

function svc(spec: Service['spec'], name = 'svc1'): Service {
  return { metadata: { namespace: 'ns1', name }, spec: { clusterIP: '10.96.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }], ...spec } };
}

type Ep = NonNullable<EndpointSlice['endpoints']>[number];
function slice(endpoints: Ep[], name = 'svc1-a'): EndpointSlice {
  return { metadata: { namespace: 'ns1', name, labels: { 'kubernetes.io/service-name': 'svc1' } }, addressType: 'IPv4', ports: [{ name: 'p80', port: 8080, protocol: 'TCP' }], endpoints };
}
const ep = (ip: string, conditions: Ep['conditions'] = { ready: true }, nodeName = 'n2'): Ep => ({ addresses: [ip], conditions, nodeName });

const chain = (spn: string) => `service-${hashAndTruncate(spn)}`;
const epChain = (spn: string, ip: string, port = 8080) => `endpoint-${hashAndTruncate(`${spn}__${ip}/${port}`)}`;
const spn = 'ns1/svc1/tcp/p80';

describe('chain names', () => {
  it('hash as upstream (its test fixture name for ns1/svc1/tcp/p80)', () => {
    assert.equal(hashAndTruncate('ns1/svc1/tcp/p80'), 'ULMVA6XW-ns1/svc1/tcp/p80');
    assert.ok(hashAndTruncate('x'.repeat(300)).endsWith('...'));
    assert.equal(hashAndTruncate('x'.repeat(300)).length, 240);
  });
});

describe('endpointsFor', () => {
  it('takes IPv4 slices, the port by name and protocol, dedupes and sorts by address', () => {
    const s6: EndpointSlice = { ...slice([ep('10.217.240.9')]), addressType: 'IPv6' };
    const other: EndpointSlice = { ...slice([ep('10.217.240.8')], 'b'), ports: [{ name: 'other', port: 1, protocol: 'TCP' }] };
    const eps = endpointsFor([slice([ep('10.217.240.10'), ep('10.217.240.9', {}, 'n1')]), slice([ep('10.217.240.10')], 'c'), s6, other], 'p80', 'TCP', 'n1');
    assert.deepEqual(eps, [
      { ip: '10.217.240.9', port: 8080, ready: true, serving: true, terminating: false, local: true },
      { ip: '10.217.240.10', port: 8080, ready: true, serving: true, terminating: false, local: false },
    ]);
  });
});

describe('planService', () => {
  it('writes the ClusterIP map element, the service chain with numgen and DNAT endpoint chains', () => {
    const p = planService(svc({}), [slice([ep('10.217.240.5'), ep('10.217.240.6')])], node)!;
    const a = epChain(spn, '10.217.240.5');
    const b = epChain(spn, '10.217.240.6');
    assert.deepEqual([...p.elements], [
      ['cluster-ips 10.96.0.41', ''],
      ['service-ips 10.96.0.41 . tcp . 80', `goto ${chain(spn)}`],
    ]);
    assert.deepEqual([...p.chains], [
      [chain(spn), [`numgen random mod 2 vmap { 0 : goto ${a}, 1 : goto ${b} }`]],
      [a, ['ip saddr 10.217.240.5 jump mark-for-masquerade', 'meta l4proto tcp dnat to 10.217.240.5:8080']],
      [b, ['ip saddr 10.217.240.6 jump mark-for-masquerade', 'meta l4proto tcp dnat to 10.217.240.6:8080']],
    ]);
    assert.equal(p.sets.size, 0);
  });

  it('uses only ready endpoints; serving-terminating ones only when none is ready', () => {
    const terminating = ep('10.217.240.7', { ready: false, serving: true, terminating: true });
    const notReady = ep('10.217.240.8', { ready: false, serving: false });
    const withReady = planService(svc({}), [slice([ep('10.217.240.5'), terminating, notReady])], node)!;
    assert.deepEqual([...withReady.chains.keys()], [chain(spn), epChain(spn, '10.217.240.5')]);
    const onlyTerminating = planService(svc({}), [slice([terminating, notReady])], node)!;
    assert.deepEqual([...onlyTerminating.chains.keys()], [chain(spn), epChain(spn, '10.217.240.7')]);
  });

  it('rejects a Service without usable endpoints through no-endpoint-services (and its NodePort)', () => {
    const p = planService(svc({ type: 'NodePort', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }] }), [slice([ep('10.217.240.8', { ready: false })])], node)!;
    assert.deepEqual([...p.elements], [
      ['cluster-ips 10.96.0.41', ''],
      ['no-endpoint-services 10.96.0.41 . tcp . 80', 'goto reject-chain'],
      ['no-endpoint-nodeports tcp . 30080', 'goto reject-chain'],
    ]);
    assert.equal(p.chains.size, 0);
  });

  it('sends NodePorts through the external chain; externalTrafficPolicy Local short-circuits pods and the host', () => {
    const spec = { type: 'NodePort' as const, ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }] };
    const ext = `external-${hashAndTruncate(spn)}`;
    const local = `local-${hashAndTruncate(spn)}`;
    const cluster = planService(svc(spec), [slice([ep('10.217.240.5')])], node)!;
    assert.equal(cluster.elements.get('service-nodeports tcp . 30080'), `goto ${ext}`);
    assert.deepEqual(cluster.chains.get(ext), [`goto ${chain(spn)}`]);
    const p = planService(svc({ ...spec, externalTrafficPolicy: 'Local' }), [slice([ep('10.217.240.5'), ep('10.217.240.6', { ready: true }, 'n1')])], node)!;
    assert.deepEqual(p.chains.get(ext), [`ip saddr 10.217.0.0/16 goto ${chain(spn)}`, `fib saddr type local goto ${chain(spn)}`, `goto ${local}`]);
    assert.deepEqual(p.chains.get(local), [`numgen random mod 1 vmap { 0 : goto ${epChain(spn, '10.217.240.6')} }`]);
    // No local endpoint: external traffic from elsewhere is dropped, pods and the host still get through.
    const none = planService(svc({ ...spec, externalTrafficPolicy: 'Local' }), [slice([ep('10.217.240.5')])], node)!;
    assert.equal(none.elements.get('no-endpoint-nodeports tcp . 30080'), 'drop');
    assert.deepEqual(none.chains.get(ext), [`ip saddr 10.217.0.0/16 goto ${chain(spn)}`, `fib saddr type local goto ${chain(spn)}`]);
  });

  it('internalTrafficPolicy Local uses this node\'s endpoints only, and drops when it has none', () => {
    const local = `local-${hashAndTruncate(spn)}`;
    const p = planService(svc({ internalTrafficPolicy: 'Local' }), [slice([ep('10.217.240.5'), ep('10.217.240.6', { ready: true }, 'n1')])], node)!;
    assert.equal(p.elements.get('service-ips 10.96.0.41 . tcp . 80'), `goto ${local}`);
    assert.deepEqual([...p.chains.keys()], [local, epChain(spn, '10.217.240.6')]);
    const none = planService(svc({ internalTrafficPolicy: 'Local' }), [slice([ep('10.217.240.5')])], node)!;
    assert.equal(none.elements.get('no-endpoint-services 10.96.0.41 . tcp . 80'), 'drop');
  });

  it('ClientIP affinity: a timeout set per endpoint, checked before numgen, updated in the endpoint chain', () => {
    const p = planService(svc({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }), [slice([ep('10.217.240.5')])], node)!;
    const e = epChain(spn, '10.217.240.5');
    const set = e.replace(/^endpoint-/, 'affinity-');
    assert.deepEqual([...p.sets], [[set, 60]]);
    assert.deepEqual(p.chains.get(chain(spn)), [`ip saddr @${set} goto ${e}`, `numgen random mod 1 vmap { 0 : goto ${e} }`]);
    assert.deepEqual(p.chains.get(e), ['ip saddr 10.217.240.5 jump mark-for-masquerade', `update @${set} { ip saddr }`, 'meta l4proto tcp dnat to 10.217.240.5:8080']);
  });

  it('ignores headless, ExternalName and IPv6 Services', () => {
    assert.equal(planService(svc({ clusterIP: 'None' }), [], node), undefined);
    assert.equal(planService(svc({ type: 'ExternalName', externalName: 'x.example' }), [], node), undefined);
    assert.equal(planService(svc({ clusterIP: 'fd00::1' }), [], node), undefined);
  });
});

describe('scripts', () => {
  it('a full sync replaces the whole table in one transaction, node-scoped by the bridge', () => {
    const p = planService(svc({}), [slice([ep('10.217.240.5')])], node)!;
    const s = fullScript(node, [p]).split('\n');
    assert.deepEqual(s.slice(0, 3), [`add table ${T}`, `delete table ${T}`, `add table ${T} { comment "kite service proxy of node n1" ; }`]);
    for (const line of [
      `add rule ${T} nat-prerouting iifname "kite-px" jump services`,
      `add rule ${T} nat-output oifname "kite-px" jump services`,
      `add rule ${T} filter-output-post-dnat oifname "kite-px" ct state new jump cluster-ips-check`,
      `add rule ${T} cluster-ips-check ip daddr 10.96.0.0/12 counter goto reject-chain comment "Reject traffic to unallocated ClusterIPs"`,
      `add rule ${T} reject-chain meta l4proto tcp reject with tcp reset`,
      `add element ${T} nodeport-ips { 10.217.240.1 }`,
      `add rule ${T} masquerading oifname != "kite-px" return`,
      `add rule ${T} masquerading snat to 10.217.240.1`,
      `add element ${T} service-ips { 10.96.0.41 . tcp . 80 : goto ${chain(spn)} }`,
    ]) assert.ok(s.includes(line), line);
    assert.ok(!s.some((l) => /masquerade( |$)/.test(l) && !l.includes('mark-for-masquerade')), 'no masquerade statement');
    // Chains exist before anything points at them.
    assert.ok(s.indexOf(`add chain ${T} ${chain(spn)}`) < s.findIndex((l) => l.includes(`goto ${chain(spn)}`)));
  });

  it('a partial sync touches only what changed, in an order one transaction accepts', () => {
    const before = planService(svc({}), [slice([ep('10.217.240.5'), ep('10.217.240.6')])], node)!;
    const after = planService(svc({}), [slice([ep('10.217.240.6'), ep('10.217.240.7')])], node)!;
    const [e5, e6, e7] = ['10.217.240.5', '10.217.240.6', '10.217.240.7'].map((ip) => epChain(spn, ip));
    assert.equal(
      partialScript(node, [{ old: before, next: after }]),
      [
        `flush chain ${T} ${chain(spn)}`,
        `flush chain ${T} ${e5}`,
        `add chain ${T} ${e7}`,
        `add rule ${T} ${chain(spn)} numgen random mod 2 vmap { 0 : goto ${e6}, 1 : goto ${e7} }`,
        `add rule ${T} ${e7} ip saddr 10.217.240.7 jump mark-for-masquerade`,
        `add rule ${T} ${e7} meta l4proto tcp dnat to 10.217.240.7:8080`,
        `delete chain ${T} ${e5}`,
        '',
      ].join('\n'),
    );
    assert.equal(partialScript(node, [{ old: after, next: after }]), '', 'nothing changed, nothing to apply');
    const gone = partialScript(node, [{ old: after, next: undefined }]).split('\n');
    assert.ok(gone.includes(`delete element ${T} service-ips { 10.96.0.41 . tcp . 80 }`));
    assert.ok(gone.includes(`delete element ${T} cluster-ips { 10.96.0.41 }`));
    assert.ok(gone.indexOf(`delete element ${T} service-ips { 10.96.0.41 . tcp . 80 }`) < gone.indexOf(`delete chain ${T} ${chain(spn)}`));
    const lost = partialScript(node, [{ old: after, next: planService(svc({}), [], node) }]).split('\n');
    assert.ok(lost.includes(`add element ${T} no-endpoint-services { 10.96.0.41 . tcp . 80 : goto reject-chain }`));
  });
});
