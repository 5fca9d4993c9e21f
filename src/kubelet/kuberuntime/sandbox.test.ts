import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../../api/types.js';
import { defaultKubeletConfig } from '../config.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { checkLimitsForResolvConf, generatePodSandboxConfig, normalizeSysctlName, parseResolvConf, podDNSConfig, podHostnameAndDomain, type DNSWarning } from './sandbox.js';

const dir = mkdtempSync(join(tmpdir(), 'kite-sandbox-'));
const resolvConf = join(dir, 'resolv.conf');
writeFileSync(resolvConf, 'nameserver 10.0.0.2\nnameserver 127.0.0.53\nsearch corp.example.\noptions edns0 ndots:2\n');
const cfg = defaultKubeletConfig({ nodeName: 'n', rootDir: '/var/lib/kite', clusterDNS: ['10.96.0.10'], resolvConf });

const mkPod = (spec: Partial<Pod['spec']> = {}, name = 'web'): Pod => ({
  metadata: { name, namespace: 'ns', uid: 'uid-1', labels: { app: 'web' }, annotations: { a: 'b' } },
  spec: { containers: [{ name: 'c' }], ...spec },
});

describe('generatePodSandboxConfig', () => {
  it('identity, labels, annotations, log dir, cgroup parent', () => {
    const c = generatePodSandboxConfig(mkPod(), 2, cfg);
    assert.deepEqual(c.metadata, { name: 'web', namespace: 'ns', uid: 'uid-1', attempt: 2 });
    assert.equal(c.hostname, 'web');
    assert.equal(c.log_directory, '/var/lib/kite/pod-logs/ns_web_uid-1');
    assert.deepEqual(c.labels, { app: 'web', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'ns', 'io.kubernetes.pod.uid': 'uid-1' });
    assert.deepEqual(c.annotations, { a: 'b' });
    assert.equal(c.linux?.cgroup_parent, '/kubepods/besteffort/poduid-1');
    assert.equal(c.linux?.security_context?.namespace_options?.network, 'POD');
  });

  it('cgroup parent by QoS', () => {
    const res = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };
    assert.equal(generatePodSandboxConfig(mkPod({ containers: [{ name: 'c', resources: res }] }), 0, cfg).linux?.cgroup_parent, '/kubepods/poduid-1');
    assert.equal(generatePodSandboxConfig(mkPod({ containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] }), 0, cfg).linux?.cgroup_parent, '/kubepods/burstable/poduid-1');
  });

  it('hostNetwork: no hostname, node network namespace', () => {
    const c = generatePodSandboxConfig(mkPod({ hostNetwork: true }), 0, cfg);
    assert.equal(c.hostname, undefined);
    assert.equal(c.linux?.security_context?.namespace_options?.network, 'NODE');
  });

  it('port mappings from every container port', () => {
    const c = generatePodSandboxConfig(
      mkPod({
        containers: [
          { name: 'a', ports: [{ containerPort: 80, hostPort: 8080 }, { containerPort: 53, protocol: 'UDP', hostIP: '127.0.0.1', hostPort: 5353 }, { containerPort: 80, hostPort: 8080 }] },
          { name: 'b', ports: [{ name: 'metrics', containerPort: 9090 }] },
        ],
      }),
      0,
      cfg,
    );
    assert.deepEqual(c.port_mappings, [
      { protocol: 'TCP', container_port: 80, host_port: 8080 },
      { protocol: 'UDP', container_port: 53, host_port: 5353, host_ip: '127.0.0.1' },
      { protocol: 'TCP', container_port: 9090, host_port: 0 },
    ]);
  });

  it('sysctls normalized', () => {
    const c = generatePodSandboxConfig(mkPod({ securityContext: { sysctls: [{ name: 'net/ipv4/ip_local_port_range', value: '1024 65535' }, { name: 'kernel.shm_rmid_forced', value: '1' }] } }), 0, cfg);
    assert.deepEqual(c.linux?.sysctls, { 'net.ipv4.ip_local_port_range': '1024 65535', 'kernel.shm_rmid_forced': '1' });
    assert.equal(normalizeSysctlName('net/ipv4/conf/eno2.100/rp_filter'), 'net.ipv4.conf.eno2/100.rp_filter');
  });
});

describe('hostname', () => {
  it('spec.hostname and subdomain', () => {
    assert.deepEqual(podHostnameAndDomain(mkPod({ hostname: 'h', subdomain: 'sub' }), 'cluster.local'), { hostname: 'h', domain: 'sub.ns.svc.cluster.local' });
  });
  it('long names are cut to 63 without a trailing dash', () => {
    const name = `${'a'.repeat(62)}-bbbb`;
    assert.equal(podHostnameAndDomain(mkPod({}, name), 'cluster.local').hostname, 'a'.repeat(62));
  });
  it('setHostnameAsFQDN', () => {
    assert.equal(generatePodSandboxConfig(mkPod({ hostname: 'h', subdomain: 's', setHostnameAsFQDN: true }), 0, cfg).hostname, 'h.s.ns.svc.cluster.local');
  });
});

describe('DNS', () => {
  const host = parseResolvConf('nameserver 10.0.0.2\nsearch corp.example.\noptions edns0');
  it('parses resolv.conf', () => assert.deepEqual(host, { servers: ['10.0.0.2'], searches: ['corp.example'], options: ['edns0'] }));

  it('ClusterFirst', () => {
    assert.deepEqual(podDNSConfig(mkPod(), cfg, host), {
      servers: ['10.96.0.10'],
      searches: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
      options: ['ndots:5'],
    });
  });

  it('ClusterFirst without cluster DNS: Default (the node resolver, loopback servers only) and MissingClusterDNS on node and pod', () => {
    const noDNS = { ...cfg, clusterDNS: [] };
    const recorder = new FakeRecorder();
    assert.deepEqual(generatePodSandboxConfig(mkPod(), 0, noDNS, recorder).dns_config, { servers: ['127.0.0.53'], searches: ['corp.example'], options: ['edns0', 'ndots:2'] });
    const message = 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
    assert.deepEqual(
      recorder.events.map((e) => [e.object.kind, e.object.name, e.type, e.reason, e.message]),
      [
        ['Node', 'n', 'Warning', 'MissingClusterDNS', message],
        ['Pod', 'web', 'Warning', 'MissingClusterDNS', `pod: "web_ns(uid-1)". ${message}`],
      ],
    );
    assert.deepEqual(podDNSConfig(mkPod(), noDNS, { ...host, servers: [] }).servers, []);
  });

  it('the default cluster DNS is the kube-dns Service; the kubelet writes it for ClusterFirst pods', () => {
    const d = defaultKubeletConfig({ nodeName: 'n', rootDir: '/r', resolvConf: '/nonexistent' });
    assert.deepEqual(d.clusterDNS, ['10.96.0.10']);
    assert.deepEqual(generatePodSandboxConfig(mkPod(), 0, d).dns_config, {
      servers: ['10.96.0.10'],
      searches: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
      options: ['ndots:5'],
    });
  });

  it('resolvConf "": Default pods get the local resolver and search "."', () => {
    assert.deepEqual(podDNSConfig(mkPod({ dnsPolicy: 'Default' }), { ...cfg, resolvConf: '' }), { servers: ['127.0.0.1'], searches: ['.'], options: [] });
    assert.deepEqual(podDNSConfig(mkPod(), { ...cfg, resolvConf: '' }).searches, ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local']);
  });

  it('CheckLimitsForResolvConf: room for the cluster domains in the node\'s search line', () => {
    assert.equal(checkLimitsForResolvConf(cfg), undefined);
    const crowded = join(dir, 'crowded.conf');
    writeFileSync(crowded, `search ${Array.from({ length: 30 }, (_, i) => `d${i}.example`).join(' ')}\n`);
    assert.equal(checkLimitsForResolvConf({ ...cfg, resolvConf: crowded }), `Resolv.conf file '${crowded}' contains search line consisting of more than 29 domains!`);
    assert.equal(checkLimitsForResolvConf({ ...cfg, resolvConf: crowded, clusterDomain: '' }), undefined);
    assert.equal(checkLimitsForResolvConf({ ...cfg, resolvConf: join(dir, 'absent') }), `open ${join(dir, 'absent')}: no such file or directory`);
  });

  it('the last options line wins', () => assert.deepEqual(parseResolvConf('options a b\noptions ndots:3\n').options, ['ndots:3']));

  it('limits: 3 nameservers, 32 search paths, none longer than 253, 2048 characters; DNSConfigForming says what was applied', () => {
    const warnings: DNSWarning[] = [];
    const warn = (w: DNSWarning) => warnings.push(w);
    const servers = podDNSConfig(mkPod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'] } }), cfg, host, warn).servers;
    assert.deepEqual(servers, ['1.1.1.1', '2.2.2.2', '3.3.3.3']);
    assert.deepEqual(warnings.splice(0), [{ object: 'pod', reason: 'DNSConfigForming', message: 'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 1.1.1.1 2.2.2.2 3.3.3.3' }]);

    const many = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
    assert.equal(podDNSConfig(mkPod({ dnsPolicy: 'None', dnsConfig: { searches: many } }), cfg, host, warn).searches?.length, 32);
    assert.match(warnings.splice(0)[0]!.message, /^Search Line limits were exceeded, some search paths have been omitted, the applied search line is: d0\.example d1\.example .* d31\.example$/);

    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(20)}`;
    assert.deepEqual(podDNSConfig(mkPod({ dnsPolicy: 'None', dnsConfig: { searches: ['a.example', long] } }), cfg, host, warn).searches, ['a.example']);
    assert.equal(warnings.splice(0).length, 1);

    const wide = Array.from({ length: 12 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(198)}`);
    const fitted = podDNSConfig(mkPod({ dnsPolicy: 'None', dnsConfig: { searches: wide } }), cfg, host, warn).searches!;
    assert.deepEqual(fitted, wide.slice(0, 10), 'whole domains come off the end');
    assert.equal(warnings.length, 1);
    assert.deepEqual(podDNSConfig(mkPod(), cfg, host, warn).searches?.length, 4);
    assert.equal(warnings.length, 1, 'no warning within the limits');
  });

  it('hostNetwork ClusterFirst uses Default; ClusterFirstWithHostNet uses cluster DNS', () => {
    assert.deepEqual(podDNSConfig(mkPod({ hostNetwork: true }), cfg, host).servers, ['10.0.0.2']);
    assert.deepEqual(podDNSConfig(mkPod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), cfg, host).servers, ['10.96.0.10']);
  });

  it('None with dnsConfig; dnsConfig merges into ClusterFirst', () => {
    assert.deepEqual(podDNSConfig(mkPod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.2.3.4'], searches: ['x'], options: [{ name: 'ndots', value: '1' }] } }), cfg, host), {
      servers: ['1.2.3.4'],
      searches: ['x'],
      options: ['ndots:1'],
    });
    const merged = podDNSConfig(mkPod({ dnsConfig: { nameservers: ['10.96.0.10', '1.1.1.1'], options: [{ name: 'ndots', value: '2' }, { name: 'rotate' }] } }), cfg, host);
    assert.deepEqual(merged.servers, ['10.96.0.10', '1.1.1.1']);
    assert.deepEqual(merged.options, ['ndots:2', 'rotate']);
    // An option with an empty value is its name alone, as upstream's mergeDNSOptions.
    assert.deepEqual(podDNSConfig(mkPod({ dnsPolicy: 'None', dnsConfig: { options: [{ name: 'edns0', value: '' }] } }), cfg, host).options, ['edns0']);
  });
});
