import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease, Node, Pod } from '../../api/types.js';
import { StatusError } from '../../api/errors.js';
import { microTime, rfc3339 } from '../../api/time.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';
import { NodeLifecycleController, type NodeLifecycleConfig } from './controller.js';

const user = { name: 'system:serviceaccount:kube-system:node-controller', groups: ['system:serviceaccounts', 'system:authenticated'] };

/** The controller on the in-process API, with a stand-in kubelet per node that renews its Lease every 10 s until stopped. */
class Harness extends ControllerHarness<NodeLifecycleController> {
  readonly alive = new Set<string>();
  private lastRenewal = -Infinity;

  constructor(private readonly config: Partial<NodeLifecycleConfig> = {}) {
    super({ user, steps: 1, stepMs: 100 });
  }

  protected newController(deps: ControllerDeps): NodeLifecycleController {
    return new NodeLifecycleController({ ...deps, recorder: this.recorder, config: this.config });
  }

  nodes() {
    return this.admin.resource<Node>('', 'v1', 'nodes');
  }

  /** Registers a Ready node (as a kubelet would: status at create, then its Lease). */
  async addNode(name: string, labels?: Record<string, string>): Promise<void> {
    const now = rfc3339(this.clock.now());
    await this.nodes().create({
      metadata: { name, labels },
      status: {
        conditions: [
          { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', lastHeartbeatTime: now, lastTransitionTime: now },
          { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now },
        ],
      },
    });
    this.alive.add(name);
    await this.renew(name);
  }

  async renew(name: string): Promise<void> {
    const leases = this.admin.resource<Lease>('coordination.k8s.io', 'v1', 'leases').namespace('kube-node-lease');
    const spec = { holderIdentity: name, leaseDurationSeconds: 40, renewTime: microTime(this.clock.now()) };
    const current = await leases.get(name).catch(() => undefined);
    if (current) await leases.update({ ...current, spec });
    else await leases.create({ metadata: { name, namespace: 'kube-node-lease' }, spec });
  }

  /** The kubelet back: a fresh Ready status and Lease. */
  async revive(name: string): Promise<void> {
    const now = rfc3339(this.clock.now());
    const node = await this.nodes().get(name);
    const conditions = node.status!.conditions!.map((c) =>
      c.type === 'Ready'
        ? { ...c, status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }
        : { ...c, status: 'False', lastHeartbeatTime: now },
    );
    await this.nodes().updateStatus({ ...node, status: { ...node.status, conditions } });
    this.alive.add(name);
    await this.renew(name);
  }

  /** Lets virtual time pass in 100 ms steps, renewing the live nodes' Leases every 10 s. */
  async advance(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += 100) {
      if (this.clock.now() - this.lastRenewal >= 10_000) {
        this.lastRenewal = this.clock.now();
        for (const n of this.alive) await this.renew(n);
      }
      await this.settle();
    }
  }

  async node(name: string): Promise<Node> {
    return this.nodes().get(name);
  }

  /** A pod with Ready=True in its status, then bound to the node (the controller looks at pods as they are bound). */
  async runningPod(name: string, nodeName: string): Promise<void> {
    const pod = await this.pods().create({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    const now = rfc3339(this.clock.now());
    await this.pods().patch(name, 'merge', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } }, { subresource: 'status' });
    await this.admin.bind(pod, nodeName);
  }
}

const condition = (n: Node, type: string) => n.status?.conditions?.find((c) => c.type === type);
const taintsOf = (n: Node) => (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
const podReady = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;

async function withHarness(config: Partial<NodeLifecycleConfig>, body: (h: Harness) => Promise<void>): Promise<void> {
  const h = new Harness(config);
  await h.start();
  try {
    await body(h);
  } finally {
    await h.stop();
  }
}

test('a silent node goes Unknown after the grace period and not before, is tainted, its pods not Ready; back, the taints go', async () => {
  await withHarness({}, async (h) => {
    for (const n of ['n1', 'n2', 'n3']) await h.addNode(n);
    await h.runningPod('on-n1', 'n1');
    await h.runningPod('on-n2', 'n2');
    await h.advance(10_000);
    assert.deepEqual(
      h.recorder.events.filter((e) => e.reason === 'RegisteredNode').map((e) => e.message),
      ['Node n1 event: Registered Node n1 in Controller', 'Node n2 event: Registered Node n2 in Controller', 'Node n3 event: Registered Node n3 in Controller'],
    );

    // The kubelet of n1 dies: its last renewal was at most 10 s ago.
    h.alive.delete('n1');
    const lastSeen = h.clock.now();
    await h.advance(45_000);
    assert.equal(condition(await h.node('n1'), 'Ready')?.status, 'True', 'still within the grace period');
    await h.advance(15_000);
    const n1 = await h.node('n1');
    const ready = condition(n1, 'Ready')!;
    assert.deepEqual([ready.status, ready.reason, ready.message], ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.']);
    const unknownAt = Date.parse(ready.lastTransitionTime!);
    assert.ok(unknownAt > lastSeen + 50_000 - 10_000 && unknownAt <= lastSeen + 50_000 + 5_000, `Unknown ${unknownAt - lastSeen} ms after the last renewal`);
    assert.equal(condition(n1, 'MemoryPressure')?.status, 'Unknown');
    assert.equal(condition(await h.node('n2'), 'Ready')?.status, 'True');

    assert.ok(h.recorder.events.some((e) => e.reason === 'NodeNotReady' && e.object.kind === 'Node' && e.message === 'Node n1 status is now: NodeNotReady'));
    assert.equal(podReady(await h.pods().get('on-n1')), 'False');
    assert.equal(podReady(await h.pods().get('on-n2')), 'True');
    assert.ok(h.recorder.events.some((e) => e.reason === 'NodeNotReady' && e.object.kind === 'Pod' && e.object.name === 'on-n1' && e.type === 'Warning' && e.message === 'Node is not ready'));

    await h.advance(6_000);
    const tainted = await h.node('n1');
    assert.deepEqual(taintsOf(tainted), ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
    assert.ok(tainted.spec!.taints!.every((t) => t.timeAdded), 'taints carry timeAdded');
    assert.deepEqual(taintsOf(await h.node('n2')), []);

    // A pod bound to the dead node later is marked not Ready too.
    await h.runningPod('late', 'n1');
    await h.advance(1_000);
    assert.equal(podReady(await h.pods().get('late')), 'False');

    await h.revive('n1');
    await h.advance(6_000);
    assert.deepEqual(taintsOf(await h.node('n1')), []);
    assert.equal(condition(await h.node('n1'), 'Ready')?.status, 'True');
  });
});

test('a node reporting Ready=False gets not-ready taints; Unknown then swaps them to unreachable at once', async () => {
  await withHarness({}, async (h) => {
    for (const n of ['n1', 'n2', 'n3']) await h.addNode(n);
    await h.advance(6_000);
    const node = await h.node('n1');
    const conditions = node.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', reason: 'KubeletNotReady', lastTransitionTime: rfc3339(h.clock.now()) } : c));
    await h.nodes().updateStatus({ ...node, status: { ...node.status, conditions } });
    await h.advance(11_000);
    assert.deepEqual(taintsOf(await h.node('n1')), ['node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/not-ready:NoSchedule']);

    h.alive.delete('n1');
    await h.advance(70_000);
    const n1 = await h.node('n1');
    assert.equal(condition(n1, 'Ready')?.status, 'Unknown');
    assert.deepEqual(taintsOf(n1), ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
  });
});

test('NoSchedule taints follow the pressure conditions and spec.unschedulable', async () => {
  await withHarness({}, async (h) => {
    await h.addNode('n1');
    await h.advance(1_000);
    const node = await h.node('n1');
    const conditions = node.status!.conditions!.map((c) => (c.type === 'MemoryPressure' ? { ...c, status: 'True', reason: 'KubeletHasInsufficientMemory' } : c));
    await h.nodes().updateStatus({ ...node, status: { ...node.status, conditions } });
    await h.nodes().patch('n1', 'merge', { spec: { unschedulable: true } });
    await h.advance(1_000);
    assert.deepEqual(taintsOf(await h.node('n1')), ['node.kubernetes.io/memory-pressure:NoSchedule', 'node.kubernetes.io/unschedulable:NoSchedule']);
    await h.nodes().patch('n1', 'merge', { spec: { unschedulable: false } });
    await h.advance(1_000);
    assert.deepEqual(taintsOf(await h.node('n1')), ['node.kubernetes.io/memory-pressure:NoSchedule']);
  });
});

/** When each node got its unreachable NoExecute taint, in seconds after the first. */
async function taintTimes(h: Harness, names: string[]): Promise<(number | undefined)[]> {
  const times = await Promise.all(
    names.map(async (n) => {
      const t = (await h.node(n)).spec?.taints?.find((x) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoExecute');
      return t ? Date.parse(t.timeAdded!) : undefined;
    }),
  );
  const first = Math.min(...times.filter((t) => t !== undefined));
  return times.map((t) => (t === undefined ? undefined : (t - first) / 1000));
}

test('--node-eviction-rate 0.1: three dead nodes of six are tainted ten seconds apart', async () => {
  await withHarness({}, async (h) => {
    const names = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'];
    for (const n of names) await h.addNode(n);
    await h.advance(5_000);
    for (const n of ['n0', 'n1', 'n2']) h.alive.delete(n);
    await h.advance(90_000);
    assert.equal(h.controller.zoneState(''), 'Normal', 'half the zone down is below the 0.55 threshold');
    assert.deepEqual(await taintTimes(h, names), [0, 10, 20, undefined, undefined, undefined]);
  });
});

test('a partially disrupted zone taints at the secondary rate if large, not at all if small; a fully disrupted one at the normal rate', async () => {
  const zone = (z: string) => ({ 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': z });
  await withHarness({ largeClusterSizeThreshold: 5 }, async (h) => {
    const large = Array.from({ length: 8 }, (_, i) => `large-${i}`);
    const small = Array.from({ length: 4 }, (_, i) => `small-${i}`);
    const full = ['full-0', 'full-1'];
    for (const n of large) await h.addNode(n, zone('large'));
    for (const n of small) await h.addNode(n, zone('small'));
    for (const n of full) await h.addNode(n, zone('full'));
    await h.advance(5_000);
    for (const n of [...large.slice(0, 5), ...small.slice(0, 3), ...full]) h.alive.delete(n);
    await h.advance(90_000);
    assert.equal(h.controller.zoneState('r:\x00:large'), 'PartialDisruption');
    assert.equal(h.controller.zoneState('r:\x00:small'), 'PartialDisruption');
    assert.equal(h.controller.zoneState('r:\x00:full'), 'FullDisruption');
    // 0.01 nodes/s: one node in the large zone so far, none in the small one, both in the full one (0.1/s).
    assert.equal((await taintTimes(h, large)).filter((t) => t !== undefined).length, 1);
    assert.deepEqual(h.controller.queuedForTainting('r:\x00:large').length, 4);
    assert.deepEqual((await taintTimes(h, small)).filter((t) => t !== undefined).length, 0);
    assert.deepEqual(await taintTimes(h, full), [0, 10]);
    await h.advance(100_000);
    assert.equal((await taintTimes(h, large)).filter((t) => t !== undefined).length, 2);
  });
});

test('with every zone fully disrupted nothing is tainted and the NoExecute taints are removed', async () => {
  await withHarness({}, async (h) => {
    for (const n of ['n0', 'n1', 'n2', 'n3']) await h.addNode(n);
    await h.advance(5_000);
    h.alive.delete('n0');
    await h.advance(70_000);
    assert.deepEqual(taintsOf(await h.node('n0')), ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
    for (const n of ['n1', 'n2', 'n3']) h.alive.delete(n);
    await h.advance(70_000);
    assert.equal(h.controller.zoneState(''), 'FullDisruption');
    for (const n of ['n0', 'n1', 'n2', 'n3']) {
      const node = await h.node(n);
      assert.equal(condition(node, 'Ready')?.status, 'Unknown', n);
      assert.deepEqual(taintsOf(node), ['node.kubernetes.io/unreachable:NoSchedule'], `${n}: no NoExecute taint in full disruption`);
    }
    // Two nodes come back: the zone is Normal again (two down are fewer than three) and the others are tainted again.
    await h.revive('n0');
    await h.revive('n1');
    await h.advance(30_000);
    assert.equal(h.controller.zoneState(''), 'Normal');
    assert.deepEqual(taintsOf(await h.node('n1')), []);
    for (const n of ['n2', 'n3']) assert.deepEqual(taintsOf(await h.node(n)), ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'], n);
  });
});

test('a node that never posts status is Unknown after the startup grace period, with upstream\'s never-updated reason', async () => {
  await withHarness({}, async (h) => {
    for (const n of ['n1', 'n2', 'n3']) await h.addNode(n);
    await h.nodes().create({ metadata: { name: 'mute' } });
    await h.advance(55_000);
    assert.equal(condition(await h.node('mute'), 'Ready'), undefined, 'within the 1m startup grace period');
    await h.advance(20_000);
    const mute = await h.node('mute');
    assert.deepEqual(
      mute.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => [t, 'Unknown', 'NodeStatusNeverUpdated', 'Kubelet never posted node status.']),
    );
    assert.deepEqual(taintsOf(mute), ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
  });
});

test('a taint write that meets a conflict is computed again on the current node', async () => {
  await withHarness({}, async (h) => {
    for (const n of ['n1', 'n2', 'n3']) await h.addNode(n);
    await h.advance(6_000);
    // Counted from here: the not-ready taint TaintNodesByCondition put on at creation came off before.
    const patches = () => h.api.actions.filter((a) => a.verb === 'patch' && a.resource === 'nodes' && a.name === 'n1' && a.user === user.name).length;
    const before = patches();
    await h.nodes().patch('n1', 'merge', { spec: { unschedulable: true } });
    h.api.failNext('patch', 'n1', new StatusError(409, 'Conflict', 'Operation cannot be fulfilled on nodes "n1": the object has been modified'));
    await h.advance(1_000);
    assert.deepEqual(taintsOf(await h.node('n1')), ['node.kubernetes.io/unschedulable:NoSchedule']);
    assert.equal(patches() - before, 2, 'one conflict, one retry');
    assert.ok(h.api.actions.some((a) => a.verb === 'get' && a.resource === 'nodes' && a.name === 'n1' && a.user === user.name), 'the retry reads the node again');
  });
});

test('a deleted node is reported removed', async () => {
  await withHarness({}, async (h) => {
    await h.addNode('n1');
    await h.advance(6_000);
    await h.nodes().delete('n1');
    await h.advance(6_000);
    assert.ok(h.recorder.events.some((e) => e.reason === 'RemovingNode' && e.message === 'Node n1 event: Removing Node n1 from Controller'));
  });
});
