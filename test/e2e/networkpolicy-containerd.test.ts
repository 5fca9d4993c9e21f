// NetworkPolicy on real containerd and nftables (`kite up` on its own bridge kite-np): an nginx
// server and busybox clients in two namespaces reach each other by pod IP until a default-deny
// policy blocks them; allow rules (podSelector, namespaceSelector, port) re-open the path for the
// matching client only; the same for Egress on the client. The host (the kubelet's probes) keeps
// reaching an isolated pod, and the node's table counts the drops it makes and names the pod.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers and nftables needs root';
const table = 'kite-policy-kite-np';

/** A busybox pod (app=client) that sleeps: the clients run wget and ping in it. */
const clientPod = (name: string, namespace?: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
${namespace ? `  namespace: ${namespace}\n` : ''}  labels:
    app: client
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sh
    image: busybox:1.35
    command: ['sleep', '3600']
`;

const pods = `apiVersion: v1
kind: Namespace
metadata:
  name: np-other
  labels:
    team: other
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: nginx
    image: nginx:1.22
    ports:
    - name: http
      containerPort: 80
    readinessProbe:
      httpGet:
        port: http
      periodSeconds: 1
---
${clientPod('client')}---
${clientPod('outsider', 'np-other')}`;

const policy = (name: string, spec: string, namespace = 'default') => `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
${spec}`;

const denyIngress = policy('deny-ingress', '  podSelector: {}\n  policyTypes: [Ingress]\n');
const allowClientOn = (port: string) =>
  policy('allow-client', `  podSelector:\n    matchLabels: {app: web}\n  ingress:\n  - from:\n    - podSelector:\n        matchLabels: {app: client}\n    ports:\n    - port: ${port}\n`);
const allowTeamOther = policy('allow-team-other', '  podSelector:\n    matchLabels: {app: web}\n  ingress:\n  - from:\n    - namespaceSelector:\n        matchLabels: {team: other}\n');
const denyClientEgress = policy('client-egress', '  podSelector:\n    matchLabels: {app: client}\n  policyTypes: [Egress]\n');
const allowClientEgressToWeb = policy(
  'client-egress',
  '  podSelector:\n    matchLabels: {app: client}\n  policyTypes: [Egress]\n  egress:\n  - to:\n    - podSelector:\n        matchLabels: {app: web}\n    ports:\n    - protocol: TCP\n      port: 80\n',
);

/** The node's table as `nft list table` prints it, or undefined when it does not exist. */
function listTable(): string | undefined {
  const r = spawnSync('nft', ['list', 'table', 'inet', table], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : undefined;
}

/** The drop counter of a pod's chain in the node's table: what a user reads with `nft list table`. */
function dropCount(pod: string, direction: 'ingress' | 'egress'): number | undefined {
  const m = new RegExp(`counter packets (\\d+) bytes \\d+ drop comment "${pod}: no NetworkPolicy allows this ${direction}"`).exec(listTable() ?? '');
  return m ? Number(m[1]) : undefined;
}

describe('NetworkPolicy on kite up (containerd, nftables)', { skip }, () => {
  let cluster: KiteCluster;
  let webIP = '';
  let webLinkLocal = '';
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const apply = (yaml: string) => k(['apply', '-f', '-'], yaml).trim();
  /** `wget` from a client pod to the server's pod IP: true when nginx's page came back (busybox 1.35's `wget -T` crashes: `timeout` bounds it). */
  const reaches = (pod: string, namespace = 'default') => {
    const r = kubectl(cluster, ['exec', '-n', namespace, pod, '--', 'timeout', '3', 'wget', '-qO-', `http://${webIP}`]);
    return r.code === 0 && r.stdout.includes('Welcome to nginx!');
  };
  /** ICMPv6 to the server's link-local address, which no policy could name: only IPv4 may cross the bridge under policy. */
  const pings6 = (pod: string) => kubectl(cluster, ['exec', pod, '--', 'ping', '-6', '-c', '1', '-W', '2', webLinkLocal]).code === 0;
  /** Policies take effect within moments of the write: poll until the path is as expected. */
  const expectReach = async (pod: string, namespace: string, want: boolean, what: string) => {
    try {
      await eventually(() => (reaches(pod, namespace) === want ? true : undefined), what, 20_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${listTable()}\n${cluster.log().split("\n").slice(-30).join("\n")}`, { cause: err });
    }
  };

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-np', '--pod-cidr', '10.217.245.0/24', '--cgroup-root', '/kite-np'] });
  });

  after(async () => {
    await stopAndReset(cluster);
    // kite reset removes the node's table (and only it).
    assert.equal(listTable(), undefined, 'the policy table is gone after kite reset');
  });

  it('without a policy every client reaches the server by pod IP', async () => {
    apply(pods);
    for (const [ns, name] of [['default', 'web'], ['default', 'client'], ['np-other', 'outsider']]) {
      const r = kubectl(cluster, ['wait', '-n', ns!, '--for=condition=Ready', `pod/${name}`, '--timeout=120s']);
      assert.equal(r.code, 0, r.stderr);
    }
    webIP = k(['get', 'pod', 'web', '-o', 'jsonpath={.status.podIP}']);
    assert.match(webIP, /^10\.217\.245\.\d+$/);
    webLinkLocal = `${/inet6 (fe80::[0-9a-f:]+)\/64/.exec(k(['exec', 'web', '--', 'ip', '-6', 'addr', 'show', 'eth0']))?.[1]}%eth0`;
    assert.ok(reaches('client'), 'client reaches web');
    assert.ok(pings6('client'), `client pings ${webLinkLocal}`);
    assert.ok(reaches('outsider', 'np-other'), 'outsider reaches web');
  });

  it('a default-deny Ingress policy blocks both clients, counts the drops, and leaves the host (probes) through', async () => {
    assert.equal(apply(denyIngress), 'networkpolicy.networking.k8s.io/deny-ingress created');
    await expectReach('client', 'default', false, 'client blocked');
    assert.equal(reaches('outsider', 'np-other'), false);
    const drops = dropCount('default/web', 'ingress');
    assert.ok(drops !== undefined && drops > 0, `drop counter of default/web: ${drops}`);
    assert.equal(pings6('client'), false, 'no IPv6 around the policy');
    // Node-local traffic is always allowed: the host still fetches the page, and readiness holds.
    const res = await fetch(`http://${webIP}/`, { signal: AbortSignal.timeout(5_000) });
    assert.match(await res.text(), /Welcome to nginx!/);
    assert.equal(k(['get', 'pod', 'web', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']), 'True');
  });

  it('an allow rule re-opens the path for the matching client and port only', async () => {
    // The wrong port first: still blocked.
    assert.equal(apply(allowClientOn('8080')), 'networkpolicy.networking.k8s.io/allow-client created');
    await eventually(() => (/tcp dport 8080 accept comment "default\/allow-client ingress\[0\]"/.test(listTable() ?? '') ? true : undefined), 'the rule for port 8080 in the table');
    assert.equal(reaches('client'), false, 'port 8080 allowed, not 80');
    // The container's named port: open for the client in the policy's namespace, not for the outsider.
    assert.equal(apply(allowClientOn('http')), 'networkpolicy.networking.k8s.io/allow-client configured');
    await expectReach('client', 'default', true, 'client allowed on its named port');
    assert.equal(reaches('outsider', 'np-other'), false, 'a podSelector peer is in the policy namespace only');
    // A namespaceSelector peer lets the other namespace in.
    assert.equal(apply(allowTeamOther), 'networkpolicy.networking.k8s.io/allow-team-other created');
    await expectReach('outsider', 'np-other', true, 'outsider allowed by its namespace');
    k(['delete', 'networkpolicy', 'allow-team-other']);
    await expectReach('outsider', 'np-other', false, 'outsider blocked again');

    const describe = k(['describe', 'networkpolicy', 'allow-client']);
    assert.match(describe, /^Name:\s+allow-client$/m);
    assert.match(describe, /^\s+PodSelector:\s+app=web$/m);
    assert.match(describe, /To Port: http\/TCP/);
    assert.match(describe, /From:\s*\n\s+PodSelector: app=client/);
    assert.match(describe, /Not affecting egress traffic/);
  });

  it('Egress default-deny on the client blocks it even where ingress allows; an egress allow re-opens it', async () => {
    assert.equal(apply(denyClientEgress), 'networkpolicy.networking.k8s.io/client-egress created');
    await expectReach('client', 'default', false, 'client egress blocked');
    const drops = dropCount('default/client', 'egress');
    assert.ok(drops !== undefined && drops > 0, `egress drop counter of default/client: ${drops}`);
    assert.equal(apply(allowClientEgressToWeb), 'networkpolicy.networking.k8s.io/client-egress configured');
    await expectReach('client', 'default', true, 'client egress to web allowed');

    // Deleting the policies restores the open network for everyone.
    k(['delete', 'networkpolicy', '--all']);
    await expectReach('outsider', 'np-other', true, 'outsider reaches web without policies');
    assert.equal(reaches('client'), true);
  });

  it('bad policies are refused with upstream messages', () => {
    const r = kubectl(cluster, ['apply', '-f', '-'], policy('bad', "  podSelector: {}\n  ingress:\n  - from:\n    - ipBlock: {cidr: 10.0.0.0/16, except: [10.1.0.0/24]}\n      podSelector: {}\n    ports:\n    - {port: http, endPort: 90}\n"));
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      'The NetworkPolicy "bad" is invalid: \n* spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric\n* spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`\n* spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer',
    );
  });
});
