// `kite why` (the built binary) on real containerd (`kite up` on its own bridge and subnet): an
// image that cannot be pulled, the seeds' web pod waiting in its init container, a container in
// CrashLoopBackOff with its last log line, and one whose readiness probe fails; `kite timeline` of
// the web pod shows the waterfall.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { eventuallyMatches, examplesDir, kiteBin, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

const pod = (name: string, spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { terminationGracePeriodSeconds: 1, ...spec } });

describe('kite why on kite up (containerd)', { skip }, () => {
  let cluster: KiteCluster;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const kite = (args: string[]) => spawnSync(process.execPath, [kiteBin, ...args], { env: { ...process.env, KUBECONFIG: cluster.kubeconfig }, encoding: 'utf8', timeout: 30_000 });
  const why = (name: string) => kite(['why', name]).stdout.trim();
  /** Polls kite why until its line matches; a timeout names the last line seen. */
  const until = (name: string, re: RegExp, timeoutMs = 120_000) => eventuallyMatches(() => why(name), re, `kite why ${name}`, timeoutMs);

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-tlw', '--pod-cidr', '10.217.201.0/24', '--cgroup-root', '/kite-tlw'] });
  });

  after(() => stopAndReset(cluster));

  it('image pull failure: the image, the error and the retry', async () => {
    k(['apply', '-f', '-'], pod('nopull', { containers: [{ name: 'c', image: 'busybox:no-such-tag' }] }));
    const line = await until('nopull', /^(ErrImagePull|ImagePullBackOff):/);
    assert.match(line, /^(ErrImagePull|ImagePullBackOff): image busybox:no-such-tag for container c cannot be pulled \(.+\); kubelet on \S+ retries (in \d+s|now|with back-off \(up to 5m\))$/);
  });

  it("init container waiting: the seeds' web pod before myservice", async () => {
    k(['apply', '-f', join(examplesDir, 'web-pod.yaml')]);
    const line = await until('web', /^Init:0\/1: init container wait-service running for .* — its log says 'waiting'$/);
    assert.match(line, /^Init:0\/1: init container wait-service running for \d+s \(exit codes so far: none\) — its log says 'waiting'$/);
  });

  it('CrashLoopBackOff: the exit code, how often, the next start and the last log line', async () => {
    k(['apply', '-f', '-'], pod('crash', { containers: [{ name: 'c', image: 'busybox:1.35', command: ['sh', '-c', 'echo boom; exit 1'] }] }));
    const line = await until('crash', /^CrashLoopBackOff:/);
    assert.match(line, /^CrashLoopBackOff: container c: exit 1 (once|twice|\w+ times|\d+ times), (next start in \d+s|next start due now), last log line 'boom'$/);
  });

  it('Running, not Ready: the readiness probe, its failures and the error', async () => {
    k(['apply', '-f', '-'], pod('unready', { containers: [{ name: 'c', image: 'busybox:1.35', command: ['sleep', '3600'], readinessProbe: { httpGet: { port: 80, path: '/' }, periodSeconds: 1 } }] }));
    const line = await until('unready', /^Running, not Ready: readiness probe .* failing 3\/3/);
    assert.match(line, /^Running, not Ready: readiness probe GET :80\/ of c failing 3\/3 \(connection refused\) since \d\d:\d\d:\d\d$/);
  });

  it('kite timeline web: the why line on top, then the waterfall or a note', () => {
    const r = kite(['timeline', 'web']);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^Init:0\/1: init container wait-service running/);
    assert.ok(/^OFFSET\s+LANE\s+STEP/.test(lines[1]!) || lines[1] === '(no timeline steps recorded yet)', lines[1]);
  });
});
