// The official Python client (Debian's python3-kubernetes, 22.6) against `kite up` on real
// containerd: CRUD, a watch, exec over the v4.channel.k8s.io WebSocket with its exit code, and
// port-forward over the WebSocket port-forward protocol (portforward.k8s.io's channel pairs), as
// non-Go clients and browsers use them. Also: the untagged `busybox` and `nginx` of the common
// examples pull and run. Own bridge, subnet and cgroup root; each Python step is bounded in time.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { kubectlOk, repoRoot } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

/** Debian's interpreter: the one python3-kubernetes is installed for (a PATH python3 may be another). */
const python = '/usr/bin/python3';
const script = join(repoRoot, 'test', 'e2e', 'python-client.py');
const haveClient = spawnSync(python, ['-c', 'import kubernetes'], { timeout: 30_000 }).status === 0;
const skip = !canRunContainers ? 'running containers needs root' : !haveClient ? 'needs python3-kubernetes (scripts/install-deps.sh)' : false;

const run = promisify(execFile);

/** One step of python-client.py: its JSON result, or a failure with the script's stderr. */
async function py<T>(cluster: KiteCluster, step: string, ...args: string[]): Promise<T> {
  try {
    const { stdout } = await run(python, [script, cluster.kubeconfig, step, ...args], { timeout: 150_000, killSignal: 'SIGKILL' });
    return JSON.parse(stdout) as T;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`python step ${step} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

const pod = (name: string, containers: Record<string, unknown>[]) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { terminationGracePeriodSeconds: 1, containers } });

describe('the Python client', { skip }, () => {
  let cluster: KiteCluster;

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-py', '--pod-cidr', '10.217.238.0/24', '--cgroup-root', '/kite-py'] });
    // The common examples' images, untagged: they resolve to the local registry's latest tags.
    kubectlOk(cluster, ['apply', '-f', '-'], pod('shell', [{ name: 'sh', image: 'busybox', command: ['sleep', '3600'] }]));
    kubectlOk(cluster, ['apply', '-f', '-'], pod('web', [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }]));
    kubectlOk(cluster, ['wait', '--for=condition=Ready', 'pod/shell', 'pod/web', '--timeout=120s']);
  });

  after(() => stopAndReset(cluster));

  it('runs the untagged busybox and nginx images (their latest tags)', () => {
    const images = kubectlOk(cluster, ['get', 'pods', 'shell', 'web', '-o', 'jsonpath={range .items[*]}{.spec.containers[0].image} {.spec.containers[0].imagePullPolicy} {.status.containerStatuses[0].image} {.status.phase}{"\\n"}{end}']);
    assert.equal(images, 'busybox Always docker.io/library/busybox:latest Running\nnginx Always docker.io/library/nginx:latest Running\n');
  });

  it('creates, lists and patches pods', async () => {
    const r = await py<{ createdUid: string; listed: string[]; patchedLabels: Record<string, string>; readLabels: Record<string, string> }>(cluster, 'crud', 'py-crud');
    assert.ok(r.createdUid);
    assert.deepEqual(r.listed, ['py-crud']);
    assert.deepEqual(r.patchedLabels, { suite: 'python', patched: 'yes' });
    assert.deepEqual(r.readLabels, r.patchedLabels);
  });

  it('watches a pod being added, modified and deleted', async () => {
    const r = await py<{ types: string[] }>(cluster, 'watch', 'py-watch');
    assert.equal(r.types[0], 'ADDED', r.types.join(','));
    assert.ok(r.types.includes('MODIFIED'), r.types.join(','));
    assert.equal(r.types.at(-1), 'DELETED', r.types.join(','));
  });

  it('execs with stdout, stderr and the exit code from the v4 status', async () => {
    const failed = await py<{ stdout: string; stderr: string; returncode: number }>(cluster, 'exec', 'shell', 'echo out; echo err >&2; exit 3');
    assert.deepEqual(failed, { stdout: 'out\n', stderr: 'err\n', returncode: 3 });
    const ok = await py<{ stdout: string; returncode: number }>(cluster, 'exec', 'shell', 'cat /etc/hostname');
    assert.deepEqual(ok, { stdout: 'shell\n', stderr: '', returncode: 0 });
  });

  it('execs with stdin', async () => {
    assert.deepEqual(await py(cluster, 'exec-stdin', 'shell'), { stdout: 'got: hello\n', returncode: 0 });
  });

  it('port-forwards HTTP to nginx; a port nobody listens on reports on its error channel', async () => {
    type Forwarded = { statusLine: string; body: string; error: string | null };
    const r = await py<Record<string, Forwarded>>(cluster, 'portforward', 'web', '80,81');
    assert.equal(r['80']?.statusLine, 'HTTP/1.1 200 OK');
    assert.match(r['80']?.body ?? '', /Welcome to nginx!/);
    assert.equal(r['80']?.error, null);
    assert.equal(r['81']?.statusLine, '');
    assert.match(r['81']?.error ?? '', /^error forwarding port 81 to pod .*connection refused/);
  });
});
