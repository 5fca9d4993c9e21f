// ResourceQuota inside `kite server` (the admission plugin and the quota controller), with the real
// kubectl: `kubectl create quota`, pods refused past the quota with upstream's exact message,
// `kubectl get quota` and `kubectl describe quota` as a cluster prints them, and a deleted pod's slot
// given back. Pods need not run: the server has no nodes.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

describe('ResourceQuota (kite server, kubectl)', () => {
  let server: KiteServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });
  const k = (args: string[], input?: string) => kubectlOk(server, args, input);
  const usedPods = () => k(['get', 'quota', 'q', '-n', 'ns', '-o', 'jsonpath={.status.used.pods}']).trim();

  it('refuses the pod past the quota with upstream message, prints the quota, and frees a deleted pod slot', async () => {
    k(['create', 'namespace', 'ns']);
    assert.equal(k(['create', 'quota', 'q', '--hard=pods=2', '-n', 'ns']).trim(), 'resourcequota/q created');
    // The quota controller fills in status; until then admission cannot count against it.
    await eventually(() => (usedPods() === '0' ? true : undefined), 'the quota controller to report used pods=0');

    k(['run', 'p1', '--image=busybox', '-n', 'ns']);
    k(['run', 'p2', '--image=busybox', '-n', 'ns']);
    const refused = kubectl(server, ['run', 'p3', '--image=busybox', '-n', 'ns']);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stderr.trim(), 'Error from server (Forbidden): pods "p3" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
    assert.equal(usedPods(), '2');

    const table = k(['get', 'quota', '-n', 'ns']).trimEnd().split('\n');
    assert.deepEqual(table[0]!.trim().split(/\s{2,}/), ['NAME', 'AGE', 'REQUEST', 'LIMIT']);
    assert.match(table[1]!, /^q\s+\d+s\s+pods: 2\/2\s*$/);

    assert.equal(
      k(['describe', 'quota', 'q', '-n', 'ns']),
      ['Name:       q', 'Namespace:  ns', 'Resource    Used  Hard', '--------    ----  ----', 'pods        2     2', ''].join('\n'),
    );

    // No kubelet will confirm the deletion: a grace period of 0 removes the pod at once.
    k(['delete', 'pod', 'p1', '-n', 'ns', '--grace-period=0', '--force']);
    await eventually(() => (usedPods() === '1' ? true : undefined), 'the quota controller to give the deleted pod slot back');
    assert.equal(k(['run', 'p3', '--image=busybox', '-n', 'ns']).trim(), 'pod/p3 created');
    assert.equal(usedPods(), '2');
  });

  it('admits exactly as many of many concurrent creates as the quota has room for', async () => {
    k(['create', 'namespace', 'race']);
    k(['create', 'quota', 'q', '--hard=pods=3', '-n', 'race']);
    await eventually(() => (k(['get', 'quota', 'q', '-n', 'race', '-o', 'jsonpath={.status.used.pods}']).trim() === '0' ? true : undefined), 'status.used');
    const run = (name: string) =>
      new Promise<number>((resolve) => {
        const args = ['--kubeconfig', server.kubeconfig, '--cache-dir', join(server.kubeconfig, '..', 'kubectl-cache'), 'run', name, '--image=busybox', '-n', 'race'];
        execFile('kubectl', args, (err) => resolve(err ? 1 : 0));
      });
    const codes = await Promise.all(Array.from({ length: 8 }, (_, i) => run(`r${i}`)));
    assert.equal(codes.filter((c) => c === 0).length, 3);
    assert.equal(k(['get', 'pods', '-n', 'race', '--no-headers']).trim().split('\n').length, 3);
    assert.equal(k(['get', 'quota', 'q', '-n', 'race', '-o', 'jsonpath={.status.used.pods}']).trim(), '3');
  });

  it('refuses a pod without the compute a quota tracks ("failed quota")', async () => {
    k(['create', 'namespace', 'compute']);
    k(['create', 'quota', 'cpu', '--hard=requests.cpu=1,limits.cpu=2', '-n', 'compute']);
    await eventually(() => (k(['get', 'quota', 'cpu', '-n', 'compute', '-o', 'jsonpath={.status.used.requests\\.cpu}']).trim() === '0' ? true : undefined), 'status.used');
    const refused = kubectl(server, ['run', 'c', '--image=busybox', '-n', 'compute']);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.stderr.trim(), 'Error from server (Forbidden): pods "c" is forbidden: failed quota: cpu: must specify limits.cpu for: c; requests.cpu for: c');
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'big' },
      spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1500m' }, limits: { cpu: '2' } } }] },
    };
    const tooBig = kubectl(server, ['create', '-n', 'compute', '-f', '-'], JSON.stringify(pod));
    assert.equal(
      tooBig.stderr.trim(),
      'Error from server (Forbidden): error when creating "STDIN": pods "big" is forbidden: exceeded quota: cpu, requested: requests.cpu=1500m, used: requests.cpu=0, limited: requests.cpu=1',
    );
  });
});
