import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, PodDisruptionBudget } from '../../../api/types.js';
import type { Plugin } from '../../framework/interface.js';
import { Code, Status } from '../../framework/status.js';
import { defaultPlugins, inTreeRegistry } from '../../registry.js';
import { handleFor, snapshotOf } from '../../testing/plugins.js';
import { makeNode, makePod } from '../../testing/builders.js';
import { Harness } from '../../testing/harness.js';
import { PodInfo } from '../../framework/types.js';
import { factory, filterPodsWithPDBViolation, MSG_PREEMPTION_POLICY_NEVER, moreImportantPod, numCandidates, pickOneNodeForPreemption, type Candidate } from './defaultpreemption.js';

const NO_VICTIMS = 'No preemption victims found for incoming pod';
const NOT_HELPFUL = 'Preemption is not helpful for scheduling';

/** A pod already running on node (started at the given ISO time, if any). */
const running = (name: string, node: string, priority: number, cpu: string, started?: string): Pod => {
  const pod = makePod().name(name).nodeName(node).priority(priority).req({ cpu }).obj();
  return started ? { ...pod, status: { ...pod.status, startTime: started } } : pod;
};

const node = (name: string, cpu: string): Node => makeNode().name(name).capacity({ cpu }).obj();

/** The pod to schedule, "high". */
const preemptor = (priority: number, cpu: string, opts: { never?: boolean; nominated?: string } = {}): Pod => {
  const b = makePod().name('high').schedulerName('default-scheduler').priority(priority).req({ cpu });
  if (opts.nominated) b.nominatedNodeName(opts.nominated);
  const pod = b.obj();
  if (opts.never) pod.spec!.preemptionPolicy = 'Never';
  return pod;
};

describe('DefaultPreemption', () => {
  const cases: {
    name: string;
    nodes: Node[];
    pods: Pod[];
    pod: Pod;
    /** Victims deleted, in any order. */
    deleted: string[];
    nominated?: string;
    message: string;
  }[] = [
    {
      name: 'a higher-priority pod preempts a lower-priority one',
      nodes: [node('node-1', '1')],
      pods: [running('low', 'node-1', 0, '1')],
      pod: preemptor(100, '1'),
      deleted: ['default/low'],
      nominated: 'node-1',
      message: '0/1 nodes are available: 1 Insufficient cpu.',
    },
    {
      name: 'no preemption of a pod of equal priority',
      nodes: [node('node-1', '1')],
      pods: [running('peer', 'node-1', 100, '1')],
      pod: preemptor(100, '1'),
      deleted: [],
      message: `0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 ${NO_VICTIMS}.`,
    },
    {
      name: 'no preemption of a pod of higher priority',
      nodes: [node('node-1', '1')],
      pods: [running('vip', 'node-1', 1000, '1')],
      pod: preemptor(100, '1'),
      deleted: [],
      message: `0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 ${NO_VICTIMS}.`,
    },
    {
      name: 'preemptionPolicy Never',
      nodes: [node('node-1', '1')],
      pods: [running('low', 'node-1', 0, '1')],
      pod: preemptor(100, '1', { never: true }),
      deleted: [],
      message: `0/1 nodes are available: 1 Insufficient cpu. preemption: ${MSG_PREEMPTION_POLICY_NEVER}`,
    },
    {
      name: 'reprieve keeps the most important pods that still fit, not the fewest pods',
      // Without a, b and c the pod fits; adding back b (prio 5) and c (prio 3) still fits, a (prio 1, 2 cpu) does not.
      nodes: [node('node-1', '4')],
      pods: [running('a', 'node-1', 1, '2'), running('b', 'node-1', 5, '1'), running('c', 'node-1', 3, '1')],
      pod: preemptor(10, '1'),
      deleted: ['default/a'],
      nominated: 'node-1',
      message: '0/1 nodes are available: 1 Insufficient cpu.',
    },
    {
      name: 'reprieve in priority order evicts what the pod needs',
      nodes: [node('node-1', '4')],
      pods: [running('a', 'node-1', 5, '2'), running('b', 'node-1', 3, '1'), running('c', 'node-1', 1, '1')],
      pod: preemptor(10, '2'),
      deleted: ['default/b', 'default/c'],
      nominated: 'node-1',
      message: '0/1 nodes are available: 1 Insufficient cpu.',
    },
    {
      name: 'the node whose most important victim has the lowest priority',
      nodes: [node('node-1', '1'), node('node-2', '1')],
      pods: [running('mid', 'node-1', 5, '1'), running('low', 'node-2', 1, '1')],
      pod: preemptor(10, '1'),
      deleted: ['default/low'],
      nominated: 'node-2',
      message: '0/2 nodes are available: 2 Insufficient cpu.',
    },
    {
      name: 'then the smallest sum of priorities (fewer victims of the same priority)',
      nodes: [node('node-1', '1'), node('node-2', '1')],
      pods: [running('x', 'node-1', 1, '500m'), running('y', 'node-1', 1, '500m'), running('z', 'node-2', 1, '1')],
      pod: preemptor(10, '1'),
      deleted: ['default/z'],
      nominated: 'node-2',
      message: '0/2 nodes are available: 2 Insufficient cpu.',
    },
    {
      name: 'then the latest start among the most important victims',
      nodes: [node('node-1', '1'), node('node-2', '1')],
      pods: [running('old', 'node-1', 1, '1', '2026-01-01T00:00:00Z'), running('new', 'node-2', 1, '1', '2026-06-01T00:00:00Z')],
      pod: preemptor(10, '1'),
      deleted: ['default/new'],
      nominated: 'node-2',
      message: '0/2 nodes are available: 2 Insufficient cpu.',
    },
    {
      name: 'counts why each node cannot help',
      nodes: [
        makeNode().name('tainted').capacity({ cpu: '1' }).taint('dedicated', 'db', 'NoSchedule').obj(),
        node('busy', '1'),
        node('mixed', '2'),
      ],
      pods: [running('vip', 'busy', 1000, '1'), running('vip2', 'mixed', 1000, '1500m'), running('low', 'mixed', 0, '500m')],
      pod: preemptor(100, '1'),
      deleted: [],
      message:
        '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 2 Insufficient cpu. ' +
        `preemption: 0/3 nodes are available: 1 Insufficient cpu, 1 ${NO_VICTIMS}, 1 ${NOT_HELPFUL}.`,
    },
    {
      name: 'preemption cannot help a pod larger than any node',
      nodes: [node('node-1', '1')],
      pods: [running('low', 'node-1', 0, '1')],
      pod: preemptor(100, '2'),
      deleted: [],
      message: `0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 ${NOT_HELPFUL}.`,
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const h = new Harness();
      await h.start(c.nodes, [...c.pods, c.pod]);
      assert.deepEqual([...h.client.deletes].sort(), c.deleted);
      assert.equal(h.podScheduled('default/high')?.message, c.message);
      assert.equal(h.pod('default/high')?.status?.nominatedNodeName, c.nominated);
      assert.equal(h.client.binds.length, 0);
      await h.stop();
    });
  }

  it('marks the victim as a DisruptionTarget before deleting it, and schedules the preemptor once it is gone', async () => {
    const h = new Harness();
    await h.start([node('node-1', '1')], [running('low', 'node-1', 0, '1'), preemptor(100, '1')]);
    const patch = h.client.statusPatches.find((p) => p.pod === 'default/low')?.patch;
    const cond = patch?.conditions?.[0];
    assert.deepEqual([cond?.type, cond?.status, cond?.reason, cond?.message], [
      'DisruptionTarget',
      'True',
      'PreemptionByScheduler',
      'default-scheduler: preempting to accommodate a higher priority pod',
    ]);
    assert.deepEqual(h.client.deletes, ['default/low']);
    const ev = h.client.events.find((e) => e.reason === 'Preempted');
    const high = h.pod('default/high')!;
    assert.deepEqual(
      [ev?.type, ev?.action, ev?.note, ev?.regarding?.name, ev?.related?.name, ev?.reportingController],
      ['Normal', 'Preempting', `Preempted by pod ${high.metadata?.uid} on node node-1`, 'low', 'high', 'default-scheduler'],
    );
    assert.deepEqual(h.scheduler.queue.nominatedPodsForNode('node-1').map((p) => p.pod.metadata?.name), ['high']);
    await h.advance(2_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/high', node: 'node-1' }]);
    await h.stop();
  });

  it('clears the nominations of lower-priority pods on the chosen node', async () => {
    const h = new Harness();
    // mid cannot preempt itself, so it keeps its nomination until high preempts on node-1.
    const mid = makePod().name('mid').priority(5).req({ cpu: '1' }).nominatedNodeName('node-1').obj();
    mid.spec!.preemptionPolicy = 'Never';
    await h.start([node('node-1', '1')], [running('low', 'node-1', 0, '1'), mid, preemptor(100, '1')]);
    assert.deepEqual(h.client.deletes, ['default/low']);
    assert.ok(h.client.statusPatches.some((p) => p.pod === 'default/mid' && p.patch.nominatedNodeName === null));
    assert.equal(h.pod('default/mid')?.status?.nominatedNodeName, undefined);
    await h.stop();
  });

  it('waits for victims still terminating on the nominated node instead of preempting more', async () => {
    const h = new Harness();
    const low = running('low', 'node-1', 0, '1');
    const victim: Pod = {
      ...low,
      metadata: { ...low.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
      status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'PreemptionByScheduler' }] },
    };
    await h.start([node('node-1', '1')], [victim, running('other', 'node-1', 0, '0'), preemptor(100, '1', { nominated: 'node-1' })]);
    assert.deepEqual(h.client.deletes, []);
    assert.equal(
      h.podScheduled('default/high')?.message,
      '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node.',
    );
    await h.stop();
  });

  it('rejects a victim waiting at Permit rather than deleting it', async () => {
    // Holds priority-0 pods at Permit.
    const gate = (): Plugin =>
      ({ name: 'Gate', permit: (_s: unknown, pod: Pod) => (pod.spec?.priority ? {} : { status: Status.of(Code.Wait), timeoutMs: 600_000 }) }) as Plugin;
    const h = new Harness({
      registry: { ...inTreeRegistry, Gate: gate },
      profiles: [{ schedulerName: 'default-scheduler', plugins: [...defaultPlugins, { name: 'Gate' }] }],
    });
    await h.start([node('node-1', '1')], [makePod().name('low').priority(0).req({ cpu: '1' }).obj()]);
    h.client.pods.upsert(preemptor(100, '1'));
    await h.settle();
    assert.deepEqual(h.client.deletes, []);
    assert.equal(h.podScheduled('default/low')?.message, 'preempted');
    assert.equal(h.client.events.find((e) => e.reason === 'Preempted')?.regarding?.name, 'low');
    assert.equal(h.pod('default/high')?.status?.nominatedNodeName, 'node-1');
    await h.advance(2_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/high', node: 'node-1' }]);
    await h.stop();
  });
});

/** A budget over app=<app> in default with this many disruptions left (and these pods already approved). */
const pdb = (name: string, app: string, disruptionsAllowed: number, disruptedPods?: Record<string, string>): PodDisruptionBudget => ({
  metadata: { name, namespace: 'default' },
  spec: { selector: { matchLabels: { app } }, minAvailable: 1 },
  status: { disruptionsAllowed, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1, ...(disruptedPods ? { disruptedPods } : {}) },
});

const labelled = (pod: Pod, app: string): Pod => ({ ...pod, metadata: { ...pod.metadata, labels: { app } } });

describe('DefaultPreemption with PodDisruptionBudgets', () => {
  it('picks the node whose victims no budget protects', async () => {
    for (let i = 0; i < 5; i++) {
      // Without the budget the two nodes tie and the random offset decides.
      const h = new Harness();
      h.client.podDisruptionBudgets.upsert(pdb('db', 'db', 0));
      await h.start([node('node-1', '1'), node('node-2', '1')], [labelled(running('db-0', 'node-1', 1, '1'), 'db'), labelled(running('web-0', 'node-2', 1, '1'), 'web'), preemptor(10, '1')]);
      assert.deepEqual(h.client.deletes, ['default/web-0']);
      assert.equal(h.pod('default/high')?.status?.nominatedNodeName, 'node-2');
      await h.stop();
    }
  });

  it('on a node, reprieves the protected pods first even when less important', async () => {
    const h = new Harness();
    h.client.podDisruptionBudgets.upsert(pdb('db', 'db', 0));
    // Without the budget, mid (priority 5) is reprieved first and low goes; with it, low is kept and mid goes.
    await h.start([node('node-1', '2')], [labelled(running('mid', 'node-1', 5, '1'), 'web'), labelled(running('low', 'node-1', 1, '1'), 'db'), preemptor(10, '1')]);
    assert.deepEqual(h.client.deletes, ['default/mid']);
    await h.stop();
  });

  it('violates a budget when nothing else makes room', async () => {
    const h = new Harness();
    h.client.podDisruptionBudgets.upsert(pdb('db', 'db', 0));
    await h.start([node('node-1', '1')], [labelled(running('db-0', 'node-1', 1, '1'), 'db'), preemptor(10, '1')]);
    assert.deepEqual(h.client.deletes, ['default/db-0']);
    await h.stop();
  });

  it('filterPodsWithPDBViolation spends each budget pod by pod; approved evictions spend nothing', () => {
    const infos = ['a', 'b', 'c', 'other'].map((n) => new PodInfo(labelled(running(n, 'node-1', 1, '1'), n === 'other' ? 'other' : 'web')));
    const names = (l: PodInfo[]) => l.map((pi) => pi.pod.metadata?.name);
    let r = filterPodsWithPDBViolation(infos, [pdb('web', 'web', 1)]);
    assert.deepEqual([names(r.nonViolating), names(r.violating)], [['a', 'other'], ['b', 'c']]);
    r = filterPodsWithPDBViolation(infos, [pdb('web', 'web', 1, { a: '2026-01-01T00:00:00Z' })]);
    assert.deepEqual([names(r.nonViolating), names(r.violating)], [['a', 'b', 'other'], ['c']]);
    // A budget of another namespace covers nothing here.
    r = filterPodsWithPDBViolation(infos, [{ ...pdb('web', 'web', 0), metadata: { name: 'web', namespace: 'prod' } }]);
    assert.deepEqual(names(r.violating), []);
  });

  it('pickOneNodeForPreemption: fewer PDB violations first, before priorities', () => {
    const v = (p: number) => makePod().name(`p${p}`).priority(p).obj();
    const picked = pickOneNodeForPreemption(
      [
        { nodeName: 'a', numPDBViolations: 1, victims: [v(1)] },
        { nodeName: 'b', numPDBViolations: 0, victims: [v(5), v(4)] },
      ],
      0,
    );
    assert.equal(picked?.nodeName, 'b');
  });
});

describe('numCandidates', () => {
  const cases: [nodes: number, percentage: number, absolute: number, want: number][] = [
    [50, 10, 100, 50],
    [5000, 10, 100, 500],
    [500, 10, 100, 100],
    [500, 0, 3, 3],
    [2, 50, 0, 1],
  ];
  for (const [n, p, a, want] of cases) it(`${p}% / ${a} of ${n} → ${want}`, () => assert.equal(numCandidates(n, p, a), want));
});

describe('DefaultPreemption args', () => {
  const handle = handleFor(snapshotOf([]));
  it('defaults to 10% and 100', () => assert.equal(factory(undefined, handle).name, 'DefaultPreemption'));
  for (const args of [{ minCandidateNodesPercentage: 101 }, { minCandidateNodesAbsolute: -1 }, { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0 }]) {
    it(`rejects ${JSON.stringify(args)}`, () => assert.throws(() => factory(args, handle), /invalid DefaultPreemptionArgs/));
  }
});

describe('pickOneNodeForPreemption', () => {
  const now = Date.parse('2026-07-01T00:00:00Z');
  const v = (priority: number, started?: string) => {
    const p = makePod().priority(priority).obj();
    return started ? { ...p, status: { startTime: started } } : p;
  };
  const cases: { name: string; candidates: Candidate[]; want: string }[] = [
    { name: 'lowest highest priority', candidates: [{ nodeName: 'a', numPDBViolations: 0, victims: [v(5)] }, { nodeName: 'b', numPDBViolations: 0, victims: [v(3), v(2)] }], want: 'b' },
    { name: 'smallest sum', candidates: [{ nodeName: 'a', numPDBViolations: 0, victims: [v(3), v(2)] }, { nodeName: 'b', numPDBViolations: 0, victims: [v(3), v(1)] }], want: 'b' },
    {
      name: 'negative priorities: fewer pods win the sum',
      candidates: [{ nodeName: 'a', numPDBViolations: 0, victims: [v(-5), v(-5)] }, { nodeName: 'b', numPDBViolations: 0, victims: [v(-5)] }],
      want: 'b',
    },
    {
      name: 'latest start of the most important victims',
      candidates: [
        { nodeName: 'a', numPDBViolations: 0, victims: [v(3, '2026-03-01T00:00:00Z'), v(1, '2026-06-01T00:00:00Z')] },
        { nodeName: 'b', numPDBViolations: 0, victims: [v(3, '2026-04-01T00:00:00Z'), v(1, '2026-01-01T00:00:00Z')] },
      ],
      want: 'b',
    },
    { name: 'first on a full tie', candidates: [{ nodeName: 'a', numPDBViolations: 0, victims: [v(1)] }, { nodeName: 'b', numPDBViolations: 0, victims: [v(1)] }], want: 'a' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(pickOneNodeForPreemption(c.candidates, now)?.nodeName, c.want));

  it('orders by priority, then the longer-running pod first', () => {
    assert.equal(moreImportantPod(v(2), v(1), now), true);
    assert.equal(moreImportantPod(v(1, '2026-01-01T00:00:00Z'), v(1, '2026-02-01T00:00:00Z'), now), true);
    assert.equal(moreImportantPod(v(1), v(1, '2026-02-01T00:00:00Z'), now), false);
  });
});
