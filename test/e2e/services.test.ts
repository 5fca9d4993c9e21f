// Services with the real kubectl: `kubectl create service` and `kubectl expose`, the columns of
// `kubectl get svc,servicecidr,ipaddress`, upstream's errors for a requested IP or node port that is
// taken; then two kite servers on one etcd creating Services at once, which never share a cluster IP
// or a node port.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Service } from 'kubernetes-types/core/v1.js';
import { Client } from '../../src/client/client.js';
import { startEtcd, type EtcdServer } from '../../src/storage/testing/etcd-server.js';
import { eventually, kubectl, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

/** The lines of a table, each cut into its columns (AGE dropped: it moves). */
const rows = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));

describe('Services: kubectl create service, expose, and the allocators', () => {
  let server: KiteServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
    removeDir(server.dataDir);
  });
  const k = (args: string[], input?: string) => kubectlOk(server, args, input);

  it('a fresh cluster: the kubernetes ServiceCIDR, kubernetes at .1 and kube-dns at .10', () => {
    assert.deepEqual(rows(k(['get', 'svc', '-A'])).map((r) => r.slice(0, 6)), [
      ['NAMESPACE', 'NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)'],
      ['default', 'kubernetes', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP'],
      ['kube-system', 'kube-dns', 'ClusterIP', '10.96.0.10', '<none>', '53/UDP,53/TCP'],
    ]);
    assert.deepEqual(rows(k(['get', 'servicecidr'])).map((r) => r.slice(0, 2)), [
      ['NAME', 'CIDRS'],
      ['kubernetes', '10.96.0.0/12'],
    ]);
    assert.deepEqual(rows(k(['get', 'ipaddress'])).map((r) => r.slice(0, 2)), [
      ['NAME', 'PARENTREF'],
      ['10.96.0.1', 'services/default/kubernetes'],
      ['10.96.0.10', 'services/kube-system/kube-dns'],
    ]);
    const dns = JSON.parse(k(['get', 'svc', '-n', 'kube-system', 'kube-dns', '-o', 'json'])) as Service;
    assert.deepEqual(dns.metadata?.labels, { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' });
    assert.equal(dns.spec?.selector, undefined);
    assert.equal(dns.spec?.internalTrafficPolicy, 'Local');
    const kubernetes = JSON.parse(k(['get', 'svc', 'kubernetes', '-o', 'json'])) as Service;
    assert.deepEqual(kubernetes.spec?.ports, [{ name: 'https', port: 443, protocol: 'TCP', targetPort: server.port }]);
  });

  it('the kubernetes Service comes back when deleted, at its address', async () => {
    k(['delete', 'svc', 'kubernetes']);
    const back = await eventually(() => {
      const r = kubectl(server, ['get', 'svc', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}']);
      return r.code === 0 ? r.stdout : undefined;
    }, 'the kubernetes Service to be made again', 30_000);
    assert.equal(back, '10.96.0.1');
  });

  it('kubectl create service clusterip|nodeport|externalname', () => {
    assert.equal(k(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']).trim(), 'service/web created');
    assert.equal(k(['create', 'service', 'nodeport', 'np', '--tcp=80:8080', '--node-port=30080']).trim(), 'service/np created');
    assert.equal(k(['create', 'service', 'externalname', 'ext', '--external-name=example.com']).trim(), 'service/ext created');
    assert.equal(k(['create', 'service', 'clusterip', 'hl', '--clusterip=None']).trim(), 'service/hl created');
    const table = new Map(rows(k(['get', 'svc'])).map((r) => [r[0], r]));
    assert.deepEqual(table.get('NAME')!.slice(0, 6), ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE']);
    const web = table.get('web')!;
    assert.equal(web[1], 'ClusterIP');
    assert.match(web[2]!, /^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/);
    assert.equal(web[4], '80/TCP');
    assert.deepEqual(table.get('np')!.filter((_, i) => i === 1 || i === 4), ['NodePort', '80:30080/TCP']);
    assert.deepEqual(table.get('ext')!.slice(1, 5), ['ExternalName', '<none>', 'example.com', '<none>']);
    assert.deepEqual(table.get('hl')!.slice(1, 3), ['ClusterIP', 'None']);
    // Every cluster IP has its IPAddress, naming its Service.
    const ips = new Map(rows(k(['get', 'ipaddress'])).map((r) => [r[0], r[1]]));
    assert.equal(ips.get(web[2]!), 'services/default/web');
    assert.equal(ips.get(table.get('np')![2]!), 'services/default/np');
    assert.equal(ips.size, 5, 'the header and four addresses');
  });

  it('a taken IP or node port: upstream errors and exit codes; nothing is left behind', () => {
    const ip = kubectl(server, ['create', 'service', 'clusterip', 'dup', '--tcp=80', '--clusterip=10.96.0.1']);
    assert.equal(ip.code, 1);
    assert.equal(
      ip.stderr.trim(),
      'error: failed to create ClusterIP service: Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated',
    );
    const out = kubectl(server, ['create', 'service', 'clusterip', 'out', '--tcp=80', '--clusterip=192.168.7.1']);
    assert.equal(out.code, 1);
    assert.match(out.stderr, /failed to allocate IP 192\.168\.7\.1: the provided network does not match the current range/);
    const port = kubectl(server, ['create', 'service', 'nodeport', 'np2', '--tcp=80', '--node-port=30080']);
    assert.equal(port.code, 1);
    assert.equal(port.stderr.trim(), 'error: failed to create NodePort service: Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated');
    const range = kubectl(server, ['create', 'service', 'nodeport', 'np3', '--tcp=80', '--node-port=80']);
    assert.equal(range.code, 1);
    assert.match(range.stderr, /spec\.ports\[0\]\.nodePort: Invalid value: 80: provided port is not in the valid range\. The range of valid ports is 30000-32767/);
    assert.equal(rows(k(['get', 'ipaddress'])).length, 5);
    // A dry run takes nothing either.
    assert.match(k(['create', 'service', 'nodeport', 'dry', '--tcp=80', '--dry-run=server', '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}']), /^10\.96\.0\.0 30000$/);
    assert.equal(rows(k(['get', 'ipaddress'])).length, 5);
  });

  it('kubectl expose deployment and pod; delete and a type change give the IP back', () => {
    k(['create', 'deployment', 'app', '--image=nginx', '--port=80']);
    assert.equal(k(['expose', 'deployment', 'app', '--port=8080', '--target-port=80']).trim(), 'service/app exposed');
    k(['run', 'solo', '--image=nginx', '--port=80']);
    assert.equal(k(['expose', 'pod', 'solo', '--port=80', '--type=NodePort', '--name=solo-np']).trim(), 'service/solo-np exposed');
    const app = JSON.parse(k(['get', 'svc', 'app', '-o', 'json'])) as Service;
    assert.deepEqual(app.spec?.selector, { app: 'app' });
    assert.deepEqual(app.spec?.ports, [{ port: 8080, protocol: 'TCP', targetPort: 80 }]);
    const solo = JSON.parse(k(['get', 'svc', 'solo-np', '-o', 'json'])) as Service;
    assert.deepEqual(solo.spec?.selector, { run: 'solo' });
    const nodePort = solo.spec!.ports![0]!.nodePort!;
    assert.ok(nodePort >= 30000 && nodePort <= 32767);
    assert.equal(solo.spec?.externalTrafficPolicy, 'Cluster');

    assert.equal(k(['delete', 'svc', 'app']).trim(), 'service "app" deleted');
    assert.doesNotMatch(k(['get', 'ipaddress', '-o', 'name']), new RegExp(`/${app.spec!.clusterIP!.replace(/\./g, '\\.')}\n`));
    k(['patch', 'svc', 'solo-np', '-p', '{"spec":{"type":"ExternalName","externalName":"example.org"}}']);
    const ext = JSON.parse(k(['get', 'svc', 'solo-np', '-o', 'json'])) as Service;
    assert.equal(ext.spec?.clusterIP, undefined);
    assert.equal(ext.spec?.ports?.[0]?.nodePort, undefined);
    assert.doesNotMatch(k(['get', 'ipaddress', '-o', 'name']), new RegExp(`/${solo.spec!.clusterIP!.replace(/\./g, '\\.')}\n`));
    // Its node port is free again.
    assert.equal(k(['create', 'service', 'nodeport', 'reuse', '--tcp=80', `--node-port=${nodePort}`]).trim(), 'service/reuse created');
  });
});

describe('two kite servers on one etcd: concurrent creates never share a cluster IP or node port', () => {
  let etcd: EtcdServer;
  const servers: KiteServer[] = [];
  before(async () => {
    etcd = await startEtcd();
    // A small range and port range, so both servers are forced onto the same addresses and ports.
    const flags = ['--service-cluster-ip-range', '10.97.0.0/26', '--service-node-port-range', '30000-30049'];
    const first = await startServer({ store: `etcd://${etcd.endpoint}`, extraArgs: flags });
    servers.push(first);
    servers.push(await startServer({ store: `etcd://${etcd.endpoint}`, extraArgs: [...flags, '--pki-dir', join(first.dataDir, 'pki')] }));
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await etcd?.stop();
    for (const s of servers) removeDir(s.dataDir);
  });

  it('40 NodePort Services at once over both servers', async () => {
    const clients = await Promise.all(servers.map((s) => Client.fromKubeconfig(s.kubeconfig)));
    try {
      const created = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          clients[i % 2]!
            .resource<Service>('', 'v1', 'services')
            .namespace('default')
            .create({ metadata: { name: `c${i}` }, spec: { type: 'NodePort', ports: [{ port: 80 }] } }),
        ),
      );
      const ips = created.map((s) => s.spec!.clusterIP!);
      const ports = created.map((s) => s.spec!.ports![0]!.nodePort!);
      assert.equal(new Set(ips).size, 40, `duplicate cluster IPs: ${ips.join(' ')}`);
      assert.equal(new Set(ports).size, 40, `duplicate node ports: ${ports.join(' ')}`);
      assert.ok(ips.every((ip) => /^10\.97\.0\.(\d+)$/.test(ip) && Number(ip.split('.')[3]) >= 1 && Number(ip.split('.')[3]) <= 62));
      assert.ok(ports.every((p) => p >= 30000 && p <= 30049));
      // Both servers see each IPAddress naming its own Service.
      for (const s of servers) {
        const names = new Map(rows(kubectlOk(s, ['get', 'ipaddress'])).map((r) => [r[0], r[1]]));
        created.forEach((svc) => assert.equal(names.get(svc.spec!.clusterIP!), `services/default/${svc.metadata!.name}`));
      }
      // A taken port through the other server: the same upstream error.
      const again = kubectl(servers[1]!, ['create', 'service', 'nodeport', 'again', '--tcp=80', `--node-port=${ports[0]}`]);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /provided port is already allocated/);
      // Nothing needed repairing: no allocation was lost or given twice.
      const warnings = kubectlOk(servers[0]!, ['get', 'events', '-A', '--field-selector', 'type=Warning', '-o', 'jsonpath={.items[*].reason}']).trim();
      assert.equal(warnings, '');
    } finally {
      for (const c of clients) c.close();
    }
  });
});
