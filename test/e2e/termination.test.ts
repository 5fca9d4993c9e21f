// How a pod dies on a real node, driven by the real kubectl: graceful deletion with SIGTERM and
// SIGKILL at the end of the grace period, preStop before the stop signal, forced deletion, and
// activeDeadlineSeconds. The cluster has its own bridge, subnet and cgroup root.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { summarizePod } from '../../src/api/pod/status.js';
import { CriRuntime } from '../../src/kubelet/runtime/cri/client.js';
import { POD_NAME_LABEL } from '../../src/kubelet/kuberuntime/labels.js';
import { eventually, kubectl, kubectlOk, removeDir, tempDir } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, watchPods, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

function pod(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
}

/** Records the last status each pod had before it was deleted, and when the deletion was seen. */
class LastWords {
  readonly last = new Map<string, Pod>();
  readonly deletedAt = new Map<string, number>();
  private readonly watch: { stop(): void };

  constructor(cluster: Pick<KiteCluster, 'kubeconfig'>) {
    this.watch = watchPods(cluster, (type, p) => {
      const name = p.metadata?.name ?? '';
      if (type === 'DELETED') this.deletedAt.set(name, Date.now());
      else if (type === 'ADDED' || type === 'MODIFIED') this.last.set(name, p);
    });
  }

  stop(): void {
    this.watch.stop();
  }
}

describe('pod termination on containerd', { skip, timeout: 300_000 }, () => {
  let cluster: KiteCluster;
  let words: LastWords;
  let hostDir: string;

  const getPod = (name: string): Pod => JSON.parse(kubectlOk(cluster, ['get', 'pod', name, '-o', 'json'])) as Pod;
  const waitRunning = (name: string) => eventually(() => (summarizePod(getPod(name)).reason === 'Running' ? true : undefined), `${name} Running`, 60_000);
  const runtimeContainers = async (name: string) => {
    const cri = new CriRuntime({ endpoint: join(cluster.dataDir, 'node', 'containerd', 'containerd.sock') });
    try {
      return await cri.listContainers({ label_selector: { [POD_NAME_LABEL]: name } });
    } finally {
      cri.close();
    }
  };

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-term', '--pod-cidr', '10.217.243.0/24', '--cgroup-root', '/kite-term'] });
    words = new LastWords(cluster);
    hostDir = tempDir('termination');
  });

  after(async () => {
    words?.stop();
    if (!cluster) return;
    await stopAndReset(cluster);
    removeDir(hostDir);
  });

  it('waits out the grace period for a process that ignores SIGTERM, then kills it', async () => {
    // sleep as PID 1 has no TERM handler, so only SIGKILL ends it.
    kubectlOk(cluster, ['apply', '-f', '-'], pod('stubborn', { terminationGracePeriodSeconds: 3, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] }));
    await waitRunning('stubborn');
    kubectlOk(cluster, ['delete', 'pod', 'stubborn', '--wait=false']);
    // Terminating while the grace period runs.
    assert.match(kubectlOk(cluster, ['get', 'pod', 'stubborn', '--no-headers']), /Terminating/);
    await eventually(() => (words.deletedAt.has('stubborn') ? true : undefined), 'stubborn deleted', 60_000);
    const last = words.last.get('stubborn')!;
    const terminated = last.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(terminated?.exitCode, 137, JSON.stringify(last.status));
    assert.equal(terminated?.reason, 'Error');
    // deletionTimestamp is when the grace period ends (request time + 3 s): the kill came then, not
    // before (both have second resolution).
    const graceEnds = Date.parse(last.metadata!.deletionTimestamp!);
    assert.ok(Date.parse(terminated!.finishedAt!) >= graceEnds - 1_000, `finished ${terminated!.finishedAt}, grace ends ${last.metadata!.deletionTimestamp}`);
    assert.ok(Date.parse(terminated!.finishedAt!) - Date.parse(terminated!.startedAt!) >= 2_000, 'it ran into the grace period');
    assert.deepEqual(await runtimeContainers('stubborn'), []);
  });

  it('cuts a running grace period short when a shorter one arrives (kubectl delete --grace-period=1)', async () => {
    kubectlOk(cluster, ['apply', '-f', '-'], pod('impatient', { terminationGracePeriodSeconds: 30, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] }));
    await waitRunning('impatient');
    kubectlOk(cluster, ['delete', 'pod', 'impatient', '--wait=false']);
    const firstDeadline = Date.parse(getPod('impatient').metadata!.deletionTimestamp!);
    await eventually(() => (words.last.get('impatient')?.metadata?.deletionTimestamp ? true : undefined), 'the kubelet saw the first deletion');
    assert.equal(kubectlOk(cluster, ['delete', 'pod', 'impatient', '--grace-period=1']).trim(), 'pod "impatient" deleted');
    await eventually(() => (words.deletedAt.has('impatient') ? true : undefined), 'impatient deleted', 15_000);
    const terminated = words.last.get('impatient')!.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(terminated?.exitCode, 137);
    // Killed with the shorter grace period (upstream's 2 s minimum at the node), long before the first one ran out.
    assert.ok(Date.parse(terminated!.finishedAt!) < firstDeadline - 15_000, `finished ${terminated!.finishedAt}, first grace period ends ${new Date(firstDeadline).toISOString()}`);
  });

  it('lets a process that exits on SIGTERM go at once, after its preStop hook', async () => {
    kubectlOk(
      cluster,
      ['apply', '-f', '-'],
      pod('polite', {
        terminationGracePeriodSeconds: 30,
        volumes: [{ name: 'out', hostPath: { path: hostDir, type: 'Directory' } }],
        containers: [
          {
            name: 'app',
            image: 'busybox:1.35',
            command: ['sh', '-c', "trap 'echo term >> /out/log; exit 0' TERM; echo started >> /out/log; while true; do sleep 0.2; done"],
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /out/log'] } } },
            volumeMounts: [{ name: 'out', mountPath: '/out' }],
          },
        ],
      }),
    );
    await waitRunning('polite');
    await eventually(() => (readFileSync(join(hostDir, 'log'), 'utf8').includes('started') ? true : undefined), 'the app started');
    kubectlOk(cluster, ['delete', 'pod', 'polite', '--wait=false']);
    await eventually(() => (words.deletedAt.has('polite') ? true : undefined), 'polite deleted', 25_000);
    const terminated = words.last.get('polite')!.status?.containerStatuses?.[0]?.state?.terminated;
    assert.equal(terminated?.exitCode, 0);
    assert.equal(terminated?.reason, 'Completed');
    assert.equal(readFileSync(join(hostDir, 'log'), 'utf8'), 'started\nprestop\nterm\n');
  });

  it('removes a force-deleted pod at once and still cleans up its containers', async () => {
    kubectlOk(cluster, ['apply', '-f', '-'], pod('forced', { containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] }));
    await waitRunning('forced');
    const r = kubectl(cluster, ['delete', 'pod', 'forced', '--grace-period=0', '--force']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Immediate deletion does not wait for confirmation that the running resource has been terminated/);
    assert.equal(kubectl(cluster, ['get', 'pod', 'forced']).code, 1);
    await eventually(async () => ((await runtimeContainers('forced')).length === 0 ? true : undefined), 'the containers removed', 30_000);
  });

  it('fails a pod that outlives activeDeadlineSeconds with DeadlineExceeded', async () => {
    kubectlOk(cluster, ['apply', '-f', '-'], pod('deadline', { activeDeadlineSeconds: 3, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sleep', '3600'] }] }));
    const p = await eventually(() => {
      const got = getPod('deadline');
      return got.status?.phase === 'Failed' ? got : undefined;
    }, 'deadline Failed', 60_000);
    assert.equal(p.status?.reason, 'DeadlineExceeded');
    assert.equal(p.status?.message, 'Pod was active on the node longer than the specified deadline');
    // Its container is then stopped; kubectl's STATUS then shows the container's reason, as upstream's printer does.
    await eventually(() => (/^deadline\s+0\/1\s+Error\s/.test(kubectlOk(cluster, ['get', 'pod', 'deadline', '--no-headers'])) ? true : undefined), 'READY 0/1', 30_000);
    assert.equal(getPod('deadline').status?.reason, 'DeadlineExceeded');
    const events = kubectlOk(cluster, ['get', 'events', '--field-selector', 'involvedObject.name=deadline', '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}']);
    assert.match(events, /DeadlineExceeded/);
  });
});
