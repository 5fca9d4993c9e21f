// Node failure on `kite server` + `kite sim`, checked with the real kubectl: a simulated node whose
// heartbeats stop (the sim.kite.dev/heartbeat annotation) goes NotReady within the node monitor grace
// period, gets the unreachable taints and its pods Ready=False; the taint eviction controller deletes
// its pods once their tolerationSeconds run out and the ReplicaSet replaces them on the other nodes;
// with the heartbeats back the taints go and the old pods, Terminating meanwhile, are finished.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import { eventually, kubectlOk, simCluster, webReplicaSet } from './harness.js';

interface Pod {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  spec: { nodeName?: string };
  status: { podIP?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

/** The harness's web ReplicaSet of 3, its pods tolerating a not-ready or unreachable node for 10 s. */
function toleratingReplicaSet(): string {
  const rs = parseYaml(webReplicaSet(3)) as { spec: { template: { spec: Record<string, unknown> } } };
  rs.spec.template.spec.tolerations = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }));
  return JSON.stringify(rs);
}

const gracePeriodS = 20;

describe('node lifecycle (kite server + kite sim)', () => {
  const cluster = simCluster(3, { extraArgs: ['--node-monitor-grace-period', `${gracePeriodS}s`] });
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const pods = () => (JSON.parse(k(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as { items: Pod[] }).items;
  const ready = (p: Pod) => p.status.conditions?.find((c) => c.type === 'Ready')?.status;
  let dead = '';
  let original: Pod[] = [];

  it('a node whose heartbeats stop goes NotReady with the unreachable taints, and its pods not Ready', async () => {
    k(['apply', '-f', '-'], toleratingReplicaSet());
    original = await eventually(() => {
      const p = pods();
      return p.length === 3 && p.every((x) => ready(x) === 'True' && x.status.podIP) ? p : undefined;
    }, '3 web pods Running and Ready', 60_000);
    dead = original[0]!.spec.nodeName!;
    k(['annotate', 'node', dead, 'sim.kite.dev/heartbeat=stopped']);

    // The last Lease renewal was at most 10 s before; then the grace period and a monitor period or two.
    await eventually(() => (new RegExp(`^${dead}\\s+NotReady\\s`, 'm').test(k(['get', 'nodes', '--no-headers'])) ? true : undefined), `${dead} NotReady`, (gracePeriodS + 20) * 1000);
    for (const other of ['sim-0', 'sim-1', 'sim-2'].filter((n) => n !== dead)) assert.match(k(['get', 'node', other, '--no-headers']), /\sReady\s/);

    const described = await eventually(() => {
      const d = k(['describe', 'node', dead]);
      return /node\.kubernetes\.io\/unreachable:NoExecute/.test(d) && /node\.kubernetes\.io\/unreachable:NoSchedule/.test(d) ? d : undefined;
    }, 'both unreachable taints', 20_000);
    assert.match(described, /^Taints:\s+node\.kubernetes\.io\/unreachable:NoExecute\n\s+node\.kubernetes\.io\/unreachable:NoSchedule$/m);
    for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      assert.match(described, new RegExp(`^\\s+${type}\\s+Unknown\\s.*NodeStatusUnknown\\s+Kubelet stopped posting node status\\.$`, 'm'), type);
    }

    const onDead = original.filter((p) => p.spec.nodeName === dead).map((p) => p.metadata.name);
    await eventually(() => (pods().filter((p) => onDead.includes(p.metadata.name)).every((p) => ready(p) === 'False') ? true : undefined), 'the dead node\'s pods Ready=False', 20_000);
    assert.ok(pods().filter((p) => p.spec.nodeName !== dead).every((p) => ready(p) === 'True'), 'pods elsewhere stay Ready');

    const events = k(['get', 'events', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${dead}`, '-o', 'custom-columns=REASON:.reason,MESSAGE:.message', '--no-headers']);
    assert.match(events, new RegExp(`^NodeNotReady\\s+Node ${dead} status is now: NodeNotReady$`, 'm'));
    assert.match(events, new RegExp(`^RegisteredNode\\s+Node ${dead} event: Registered Node ${dead} in Controller$`, 'm'));
  });

  it('after tolerationSeconds its pods are deleted and replaced on the other nodes', async () => {
    assert.ok(dead, 'the first step stopped a node');
    const onDead = original.filter((p) => p.spec.nodeName === dead);
    const terminating = await eventually(() => {
      const p = pods().filter((x) => onDead.some((o) => o.metadata.uid === x.metadata.uid));
      return p.length === onDead.length && p.every((x) => x.metadata.deletionTimestamp) ? p : undefined;
    }, 'the dead node\'s pods Terminating', 40_000);
    for (const p of terminating) {
      const c = p.status.conditions?.find((x) => x.type === 'DisruptionTarget');
      assert.deepEqual([c?.status, c?.reason], ['True', 'DeletionByTaintManager'], p.metadata.name);
    }
    const replaced = await eventually(() => {
      const live = pods().filter((p) => !p.metadata.deletionTimestamp);
      return live.length === 3 && live.every((p) => ready(p) === 'True' && p.status.podIP) ? live : undefined;
    }, '3 live web pods again', 60_000);
    const oldUIDs = new Set(original.map((p) => p.metadata.uid));
    const oldIPs = new Set(onDead.map((p) => p.status.podIP));
    const fresh = replaced.filter((p) => !oldUIDs.has(p.metadata.uid));
    assert.equal(fresh.length, onDead.length);
    for (const p of fresh) {
      assert.notEqual(p.spec.nodeName, dead, p.metadata.name);
      assert.ok(!oldIPs.has(p.status.podIP), `${p.metadata.name} has a new IP`);
    }
  });

  it('with the heartbeats back the taints go and the old Terminating pods are finished', async () => {
    assert.ok(dead, 'the first step stopped a node');
    k(['annotate', 'node', dead, 'sim.kite.dev/heartbeat-']);
    await eventually(() => (new RegExp(`^${dead}\\s+Ready\\s`, 'm').test(k(['get', 'nodes', '--no-headers'])) ? true : undefined), `${dead} Ready again`, 30_000);
    await eventually(() => (/^Taints:\s+<none>$/m.test(k(['describe', 'node', dead])) ? true : undefined), 'the taints removed', 30_000);
    const oldUIDs = new Set(original.filter((p) => p.spec.nodeName === dead).map((p) => p.metadata.uid));
    await eventually(() => (pods().some((p) => oldUIDs.has(p.metadata.uid) && p.metadata.deletionTimestamp) ? undefined : true), 'no old pod left Terminating', 30_000);
  });
});
