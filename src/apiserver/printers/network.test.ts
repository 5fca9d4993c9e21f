import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { EndpointSlice, Endpoints, Service } from '../../api/types.js';
import { endpointSlicePrinter, endpointsPrinter, servicePrinter } from './network.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const created = new Date(NOW - 42_000).toISOString();
const stored = <T>(o: T) => o as T & StoredObject;
const meta = (name: string) => ({ name, namespace: 'default', creationTimestamp: created });

void test('service rows by type', () => {
  const cases: { name: string; svc: Service; cells: unknown[] }[] = [
    {
      name: 'ClusterIP with a selector',
      svc: {
        metadata: meta('web'),
        spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }], selector: { tier: 'fe', app: 'web' } },
      },
      cells: ['web', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP,53/UDP', '42s', 'app=web,tier=fe'],
    },
    {
      name: 'headless without ports or selector',
      svc: { metadata: meta('db'), spec: { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] } },
      cells: ['db', 'ClusterIP', 'None', '<none>', '<none>', '42s', '<none>'],
    },
    {
      name: 'NodePort with external IPs',
      svc: {
        metadata: meta('np'),
        spec: { type: 'NodePort', clusterIPs: ['10.96.3.3'], externalIPs: ['192.0.2.1', '192.0.2.2'], ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] },
      },
      cells: ['np', 'NodePort', '10.96.3.3', '192.0.2.1,192.0.2.2', '80:30080/TCP', '42s', '<none>'],
    },
    {
      name: 'LoadBalancer still pending',
      svc: { metadata: meta('lb'), spec: { type: 'LoadBalancer', clusterIPs: ['10.96.4.4'], ports: [{ port: 443, nodePort: 31443, protocol: 'TCP' }] } },
      cells: ['lb', 'LoadBalancer', '10.96.4.4', '<pending>', '443:31443/TCP', '42s', '<none>'],
    },
    {
      name: 'LoadBalancer with ingress (sorted, deduplicated) and external IPs',
      svc: {
        metadata: meta('lb2'),
        spec: { type: 'LoadBalancer', clusterIPs: ['10.96.5.5'], externalIPs: ['192.0.2.9'], ports: [{ port: 80, protocol: 'TCP' }] },
        status: { loadBalancer: { ingress: [{ ip: '198.51.100.2' }, { hostname: 'lb.example.com' }, { ip: '198.51.100.2' }] } },
      },
      cells: ['lb2', 'LoadBalancer', '10.96.5.5', '198.51.100.2,lb.example.com,192.0.2.9', '80/TCP', '42s', '<none>'],
    },
    {
      name: 'ExternalName',
      svc: { metadata: meta('ext'), spec: { type: 'ExternalName', externalName: 'db.example.com' } },
      cells: ['ext', 'ExternalName', '<none>', 'db.example.com', '<none>', '42s', '<none>'],
    },
  ];
  for (const c of cases) assert.deepEqual(servicePrinter.print(stored(c.svc), NOW).cells, c.cells, c.name);
});

void test('endpoints: host:port per address and port, first three then "+ N more..."', () => {
  const addr = (...ips: string[]) => ips.map((ip) => ({ ip }));
  const cases: { name: string; ep: Endpoints; want: string }[] = [
    { name: 'no subsets', ep: { metadata: meta('none') }, want: '<none>' },
    { name: 'only not-ready addresses', ep: { metadata: meta('nr'), subsets: [{ notReadyAddresses: addr('10.1.0.1'), ports: [{ port: 80 }] }] }, want: '' },
    { name: 'one', ep: { metadata: meta('one'), subsets: [{ addresses: addr('10.1.0.1'), ports: [{ port: 8080 }] }] }, want: '10.1.0.1:8080' },
    {
      name: 'two ports times three addresses',
      ep: { metadata: meta('many'), subsets: [{ addresses: addr('10.1.0.1', '10.1.0.2', '10.1.0.3'), ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] }] },
      want: '10.1.0.1:80,10.1.0.2:80,10.1.0.3:80 + 3 more...',
    },
    {
      name: 'headless subset without ports, then IPv6',
      ep: { metadata: meta('mixed'), subsets: [{ addresses: addr('10.1.0.1') }, { addresses: addr('fd00::5'), ports: [{ port: 53 }] }] },
      want: '10.1.0.1,[fd00::5]:53',
    },
  ];
  for (const c of cases) assert.deepEqual(endpointsPrinter.print(stored(c.ep), NOW).cells, [c.ep.metadata!.name, c.want, '42s'], c.name);
});

void test('endpoint slices: ports and addresses with "+ N more..." and "<unset>"', () => {
  const cases: { name: string; slice: EndpointSlice; cells: unknown[] }[] = [
    {
      name: 'web',
      slice: {
        metadata: meta('web-abc12'),
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'all' }, {}],
        endpoints: [{ addresses: ['10.1.0.1'] }, { addresses: ['10.1.0.2', '10.1.0.3'] }, { addresses: ['10.1.0.4'] }, { addresses: ['10.1.0.5'] }],
      },
      cells: ['web-abc12', 'IPv4', '80,all,*', '10.1.0.1,10.1.0.2,10.1.0.3 + 2 more...', '42s'],
    },
    {
      name: 'empty',
      slice: { metadata: meta('empty-x'), addressType: 'IPv6', endpoints: [] },
      cells: ['empty-x', 'IPv6', '<unset>', '<unset>', '42s'],
    },
    {
      name: 'four ports',
      slice: { metadata: meta('p4'), addressType: 'IPv4', ports: [{ port: 1 }, { port: 2 }, { port: 3 }, { port: 4 }], endpoints: [{ addresses: ['10.1.0.1'] }] },
      cells: ['p4', 'IPv4', '1,2,3 + 1 more...', '10.1.0.1', '42s'],
    },
  ];
  for (const c of cases) assert.deepEqual(endpointSlicePrinter.print(stored(c.slice), NOW).cells, c.cells, c.name);
});
