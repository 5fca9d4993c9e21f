// Service account tokens on kite up (containerd, bridge kite-sa 10.217.232.0/24): a Deployment's pod
// gets the projected kube-api-access volume (token, ca.crt, namespace) from ServiceAccount
// admission and the kubelet's token manager; with that token, from the pod's network, listing pods
// is refused until a Role is bound to the pod's ServiceAccount, then allowed; once the pod is gone
// the token no longer authenticates. The pod's busybox has no TLS client that takes the API
// server's ECDSA key, so the host's curl runs in the pod's network namespace with the token and CA
// the pod was given.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, podNetworkPid, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';
const clusterArgs = ['--bridge', 'kite-sa', '--pod-cidr', '10.217.232.0/24', '--cgroup-root', '/kite-sa'];
const mount = '/var/run/secrets/kubernetes.io/serviceaccount';

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: reader
  namespace: sa-app
spec:
  replicas: 1
  selector:
    matchLabels:
      app: reader
  template:
    metadata:
      labels:
        app: reader
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:1.35
        command: ['sleep', '3600']
`;

interface Claims {
  sub: string;
  iat: number;
  exp: number;
  'kubernetes.io': { namespace: string; pod: { name: string; uid: string }; serviceaccount: { name: string }; warnafter?: number };
}

describe('service account tokens in pods (containerd)', { skip }, () => {
  let cluster: KiteCluster;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  let podName = '';
  let podIP = '';
  let token = '';

  before(async () => {
    cluster = await startCluster({ extraArgs: clusterArgs });
  });

  after(() => stopAndReset(cluster));

  /** curl in the pod's network namespace, with the pod's token and CA, to the kubernetes Service. */
  function fromPod(path: string): { status: number; body: string } {
    const pid = podNetworkPid(podIP);
    assert.ok(pid, `a process in the network namespace of ${podIP}`);
    const ca = join(cluster.dataDir, 'pod-ca.crt');
    writeFileSync(ca, k(['exec', '-n', 'sa-app', podName, '--', 'cat', `${mount}/ca.crt`]));
    const ip = k(['get', 'service', 'kubernetes', '-o', 'jsonpath={.spec.clusterIP}']).trim();
    const r = spawnSync(
      'nsenter',
      ['-t', pid, '-n', 'curl', '-sS', '--max-time', '10', '--cacert', ca, '--resolve', `kubernetes.default.svc:443:${ip}`, '-H', `Authorization: Bearer ${token}`, '-w', '\n%{http_code}', `https://kubernetes.default.svc${path}`],
      { encoding: 'utf8', timeout: 20_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const at = r.stdout.lastIndexOf('\n');
    return { status: Number(r.stdout.slice(at + 1)), body: r.stdout.slice(0, at) };
  }

  it("mounts the pod's token, CA and namespace, the token bound to the pod", async () => {
    k(['create', 'namespace', 'sa-app']);
    await eventually(() => (kubectl(cluster, ['get', 'serviceaccount', 'default', '-n', 'sa-app']).code === 0 ? true : undefined), 'the default ServiceAccount');
    assert.equal(k(['apply', '-f', '-'], deployment).trim(), 'deployment.apps/reader created');
    podName = await eventually(() => {
      const out = k(['get', 'pods', '-n', 'sa-app', '-l', 'app=reader', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}']).trim();
      const [name, phase] = out.split(' ');
      return phase === 'Running' ? name : undefined;
    }, 'the reader pod Running', 120_000);
    podIP = k(['get', 'pod', '-n', 'sa-app', podName, '-o', 'jsonpath={.status.podIP}']).trim();
    const volume = JSON.parse(k(['get', 'pod', '-n', 'sa-app', podName, '-o', 'jsonpath={.spec.volumes[0]}'])) as { name: string; projected: { sources: unknown[] } };
    assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.equal(k(['exec', '-n', 'sa-app', podName, '--', 'ls', mount]).split('\n').filter(Boolean).sort().join(','), 'ca.crt,namespace,token');
    assert.equal(k(['exec', '-n', 'sa-app', podName, '--', 'cat', `${mount}/namespace`]), 'sa-app');
    token = k(['exec', '-n', 'sa-app', podName, '--', 'cat', `${mount}/token`]).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Claims;
    assert.equal(claims.sub, 'system:serviceaccount:sa-app:default');
    assert.equal(claims['kubernetes.io'].pod.name, podName);
    assert.equal(claims['kubernetes.io'].pod.uid, k(['get', 'pod', '-n', 'sa-app', podName, '-o', 'jsonpath={.metadata.uid}']));
    // The kubelet asks for 3607 s; the API server extends such a pod-bound token and says when to warn.
    assert.equal((claims['kubernetes.io'].warnafter ?? 0) - claims.iat, 3607);
  });

  it('lists pods with a Role bound to its ServiceAccount and is refused without', async () => {
    const refused = fromPod('/api/v1/namespaces/sa-app/pods');
    assert.equal(refused.status, 403, refused.body);
    assert.equal(
      (JSON.parse(refused.body) as { message: string }).message,
      'pods is forbidden: User "system:serviceaccount:sa-app:default" cannot list resource "pods" in API group "" in the namespace "sa-app"',
    );
    k(['create', 'role', 'pod-reader', '-n', 'sa-app', '--verb=get,list', '--resource=pods']);
    k(['create', 'rolebinding', 'reader', '-n', 'sa-app', '--role=pod-reader', '--serviceaccount=sa-app:default']);
    const listed = await eventually(() => {
      const r = fromPod('/api/v1/namespaces/sa-app/pods');
      return r.status === 200 ? r : undefined;
    }, 'the list allowed');
    assert.deepEqual((JSON.parse(listed.body) as { items: { metadata: { name: string } }[] }).items.map((p) => p.metadata.name), [podName]);
    // Only what the Role grants: no pods in other namespaces.
    assert.equal(fromPod('/api/v1/namespaces/default/pods').status, 403);
  });

  it('stops authenticating once the pod is gone', async () => {
    const kubeconfig = join(cluster.dataDir, 'pod-token.kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters:
- name: kite
  cluster:
    server: ${cluster.url}
    certificate-authority: ${join(cluster.dataDir, 'pki', 'ca.crt')}
users:
- name: pod
  user:
    token: ${token}
contexts:
- name: pod
  context:
    cluster: kite
    user: pod
current-context: pod
`,
    );
    const asPod = { kubeconfig };
    assert.equal(kubectl(asPod, ['get', 'pods', '-n', 'sa-app', '-o', 'name']).stdout.trim(), `pod/${podName}`);
    k(['scale', 'deployment', 'reader', '-n', 'sa-app', '--replicas=0']);
    await eventually(() => (kubectl(cluster, ['get', 'pod', '-n', 'sa-app', podName]).code !== 0 ? true : undefined), 'the pod deleted', 120_000);
    const after = kubectl(asPod, ['get', 'pods', '-n', 'sa-app']);
    assert.equal(after.code, 1);
    assert.equal(after.stderr.trim(), 'error: You must be logged in to the server (Unauthorized)');
  });
});
