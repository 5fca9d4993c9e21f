import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../api/errors.js';
import type { Handle, Plugin } from './framework/interface.js';
import { Code, Status } from './framework/status.js';
import { defaultPlugins, inTreeRegistry } from './registry.js';
import { numFeasibleNodesToFind } from './scheduler.js';
import { makeNode, makePod } from './testing/builders.js';
import { Harness } from './testing/harness.js';

const cp = 'node-role.kubernetes.io/control-plane';

describe('numFeasibleNodesToFind', () => {
  const cases: [percentage: number, nodes: number, want: number][] = [
    [0, 10, 10],
    [0, 99, 99],
    [0, 100, 100],
    [0, 500, 230],
    [0, 1000, 420],
    [0, 5000, 500],
    [0, 6000, 300],
    [0, 10000, 500],
    [40, 1000, 400],
    [1, 1000, 100],
    [100, 5000, 5000],
  ];
  for (const [p, n, want] of cases) it(`${p}% of ${n} nodes → ${want}`, () => assert.equal(numFeasibleNodesToFind(p, n), want));
});

describe('Scheduler', () => {
  it('binds a pod, reports Scheduled, and counts it against the node', async () => {
    const h = new Harness();
    await h.start(
      [makeNode().name('node-1').capacity({ cpu: '1', memory: '1Gi' }).obj()],
      [makePod().name('web').req({ cpu: '600m' }).obj(), makePod().name('second').req({ cpu: '600m' }).obj()],
    );
    assert.equal(h.client.binds.length, 1);
    const bound = h.client.binds[0]!;
    assert.equal(bound.node, 'node-1');
    const scheduled = h.client.events.find((e) => e.reason === 'Scheduled');
    assert.equal(scheduled?.note, `Successfully assigned ${bound.pod} to node-1`);
    assert.equal(scheduled?.type, 'Normal');
    assert.equal(scheduled?.action, 'Binding');
    assert.equal(scheduled?.reportingController, 'default-scheduler');
    const other = bound.pod === 'default/web' ? 'default/second' : 'default/web';
    assert.equal(h.podScheduled(other)?.message, '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.');
    await h.stop();
  });

  it("explains failures in upstream's words on the condition and the event", async () => {
    const h = new Harness();
    await h.start(
      [
        makeNode().name('node-1').capacity({ cpu: '1' }).obj(),
        makeNode().name('cp-1').capacity({ cpu: '8' }).taint(cp, undefined, 'NoSchedule').obj(),
        makeNode().name('cp-2').capacity({ cpu: '8' }).taint(cp, '', 'NoSchedule').obj(),
      ],
      [makePod().name('web').req({ cpu: '2' }).obj()],
    );
    const want = `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {${cp}: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`;
    const cond = h.podScheduled('default/web');
    assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['False', 'Unschedulable', want]);
    const ev = h.client.events.find((e) => e.reason === 'FailedScheduling');
    assert.deepEqual([ev?.type, ev?.action, ev?.note, ev?.regarding?.name], ['Warning', 'Scheduling', want, 'web']);
    assert.equal(h.client.binds.length, 0);
    await h.stop();
  });

  it('reports "no nodes available" when the cluster has no nodes, and retries after backoff', async () => {
    const h = new Harness();
    await h.start([], [makePod().name('web').obj()]);
    assert.equal(h.podScheduled('default/web')?.message, 'no nodes available to schedule pods');
    h.client.nodes.upsert(makeNode().name('node-1').capacity({ cpu: '1' }).obj());
    await h.advance(2_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    await h.stop();
  });

  it('retries an unschedulable pod when a node is added', async () => {
    const h = new Harness();
    await h.start([makeNode().name('small').capacity({ cpu: '1' }).obj()], [makePod().name('web').req({ cpu: '2' }).obj()]);
    assert.equal(h.client.binds.length, 0);
    h.client.nodes.upsert(makeNode().name('big').capacity({ cpu: '4' }).obj());
    await h.advance(1_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'big' }]);
    await h.stop();
  });

  it('retries an unschedulable pod when its blocking taint is removed, not on unrelated node changes', async () => {
    const h = new Harness();
    const tainted = makeNode().name('node-1').capacity({ cpu: '1' }).taint('dedicated', 'db', 'NoSchedule');
    await h.start([tainted.obj()], [makePod().name('web').obj()]);
    h.client.nodes.upsert({ ...tainted.obj(), metadata: { ...tainted.obj().metadata, labels: { extra: 'x' } } });
    await h.advance(1_000);
    assert.equal(h.client.binds.length, 0);
    assert.equal(h.scheduler.queue.pendingPods().unschedulable.length, 1);
    h.client.nodes.upsert(makeNode().name('node-1').capacity({ cpu: '1' }).obj());
    await h.advance(1_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    await h.stop();
  });

  it('keeps gated pods out with SchedulingGated, and schedules them once the gates are gone', async () => {
    const h = new Harness();
    const gated = makePod().name('web').schedulingGates('example.com/wait').obj();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [gated]);
    const cond = h.podScheduled('default/web');
    assert.deepEqual([cond?.status, cond?.reason], ['False', 'SchedulingGated']);
    assert.equal(h.client.binds.length, 0);
    const stored = h.pod('default/web')!;
    h.client.pods.upsert({ ...stored, spec: { ...stored.spec!, schedulingGates: [] } });
    await h.settle();
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    await h.stop();
  });

  it('leaves pods of other schedulers alone', async () => {
    const h = new Harness();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('web').schedulerName('other').obj()]);
    assert.equal(h.client.binds.length, 0);
    assert.equal(h.client.statusPatches.length, 0);
    assert.equal(h.client.events.length, 0);
    await h.stop();
  });

  it('schedules higher-priority pods first', async () => {
    const h = new Harness();
    await h.start(
      [makeNode().name('node-1').capacity({ cpu: '1' }).obj()],
      [makePod().name('low').req({ cpu: '1' }).priority(1).obj(), makePod().name('high').req({ cpu: '1' }).priority(100).obj()],
    );
    assert.deepEqual(h.client.binds, [{ pod: 'default/high', node: 'node-1' }]);
    await h.stop();
  });

  it('aggregates repeated FailedScheduling events into a series', async () => {
    const h = new Harness();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('web').req({ cpu: '2' }).obj()]);
    assert.equal(h.client.events.filter((e) => e.reason === 'FailedScheduling').length, 1);
    const patchesBefore = h.client.statusPatches.length;
    // The 5-minute flush retries it twice more.
    await h.advance(5 * 60_000 + 30_000);
    await h.advance(5 * 60_000 + 30_000);
    assert.equal(h.client.events.filter((e) => e.reason === 'FailedScheduling').length, 1);
    assert.equal(h.client.eventPatches[0]?.patch.series?.count, 2);
    // The same condition is not patched again.
    assert.equal(h.client.statusPatches.length, patchesBefore);
    await h.stop();
  });

  it('requeues a pod whose binding failed and binds it after backoff', async () => {
    const h = new Harness();
    let failures = 1;
    h.client.bindError = () => (failures-- > 0 ? new StatusError(500, 'InternalError', 'etcd timeout') : undefined);
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('web').req({ cpu: '1' }).obj()]);
    assert.equal(h.client.binds.length, 0);
    assert.equal(h.podScheduled('default/web')?.reason, 'SchedulerError');
    // The assumed pod was forgotten, so the node is free for the retry.
    await h.advance(1_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    await h.stop();
  });

  it('counts bound pods from the informer, so later pods see the node as used', async () => {
    const h = new Harness();
    const running = makePod().name('running').req({ cpu: '800m' }).nodeName('node-1').phase('Running').obj();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj(), makeNode().name('node-2').capacity({ cpu: '1' }).obj()], [running]);
    h.client.pods.upsert(makePod().name('web').req({ cpu: '500m' }).obj());
    await h.settle();
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-2' }]);
    await h.stop();
  });

  it('runs extra plugins of a custom profile, which see namespace labels through the handle', async () => {
    const guard = (_args: unknown, handle: Handle): Plugin =>
      ({
        name: 'NamespaceGuard',
        filter: (_s: unknown, pod: { metadata?: { namespace?: string } }) =>
          handle.namespaceLabels(pod.metadata?.namespace ?? '')?.frozen === 'true' ? Status.of(Code.UnschedulableAndUnresolvable, 'namespace is frozen') : undefined,
      }) as Plugin;
    const h = new Harness({
      registry: { ...inTreeRegistry, NamespaceGuard: guard },
      profiles: [{ schedulerName: 'default-scheduler', plugins: [...defaultPlugins, { name: 'NamespaceGuard' }] }],
    });
    h.client.namespaces.upsert({ metadata: { name: 'cold', labels: { frozen: 'true' } } });
    h.client.namespaces.upsert({ metadata: { name: 'default' } });
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('a').namespace('cold').obj(), makePod().name('b').obj()]);
    assert.deepEqual(h.client.binds, [{ pod: 'default/b', node: 'node-1' }]);
    assert.equal(h.podScheduled('cold/a')?.message, '0/1 nodes are available: 1 namespace is frozen. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.');
    await h.stop();
  });

  it('reports a hostPort conflict and schedules once the holder is deleted', async () => {
    const h = new Harness();
    const holder = makePod().name('holder').hostPort(8080).nodeName('node-1').obj();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [holder, makePod().name('web').hostPort(8080).obj()]);
    assert.equal(h.podScheduled('default/web')?.message, "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
    h.client.pods.remove(holder);
    await h.advance(1_000);
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    await h.stop();
  });

  it('reports node selector mismatches', async () => {
    const h = new Harness();
    await h.start(
      [makeNode().name('a').capacity({ cpu: '1' }).obj(), makeNode().name('b').capacity({ cpu: '1' }).obj()],
      [makePod().name('web').nodeSelector({ disk: 'ssd' }).obj()],
    );
    assert.equal(h.podScheduled('default/web')?.message, "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
    await h.stop();
  });

  it("appends the PostFilter message and records its nominated node", async () => {
    const preempt = (): Plugin =>
      ({
        name: 'FakePreemption',
        postFilter: () => ({
          result: { nominatingInfo: { nominatedNodeName: 'node-1', mode: 'Override' } },
          status: Status.of(Code.Unschedulable, 'preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.'),
        }),
      }) as Plugin;
    const h = new Harness({
      registry: { ...inTreeRegistry, FakePreemption: preempt },
      // In place of DefaultPreemption, so that only its message and nomination count.
      profiles: [{ schedulerName: 'default-scheduler', plugins: [...defaultPlugins.filter((p) => p.name !== 'DefaultPreemption'), { name: 'FakePreemption' }] }],
    });
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('web').req({ cpu: '2' }).obj()]);
    assert.equal(
      h.podScheduled('default/web')?.message,
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
    assert.equal(h.pod('default/web')?.status?.nominatedNodeName, 'node-1');
    assert.deepEqual(h.scheduler.queue.nominatedPodsForNode('node-1').map((p) => p.pod.metadata?.name), ['web']);
    await h.stop();
  });

  it('runs one profile per schedulerName, each reporting under its own name', async () => {
    const h = new Harness({ profiles: [{ schedulerName: 'default-scheduler', plugins: [...defaultPlugins] }, { schedulerName: 'batch', plugins: [...defaultPlugins] }] });
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('job').schedulerName('batch').obj(), makePod().name('web').obj()]);
    assert.equal(h.client.binds.length, 2);
    const controllers = Object.fromEntries(h.client.events.map((e) => [e.regarding?.name, e.reportingController]));
    assert.deepEqual(controllers, { job: 'batch', web: 'default-scheduler' });
    await h.stop();
  });

  it('stops filtering at numFeasibleNodesToFind and starts the next pod where the last one stopped', async () => {
    const seen: string[][] = [];
    const counter = (): Plugin =>
      ({
        name: 'Counter',
        preFilter: () => (seen.push([]), undefined),
        filter: (_s: unknown, _p: unknown, ni: { name: string }) => (seen.at(-1)!.push(ni.name), undefined),
      }) as Plugin;
    const h = new Harness({
      registry: { ...inTreeRegistry, Counter: counter },
      profiles: [{ schedulerName: 'default-scheduler', plugins: [...defaultPlugins, { name: 'Counter' }] }],
    });
    const nodes = Array.from({ length: 150 }, (_, i) => makeNode().name(`n${String(i).padStart(3, '0')}`).capacity({ cpu: '1' }).obj());
    await h.start(nodes, [makePod().name('a').priority(2).obj(), makePod().name('b').priority(1).obj()]);
    assert.deepEqual(seen.map((s) => s.length), [100, 100]);
    assert.equal(new Set([...seen[0]!, ...seen[1]!]).size, 150, 'the second pod starts with the nodes the first did not see');
    await h.stop();
  });

  it('holds binding while a Permit plugin waits, and binds once it allows', async () => {
    let handle: Handle | undefined;
    const gate = (_args: unknown, h: Handle): Plugin => {
      handle = h;
      return { name: 'Gate', permit: () => ({ status: Status.of(Code.Wait), timeoutMs: 60_000 }) } as Plugin;
    };
    const h = new Harness({
      registry: { ...inTreeRegistry, Gate: gate },
      profiles: [{ schedulerName: 'default-scheduler', plugins: [...defaultPlugins, { name: 'Gate' }] }],
    });
    const pod = makePod().name('web').req({ cpu: '1' }).priority(1).obj();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [pod, makePod().name('next').req({ cpu: '1' }).obj()]);
    assert.equal(h.client.binds.length, 0);
    // The waiting pod holds the node's cpu: the next pod does not fit.
    assert.equal(h.podScheduled('default/next')?.message, '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.');
    handle!.getWaitingPod(pod.metadata!.uid!)!.allow('Gate');
    await h.settle();
    assert.deepEqual(h.client.binds, [{ pod: 'default/web', node: 'node-1' }]);
    await h.stop();
  });
});
