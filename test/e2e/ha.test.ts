// HA: several `kite server` processes on one etcd cluster of three members on loopback. Every
// server serves the API (one CA, shared with --pki-dir); the controller manager and the scheduler
// run in leader-elected threads, one of each active. kill -9 of the process holding the
// kube-controller-manager Lease in the middle of a scale-up: another server's thread takes the
// Lease within its duration and the Deployment ends with exactly the desired pods, none made twice
// (every pod ever seen, through a list and watch that survive the failures, is counted). Then one
// etcd member is killed and the API and the controllers keep working on the other two.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { Client } from '../../src/client/client.js';
import { startEtcdCluster, type EtcdCluster } from '../../src/storage/testing/etcd-server.js';
import { eventually, kubectl, kubectlOk, removeDir, spawnKite, startSim, tempDir, type KiteSim, type SpawnedKite } from './harness.js';

// The leader-election log lines name each thread's identity; this process's servers log at info.
process.env.KITE_LOG_LEVEL = 'info';

const workload = { kind: 'Deployment', apiVersion: 'apps/v1', resource: 'deployment' };
const manifest = (replicas: number) => `apiVersion: ${workload.apiVersion}
kind: ${workload.kind}
metadata:
  name: ha
  namespace: default
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: ha
  template:
    metadata:
      labels:
        app: ha
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:1.35
        command: ['sleep', '3600']
`;

interface HaServer {
  name: string;
  dataDir: string;
  kubeconfig: string;
  kite: SpawnedKite<string>;
}

/** Lease holders this server's threads announced ("became leader"), by lease name. */
function identities(s: HaServer): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of s.kite.stderr().split('\n')) {
    if (!line.includes('became leader')) continue;
    try {
      const { lease, identity } = JSON.parse(line) as { lease: string; identity: string };
      if (!out.has(lease)) out.set(lease, new Set());
      out.get(lease)!.add(identity);
    } catch {
      // not a log line of ours
    }
  }
  return out;
}

/** Every pod UID ever seen: a list, then a watch from it, listing again whenever the watch ends. */
function trackPods(kubeconfig: string): { seen: Map<string, string>; onSeen?: (count: number) => void; stop(): void } {
  const seen = new Map<string, string>();
  const abort = new AbortController();
  const tracker: ReturnType<typeof trackPods> = { seen, stop: () => abort.abort() };
  const note = (p: Pod) => {
    if (p.metadata?.labels?.app !== 'ha' || seen.has(p.metadata.uid!)) return;
    seen.set(p.metadata.uid!, p.metadata.name!);
    tracker.onSeen?.(seen.size);
  };
  void (async () => {
    const client = await Client.fromKubeconfig(kubeconfig);
    try {
      while (!abort.signal.aborted) {
        try {
          const pods = client.resource('pods').namespace('default');
          const list = await pods.list({ labelSelector: 'app=ha' }, abort.signal);
          for (const p of list.items) note(p as Pod);
          for await (const ev of pods.watch({ labelSelector: 'app=ha', resourceVersion: list.metadata?.resourceVersion }, abort.signal)) {
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED') note(ev.object as Pod);
          }
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    } finally {
      client.close();
    }
  })();
  return tracker;
}

describe('HA: kite servers on a 3-member etcd', () => {
  let etcd: EtcdCluster;
  const pkiDir = tempDir('pki');
  const servers: HaServer[] = [];
  let sim: KiteSim | undefined;
  let tracker: ReturnType<typeof trackPods> | undefined;

  const startHaServer = async (name: string, endpoints: string[]): Promise<HaServer> => {
    const dataDir = tempDir(`ha-${name}`);
    const args = ['server', '--data-dir', dataDir, '--pki-dir', pkiDir, '--listen', '127.0.0.1:0', '--store', `etcd://${endpoints.join(',')}`];
    const kite = await spawnKite(args, { what: `kite server ${name}`, ready: (out) => /listening on (https:\/\/\S+)/.exec(out)?.[1], timeoutMs: 60_000 });
    const s = { name, dataDir, kubeconfig: join(dataDir, 'admin.kubeconfig'), kite };
    servers.push(s);
    return s;
  };
  const k = (s: HaServer, args: string[], input?: string) => kubectlOk(s, args, input);
  const lease = (s: HaServer, name: string) => JSON.parse(k(s, ['get', 'lease', '-n', 'kube-system', name, '-o', 'json'])) as Lease;
  const holderOf = (s: HaServer, name: string) => lease(s, name).spec?.holderIdentity ?? '';
  const haPods = (s: HaServer) => (JSON.parse(k(s, ['get', 'pods', '-l', 'app=ha', '-o', 'json'])) as { items: Pod[] }).items;

  before(async () => {
    etcd = await startEtcdCluster(3);
  });

  after(async () => {
    tracker?.stop();
    await sim?.stop();
    for (const s of servers) await s.kite.signal('SIGTERM');
    await etcd?.stop();
    for (const s of servers) removeDir(s.dataDir);
    removeDir(pkiDir);
  });

  it('two servers share the CA and serve the same API; one controller manager and one scheduler lead', async () => {
    const [a, b] = [await startHaServer('a', etcd.endpoints), await startHaServer('b', etcd.endpoints)];
    assert.equal(k(a, ['create', 'configmap', 'from-a', '--from-literal=k=v']).trim(), 'configmap/from-a created');
    assert.match(k(b, ['get', 'configmap', 'from-a', '-o', 'jsonpath={.data.k}']), /^v$/);
    for (const leaseName of ['kube-controller-manager', 'kube-scheduler']) {
      const holder = await eventually(() => holderOf(a, leaseName) || undefined, `${leaseName} to have a holder`, 30_000);
      const claimants = servers.filter((s) => identities(s).get(leaseName)?.has(holder));
      assert.equal(claimants.length, 1, `${leaseName}: held by exactly one server's thread`);
      const others = servers.filter((s) => !claimants.includes(s));
      assert.ok(others.every((s) => !identities(s).has(leaseName)), `${leaseName}: no other server leads`);
    }
  });

  it('a third server joins; kubectl works against each', async () => {
    const c = await startHaServer('c', etcd.endpoints);
    assert.equal(k(c, ['create', 'configmap', 'from-c']).trim(), 'configmap/from-c created');
    for (const s of servers) assert.match(k(s, ['get', 'configmaps', '-o', 'name']), /configmap\/from-a\nconfigmap\/from-c/);
  });

  it('kill -9 of the controller manager leader during a scale-up: another takes the Lease, no pod is made twice', async (t) => {
    const [first] = servers;
    const holder = holderOf(first!, 'kube-controller-manager');
    const leader = servers.find((s) => identities(s).get('kube-controller-manager')?.has(holder))!;
    assert.ok(leader, `a server announced ${holder}`);
    const [survivor, other] = servers.filter((s) => s !== leader) as [HaServer, HaServer];
    sim = await startSim(survivor, 3);
    tracker = trackPods(other.kubeconfig);
    k(survivor, ['apply', '-f', '-'], manifest(2));
    await eventually(() => (haPods(survivor).length === 2 ? true : undefined), 'the first 2 pods', 60_000);

    const desired = 30;
    // Killed the moment the first new pod shows: in the middle of the scale-up.
    const killed = new Promise<number>((resolve) => {
      tracker!.onSeen = (count) => {
        if (count <= 2) return;
        tracker!.onSeen = undefined;
        leader.kite.proc.kill('SIGKILL');
        resolve(count);
      };
    });
    k(survivor, ['scale', workload.resource, 'ha', `--replicas=${desired}`]);
    const atKill = await killed;
    await leader.kite.signal('SIGKILL');
    // The dead holder's last renewal, final now.
    const before = lease(survivor, 'kube-controller-manager').spec!;
    assert.equal(before.holderIdentity, holder);
    t.diagnostic(`pods seen when the leader was killed: ${atKill} of ${desired}`);

    const taken = await eventually(
      () => {
        const spec = lease(survivor, 'kube-controller-manager').spec;
        return spec?.holderIdentity && spec.holderIdentity !== holder ? spec : undefined;
      },
      'another server to take the kube-controller-manager Lease',
      60_000,
    );
    // Its log line may trail the Lease write a little.
    await eventually(
      () => ([survivor, other].some((s) => identities(s).get('kube-controller-manager')?.has(taken.holderIdentity!)) ? true : undefined),
      'the new holder to be a surviving server',
      10_000,
    );
    const gapMs = Date.parse(taken.acquireTime!) - Date.parse(before.renewTime!);
    // As client-go's: a candidate sees the last renewal on its next poll (every 2 s, jitter 1.2),
    // counts the lease duration from then, and takes the Lease on the first poll after that.
    t.diagnostic(`Lease taken by ${taken.holderIdentity} ${gapMs} ms after the last renewal it saw (lease duration ${before.leaseDurationSeconds} s)`);
    assert.ok(gapMs <= before.leaseDurationSeconds! * 1000 + 2 * 2400 + 1000, `taken ${gapMs} ms after the last renewal`);

    await eventually(
      () => {
        const pods = haPods(survivor).filter((p) => !p.metadata?.deletionTimestamp);
        return pods.length === desired && pods.every((p) => p.status?.phase === 'Running') ? true : undefined;
      },
      `${desired} running pods`,
      120_000,
    );
    await new Promise((r) => setTimeout(r, 3000));
    const pods = haPods(other);
    assert.equal(pods.length, desired, 'exactly the desired pods');
    // Owned by the ReplicaSet (a Deployment's is named ha-<pod-template-hash>).
    assert.ok(pods.every((p) => /^ha(-[a-z0-9]+)?$/.test(p.metadata?.ownerReferences?.[0]?.name ?? '') && p.metadata!.ownerReferences![0]!.controller));
    assert.equal(tracker.seen.size, desired, `pods ever seen: ${tracker.seen.size}`);
    const replicas = () => (JSON.parse(k(other, ['get', workload.resource, 'ha', '-o', 'json'])) as { status?: { replicas?: number } }).status?.replicas;
    await eventually(() => (replicas() === desired ? true : undefined), 'status.replicas');
  });

  it('kill -9 of the etcd leader: the API keeps serving and the controllers keep acting', async (t) => {
    const alive = servers.filter((s) => s.kite.proc.exitCode === null && s.kite.proc.signalCode === null);
    // The raft leader: its loss forces an election as well as the clients' failover.
    const statuses = await Promise.all(
      etcd.members.map(async (m) => (await (await fetch(`http://${m.endpoint}/v3/maintenance/status`, { method: 'POST', body: '{}' })).json()) as { header: { member_id: string }; leader: string }),
    );
    const leaderIndex = statuses.findIndex((st) => st.header.member_id === st.leader);
    assert.ok(leaderIndex >= 0, 'an etcd leader');
    await etcd.members[leaderIndex]!.kill();
    t.diagnostic(`killed etcd member ${leaderIndex} (${etcd.members[leaderIndex]!.endpoint}), the raft leader`);
    for (const s of alive) {
      const name = `after-etcd-${s.name}`;
      await eventually(() => (kubectl(s, ['create', 'configmap', name]).code === 0 ? true : undefined), `a create through ${s.name}`, 30_000);
      assert.match(k(s, ['get', 'configmap', name, '-o', 'name']), new RegExp(`configmap/${name}`));
    }
    const [s] = alive;
    k(s!, ['scale', workload.resource, 'ha', '--replicas=33']);
    await eventually(() => (haPods(s!).length === 33 ? true : undefined), '33 pods after the etcd member died', 90_000);
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(haPods(s!).length, 33);
    assert.equal(tracker!.seen.size, 33, 'no pod made twice');
  });
});
