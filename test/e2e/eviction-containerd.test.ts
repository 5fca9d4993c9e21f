// Node-pressure eviction on real containerd (`kite up` on bridge kite-evict, 10.217.236.0/24, cgroup
// root /kite-evict). Pressure is forced deterministically, whatever else runs on the machine:
// - memory: allocatableMemory.available is set so the pods' cgroup may hold 160Mi; busybox pods fill
//   memory-backed emptyDirs (a BestEffort 200Mi, a Burstable 50Mi then 170Mi, a Guaranteed 30Mi);
// - disk: the data dir is a 3Gi ext4 loop filesystem of its own and nodefs.available sits 400Mi under
//   what it had free at the start; a pod fallocates 600Mi in a disk emptyDir.
// The BestEffort pod goes first, then the Burstable one, the Guaranteed one stays; each evicted pod
// is Failed/Evicted with upstream's message; the node shows the pressure and it clears after the
// 20 s transition period configured.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Node, Pod } from '../../src/api/types.js';
import { eventually, kubectl, kubectlOk, tempDir } from './harness.js';
import { canRunContainers, resetCluster, startCluster, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

const Mi = 1024 * 1024;
const POD_BUDGET = 160 * Mi;
const DISK_MARGIN = 400 * Mi;

function hog(name: string, opts: { fillMi: number; resources?: string; disk?: boolean }): string {
  const fill = opts.disk ? `fallocate -l ${opts.fillMi}M /data/fill` : `dd if=/dev/zero of=/data/fill bs=1M count=${opts.fillMi}`;
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 30
  containers:
  - name: hog
    image: busybox:1.35
    command: ['sh', '-c', '${fill} && echo filled && sleep 3600']
${opts.resources ?? ''}    volumeMounts:
    - {name: data, mountPath: /data}
  volumes:
  - name: data
    emptyDir: {${opts.disk ? '' : 'medium: Memory'}}
`;
}

const guaranteed = `    resources:
      requests: {cpu: 50m, memory: 100Mi}
      limits: {cpu: 50m, memory: 100Mi}
`;
const burstable = `    resources:
      requests: {memory: 20Mi}
`;

describe('node-pressure eviction on kite up (containerd)', { skip }, () => {
  let cluster: KiteCluster | undefined;
  const work = tempDir('eviction');
  const image = join(work, 'nodefs.img');
  const mnt = join(work, 'nodefs');
  let mounted = false;
  const k = (args: string[], input?: string) => kubectlOk(cluster!, args, input);
  const pod = (name: string) => JSON.parse(k(['get', 'pod', name, '-o', 'json'])) as Pod;
  const condition = (type: string) => (JSON.parse(k(['get', 'node', cluster!.nodeName, '-o', 'json'])) as Node).status?.conditions?.find((c) => c.type === type);
  const evicted = (name: string) => eventually(() => (pod(name).status?.reason === 'Evicted' ? pod(name) : undefined), `${name} evicted`, 60_000);
  const filled = (name: string) => eventually(() => (kubectl(cluster!, ['logs', name]).stdout.includes('filled') ? true : undefined), `${name} filled`, 60_000);

  before(async () => {
    execFileSync('truncate', ['-s', '3G', image]);
    execFileSync('mkfs.ext4', ['-q', '-F', image]);
    mkdirSync(mnt);
    execFileSync('mount', ['-o', 'loop', image, mnt]);
    mounted = true;
    const fs = statfsSync(mnt);
    const free = fs.bavail * fs.bsize;
    const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;
    // Allocatable is MemTotal less the hard memory.available (1Mi): the pods may use POD_BUDGET of it.
    const config = join(work, 'kubelet.yaml');
    writeFileSync(
      config,
      `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard:
  memory.available: 1Mi
  allocatableMemory.available: "${memTotal - Mi - POD_BUDGET}"
  nodefs.available: "${free - DISK_MARGIN}"
evictionPressureTransitionPeriod: 20s
`,
    );
    cluster = await startCluster({ dataDir: join(mnt, 'data'), extraArgs: ['--bridge', 'kite-evict', '--pod-cidr', '10.217.236.0/24', '--cgroup-root', '/kite-evict', '--config', config] });
  });

  /** Mounts at or below dir, deepest first. */
  const mountsUnder = (dir: string) =>
    readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((m) => m.startsWith(`${dir}/`))
      .sort()
      .reverse();

  after(async () => {
    try {
      if (cluster) {
        await cluster.stop();
        resetCluster(cluster.dataDir);
      }
    } finally {
      for (const m of mountsUnder(mnt)) execFileSync('umount', [m]);
      if (mounted) execFileSync('umount', [mnt]);
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('memory pressure: BestEffort evicted first, then Burstable; Guaranteed stays; BestEffort refused meanwhile; the condition clears', async () => {
    k(['apply', '-f', '-'], hog('guaranteed', { fillMi: 30, resources: guaranteed }));
    k(['apply', '-f', '-'], hog('burstable', { fillMi: 50, resources: burstable }));
    await filled('guaranteed');
    await filled('burstable');
    // 80Mi and the containers themselves: under the 160Mi budget, no pressure yet.
    assert.equal(condition('MemoryPressure')?.status, 'False');

    k(['apply', '-f', '-'], hog('besteffort', { fillMi: 200 }));
    const be = await evicted('besteffort');
    assert.equal(be.status?.phase, 'Failed');
    assert.match(
      be.status?.message ?? '',
      /^The node was low on resource: memory\. Threshold quantity: \d+, available: \S+\. Container hog was using \S+, request is 0, has larger consumption of memory\. $/,
    );
    const disruption = be.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    assert.deepEqual([disruption?.status, disruption?.reason, disruption?.message], ['True', 'TerminationByKubelet', be.status?.message]);
    // STATUS is Evicted until the container has stopped; then, as upstream's printer, the terminated
    // container's reason (Error: killed) wins over the pod's. The pod's reason stays Evicted.
    assert.match(k(['get', 'pod', 'besteffort']), /besteffort\s+\d\/1\s+(Evicted|Error)\s/);
    await eventually(() => (/besteffort\s+0\/1\s/.test(k(['get', 'pod', 'besteffort'])) ? true : undefined), 'besteffort stopped', 30_000);
    assert.equal(k(['get', 'pod', 'besteffort', '-o', 'custom-columns=REASON:.status.reason', '--no-headers']).trim(), 'Evicted');
    const events = k(['get', 'events', '--field-selector', 'involvedObject.name=besteffort', '-o', 'custom-columns=TYPE:.type,REASON:.reason', '--no-headers']);
    assert.match(events, /Warning\s+Evicted/);

    // Under MemoryPressure a new BestEffort pod is refused by the kubelet's admission.
    k(['apply', '-f', '-'], hog('refused', { fillMi: 1 }));
    const refused = await eventually(() => (pod('refused').status?.phase === 'Failed' ? pod('refused') : undefined), 'refused rejected', 30_000);
    assert.deepEqual([refused.status?.reason, refused.status?.message], ['Evicted', 'Pod was rejected: The node had condition: [MemoryPressure]. ']);
    await eventually(() => (condition('MemoryPressure')?.status === 'True' ? true : undefined), 'MemoryPressure in the node status', 30_000);
    assert.match(k(['describe', 'node', cluster!.nodeName]), /MemoryPressure\s+True\s.*KubeletHasInsufficientMemory\s+kubelet has insufficient memory available/);
    assert.equal(pod('burstable').status?.phase, 'Running');
    assert.equal(pod('guaranteed').status?.phase, 'Running');

    // The Burstable pod grows to 170Mi: it goes next; the Guaranteed one, under its request, stays.
    kubectlOk(cluster!, ['exec', 'burstable', '--', 'dd', 'if=/dev/zero', 'of=/data/more', 'bs=1M', 'count=120']);
    const b = await evicted('burstable');
    assert.match(b.status?.message ?? '', /^The node was low on resource: memory\. .* Container hog was using \S+, request is 20Mi, has larger consumption of memory\. $/);
    await eventually(() => (condition('MemoryPressure')?.status === 'False' ? true : undefined), 'MemoryPressure cleared', 60_000);
    assert.match(k(['describe', 'node', cluster!.nodeName]), /MemoryPressure\s+False\s.*KubeletHasSufficientMemory\s+kubelet has sufficient memory available/);
    const g = pod('guaranteed');
    assert.deepEqual([g.status?.phase, g.status?.reason], ['Running', undefined]);
    k(['delete', 'pod', 'besteffort', 'burstable', 'refused', '--wait=false']);
  });

  it('disk pressure: the pod filling nodefs is evicted, DiskPressure shows and clears', async () => {
    k(['apply', '-f', '-'], hog('disk', { fillMi: 600, disk: true }));
    const d = await evicted('disk');
    assert.match(d.status?.message ?? '', /^The node was low on resource: ephemeral-storage\. Threshold quantity: \S+, available: \S+\. /);
    await eventually(() => (condition('DiskPressure')?.status === 'True' ? true : undefined), 'DiskPressure in the node status', 30_000);
    assert.match(k(['describe', 'node', cluster!.nodeName]), /DiskPressure\s+True\s.*KubeletHasDiskPressure\s+kubelet has disk pressure/);
    await eventually(() => (condition('DiskPressure')?.status === 'False' ? true : undefined), 'DiskPressure cleared', 60_000);
    assert.equal(pod('guaranteed').status?.phase, 'Running');
    k(['delete', 'pod', 'guaranteed', 'disk']);
  });
});
