import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { EvictionManager, MONITORING_INTERVAL_MS } from './manager.js';
import { parseThresholdConfig, type EvictionConfigMaps } from './thresholds.js';
import type { EvictionSummary, PodUsage } from './types.js';

const Mi = 1024 * 1024;
const NODE = { kind: 'Node', name: 'n1', uid: 'n1' };

function pod(name: string, opts: { memory?: string; priority?: number; grace?: number; tolerations?: NonNullable<Pod['spec']>['tolerations'] } = {}): Pod {
  const resources = opts.memory ? { requests: { memory: opts.memory, cpu: '100m' }, limits: { memory: opts.memory, cpu: '100m' } } : {};
  return {
    metadata: { name, namespace: 'default', uid: name },
    spec: {
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.grace !== undefined ? { terminationGracePeriodSeconds: opts.grace } : {}),
      ...(opts.tolerations ? { tolerations: opts.tolerations } : {}),
      containers: [{ name: 'c', image: 'busybox', resources }],
    },
    status: { phase: 'Running' },
  };
}

/** A node with 1000Mi of memory and a 1000-byte disk; the test sets what the pods use. */
function setup(config: Partial<EvictionConfigMaps> & { transitionMs?: number; maxGrace?: number }, pods: Pod[]) {
  const clock = new FakeClock();
  const recorder = new FakeRecorder();
  const usage = new Map<string, PodUsage>();
  const node = { memoryUsed: 0, diskFree: 1000, freedByGC: 0 };
  const evicted: { pod: string; grace: number; status: PodStatus }[] = [];
  const gc: string[] = [];
  let active = [...pods];
  const summary = (): EvictionSummary => ({
    time: clock.now(),
    memory: { capacityBytes: 1000 * Mi, workingSetBytes: node.memoryUsed },
    nodeFs: { availableBytes: node.diskFree, capacityBytes: 1000, inodesFree: 1000, inodes: 1000 },
    pods: [...usage.values()],
  });
  const manager = new EvictionManager({
    thresholds: parseThresholdConfig({ evictionHard: {}, evictionSoft: {}, evictionSoftGracePeriod: {}, evictionMinimumReclaim: {}, ...config }),
    pressureTransitionPeriodMs: config.transitionMs ?? 300_000,
    maxPodGracePeriodSeconds: config.maxGrace ?? 0,
    stats: { get: () => Promise.resolve(summary()) },
    killer: {
      evictPod: (p, grace, podStatusFn) => {
        evicted.push({ pod: p.metadata!.name!, grace, status: podStatusFn(p.status ?? {}) });
        // The pod workers stop it: it is no longer active and its memory comes back.
        active = active.filter((a) => a !== p);
        node.memoryUsed -= usage.get(p.metadata!.uid!)?.memory ?? 0;
        usage.delete(p.metadata!.uid!);
      },
    },
    activePods: () => active,
    podCleanedUp: (p) => Promise.resolve(!active.includes(p)),
    imageGC: {
      deleteUnusedImages: () => {
        gc.push('images');
        node.diskFree += node.freedByGC;
        return Promise.resolve(node.freedByGC);
      },
    },
    containerGC: {
      deleteAllUnusedContainers: () => {
        gc.push('containers');
        return Promise.resolve();
      },
    },
    recorder,
    nodeRef: NODE,
    clock,
  });
  const use = (name: string, memory: number, disk = 0) => {
    usage.set(name, { uid: name, containers: [{ name: 'c', memory, disk }], memory, disk });
    node.memoryUsed += memory;
  };
  return { clock, recorder, manager, node, evicted, gc, use };
}

describe('eviction manager', () => {
  it('hard memory pressure: BestEffort, then Burstable, one per cycle; Guaranteed stays; condition clears after the transition period', async () => {
    const pods = [pod('guaranteed', { memory: '200Mi' }), pod('burstable', { memory: '50Mi' }), pod('besteffort', { grace: 30 })];
    // Burstable: requests below limits.
    pods[1]!.spec!.containers[0]!.resources = { requests: { memory: '50Mi' } };
    const t = setup({ evictionHard: { 'memory.available': '600Mi' }, transitionMs: 60_000 }, pods);
    t.use('guaranteed', 100 * Mi);
    t.use('burstable', 200 * Mi);
    t.use('besteffort', 250 * Mi);
    t.manager.start();
    await t.clock.advance(MONITORING_INTERVAL_MS);
    // 550Mi used, 450Mi available < 600Mi: the BestEffort pod goes first (most above its request), with the hard grace of 1 s.
    assert.deepEqual(t.evicted.map((e) => [e.pod, e.grace]), [['besteffort', 1]]);
    assert.deepEqual([...t.manager.pressure()], ['MemoryPressure']);
    const { status } = t.evicted[0]!;
    assert.equal(status.phase, 'Failed');
    assert.equal(status.reason, 'Evicted');
    assert.equal(status.message, 'The node was low on resource: memory. Threshold quantity: 600Mi, available: 450Mi. Container c was using 250Mi, request is 0, has larger consumption of memory. ');
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [['DisruptionTarget', 'True', 'TerminationByKubelet', status.message]],
    );
    assert.deepEqual(
      t.recorder.events.map((e) => [e.object.name, e.type, e.reason]),
      [
        ['n1', 'Warning', 'EvictionThresholdMet'],
        ['besteffort', 'Warning', 'Evicted'],
      ],
    );
    assert.equal(t.recorder.events[0]!.message, 'Attempting to reclaim memory');

    // Cleaned up at the first poll (1 s), the next round 10 s later: the Burstable pod grew meanwhile (500Mi used).
    t.use('burstable', 200 * Mi);
    await t.clock.advance(1_000 + MONITORING_INTERVAL_MS - 1);
    assert.deepEqual(t.evicted.map((e) => e.pod), ['besteffort']);
    await t.clock.advance(1);
    assert.deepEqual(t.evicted.map((e) => e.pod), ['besteffort', 'burstable']);
    // 100Mi used now: no more evictions, the Guaranteed pod survives; the condition holds for the transition period.
    await t.clock.advance(MONITORING_INTERVAL_MS * 3);
    assert.deepEqual(t.evicted.map((e) => e.pod), ['besteffort', 'burstable']);
    assert.deepEqual([...t.manager.pressure()], ['MemoryPressure']);
    await t.clock.advance(60_000);
    assert.deepEqual([...t.manager.pressure()], []);
    await t.manager.stop();
  });

  it('admission under pressure: BestEffort refused for memory (unless it tolerates the taint), everything but critical pods for disk', async () => {
    const t = setup({ evictionHard: { 'memory.available': '600Mi', 'nodefs.available': '10' } }, []);
    const be = pod('be');
    const tolerating = pod('tolerating', { tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] });
    const guaranteed = pod('g', { memory: '10Mi' });
    const critical = pod('critical', { priority: 2_000_001_000 });
    const verdicts = () => [be, tolerating, guaranteed, critical].map((p) => t.manager.admit(p));
    assert.ok(verdicts().every((v) => v.admit));

    t.node.memoryUsed = 500 * Mi;
    await t.manager.synchronize();
    assert.deepEqual(verdicts(), [{ admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' }, { admit: true }, { admit: true }, { admit: true }]);

    t.node.diskFree = 5;
    await t.manager.synchronize();
    const refused = { admit: false, reason: 'Evicted', message: 'The node had condition: [MemoryPressure DiskPressure]. ' };
    assert.deepEqual(verdicts(), [refused, refused, refused, { admit: true }]);
  });

  it('disk pressure reclaims with container then image GC first, and evicts only if that was not enough', async () => {
    const t = setup({ evictionHard: { 'nodefs.available': '100' } }, [pod('writer'), pod('idle')]);
    t.use('writer', 0, 500);
    t.use('idle', 0, 10);
    t.node.diskFree = 50;
    t.node.freedByGC = 100;
    await t.manager.synchronize();
    assert.deepEqual(t.gc, ['containers', 'images']);
    assert.equal(t.evicted.length, 0);
    assert.deepEqual([...t.manager.pressure()], ['DiskPressure']);

    t.node.diskFree = 20;
    t.node.freedByGC = 10;
    await t.manager.synchronize();
    assert.deepEqual(t.evicted.map((e) => e.pod), ['writer']);
    // The message gives what was observed before the reclaim, as upstream's.
    assert.match(t.evicted[0]!.status.message!, /^The node was low on resource: ephemeral-storage\. Threshold quantity: 100, available: 20\. Container c was using 500, request is 0/);
  });

  it('soft thresholds wait for their grace period and evict with min(evictionMaxPodGracePeriod, the pod\'s grace)', async () => {
    const cases = [
      { maxGrace: 10, podGrace: 30, want: 10 },
      { maxGrace: 60, podGrace: 5, want: 5 },
    ];
    for (const c of cases) {
      const t = setup({ evictionSoft: { 'memory.available': '600Mi' }, evictionSoftGracePeriod: { 'memory.available': '30s' }, maxGrace: c.maxGrace }, [pod('p', { grace: c.podGrace })]);
      t.use('p', 500 * Mi);
      t.manager.start();
      // First met at the first round (10 s); still within its 30 s at the round of 30 s.
      await t.clock.advance(30_000);
      assert.equal(t.evicted.length, 0, 'within the grace period');
      assert.deepEqual([...t.manager.pressure()], ['MemoryPressure'], 'the condition does not wait for the grace period');
      await t.clock.advance(10_000);
      assert.deepEqual(t.evicted.map((e) => [e.pod, e.grace]), [['p', c.want]]);
      // stop() waits for the round under way: its poll for the pod's cleanup ends after a second.
      const stopped = t.manager.stop();
      await t.clock.advance(1_000);
      await stopped;
    }
  });

  it('never evicts critical pods, and a threshold stays met until its minimum reclaim is available', async () => {
    const t = setup({ evictionHard: { 'memory.available': '600Mi' }, evictionMinimumReclaim: { 'memory.available': '200Mi' } }, [pod('critical', { priority: 2_000_000_000 }), pod('small')]);
    t.use('critical', 500 * Mi);
    t.use('small', 1 * Mi);
    await t.manager.synchronize();
    assert.deepEqual(t.evicted.map((e) => e.pod), ['small']);
    // 700Mi free: above 600Mi but below 600Mi + 200Mi, so the node stays under pressure.
    t.node.memoryUsed = 300 * Mi;
    await t.manager.synchronize();
    assert.deepEqual([...t.manager.pressure()], ['MemoryPressure']);
    assert.equal(t.recorder.events.filter((e) => e.reason === 'EvictionThresholdMet').length, 2);
    t.node.memoryUsed = 100 * Mi;
    await t.manager.synchronize();
    assert.equal(t.recorder.events.filter((e) => e.reason === 'EvictionThresholdMet').length, 2);
  });
});
