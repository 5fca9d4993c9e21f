// The node's service proxy on real containerd and real nftables (`kite up` on bridge kite-px, a
// second `kite agent` on kite-px2): ClusterIP round-robin from a busybox pod over three nginx pods,
// ClientIP affinity, NodePort from the host on the gateway address, an endpoint-less Service refusing at once, a
// readiness failure leaving the rules and coming back, a deleted pod's endpoint terminating, a
// pod reaching itself (hairpin), a pod of the second node reaching the first's, and the network-safety
// checks (no route out of a pod; the service range routed into kite's bridge and rejected, counted).
// Traffic goes only to pod IPs, ClusterIPs and the gateway.
// The EndpointSlices are the EndpointSlice controller's, from the Services' selectors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { get } from 'node:http';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { EndpointSlice, Pod } from '../../src/api/types.js';
import { Client } from '../../src/client/client.js';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startAgent, startCluster, stopAndReset, resetCluster, type KiteAgent, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';
const table = 'kite-proxy-kite-px';
const gateway = '10.217.240.1';

const webPod = (i: number) => `apiVersion: v1
kind: Pod
metadata:
  name: web-${i}
  labels:
    app: web
    instance: web-${i}
spec:
  terminationGracePeriodSeconds: 6
  containers:
  - name: nginx
    image: nginx:1.22
    command: ['sh', '-c', "hostname > /usr/share/nginx/html/index.html && touch /usr/share/nginx/html/ready && exec nginx -g 'daemon off;'"]
    readinessProbe:
      httpGet:
        path: /ready
        port: 80
      periodSeconds: 1
      failureThreshold: 1
    lifecycle:
      preStop:
        exec:
          # When it began, on the kernel's clock (/proc/uptime is not namespaced), which the test reads too.
          command: ['sh', '-c', 'cat /proc/uptime > /tmp/prestop-at; sleep 4']
`;

const clientPod = (name: string, nodeName?: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 0
  ${nodeName ? `nodeName: ${nodeName}` : ''}
  containers:
  - name: c
    image: busybox:1.35
    command: ['sleep', '3600']
`;

const service = (name: string, selector: string, type: 'ClusterIP' | 'NodePort', nodePort?: number, affinity = 'None') => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  type: ${type}
  selector: {${selector}}
  sessionAffinity: ${affinity}
  ports:
  - name: http
    port: 80
    protocol: TCP
    targetPort: 80
    ${nodePort ? `nodePort: ${nodePort}` : ''}
`;

/** Seconds since boot, the first field of /proc/uptime. */
const uptime = (text: string) => Number(text.trim().split(/\s+/)[0]);

function nft(args: string[]): string {
  const r = spawnSync('nft', args, { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new Error(`nft ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Whether the node's rules DNAT to ip:80 now. */
const inRules = (ip: string) => nft(['list', 'table', 'ip', table]).includes(`dnat to ${ip}:80`);

/** The packets counted by the reject rule for the unallocated part of the service range. */
function rejectCounter(): number {
  const out = JSON.parse(nft(['-j', 'list', 'chain', 'ip', table, 'cluster-ips-check'])) as { nftables: { rule?: { expr: { counter?: { packets: number } }[] } }[] };
  for (const item of out.nftables) for (const e of item.rule?.expr ?? []) if (e.counter) return e.counter.packets;
  throw new Error('no counter in cluster-ips-check');
}

/** connect() from the host: 'connected' or the error code. */
function tcpConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port, timeout: 3000 });
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('timeout', () => {
      s.destroy();
      resolve('timeout');
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** One GET on a new connection (a kept-alive one would stay on the endpoint it was DNATed to). */
function getOnce(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers: { connection: 'close' }, timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Every EndpointSlice event in the default namespace, with the time it was seen. */
function watchSlices(client: Client, onEvent: (slice: EndpointSlice) => void): { stop(): void } {
  const abort = new AbortController();
  void (async () => {
    try {
      for await (const ev of client.resource('endpointslices.discovery.k8s.io').namespace('default').watch({}, abort.signal)) {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') onEvent(ev.object as EndpointSlice);
      }
    } catch {
      // aborted at the end
    }
  })();
  return { stop: () => abort.abort() };
}

describe('service proxy on kite up (containerd, nftables)', { skip }, () => {
  let cluster: KiteCluster;
  let agent: KiteAgent | undefined;
  let client: Client;
  let slicesSeen: { stop(): void };
  const sliceEvents: { at: number; uptime: number; slice: EndpointSlice }[] = [];
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const podIP = (name: string) => (JSON.parse(k(['get', 'pod', name, '-o', 'json'])) as Pod).status!.podIP!;
  const clusterIP = (name: string) => k(['get', 'svc', name, '-o', 'jsonpath={.spec.clusterIP}']).trim();
  /** n requests from a pod, one wget each; the bodies (or wget's error) in order. */
  const wgetFrom = (pod: string, url: string, n = 1) =>
    // (busybox 1.35's `wget -T` crashes; its `timeout` bounds each request instead.)
    kubectl(cluster, ['exec', pod, '--', 'sh', '-c', `for i in $(seq ${n}); do timeout 3 wget -qO- ${url} 2>&1 || echo "wget failed"; done`]).stdout.trim().split('\n');

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-px', '--pod-cidr', '10.217.240.0/24', '--cgroup-root', '/kite-px'] });
    client = await Client.fromKubeconfig(cluster.kubeconfig);
    slicesSeen = watchSlices(client, (slice) => sliceEvents.push({ at: Date.now(), uptime: uptime(readFileSync('/proc/uptime', 'utf8')), slice }));
    k(['apply', '-f', '-'], service('web', 'app: web', 'NodePort', 30080));
    k(['apply', '-f', '-'], service('self', 'instance: web-0', 'ClusterIP'));
    k(['apply', '-f', '-'], service('empty', 'app: none', 'ClusterIP'));
    k(['apply', '-f', '-'], service('sticky', 'app: web', 'ClusterIP', undefined, 'ClientIP'));
    for (const i of [0, 1, 2]) k(['apply', '-f', '-'], webPod(i));
    k(['apply', '-f', '-'], clientPod('client'));
    k(['wait', '--for=condition=Ready', 'pod/web-0', 'pod/web-1', 'pod/web-2', 'pod/client', '--timeout=180s']);
    await eventually(() => ([0, 1, 2].every((i) => inRules(podIP(`web-${i}`))) ? true : undefined), 'the three endpoints in the rules');
  });

  after(async () => {
    slicesSeen?.stop();
    client?.close();
    if (agent) {
      await agent.stop();
      resetCluster(agent.dataDir);
    }
    await stopAndReset(cluster);
  });

  it('ClusterIP: a busybox pod reaches nginx, round-robin over the three replicas', () => {
    const bodies = wgetFrom('client', `http://${clusterIP('web')}`, 30);
    assert.deepEqual([...new Set(bodies)].sort(), ['web-0', 'web-1', 'web-2'], bodies.join(','));
  });

  it('sessionAffinity ClientIP: every request of one client goes to the same replica', () => {
    const bodies = wgetFrom('client', `http://${clusterIP('sticky')}`, 10);
    assert.equal(bodies.length, 10);
    assert.equal(new Set(bodies).size, 1, bodies.join(','));
    assert.match(bodies[0], /^web-[012]$/);
  });

  it('NodePort from the host on the gateway address (kubectl get svc shows 80:30080/TCP)', async () => {
    assert.match(k(['get', 'svc', 'web']), /web\s+NodePort\s+10\.\d+\.\d+\.\d+\s+<none>\s+80:30080\/TCP/);
    const seen = new Set<string>();
    for (let i = 0; i < 30 && seen.size < 3; i++) seen.add((await getOnce(`http://${gateway}:30080/`)).trim());
    assert.deepEqual([...seen].sort(), ['web-0', 'web-1', 'web-2']);
  });

  it('a Service without endpoints refuses at once (TCP reset), from a pod and from the host', async () => {
    const ip = clusterIP('empty');
    assert.match(wgetFrom('client', `http://${ip}`)[0], /Connection refused/);
    assert.equal(await tcpConnect(ip, 80), 'ECONNREFUSED');
    assert.ok(nft(['list', 'map', 'ip', table, 'no-endpoint-services']).includes(`${ip} . tcp . 80 : goto reject-chain`));
  });

  it('hairpin: a pod reaches itself through its Service (SNAT to the gateway)', () => {
    const ip = clusterIP('self');
    const logged = k(['logs', 'web-0']).split('\n').length;
    assert.deepEqual(wgetFrom('web-0', `http://${ip}`, 3), ['web-0', 'web-0', 'web-0']);
    // nginx logged the gateway as the client: the hairpin connection was SNATed to the bridge's address.
    const lines = k(['logs', 'web-0']).split('\n').slice(logged - 1);
    assert.equal(lines.filter((l) => l.startsWith(`${gateway} - - `) && l.includes('"GET / HTTP/1.1" 200')).length, 3, lines.join('\n'));
  });

  it('readiness failing removes the endpoint from the rules within 2 s of its slice change; it returns', async (t) => {
    const ip = podIP('web-1');
    k(['exec', 'web-1', '--', 'rm', '/usr/share/nginx/html/ready']);
    const notReady = await eventually(() => sliceEvents.find((w) => w.slice.metadata?.labels?.['kubernetes.io/service-name'] === 'web' && w.slice.endpoints?.some((e) => e.addresses[0] === ip && e.conditions?.ready === false)), 'web-1 not ready in its slice', 30_000);
    await eventually(() => (!inRules(ip) ? true : undefined), 'web-1 out of the rules', 10_000);
    const latency = Date.now() - notReady.at;
    t.diagnostic(`out of the rules ${latency} ms after the slice change (polled every ~100 ms)`);
    assert.ok(latency <= 2000, `out of the rules ${latency} ms after the slice change`);
    assert.ok(!wgetFrom('client', `http://${clusterIP('web')}`, 12).includes('web-1'), 'no traffic to the unready pod');
    k(['exec', 'web-1', '--', 'touch', '/usr/share/nginx/html/ready']);
    await eventually(() => (inRules(ip) ? true : undefined), 'web-1 back in the rules', 30_000);
  });

  it('delete: the endpoint turns terminating before the preStop hook runs, leaves the rules, and traffic stops reaching it', async (t) => {
    const ip = podIP('web-2');
    k(['delete', 'pod', 'web-2', '--wait=false']);
    const terminating = await eventually(() => sliceEvents.find((w) => w.slice.metadata?.labels?.['kubernetes.io/service-name'] === 'web' && w.slice.endpoints?.some((e) => e.addresses[0] === ip && e.conditions?.terminating)), 'web-2 terminating in its slice', 30_000);
    // The test saw the slice change (a bound on when it was written) no later than the hook began.
    const preStopAt = await eventually(() => {
      const r = kubectl(cluster, ['exec', 'web-2', '--', 'cat', '/tmp/prestop-at']);
      return r.code === 0 && r.stdout.trim() ? uptime(r.stdout) : undefined;
    }, 'the preStop hook of web-2 started', 10_000);
    t.diagnostic(`endpoint terminating (seen) at uptime ${terminating.uptime.toFixed(2)} s, preStop began at ${preStopAt.toFixed(2)} s`);
    assert.ok(terminating.uptime <= preStopAt, `terminating seen at ${terminating.uptime}, preStop at ${preStopAt}`);
    await eventually(() => (!inRules(ip) ? true : undefined), 'web-2 out of the rules', 10_000);
    // Still in its preStop (4 s): running, yet no longer reached.
    assert.ok(!wgetFrom('client', `http://${clusterIP('web')}`, 12).includes('web-2'));
  });

  it('network safety: no route out of a pod; the service range goes into kite-px and is rejected by kite\'s counted rule', async () => {
    assert.match(kubectl(cluster, ['exec', 'client', '--', 'ip', 'route', 'get', '192.0.2.1']).stderr, /Network is unreachable/);
    const unallocated = '10.96.255.254';
    assert.match(spawnSync('ip', ['route', 'get', unallocated], { encoding: 'utf8' }).stdout, /dev kite-px /);
    const before = rejectCounter();
    assert.equal(await tcpConnect(unallocated, 80), 'ECONNREFUSED');
    assert.ok(rejectCounter() > before, 'the reject rule counted the connection');
  });

  it('a pod on a second node (kite agent, bridge kite-px2) reaches the Service backed by the first node\'s pods', async () => {
    agent = await startAgent(cluster, { nodeName: 'px2', bridge: 'kite-px2', podCIDR: '10.217.241.0/24', cgroupRoot: '/kite-px2' });
    k(['apply', '-f', '-'], clientPod('client2', 'px2'));
    k(['wait', '--for=condition=Ready', 'pod/client2', '--timeout=120s']);
    assert.match(podIP('client2'), /^10\.217\.241\./);
    const bodies = wgetFrom('client2', `http://${clusterIP('web')}`, 10);
    assert.ok(bodies.every((b) => b === 'web-0' || b === 'web-1'), bodies.join(','));
    // The host's route stays on the first node's bridge (lower metric); each node has its own.
    assert.match(spawnSync('ip', ['route', 'get', '10.96.255.254'], { encoding: 'utf8' }).stdout, /dev kite-px /);
    assert.match(spawnSync('ip', ['route', 'show', '10.96.0.0/12'], { encoding: 'utf8' }).stdout, /dev kite-px2 .*metric 56817/);
    // Resetting the second node removes its table and route only.
    await agent.stop();
    resetCluster(agent.dataDir);
    agent = undefined;
    assert.equal(spawnSync('nft', ['list', 'table', 'ip', 'kite-proxy-kite-px2'], { encoding: 'utf8' }).status, 1);
    assert.doesNotMatch(spawnSync('ip', ['route', 'show', '10.96.0.0/12'], { encoding: 'utf8' }).stdout, /kite-px2/);
    assert.match(spawnSync('ip', ['route', 'get', '10.96.255.254'], { encoding: 'utf8' }).stdout, /dev kite-px /);
    const afterReset = wgetFrom('client', `http://${clusterIP('web')}`, 6);
    assert.ok(afterReset.every((b) => /^web-[01]$/.test(b)), afterReset.join(','));
  });
});
