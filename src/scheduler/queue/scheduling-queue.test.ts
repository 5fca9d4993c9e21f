import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { ActionType, AssignedPodDelete, NodeAdd, QueueingHint, type ClusterEventWithHint } from '../framework/events.js';
import type { QueuedPodInfo } from '../framework/interface.js';
import { PrioritySort } from '../plugins/prioritysort/prioritysort.js';
import { SchedulingGates } from '../plugins/schedulinggates/schedulinggates.js';
import { makeNode, makePod } from '../testing/builders.js';
import { SchedulingQueue } from './scheduling-queue.js';

function setup(events: Record<string, ClusterEventWithHint[]> = {}) {
  const clock = new FakeClock();
  const gates = new SchedulingGates();
  const gated: Pod[] = [];
  const q = new SchedulingQueue({
    clock,
    less: (a, b) => new PrioritySort().less(a, b),
    preEnqueue: (pod) => gates.preEnqueue(pod)?.withPlugin(gates.name),
    eventsToRegister: new Map(Object.entries(events)),
    onGated: (pod) => gated.push(pod),
  });
  return { clock, q, gated };
}

const name = (p: QueuedPodInfo | undefined) => p?.podInfo.pod.metadata?.name;

/** Pops a pod and fails it as rejected by `plugins` (or by an error when none). */
async function failAttempt(q: SchedulingQueue, ...plugins: string[]): Promise<QueuedPodInfo> {
  const p = (await q.pop())!;
  p.unschedulablePlugins = new Set(plugins);
  q.addUnschedulableIfNotPresent(p, q.currentSchedulingCycle());
  return p;
}

describe('SchedulingQueue', () => {
  it('pops by priority, then by arrival', async () => {
    const { clock, q } = setup();
    q.add(makePod().name('low-early').priority(1).obj());
    await clock.advance(1);
    q.add(makePod().name('high').priority(10).obj());
    await clock.advance(1);
    q.add(makePod().name('low-late').priority(1).obj());
    assert.deepEqual([name(await q.pop()), name(await q.pop()), name(await q.pop())], ['high', 'low-early', 'low-late']);
  });

  it('waits in pop until a pod arrives, and returns undefined once closed', async () => {
    const { q } = setup();
    const popped = q.pop();
    q.add(makePod().name('web').obj());
    assert.equal(name(await popped), 'web');
    const pending = q.pop();
    q.close();
    assert.equal(await pending, undefined);
  });

  it('backs off 1s doubling per attempt up to 10s', () => {
    const { q } = setup();
    const pInfo = { attempts: 0 } as QueuedPodInfo;
    const durations = [1, 2, 3, 4, 5, 6].map((attempts) => q.backoffDuration({ ...pInfo, attempts }));
    assert.deepEqual(durations, [1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it('sends pods that failed with an error to backoffQ, then back to activeQ', async () => {
    const { clock, q } = setup();
    q.add(makePod().name('web').obj());
    await failAttempt(q);
    assert.equal(q.pendingPods().backoff.length, 1);
    await clock.advance(999);
    q.flushBackoffQCompleted();
    assert.equal(q.pendingPods().active.length, 0);
    await clock.advance(1);
    q.flushBackoffQCompleted();
    assert.equal(q.pendingPods().active.length, 1);
  });

  it('moves rejected pods back only on events their plugins registered, as the hints allow', async () => {
    const onlyBig: ClusterEventWithHint = {
      event: { resource: 'Node', actionType: ActionType.Add },
      queueingHintFn: (_pod, _old, node) => ((node as ReturnType<typeof makeNode.prototype.obj>).metadata?.name === 'big' ? QueueingHint.Queue : QueueingHint.QueueSkip),
    };
    const { clock, q } = setup({ Fit: [onlyBig] });
    q.add(makePod().name('web').obj());
    await failAttempt(q, 'Fit');
    await clock.advance(5_000);
    // An event after the attempt ended: the pod waits in the pool.
    q.moveAllToActiveOrBackoffQueue(AssignedPodDelete);
    assert.equal(q.pendingPods().unschedulable.length, 1, 'Fit did not register pod deletes');
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, makeNode().name('small').obj());
    assert.equal(q.pendingPods().unschedulable.length, 1, 'the hint skipped this node');
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, makeNode().name('big').obj());
    assert.equal(q.pendingPods().active.length, 1);
  });

  it('moves a pod still backing off to backoffQ', async () => {
    const { q } = setup({ Fit: [{ event: { resource: 'Node', actionType: ActionType.Add } }] });
    q.add(makePod().name('web').obj());
    await failAttempt(q, 'Fit');
    assert.equal(q.pendingPods().unschedulable.length, 1);
    // Moved within its 1s backoff: it waits out the backoff in backoffQ.
    q.moveAllToActiveOrBackoffQueue(NodeAdd);
    assert.deepEqual(q.pendingPods().backoff.map((p) => p.metadata?.name), ['web']);
    assert.equal(q.pendingPods().active.length, 0);
  });

  it('sends a pod whose attempt overlapped a move request to backoffQ', async () => {
    const { q } = setup({ Fit: [{ event: { resource: 'Node', actionType: ActionType.Add } }] });
    q.add(makePod().name('web').obj());
    const p = (await q.pop())!;
    q.moveAllToActiveOrBackoffQueue(NodeAdd);
    p.unschedulablePlugins = new Set(['Fit']);
    q.addUnschedulableIfNotPresent(p, q.currentSchedulingCycle());
    assert.equal(q.pendingPods().backoff.length, 1);
  });

  it('retries pods unschedulable for 5 minutes without any event', async () => {
    const { clock, q } = setup({ Fit: [] });
    q.add(makePod().name('web').obj());
    await failAttempt(q, 'Fit');
    await clock.advance(5 * 60_000 - 1);
    q.flushUnschedulablePodsLeftover();
    assert.equal(q.pendingPods().unschedulable.length, 1);
    await clock.advance(1);
    q.flushUnschedulablePodsLeftover();
    assert.equal(q.pendingPods().active.length, 1);
  });

  it('parks gated pods until the gates are removed', async () => {
    const { q, gated } = setup();
    const pod = makePod().name('web').schedulingGates('wait').obj();
    q.add(pod);
    assert.deepEqual([q.pendingPods().unschedulable.length, gated.length], [1, 1]);
    q.moveAllToActiveOrBackoffQueue(NodeAdd);
    q.flushUnschedulablePodsLeftover();
    assert.equal(q.pendingPods().active.length, 0, 'events do not release gated pods');
    q.update(pod, { ...pod, spec: { ...pod.spec!, schedulingGates: [] } });
    assert.equal(name(await q.pop()), 'web');
  });

  it('keeps an unschedulable pod parked on status-only updates, with the latest object', async () => {
    const { q } = setup({ Fit: [] });
    const pod = makePod().name('web').obj();
    q.add(pod);
    await failAttempt(q, 'Fit');
    const withStatus = { ...pod, status: { nominatedNodeName: 'n1' } };
    q.update(pod, withStatus);
    assert.deepEqual(q.pendingPods().unschedulable, [withStatus]);
    const relabeled = { ...withStatus, metadata: { ...pod.metadata, labels: { app: 'x' } } };
    q.update(withStatus, relabeled);
    assert.equal(q.pendingPods().unschedulable.length, 0, 'a spec or label change is retried');
  });

  it('forgets deleted pods', async () => {
    const { q } = setup();
    const pod = makePod().name('web').obj();
    q.add(pod);
    q.delete(pod);
    assert.deepEqual(q.pendingPods(), { active: [], backoff: [], unschedulable: [] });
  });

  it('tracks nominated pods per node', () => {
    const { q } = setup();
    const pod = makePod().name('web').nominatedNodeName('n1').obj();
    q.add(pod);
    assert.deepEqual(q.nominatedPodsForNode('n1').map((p) => p.pod.metadata?.name), ['web']);
    q.deleteNominatedPodIfExists(pod);
    assert.deepEqual(q.nominatedPodsForNode('n1'), []);
  });
});
