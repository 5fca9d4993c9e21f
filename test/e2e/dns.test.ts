// Cluster DNS fed by a real `kite server`: the ClusterDns a node runs (here on 127.0.0.1, a random
// port, with the admin's credentials, advertising kite-dns's gateway 10.217.243.1 in its slice) follows Services and EndpointSlices made with kubectl, and
// keeps its node's kube-dns EndpointSlice, rewriting it when someone deletes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Client } from '../../src/client/client.js';
import { SharedInformerFactory } from '../../src/client/factory.js';
import { ClusterDns } from '../../src/dns/cluster-dns.js';
import { realClock } from '../../src/util/clock.js';
import { eventually, kubectlOk, startServer, type KiteServer } from './harness.js';

const digShort = (port: number, ...args: string[]) =>
  new Promise<string[]>((resolve) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', '+short', ...args], { timeout: 10_000 }, (_err, stdout) => resolve(stdout.trim().split('\n').filter(Boolean).sort()));
  });

const digStatus = (port: number, ...args: string[]) =>
  new Promise<string>((resolve) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args], { timeout: 10_000 }, (_err, stdout) => resolve(/status: (\w+)/.exec(stdout)?.[1] ?? 'none'));
  });

const manifests = `apiVersion: v1
kind: Service
metadata:
  name: myservice
  namespace: default
spec:
  ports:
  - name: http
    port: 80
    targetPort: 9376
---
apiVersion: v1
kind: Service
metadata:
  name: db
  namespace: default
spec:
  clusterIP: None
  ports:
  - name: pg
    port: 5432
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: db-1
  namespace: default
  labels:
    kubernetes.io/service-name: db
addressType: IPv4
endpoints:
- addresses: ["10.217.243.20"]
  hostname: db-0
  conditions:
    ready: true
- addresses: ["10.217.243.21"]
  conditions:
    ready: false
ports:
- name: pg
  port: 5432
  protocol: TCP
`;

interface SliceJson {
  metadata: { labels: Record<string, string> };
  addressType: string;
  endpoints: { addresses: string[]; nodeName: string; conditions: { ready: boolean } }[];
  ports: { name: string; port: number; protocol: string }[];
}

describe('cluster DNS fed by kite server', () => {
  let server: KiteServer;
  let client: Client;
  let informers: SharedInformerFactory;
  let dns: ClusterDns;
  const k = (args: string[], input?: string) => kubectlOk(server, args, input);

  before(async () => {
    server = await startServer();
    client = await Client.fromKubeconfig(server.kubeconfig);
    informers = new SharedInformerFactory({ client, clock: realClock });
    dns = new ClusterDns({ informers, address: '127.0.0.1', port: 0, node: { name: 'node-a', client, address: '10.217.243.1' }, clock: realClock });
    await dns.start();
  });

  after(async () => {
    await dns?.stop();
    await informers?.shutdown();
    client?.close();
    await server?.stop();
  });

  it('answers Services and endpoints as they are created, changed and deleted', async () => {
    assert.equal(await digStatus(dns.port, 'kubernetes.default.svc.cluster.local'), 'NOERROR');
    k(['apply', '-f', '-'], manifests);
    const ip = k(['get', 'service', 'myservice', '-o', 'jsonpath={.spec.clusterIP}']).trim();
    await eventually(async () => ((await digShort(dns.port, 'myservice.default.svc.cluster.local')).join() === ip ? true : undefined), 'myservice resolves');
    assert.deepEqual(await digShort(dns.port, 'db.default.svc.cluster.local'), ['10.217.243.20']);
    assert.deepEqual(await digShort(dns.port, 'db-0.db.default.svc.cluster.local'), ['10.217.243.20']);
    assert.deepEqual(await digShort(dns.port, '_pg._tcp.db.default.svc.cluster.local', 'SRV'), ['0 100 5432 db-0.db.default.svc.cluster.local.']);
    assert.deepEqual(await digShort(dns.port, '-x', ip), ['myservice.default.svc.cluster.local.']);

    // The second endpoint turns ready: it joins the answer.
    k(['patch', 'endpointslice', 'db-1', '--type=json', '-p', '[{"op":"replace","path":"/endpoints/1/conditions/ready","value":true}]']);
    await eventually(async () => ((await digShort(dns.port, 'db.default.svc.cluster.local')).length === 2 ? true : undefined), 'both db endpoints');

    k(['delete', 'service', 'myservice']);
    await eventually(async () => ((await digStatus(dns.port, 'myservice.default.svc.cluster.local')) === 'NXDOMAIN' ? true : undefined), 'myservice gone');
    assert.equal(await digStatus(dns.port, 'x.nowhere.svc.cluster.local'), 'NXDOMAIN');
  });

  it("keeps the node's kube-dns EndpointSlice, and writes it again when deleted", async () => {
    const get = () => JSON.parse(k(['get', 'endpointslice', '-n', 'kube-system', 'kube-dns-node-a', '-o', 'json'])) as SliceJson;
    const slice = await eventually(() => {
      try {
        return get();
      } catch {
        return undefined;
      }
    }, 'kube-dns-node-a');
    assert.equal(slice.metadata.labels['kubernetes.io/service-name'], 'kube-dns');
    assert.equal(slice.metadata.labels['endpointslice.kubernetes.io/managed-by'], 'cluster-dns.kite.io');
    assert.equal(slice.addressType, 'IPv4');
    assert.deepEqual(
      slice.endpoints.map((e) => [e.addresses, e.nodeName, e.conditions.ready]),
      [[['10.217.243.1'], 'node-a', true]],
    );
    assert.deepEqual(slice.ports.map((p) => `${p.name} ${p.port}/${p.protocol}`).sort(), ['dns 53/UDP', 'dns-tcp 53/TCP']);

    k(['delete', 'endpointslice', '-n', 'kube-system', 'kube-dns-node-a']);
    await eventually(() => {
      try {
        return get().endpoints[0]?.nodeName === 'node-a' ? true : undefined;
      } catch {
        return undefined;
      }
    }, 'kube-dns-node-a written again');
  });
});
