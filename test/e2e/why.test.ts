// `kite why` and `kite timeline` (the built binary, as a user runs them) against `kite server` + `kite
// sim`: the sentence for a pod that fits nowhere (cpu, a taint, a nodeSelector), one held by a
// scheduling gate, one stuck Terminating on a finalizer, and one Terminating on a node whose kubelet
// went silent (the sim's heartbeat annotation); the waterfall and `-o json` of one of them, the
// kubectl plugin, and one-line errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { eventuallyMatches, kiteBin, kubectlOk, repoRoot, simCluster } from './harness.js';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

describe('kite why / kite timeline (kite server + kite sim)', () => {
  // Nodes go Unknown 20 s after their heartbeats stop (the sim renews Leases every 10 s).
  const cluster = simCluster(3, { extraArgs: ['--node-monitor-grace-period', '20s'] });
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const env = () => ({ ...process.env, KUBECONFIG: cluster.server.kubeconfig, PATH: `${join(repoRoot, 'bin')}:${process.env.PATH ?? ''}` });
  const kite = (args: string[]): Run => {
    const r = spawnSync(process.execPath, [kiteBin, ...args], { env: env(), encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const why = (pod: string) => kite(['why', pod]).stdout.trim();
  /** Polls kite why until its line matches; a timeout names the last line seen. */
  const until = (pod: string, re: RegExp, timeoutMs = 30_000) => eventuallyMatches(() => why(pod), re, `kite why ${pod}`, timeoutMs);

  it('unschedulable: insufficient cpu (needs, largest free) and an untolerated taint', async () => {
    k(['taint', 'node', 'sim-2', 'dedicated=gpu:NoSchedule']);
    k(['run', 'big', '--image=busybox:1.35', '--overrides={"spec":{"containers":[{"name":"big","image":"busybox:1.35","resources":{"requests":{"cpu":"40"}}}]}}']);
    const line = await until('big', /^Pending: 0\/3 nodes fit/);
    assert.match(line, /^Pending: 0\/3 nodes fit — 2 Insufficient cpu \(needs 40, largest free 32 on sim-[01]\), 1 untolerated taint dedicated=gpu; retrying on cluster changes \(last attempt \d+s ago\)$/);
  });

  it('unschedulable: a nodeSelector no node matches', async () => {
    k(['run', 'sel', '--image=busybox:1.35', '--overrides={"spec":{"nodeSelector":{"disktype":"ssd"}}}']);
    const line = await until('sel', /^Pending: 0\/3/);
    assert.match(line, /^Pending: 0\/3 nodes fit — 2 don't match its nodeSelector disktype=ssd, 1 untolerated taint dedicated=gpu; retrying on cluster changes/);
  });

  it('gated: names the gates; the kubectl plugin says the same with -n', async () => {
    k(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'gated' }, spec: { schedulingGates: [{ name: 'example.com/quota' }], containers: [{ name: 'c', image: 'busybox:1.35' }] } }));
    const expected = 'SchedulingGated: waiting for scheduling gates example.com/quota to be removed; the scheduler does not try before';
    assert.equal(await until('gated', /^SchedulingGated/), expected);
    const plugin = spawnSync('kubectl', ['why', 'gated', '-n', 'default'], { env: env(), encoding: 'utf8', timeout: 30_000 });
    assert.equal(plugin.status, 0, plugin.stderr);
    assert.equal(plugin.stdout.trim(), expected);
  });

  it('stuck Terminating: a finalizer nobody removes', async () => {
    k(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'fin', finalizers: ['example.com/x'] }, spec: { nodeName: 'sim-0', terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'busybox:1.35' }] } }));
    await until('fin', /^Running: all containers ready/);
    k(['delete', 'pod', 'fin', '--wait=false']);
    assert.equal(await until('fin', /finalizer/), 'Terminating: finalizer example.com/x, owned by no running controller; the pod stays until someone removes it from metadata.finalizers');
    k(['patch', 'pod', 'fin', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  });

  it('Terminating on a node whose kubelet went silent: names the node, since when, and the Lease age', async () => {
    k(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'lost' }, spec: { nodeName: 'sim-1', containers: [{ name: 'c', image: 'busybox:1.35' }] } }));
    await until('lost', /^Running: all containers ready/);
    k(['annotate', 'node', 'sim-1', 'sim.kite.dev/heartbeat=stopped']);
    k(['delete', 'pod', 'lost', '--wait=false']);
    const line = await until('lost', /unreachable/, 90_000);
    assert.match(line, /^Terminating for \d+s: kubelet on sim-1 is unreachable since \d\d:\d\d:\d\d \(Lease \d+s old\); the pod goes when the node returns or is deleted$/);
  });

  it('kite timeline: the why line on top and the waterfall; -o json parses; a deleted pod timeline; errors are one line and exit 1', () => {
    const text = kite(['timeline', 'big', '--namespace=default']);
    assert.equal(text.status, 0, text.stderr);
    const lines = text.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^Pending: 0\/3 nodes fit/);
    // The timeline's steps (when the server's components record them), else a note that none are yet.
    assert.ok(/^OFFSET\s+LANE\s+STEP/.test(lines[1]!) || lines[1] === '(no timeline steps recorded yet)', lines[1]);
    const json = kite(['timeline', 'big', '-o', 'json']);
    if (json.status === 0) {
      const tl = JSON.parse(json.stdout) as { kind: string; pod: { name: string } };
      assert.deepEqual([tl.kind, tl.pod.name], ['PodTimeline', 'big']);
    } else {
      assert.match(json.stderr, /^error: no timeline for pod "big" in namespace "default"/);
    }
    const whyJson = JSON.parse(kite(['why', 'gated', '-o', 'json']).stdout) as { status: string; reason: string; next: string };
    assert.deepEqual(whyJson, { ...whyJson, status: 'SchedulingGated', reason: 'SchedulingGated' });

    // A deleted pod: its timeline, kept, is found by name.
    k(['delete', 'pod', 'gated', '--wait=true']);
    const gone = kite(['timeline', 'gated']);
    assert.equal(gone.status, 0, gone.stderr);
    assert.match(gone.stdout, /^Deleted: the pod was deleted at \d\d:\d\d:\d\d \(\d+s ago\); only its timeline is left\n/);
    assert.match(gone.stdout, /\n\+\S+\s+API\s+RequestReceived\s/);
    const goneJson = JSON.parse(kite(['timeline', 'gated', '-o', 'json']).stdout) as { pod: { name: string }; deletedAt?: string };
    assert.equal(goneJson.pod.name, 'gated');
    assert.ok(goneJson.deletedAt, 'deletedAt is set');

    const missing = kite(['why', 'nope']);
    assert.deepEqual([missing.status, missing.stderr], [1, 'error: pods "nope" not found\n']);
    // A name is one path segment: "../.." reaches nothing else.
    const traversal = kite(['why', '../..']);
    assert.deepEqual([traversal.status, traversal.stderr.split('\n').length], [1, 2]);
    const badNs = kite(['timeline', 'big', '-n', 'elsewhere']);
    assert.deepEqual([badNs.status, badNs.stderr], [1, 'error: pods "big" not found\n']);
    const badOutput = kite(['why', 'big', '-o', 'wide']);
    assert.equal(badOutput.status, 1);
    assert.equal(badOutput.stderr.trim().split('\n').length, 1);
  });
});
