// The seeds' own story on real containerd (`kite up` on its own bridge): the README quick start's
// examples/web-pod.yaml applied before its Service exists waits in Init:0/1, its init container
// logging "waiting"; within seconds of `kubectl apply -f examples/myservice.yaml` the cluster DNS
// answers the init container's lookup, nginx starts with its postStart flag written, readiness makes
// the pod 1/1, and the liveness probe on /healthz (404 on stock nginx) restarts it. Around it, what
// the kubelet gives every pod: the resolv.conf of dnsPolicy ClusterFirst and the service links, and
// busybox 1.35's nslookup pinned (the FQDN succeeds; the short name fails on the search domains
// CoreDNS also answers NXDOMAIN for).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CoreEvent, Pod, Service } from '../../src/api/types.js';
import { eventually, examplesDir, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

const webPodFile = join(examplesDir, 'web-pod.yaml');
const myserviceFile = join(examplesDir, 'myservice.yaml');

const client = JSON.stringify({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'client' },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'sh', image: 'busybox:1.35', command: ['sleep', '3600'] }] },
});

describe("the seeds' pod and myservice on kite up (containerd, cluster DNS, service proxy)", { skip }, () => {
  let cluster: KiteCluster;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const getPod = (name: string) => JSON.parse(k(['get', 'pod', name, '-o', 'json'])) as Pod;
  const row = (name: string) => k(['get', 'pod', name, '--no-headers']).trim().split(/\s+/);

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-seed', '--pod-cidr', '10.217.244.0/24', '--cgroup-root', '/kite-seed'] });
  });

  after(() => stopAndReset(cluster));

  it('applied before myservice, web waits in Init:0/1 with the cluster resolver and the kubernetes service links', async () => {
    assert.equal(k(['apply', '-f', webPodFile]).trim(), 'pod/web created');
    await eventually(() => (row('web')[2] === 'Init:0/1' && getPod('web').status?.initContainerStatuses?.[0]?.state?.running ? true : undefined), 'web Init:0/1 with wait-service running', 120_000);
    const logs = await eventually(() => {
      const r = kubectl(cluster, ['logs', 'web', '-c', 'wait-service']);
      return r.code === 0 && r.stdout.includes('waiting') ? r.stdout : undefined;
    }, 'the init container to log "waiting"', 30_000);
    assert.match(logs, /waiting/);

    const resolv = k(['exec', 'web', '-c', 'wait-service', '--', 'cat', '/etc/resolv.conf']);
    const lines = resolv.split('\n').filter((l) => l && !l.startsWith('#'));
    assert.deepEqual(lines.filter((l) => l.startsWith('nameserver')), ['nameserver 10.96.0.10']);
    assert.match(resolv, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local( |$)/m);
    assert.match(resolv, /^options ndots:5$/m);

    // Started before myservice existed: the kubernetes Service's links only.
    const env = k(['exec', 'web', '-c', 'wait-service', '--', 'env']);
    assert.match(env, /^KUBERNETES_SERVICE_HOST=10\.96\.0\.1$/m);
    assert.match(env, /^KUBERNETES_SERVICE_PORT=443$/m);
    assert.match(env, /^KUBERNETES_SERVICE_PORT_HTTPS=443$/m);
    assert.match(env, /^KUBERNETES_PORT=tcp:\/\/10\.96\.0\.1:443$/m);
    assert.match(env, /^KUBERNETES_PORT_443_TCP_ADDR=10\.96\.0\.1$/m);
    assert.doesNotMatch(env, /^MYSERVICE_/m);
    assert.equal(getPod('web').status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
  });

  it('proceeds within seconds of kubectl apply -f examples/myservice.yaml: the lookup succeeds, nginx runs with its postStart flag, 1/1', async (t) => {
    const applied = Date.now();
    assert.equal(k(['apply', '-f', myserviceFile]).trim(), 'service/myservice created\ndeployment.apps/myservice created');
    const svc = JSON.parse(k(['get', 'service', 'myservice', '-o', 'json'])) as Service;
    const ip = svc.spec!.clusterIP!;
    assert.match(ip, /^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/, 'a ClusterIP in 10.96.0.0/12');

    const init = await eventually(() => {
      const s = getPod('web').status?.initContainerStatuses?.[0]?.state?.terminated;
      return s ? s : undefined;
    }, 'wait-service to finish', 30_000);
    assert.equal(init.exitCode, 0);
    assert.equal(init.reason, 'Completed');
    t.diagnostic(`wait-service finished ${(Date.parse(init.finishedAt!) - applied) / 1000} s after the apply (finishedAt has whole seconds)`);
    const logs = k(['logs', 'web', '-c', 'wait-service']);
    assert.ok(logs.includes('Name:\tmyservice.default.svc.cluster.local') && logs.includes(`Address: ${ip}`), logs);

    await eventually(() => (row('web')[1] === '1/1' && row('web')[2] === 'Running' ? true : undefined), 'web 1/1 Running', 60_000);
    const ready = getPod('web').status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(k(['exec', 'web', '-c', 'nginx', '--', 'cat', '/tmp/flag']).trim(), 'started');
    // nginx started after myservice: its links are there, the cluster IP and the named port.
    const env = k(['exec', 'web', '-c', 'nginx', '--', 'env']);
    assert.match(env, new RegExp(`^MYSERVICE_SERVICE_HOST=${ip.replace(/\./g, '\\.')}$`, 'm'));
    assert.match(env, /^MYSERVICE_SERVICE_PORT=80$/m);
    assert.match(env, /^MYSERVICE_SERVICE_PORT_HTTP=80$/m);
    assert.match(env, new RegExp(`^MYSERVICE_PORT_80_TCP=tcp://${ip.replace(/\./g, '\\.')}:80$`, 'm'));
  });

  it('myservice receives traffic; busybox 1.35: the FQDN resolves, the short name fails on the NXDOMAIN search domains', async () => {
    assert.equal(k(['apply', '-f', '-'], client).trim(), 'pod/client created');
    await eventually(() => (row('client')[1] === '1/1' ? true : undefined), 'the client pod running', 60_000);
    const status = kubectl(cluster, ['rollout', 'status', 'deployment/myservice', '--timeout=60s']);
    assert.equal(status.code, 0, status.stderr);
    const ip = k(['get', 'service', 'myservice', '-o', 'jsonpath={.spec.clusterIP}']);

    const page = await eventually(() => {
      // busybox 1.35's `wget -T` crashes: `timeout` bounds the request instead.
      const r = kubectl(cluster, ['exec', 'client', '--', 'timeout', '3', 'wget', '-qO-', 'http://myservice']);
      return r.code === 0 ? r.stdout : undefined;
    }, 'wget http://myservice from a pod', 30_000);
    assert.match(page, /nginx/i);

    const fqdn = kubectl(cluster, ['exec', 'client', '--', 'nslookup', 'myservice.default.svc.cluster.local']);
    assert.equal(fqdn.code, 0, fqdn.stderr + fqdn.stdout);
    assert.match(fqdn.stdout, /^Server:\s+10\.96\.0\.10$/m);
    assert.ok(fqdn.stdout.includes(`Address: ${ip}`), fqdn.stdout);

    const short = kubectl(cluster, ['exec', 'client', '--', 'nslookup', 'myservice']);
    const out = short.stdout + short.stderr;
    assert.notEqual(short.code, 0, out);
    // The namespace's domain answers; the two other search domains are NXDOMAIN, as from CoreDNS.
    assert.ok(out.includes(`Name:\tmyservice.default.svc.cluster.local`) && out.includes(`Address: ${ip}`), out);
    assert.match(out, /can't find myservice\.svc\.cluster\.local: NXDOMAIN/);
    assert.match(out, /can't find myservice\.cluster\.local: NXDOMAIN/);
  });

  it('dnsPolicy None with dnsConfig, and enableServiceLinks: false (the kubernetes Service\'s links only)', async () => {
    const custom = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'custom' },
      spec: {
        terminationGracePeriodSeconds: 1,
        enableServiceLinks: false,
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['10.96.0.10'], searches: ['default.svc.cluster.local', 'example.test'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
        containers: [{ name: 'sh', image: 'busybox:1.35', command: ['sleep', '3600'] }],
      },
    });
    assert.equal(k(['apply', '-f', '-'], custom).trim(), 'pod/custom created');
    await eventually(() => (row('custom')[1] === '1/1' ? true : undefined), 'the custom pod running', 60_000);
    const resolv = k(['exec', 'custom', '--', 'cat', '/etc/resolv.conf']);
    assert.match(resolv, /^nameserver 10\.96\.0\.10$/m);
    assert.match(resolv, /^search default\.svc\.cluster\.local example\.test$/m);
    assert.match(resolv, /^options ndots:2 edns0$/m);
    const env = k(['exec', 'custom', '--', 'env']);
    assert.match(env, /^KUBERNETES_SERVICE_HOST=10\.96\.0\.1$/m);
    assert.doesNotMatch(env, /^MYSERVICE_/m);
    // The pod's own nameserver line reaches the cluster DNS.
    const r = kubectl(cluster, ['exec', 'custom', '--', 'nslookup', 'myservice.default.svc.cluster.local']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(k(['delete', 'pod', 'custom', '--wait=true']).trim(), 'pod "custom" deleted');
  });

  it('the liveness probe on /healthz (404) restarts nginx, as the seed spec implies; readiness brings it back to 1/1', async () => {
    const restarted = await eventually(() => {
      const s = getPod('web').status?.containerStatuses?.[0];
      return (s?.restartCount ?? 0) >= 1 ? s : undefined;
    }, 'nginx restarted by its liveness probe', 90_000);
    assert.equal(restarted?.lastState?.terminated !== undefined, true);
    const events = JSON.parse(k(['get', 'events', '--field-selector', 'involvedObject.name=web', '-o', 'json'])) as { items: CoreEvent[] };
    const messages = events.items.map((e) => `${e.reason}: ${e.message}`);
    assert.ok(messages.includes('Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 404'), messages.join('\n'));
    assert.ok(messages.includes('Killing: Container nginx failed liveness probe, will be restarted'), messages.join('\n'));
    // The init container does not run again, and the restarted nginx wrote its flag again.
    assert.equal(getPod('web').status?.initContainerStatuses?.[0]?.restartCount, 0);
    await eventually(() => (row('web')[1] === '1/1' ? true : undefined), 'web 1/1 after the restart', 60_000);
    assert.equal(k(['exec', 'web', '-c', 'nginx', '--', 'cat', '/tmp/flag']).trim(), 'started');
    assert.equal(k(['delete', 'pod', 'web', 'client', '--wait=true']).trim(), 'pod "web" deleted\npod "client" deleted');
    assert.equal(k(['delete', '-f', myserviceFile]).trim(), 'service "myservice" deleted\ndeployment.apps "myservice" deleted');
  });
});

// The README quick start applies these very files.
describe('examples', () => {
  it('the README quick start names the seed pod and myservice', () => {
    const readme = readFileSync(join(examplesDir, '..', 'README.md'), 'utf8');
    assert.ok(readme.includes('kubectl apply -f examples/web-pod.yaml'), 'README applies examples/web-pod.yaml');
    assert.ok(readme.includes('kubectl apply -f examples/myservice.yaml'), 'README applies examples/myservice.yaml');
  });
});
