// Joining a node to a real `kite server`: the join token from the data directory, token discovery of
// the CA from cluster-info, client and serving certificates through CertificateSigningRequests that
// the controller manager approves and signs, then the Node and its Lease written with the new
// identity, checked with the real kubectl. Bootstrap-token users are held to CSRs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../../src/client/client.js';
import { RestClient } from '../../src/client/rest.js';
import { isStatusError } from '../../src/api/errors.js';
import { realClock } from '../../src/util/clock.js';
import { bootstrapKubeletCredentials, type KubeletCredentials } from '../../src/kubelet/bootstrap/bootstrap.js';
import { defaultKubeletConfig } from '../../src/kubelet/config.js';
import { FakeRecorder } from '../../src/client/record/recorder.js';
import { readMachineInfo } from '../../src/kubelet/node/machine.js';
import { NodeStatusManager, nodeClient } from '../../src/kubelet/node/status.js';
import { NodeLeaseController, leaseClient } from '../../src/kubelet/node/lease.js';
import { FakeNodeRuntime } from '../../src/kubelet/node/testing.js';
import { eventually, kubectl, kubectlOk, removeDir, startServer, tempDir, type KiteServer } from './harness.js';

const NODE = 'join-0';

describe('joining a node with the join token', () => {
  let server: KiteServer;
  let agentDir: string;
  let token: string;
  let creds: KubeletCredentials;

  before(async () => {
    server = await startServer();
    agentDir = tempDir('agent');
    token = readFileSync(join(server.dataDir, 'join-token'), 'utf8').trim();
  });

  after(async () => {
    await server?.stop();
    removeDir(server.dataDir);
    removeDir(agentDir);
  });

  it('stores the join token as a bootstrap token Secret and signs cluster-info with it', () => {
    assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.equal(statSync(join(server.dataDir, 'join-token')).mode & 0o777, 0o600);
    const id = token.split('.')[0]!;
    const secret = JSON.parse(kubectlOk(server, ['get', 'secret', '-n', 'kube-system', `bootstrap-token-${id}`, '-o', 'json'])) as { type: string; data: Record<string, string> };
    assert.equal(secret.type, 'bootstrap.kubernetes.io/token');
    assert.equal(Buffer.from(secret.data['auth-extra-groups']!, 'base64').toString(), 'system:bootstrappers:kubeadm:default-node-token');
    const cm = JSON.parse(kubectlOk(server, ['get', 'configmap', '-n', 'kube-public', 'cluster-info', '-o', 'json'])) as { data: Record<string, string> };
    assert.ok(cm.data.kubeconfig);
    assert.match(cm.data[`jws-kubeconfig-${id}`]!, /^[\w-]+\.\.[\w-]+$/);
  });

  it('obtains client and serving certificates through approved CSRs, trusting the CA found by token discovery', async () => {
    creds = await bootstrapKubeletCredentials({ server: server.url, token, dataDir: agentDir, nodeName: NODE, nodeIP: '127.0.0.1', pollIntervalMs: 200, timeoutMs: 30_000 });
    const ca = new X509Certificate(readFileSync(join(server.dataDir, 'pki', 'ca.crt')));
    assert.equal(creds.caPem.trim(), ca.toString().trim());
    const client = new X509Certificate(creds.client.certPem);
    assert.equal(client.subject, `CN=system:node:${NODE}\nO=system:nodes`);
    assert.ok(client.verify(ca.publicKey));
    const serving = new X509Certificate(creds.serving.certPem);
    assert.ok(serving.checkIP('127.0.0.1'));
    assert.ok(serving.checkHost(NODE));
    assert.equal(statSync(creds.client.keyFile).mode & 0o777, 0o600);
    assert.equal(statSync(creds.kubeconfigPath).mode & 0o777, 0o600);

    const out = kubectlOk(server, ['get', 'csr']);
    const [header, ...rows] = out.trim().split('\n');
    assert.deepEqual(header!.split(/\s+/), ['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    assert.equal(rows.length, 2);
    const cells = rows.map((r) => r.split(/\s+/));
    const bySigner = Object.fromEntries(cells.map((c) => [c[2], c]));
    assert.match(bySigner['kubernetes.io/kube-apiserver-client-kubelet']![3]!, /^system:bootstrap:[a-z0-9]{6}$/);
    assert.equal(bySigner['kubernetes.io/kubelet-serving']![3], `system:node:${NODE}`);
    for (const c of cells) {
      assert.equal(c[4], '<none>');
      assert.equal(c[5], 'Approved,Issued');
    }
  });

  it('reuses certificates still far from expiry', async () => {
    const again = await bootstrapKubeletCredentials({ server: server.url, caPem: creds.caPem, dataDir: agentDir, nodeName: NODE, nodeIP: '127.0.0.1' });
    assert.equal(again.client.certPem, creds.client.certPem);
    assert.equal(again.serving.certPem, creds.serving.certPem);
    assert.equal(kubectlOk(server, ['get', 'csr', '-o', 'name']).trim().split('\n').length, 2);
  });

  it('registers a Ready node and renews its lease with the node credentials', async () => {
    const client = await Client.fromKubeconfig(creds.kubeconfigPath);
    const cfg = defaultKubeletConfig({ nodeName: NODE, rootDir: agentDir, nodeIP: '127.0.0.1' });
    const status = new NodeStatusManager({
      client: nodeClient(client),
      runtime: new FakeNodeRuntime(),
      cfg,
      clock: realClock,
      recorder: new FakeRecorder(),
      machine: () => readMachineInfo(agentDir),
    });
    status.start();
    const uid = (await status.whenRegistered()).metadata?.uid;
    const lease = new NodeLeaseController({ client: leaseClient(client), nodeName: NODE, leaseDurationSeconds: cfg.nodeLeaseDurationSeconds, clock: realClock, nodeUID: () => uid });
    lease.start();
    try {
      const row = await eventually(() => {
        const line = kubectlOk(server, ['get', 'nodes', NODE, '--no-headers']).trim();
        return line.split(/\s+/)[1] === 'Ready' ? line : undefined;
      }, 'node Ready');
      assert.match(row, /\sv1\.33\.0\+kite/);
      const leaseRow = await eventually(() => kubectl(server, ['get', 'lease', '-n', 'kube-node-lease', NODE, '--no-headers']).stdout.trim() || undefined, 'node lease');
      assert.equal(leaseRow.split(/\s+/)[1], NODE);
      const owner = JSON.parse(kubectlOk(server, ['get', 'lease', '-n', 'kube-node-lease', NODE, '-o', 'jsonpath={.metadata.ownerReferences}'])) as { kind: string; uid: string }[];
      assert.deepEqual([owner[0]!.kind, owner[0]!.uid], ['Node', uid]);
    } finally {
      await lease.stop();
      await status.stop();
      client.close();
    }
  });

  it('answers a wrong token with 401 and keeps a bootstrap user to CSRs (403)', async () => {
    const ca = creds.caPem;
    const [id] = token.split('.');
    const wrong = new Client(new RestClient({ server: server.url, ca, token: `${id}.0000000000000000` }));
    const right = new Client(new RestClient({ server: server.url, ca, token }));
    try {
      await assert.rejects(wrong.resource('certificates.k8s.io', 'v1', 'certificatesigningrequests').list(), (err) => isStatusError(err) && err.code === 401);
      await assert.rejects(right.resource('', 'v1', 'pods').namespace('default').list(), (err) => isStatusError(err) && err.code === 403 && /User "system:bootstrap:[a-z0-9]{6}" cannot list resource "pods"/.test(err.message));
      const csrs = await right.resource('certificates.k8s.io', 'v1', 'certificatesigningrequests').list();
      assert.equal(csrs.items.length, 2);
    } finally {
      wrong.close();
      right.close();
    }
  });
});
