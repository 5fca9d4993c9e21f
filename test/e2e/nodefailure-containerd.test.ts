// A node dies on real containerd: `kite up` (bridge kite-nf) and a second `kite agent` (nf2, bridge
// kite-nf2) running a Deployment's pods. The agent is killed with SIGKILL while its containerd and
// containers live on: the node lifecycle controller marks nf2 Unknown and taints it, the taint
// eviction controller deletes its pods when their tolerationSeconds run out, and the ReplicaSet
// replaces them on the first node. The old pods stay Terminating while nf2 is away; when the agent
// comes back its kubelet stops and removes their containers, the objects go and the taints are lifted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Node, Pod } from '../../src/api/types.js';
import { CriRuntime } from '../../src/kubelet/runtime/cri/client.js';
import { POD_NAME_LABEL } from '../../src/kubelet/kuberuntime/labels.js';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, resetCluster, startAgent, startCluster, stopAndReset, type AgentOptions, type KiteAgent, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'needs root to run containers';

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      terminationGracePeriodSeconds: 5
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}
      containers:
      - name: web
        image: busybox:1.35
        command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

describe('node failure on kite up + kite agent (containerd)', { skip }, () => {
  let cluster: KiteCluster;
  let agent: KiteAgent | undefined;
  const nf2: AgentOptions = { nodeName: 'nf2', bridge: 'kite-nf2', podCIDR: '10.217.254.0/24', cgroupRoot: '/kite-nf2' };
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const webPods = () => (JSON.parse(k(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as { items: Pod[] }).items;
  const node = (name: string) => JSON.parse(k(['get', 'node', name, '-o', 'json'])) as Node;
  const readyStatus = (n: Node) => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const running = (p: Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-nf', '--pod-cidr', '10.217.253.0/24', '--cgroup-root', '/kite-nf', '--node-monitor-grace-period', '20s'] });
    agent = await startAgent(cluster, nf2);
  });

  after(async () => {
    if (agent) {
      await agent.stop();
      resetCluster(agent.dataDir);
    }
    await stopAndReset(cluster);
  });

  it('replaces the pods of a killed node elsewhere, and the returning node removes the old containers', async () => {
    await eventually(() => (readyStatus(node('nf2')) === 'True' ? true : undefined), 'nf2 Ready');
    // Both replicas on nf2: the first node is cordoned while they are placed.
    k(['cordon', cluster.nodeName]);
    k(['apply', '-f', '-'], deployment);
    const old = await eventually(() => {
      const pods = webPods();
      return pods.length === 2 && pods.every((p) => running(p) && p.spec?.nodeName === 'nf2') ? pods : undefined;
    }, 'two web pods running on nf2', 120_000);
    k(['uncordon', cluster.nodeName]);
    const oldUIDs = new Set(old.map((p) => p.metadata!.uid!));
    const oldIPs = new Set(old.map((p) => p.status!.podIP!));

    await agent!.kill();
    const cri = new CriRuntime({ endpoint: join(agent!.dataDir, 'containerd', 'containerd.sock') });
    try {
      const containersOf = (pod: Pod) => cri.listContainers({ label_selector: { [POD_NAME_LABEL]: pod.metadata!.name! } });
      for (const p of old) assert.equal((await containersOf(p)).length, 1, `${p.metadata!.name}'s container outlives its kubelet`);

      const dead = await eventually(() => {
        const n = node('nf2');
        return readyStatus(n) === 'Unknown' ? n : undefined;
      }, 'nf2 Unknown after the grace period', 90_000);
      assert.equal(dead.status?.conditions?.find((c) => c.type === 'Ready')?.message, 'Kubelet stopped posting node status.');
      await eventually(() => {
        const taints = node('nf2').spec?.taints ?? [];
        return taints.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute') ? true : undefined;
      }, 'nf2 tainted unreachable:NoExecute');

      const fresh = await eventually(() => {
        const pods = webPods().filter((p) => !oldUIDs.has(p.metadata!.uid!));
        return pods.length === 2 && pods.every((p) => running(p) && p.spec?.nodeName === cluster.nodeName) ? pods : undefined;
      }, 'two new web pods running on the first node', 120_000);
      for (const p of fresh) assert.ok(!oldIPs.has(p.status!.podIP!), `${p.metadata!.name} has a new IP`);

      // nf2's pods wait for their kubelet: Terminating, marked by the taint eviction controller.
      for (const p of old) {
        const now = JSON.parse(k(['get', 'pod', p.metadata!.name!, '-o', 'json'])) as Pod;
        assert.ok(now.metadata?.deletionTimestamp, `${p.metadata!.name} is Terminating`);
        const target = now.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
        assert.equal(target?.reason, 'DeletionByTaintManager');
        assert.equal((await containersOf(p)).length, 1, `${p.metadata!.name}'s container still there while nf2 is away`);
      }

      agent = await startAgent(cluster, { ...nf2, dataDir: agent!.dataDir });
      for (const p of old) {
        await eventually(() => (kubectl(cluster, ['get', 'pod', p.metadata!.name!]).code === 1 ? true : undefined), `${p.metadata!.name} removed once nf2 is back`, 90_000);
        await eventually(async () => ((await containersOf(p)).length === 0 ? true : undefined), `${p.metadata!.name}'s containers removed`, 60_000);
      }
      await eventually(() => {
        const n = node('nf2');
        return readyStatus(n) === 'True' && !(n.spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/unreachable') ? true : undefined;
      }, 'nf2 Ready without the unreachable taints', 60_000);
      assert.equal(webPods().length, 2, 'still two replicas');
    } finally {
      cri.close();
    }
  });
});
