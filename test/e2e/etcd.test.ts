// kite server on a real etcd: the same API semantics as on SQLite, through the store path
// (etcd's watch is not synchronous, so consistent lists read from etcd).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startEtcd, type EtcdServer } from '../../src/storage/testing/etcd-server.js';
import { eventually, kubectl, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels:
    app: etcd-test
spec:
  containers:
  - name: c
    image: busybox:1.35
`;

describe('kite server --store etcd://', () => {
  let etcd: EtcdServer;
  let server: KiteServer;
  before(async () => {
    etcd = await startEtcd();
    server = await startServer({ store: `etcd://${etcd.endpoint}` });
  });
  after(async () => {
    await server?.stop();
    await etcd?.stop();
    removeDir(server.dataDir);
  });

  it('creates, lists, watches, patches and deletes pods', async () => {
    const watcher = spawn('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.dataDir, 'kubectl-cache'), 'get', 'pods', '-w', '-l', 'app=etcd-test'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      assert.equal(kubectlOk(server, ['apply', '-f', '-'], pod('one')).trim(), 'pod/one created');
      assert.match(kubectlOk(server, ['get', 'pods']), /^one\s+0\/1\s+Pending\s+0/m);
      assert.equal(kubectlOk(server, ['label', 'pod', 'one', 'x=y']).trim(), 'pod/one labeled');
      await eventually(() => (/^one\s+0\/1\s+Pending/m.test(out) ? true : undefined), 'the watch to show the pod');
      assert.equal(kubectlOk(server, ['delete', 'pod', 'one']).trim(), 'pod "one" deleted');
      assert.equal(kubectl(server, ['get', 'pod', 'one']).code, 1);
    } finally {
      watcher.kill('SIGTERM');
    }
  });

  it('keeps data across a server restart', async () => {
    kubectlOk(server, ['apply', '-f', '-'], pod('kept'));
    await server.stop();
    server = await startServer({ store: `etcd://${etcd.endpoint}`, dataDir: server.dataDir });
    assert.match(kubectlOk(server, ['get', 'pod', 'kept']), /^kept\s/m);
  });
});
