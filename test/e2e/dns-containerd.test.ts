// Cluster DNS on kite up (containerd, bridge kite-dns 10.217.243.0/24): the agent serves DNS on
// its pod bridge's gateway with no extra step, keeps its kube-dns EndpointSlice, and a ClusterFirst
// pod resolves a Service through 10.96.0.10 (busybox 1.35's nslookup: the FQDN succeeds, the short
// name fails on the search domains CoreDNS answers NXDOMAIN); a headless Service answers with its
// pod's address. After a restart of kite it serves again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, podNetworkPid, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';
const gateway = '10.217.243.1';
const clusterArgs = ['--bridge', 'kite-dns', '--pod-cidr', '10.217.243.0/24', '--cgroup-root', '/kite-dns'];

const digShort = (...args: string[]) =>
  new Promise<string[]>((resolve) => {
    execFile('dig', [`@${gateway}`, '+time=2', '+tries=1', '+short', ...args], { timeout: 10_000 }, (_err, stdout) => resolve(stdout.trim().split('\n').filter(Boolean)));
  });

const myservice = `apiVersion: v1
kind: Service
metadata:
  name: myservice
spec:
  selector:
    app: myservice
  ports:
  - name: http
    port: 80
    targetPort: 9376
`;

// A ClusterFirst pod: the kubelet writes nameserver 10.96.0.10 (kube-dns), which the node's proxy
// sends to this node's DNS (internalTrafficPolicy Local, the kube-dns-<node> slice).
const client = `apiVersion: v1
kind: Pod
metadata:
  name: dns-client
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: lookup
    image: busybox:1.35
    command: ['sh', '-c', 'cat /etc/resolv.conf; nslookup myservice.default.svc.cluster.local || exit 1; nslookup myservice; echo "short-exit=$?"']
`;

interface SliceJson {
  endpoints: { addresses: string[]; nodeName: string; conditions: { ready: boolean } }[];
}

describe('cluster DNS on kite up (containerd)', { skip }, () => {
  let cluster: KiteCluster;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);

  before(async () => {
    cluster = await startCluster({ extraArgs: clusterArgs });
  });

  after(() => stopAndReset(cluster));

  it("serves on the node's gateway and keeps the node's kube-dns EndpointSlice", async () => {
    const slice = await eventually(() => {
      const r = kubectl(cluster, ['get', 'endpointslice', '-n', 'kube-system', `kube-dns-${cluster.nodeName}`, '-o', 'json']);
      return r.code === 0 ? (JSON.parse(r.stdout) as SliceJson) : undefined;
    }, 'the kube-dns slice');
    assert.deepEqual(
      slice.endpoints.map((e) => [e.addresses, e.nodeName, e.conditions.ready]),
      [[[gateway], cluster.nodeName, true]],
    );
    const kubernetesIP = k(['get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}']).trim();
    assert.deepEqual(await digShort('kubernetes.default.svc.cluster.local'), [kubernetesIP]);
    assert.deepEqual(await digShort('+tcp', 'kubernetes.default.svc.cluster.local'), [kubernetesIP]);
  });

  it('resolves a Service from a pod', async () => {
    assert.equal(k(['apply', '-f', '-'], myservice).trim(), 'service/myservice created');
    const ip = k(['get', 'service', 'myservice', '-o', 'jsonpath={.spec.clusterIP}']).trim();
    assert.equal(k(['apply', '-f', '-'], client).trim(), 'pod/dns-client created');
    const phase = await eventually(() => {
      const p = k(['get', 'pod', 'dns-client', '-o', 'jsonpath={.status.phase}']).trim();
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    }, 'dns-client finished', 120_000);
    const logs = k(['logs', 'dns-client']);
    assert.equal(phase, 'Succeeded', logs);
    assert.match(logs, /^nameserver 10\.96\.0\.10$/m);
    assert.match(logs, /^Server:\s+10\.96\.0\.10$/m);
    assert.match(logs, new RegExp(`Name:\\s+myservice\\.default\\.svc\\.cluster\\.local\\nAddress:\\s+${ip.replaceAll('.', '\\.')}`));
    assert.match(logs, /server can't find myservice\.svc\.cluster\.local: NXDOMAIN/);
    assert.match(logs, /server can't find myservice\.cluster\.local: NXDOMAIN/);
    assert.match(logs, /short-exit=1/);
  });

  it("answers a headless Service with its pod's address from the EndpointSlice controller's slice", async () => {
    k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Service
metadata:
  name: sleeper
spec:
  clusterIP: None
  selector:
    app: sleeper
  ports:
  - name: http
    port: 80
---
apiVersion: v1
kind: Pod
metadata:
  name: sleeper
  labels:
    app: sleeper
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sleep
    image: busybox:1.35
    command: ['sleep', '3600']
`,
    );
    const podIP = await eventually(() => k(['get', 'pod', 'sleeper', '-o', 'jsonpath={.status.podIP}']).trim() || undefined, 'the pod IP', 120_000);
    await eventually(async () => ((await digShort('sleeper.default.svc.cluster.local')).join() === podIP ? true : undefined), 'sleeper resolves to its pod', 30_000);
    assert.deepEqual(await digShort('-x', podIP), [`${podIP.replaceAll('.', '-')}.sleeper.default.svc.cluster.local.`]);
    assert.deepEqual(await digShort(`${podIP.replaceAll('.', '-')}.default.pod.cluster.local`), [podIP]);
  });

  it("reaches https://kubernetes.default.svc from a pod's network with the cluster CA (DNS, proxy, the advertised API server)", async () => {
    const podIP = k(['get', 'pod', 'sleeper', '-o', 'jsonpath={.status.podIP}']).trim();
    // The pod's busybox has no TLS client that takes the API server's ECDSA key, so the host's dig
    // and curl run in the pod's network namespace (found by its address).
    const pid = podNetworkPid(podIP);
    assert.ok(pid, `a process in the network namespace of ${podIP}`);
    const inPod = (cmd: string[]) => spawnSync('nsenter', ['-t', pid, '-n', ...cmd], { encoding: 'utf8', timeout: 20_000 });
    const kubernetesIP = inPod(['dig', '@10.96.0.10', '+time=2', '+tries=2', '+short', 'kubernetes.default.svc.cluster.local']).stdout.trim();
    assert.equal(kubernetesIP, k(['get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}']).trim());
    const version = inPod(['curl', '-sS', '--max-time', '10', '--cacert', join(cluster.dataDir, 'pki', 'ca.crt'), '--resolve', `kubernetes.default.svc:443:${kubernetesIP}`, 'https://kubernetes.default.svc/version']);
    assert.equal(version.status, 0, version.stderr);
    assert.equal((JSON.parse(version.stdout) as { minor: string }).minor, '33');
  });

  it('serves again after a restart of kite, with no extra step', async () => {
    const ip = k(['get', 'service', 'myservice', '-o', 'jsonpath={.spec.clusterIP}']).trim();
    await cluster.stop();
    cluster = await startCluster({ dataDir: cluster.dataDir, extraArgs: clusterArgs });
    assert.deepEqual(await digShort('myservice.default.svc.cluster.local'), [ip]);
  });
});
