// `kubectl top node` and `kubectl top pod` on a real cluster: the kubelet's /metrics/resource fed by
// containerd's container stats and the machine's cgroups, scraped by the API server's in-process
// metrics.k8s.io (every 2 s here instead of 15 s, so two scrapes come quickly).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

const burner = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'burner', labels: { app: 'burner' } },
  spec: {
    terminationGracePeriodSeconds: 1,
    // A little CPU (a busy loop that sleeps most of the time) and a little memory.
    containers: [{ name: 'burn', image: 'busybox:1.35', command: ['sh', '-c', 'while true; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 0.2; done'] }],
  },
});

describe('kubectl top', { skip }, () => {
  let cluster: KiteCluster;

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-top', '--pod-cidr', '10.217.241.0/24', '--cgroup-root', '/kite-top', '--metric-resolution', '2s'] });
    kubectlOk(cluster, ['apply', '-f', '-'], burner);
  });

  after(() => stopAndReset(cluster));

  it('discovery lists metrics.k8s.io/v1beta1 with nodes and pods', () => {
    const resources = kubectlOk(cluster, ['api-resources', '--api-group', 'metrics.k8s.io']);
    assert.match(resources, /^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics$/m);
    assert.match(resources, /^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics$/m);
  });

  it('the raw API answers in metrics-server\'s shape once two scrapes are in', async () => {
    const body = await eventually(() => {
      const r = kubectl(cluster, ['get', '--raw', `/apis/metrics.k8s.io/v1beta1/nodes/${cluster.nodeName}`]);
      return r.code === 0 ? (JSON.parse(r.stdout) as { kind: string; window: string; usage: { cpu: string; memory: string } }) : undefined;
    }, 'node metrics', 60_000);
    assert.equal(body.kind, 'NodeMetrics');
    assert.match(body.usage.cpu, /^\d+(n|u|m)?$/);
    assert.match(body.usage.memory, /^\d+(Ki|Mi|Gi)?$/);
    assert.match(body.window, /^\d+(\.\d+)?s$/);
  });

  it('kubectl top node shows CPU and memory of the node', async () => {
    const out = await eventually(() => {
      const r = kubectl(cluster, ['top', 'node']);
      return r.code === 0 && !r.stdout.includes('<unknown>') ? r.stdout : undefined;
    }, 'kubectl top node', 60_000);
    const row = new RegExp(`^${cluster.nodeName}\\s+(\\d+)m\\s+(\\d+)%\\s+(\\d+)Mi\\s+(\\d+)%\\s*$`, 'm').exec(out);
    assert.ok(row, out);
    assert.ok(Number(row[3]) > 0, 'memory in use');
  });

  it('kubectl top pod shows the burner using CPU and memory', async () => {
    const out = await eventually(() => {
      const r = kubectl(cluster, ['top', 'pod', 'burner']);
      if (r.code !== 0) return undefined;
      const m = /^burner\s+(\d+)m\s+(\d+)Mi\s*$/m.exec(r.stdout);
      return m && Number(m[1]) > 0 ? r.stdout : undefined;
    }, 'kubectl top pod burner', 90_000);
    assert.match(out, /^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/m);
    const containers = kubectlOk(cluster, ['top', 'pod', '-l', 'app=burner', '--containers']);
    assert.match(containers, /^burner\s+burn\s+\d+m\s+\d+Mi\s*$/m);
    // kubectl get renders metrics-server's Table.
    const table = kubectlOk(cluster, ['get', 'pods.metrics.k8s.io', 'burner']);
    assert.match(table, /^NAME\s+CPU\s+MEMORY\s+WINDOW\s*\nburner\s+\d+n?\S*\s+\d+Ki\s+\d+(\.\d+)?s\s*$/m);
  });

  it('a pod without metrics is NotFound as metrics-server answers', () => {
    const r = kubectl(cluster, ['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /pod "nope" not found/);
  });
});
