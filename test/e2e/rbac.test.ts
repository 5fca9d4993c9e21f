// RBAC and the Node authorizer against a real `kite server`, driven by the real kubectl: users come
// from the server's token file (a node's token stands for a kubelet's client certificate).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectl, kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';

const users: Record<string, [string, string]> = {
  alice: ['alice-token', ''],
  bob: ['bob-token', ''],
  'system:node:n1': ['n1-token', 'system:nodes'],
  'system:node:n2': ['n2-token', 'system:nodes'],
};

describe('RBAC and the Node authorizer', () => {
  let server: KiteServer;
  let dir: string;
  const as: Record<string, { kubeconfig: string }> = {};

  before(async () => {
    dir = tempDir('rbac');
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, Object.entries(users).map(([user, [token, groups]]) => `${token},${user},${user}${groups ? `,"${groups}"` : ''}`).join('\n') + '\n');
    server = await startServer({ dataDir: join(dir, 'data'), extraArgs: ['--token-auth-file', tokenFile] });
    for (const [user, [token]] of Object.entries(users)) {
      const kubeconfig = join(dir, `${user.replaceAll(':', '_')}.kubeconfig`);
      writeFileSync(
        kubeconfig,
        `apiVersion: v1
kind: Config
clusters: [{name: kite, cluster: {server: "${server.url}", certificate-authority: "${join(server.dataDir, 'pki', 'ca.crt')}"}}]
users: [{name: u, user: {token: ${token}}}]
contexts: [{name: c, context: {cluster: kite, user: u}}]
current-context: c
`,
      );
      as[user] = { kubeconfig };
    }
    kubectlOk(server, ['create', 'namespace', 'ns1']);
  });

  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  it('a user without bindings is refused with upstream\'s message', () => {
    const r = kubectl(as.alice!, ['get', 'pods', '-n', 'ns1']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(Forbidden\): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "ns1"/);
  });

  it('view lets a user list but not create', async () => {
    kubectlOk(server, ['create', 'rolebinding', 'r', '--clusterrole=view', '--user=alice', '-n', 'ns1']);
    await eventually(() => (kubectl(as.alice!, ['get', 'pods', '-n', 'ns1']).code === 0 ? true : undefined), 'alice may list pods');
    const r = kubectl(as.alice!, ['create', 'configmap', 'x', '-n', 'ns1']);
    assert.match(r.stderr, /configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "ns1"/);
    assert.equal(kubectl(as.alice!, ['get', 'pods', '-n', 'default']).code, 1);
  });

  it('view is aggregated from system:aggregate-to-view', async () => {
    const rules = await eventually(() => {
      const out = kubectlOk(server, ['get', 'clusterrole', 'view', '-o', 'jsonpath={.rules[*].resources}']);
      return out.includes('pods/log') ? out : undefined;
    }, 'view aggregated');
    assert.match(rules, /"deployments"/);
    assert.match(kubectlOk(server, ['get', 'clusterrole', 'view', '-o', 'yaml']), /aggregationRule:\n {2}clusterRoleSelectors:\n {2}- matchLabels:\n {6}rbac.authorization.k8s.io\/aggregate-to-view: "true"/);
  });

  it('a user with edit cannot bind admin: escalation is refused', async () => {
    kubectlOk(server, ['create', 'rolebinding', 'e', '--clusterrole=edit', '--user=bob', '-n', 'ns1']);
    kubectlOk(server, ['create', 'role', 'binder', '--verb=create', '--resource=rolebindings.rbac.authorization.k8s.io', '-n', 'ns1']);
    kubectlOk(server, ['create', 'rolebinding', 'b', '--role=binder', '--user=bob', '-n', 'ns1']);
    await eventually(() => (kubectl(as.bob!, ['create', 'configmap', 'ok', '-n', 'ns1']).code === 0 ? true : undefined), 'bob may edit');
    const r = kubectl(as.bob!, ['create', 'rolebinding', 'x', '--clusterrole=admin', '--user=bob', '-n', 'ns1']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "bob" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/,
    );
    assert.match(r.stderr, /\{APIGroups:\["authorization.k8s.io"\], Resources:\["localsubjectaccessreviews"\], Verbs:\["create"\]\}/);
    // Binding what bob holds is fine.
    kubectlOk(as.bob!, ['create', 'rolebinding', 'y', '--clusterrole=view', '--user=carol', '-n', 'ns1']);
  });

  it('roles and bindings are created and printed as upstream', () => {
    kubectlOk(server, ['create', 'clusterrole', 'pod-reader', '--verb=get,list', '--resource=pods']);
    kubectlOk(server, ['create', 'clusterrolebinding', 'pod-readers', '--clusterrole=pod-reader', '--group=readers']);
    assert.match(kubectlOk(server, ['get', 'clusterrole', 'pod-reader']), /^NAME\s+CREATED AT\npod-reader\s+\d{4}-\d\d-\d\dT/);
    assert.match(kubectlOk(server, ['get', 'clusterrolebinding', 'pod-readers', '-o', 'wide']), /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS\npod-readers\s+ClusterRole\/pod-reader\s+\S+\s+readers/);
    assert.match(kubectlOk(server, ['get', 'role', 'binder', '-n', 'ns1']), /^NAME\s+CREATED AT\nbinder\s+/);
    const r = kubectl(server, ['create', 'role', 'bad', '--verb=get', '--non-resource-url=/x', '-n', 'ns1']);
    assert.notEqual(r.code, 0);
  });

  it('a kubelet reads only the secrets of pods bound to its node', async () => {
    kubectlOk(server, ['create', 'secret', 'generic', 's', '--from-literal=k=v', '-n', 'ns1']);
    kubectlOk(
      server,
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns1}
spec:
  nodeName: n1
  containers: [{name: c, image: busybox}]
  volumes: [{name: s, secret: {secretName: s}}]
`,
    );
    await eventually(() => (kubectl(as['system:node:n1']!, ['get', 'secret', 's', '-n', 'ns1']).code === 0 ? true : undefined), 'n1 reads its pod\'s secret');
    const r = kubectl(as['system:node:n2']!, ['get', 'secret', 's', '-n', 'ns1']);
    assert.match(r.stderr, /secrets "s" is forbidden: User "system:node:n2" cannot get resource "secrets" in API group "" in the namespace "ns1": no relationship found between node 'n2' and this object/);
    const nodes = kubectl(as['system:node:n2']!, ['get', 'node', 'n1']);
    assert.match(nodes.stderr, /node 'n2' cannot read 'n1', only its own Node object/);
  });
});
