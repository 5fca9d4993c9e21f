import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeTimelineRecorder } from '../client/timeline/recorder.js';
import { makeNode, makePod } from './testing/builders.js';
import { Harness } from './testing/harness.js';
import { NodeInfo } from './framework/types.js';
import { topScores } from './timeline.js';

const steps = (timeline: FakeTimelineRecorder, uid: string) => timeline.steps(uid).map((s) => s.step);

describe('scheduler timeline', () => {
  it("an unschedulable pod's attempt: per-plugin verdicts add up to the FailedScheduling histogram, and its message is the event's", async () => {
    const timeline = new FakeTimelineRecorder();
    const h = new Harness({ timeline });
    const pod = makePod().name('web').uid('web-uid').req({ cpu: '2' }).nodeSelector({ disk: 'ssd' }).obj();
    await h.start(
      [
        makeNode().name('small-1').labels({ disk: 'ssd' }).capacity({ cpu: '1' }).obj(),
        makeNode().name('small-2').labels({ disk: 'ssd' }).capacity({ cpu: '1' }).obj(),
        makeNode().name('gpu-1').labels({ disk: 'ssd' }).capacity({ cpu: '8' }).taint('dedicated', 'gpu', 'NoSchedule').obj(),
        makeNode().name('gpu-2').labels({ disk: 'ssd' }).capacity({ cpu: '8' }).taint('dedicated', 'gpu', 'NoSchedule').obj(),
        makeNode().name('hdd-1').labels({ disk: 'hdd' }).capacity({ cpu: '8' }).obj(),
        makeNode().name('hdd-2').labels({ disk: 'hdd' }).capacity({ cpu: '8' }).obj(),
      ],
      [pod],
    );
    const event = h.client.events.find((e) => e.reason === 'FailedScheduling');
    assert.ok(event?.note);
    const attempts = timeline.steps('web-uid').filter((s) => s.step === 'SchedulingAttempt');
    assert.equal(attempts.length, 1);
    const attempt = attempts[0]!;
    assert.equal(attempt.component, 'default-scheduler');
    assert.deepEqual(timeline.records[0]?.pod, { namespace: 'default', name: 'web', uid: 'web-uid' });
    const summary = attempt.scheduling!;
    assert.equal(summary.message, event.note);
    assert.deepEqual([summary.result, summary.nodes, summary.feasible], ['Unschedulable', 6, 0]);
    assert.deepEqual(
      summary.plugins.map((p) => [p.plugin, p.rejected, p.reasons]),
      [
        ['NodeAffinity', 2, { "node(s) didn't match Pod's node affinity/selector": 2 }],
        ['NodeResourcesFit', 2, { 'Insufficient cpu': 2 }],
        ['TaintToleration', 2, { 'node(s) had untolerated taint {dedicated: gpu}': 2 }],
      ],
    );
    // The histogram the message prints, rebuilt from the per-plugin verdicts.
    const counts = new Map<string, number>();
    for (const p of summary.plugins) for (const [r, n] of Object.entries(p.reasons)) counts.set(r, (counts.get(r) ?? 0) + n);
    const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.ok(event.note.startsWith(`0/6 nodes are available: ${parts.join(', ')}. `), event.note);
    assert.equal(summary.rejectedNodes?.length, 6);
    assert.deepEqual(summary.rejectedNodes?.find((n) => n.node === 'gpu-1'), { node: 'gpu-1', plugin: 'TaintToleration', reason: 'node(s) had untolerated taint {dedicated: gpu}' });
    assert.equal(attempt.attributes?.queue, 'unschedulable');
    assert.equal(summary.topScores, undefined);
    assert.deepEqual(steps(timeline, 'web-uid'), ['SchedulingQueued', 'SchedulingAttempt']);
    await h.stop();
  });

  it('repeated attempts with the same message are one series (count, lastTime, the first start)', async () => {
    const timeline = new FakeTimelineRecorder();
    const h = new Harness({ timeline });
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [makePod().name('web').uid('series-uid').req({ cpu: '2' }).obj()]);
    // Backoff then the 5-minute flush of the unschedulable pool retries it without any change.
    await h.advance(5 * 60_000 + 30_000);
    const attempts = timeline.steps('series-uid').filter((s) => s.step === 'SchedulingAttempt');
    assert.equal(attempts.length, 2);
    const [first, second] = attempts as [(typeof attempts)[0], (typeof attempts)[0]];
    assert.equal(first.count, undefined);
    assert.equal(second.count, 2);
    assert.equal(second.start, first.start);
    assert.ok(second.lastTime! > first.start);
    assert.equal(second.scheduling?.message, first.scheduling?.message);
    await h.stop();
  });

  it('a scheduled pod: top scores with their weighted parts, the chosen node, Bound, and the SLI', async () => {
    const timeline = new FakeTimelineRecorder();
    const h = new Harness({ timeline });
    await h.start(
      [makeNode().name('a').capacity({ cpu: '4' }).obj(), makeNode().name('b').capacity({ cpu: '8' }).obj(), makeNode().name('c').capacity({ cpu: '2' }).obj()],
      [makePod().name('web').uid('ok-uid').req({ cpu: '1' }).obj()],
    );
    assert.deepEqual(steps(timeline, 'ok-uid'), ['SchedulingQueued', 'SchedulingAttempt', 'Bound']);
    const [, attempt, bound] = timeline.steps('ok-uid');
    const summary = attempt!.scheduling!;
    assert.equal(summary.result, 'Scheduled');
    assert.equal(summary.node, h.client.binds[0]?.node);
    assert.equal(summary.topScores?.length, 3);
    for (const t of summary.topScores!) {
      assert.equal(
        Object.values(t.plugins).reduce((a, b) => a + b, 0),
        t.total,
      );
    }
    const totals = summary.topScores!.map((t) => t.total);
    assert.deepEqual(totals, [...totals].sort((x, y) => y - x));
    assert.equal(summary.topScores![0]!.total, Math.max(...totals));
    assert.equal(summary.node, summary.topScores![0]!.node);
    assert.deepEqual(bound?.attributes, { node: summary.node });
    const sli = await h.scheduler.metrics.registry.getSingleMetricAsString('scheduler_pod_scheduling_sli_duration_seconds');
    assert.match(sli, /scheduler_pod_scheduling_sli_duration_seconds_count\{attempts="1"\} 1/);
    await h.stop();
  });

  it('a gated pod: SchedulingGated with the gates, then SchedulingUngated, queued and bound; the SLI excludes the gated time', async () => {
    const timeline = new FakeTimelineRecorder();
    const h = new Harness({ timeline });
    const gated = makePod().name('web').uid('gated-uid').schedulingGates('example.com/a', 'example.com/b').obj();
    await h.start([makeNode().name('node-1').capacity({ cpu: '1' }).obj()], [gated]);
    assert.deepEqual(steps(timeline, 'gated-uid'), ['SchedulingGated']);
    assert.equal(timeline.steps('gated-uid')[0]?.attributes?.gates, 'example.com/a, example.com/b');
    // Dropping one gate changes the pod but keeps it gated: no second SchedulingGated.
    let stored = h.pod('default/web')!;
    h.client.pods.upsert({ ...stored, spec: { ...stored.spec!, schedulingGates: [{ name: 'example.com/b' }] } });
    await h.advance(100_000);
    assert.deepEqual(steps(timeline, 'gated-uid'), ['SchedulingGated']);
    stored = h.pod('default/web')!;
    h.client.pods.upsert({ ...stored, spec: { ...stored.spec!, schedulingGates: [] } });
    await h.settle();
    assert.deepEqual(steps(timeline, 'gated-uid'), ['SchedulingGated', 'SchedulingUngated', 'SchedulingQueued', 'SchedulingAttempt', 'Bound']);
    const sli = await h.scheduler.metrics.registry.getSingleMetricAsString('scheduler_pod_scheduling_sli_duration_seconds');
    // Bound in virtual time without the clock moving after the gates went: the first bucket holds it.
    assert.match(sli, /scheduler_pod_scheduling_sli_duration_seconds_bucket\{le="0.01",attempts="1"\} 1/);
    await h.stop();
  });

  it('top scores: best first, at most 5, and the chosen node among them when ties leave it out', () => {
    const nodes = Array.from({ length: 7 }, (_, i) => new NodeInfo(makeNode().name(`n${i}`).obj()));
    const totals = [10, 30, 30, 30, 30, 30, 30];
    const byPlugin = [{ plugin: 'A', weight: 2, scores: totals.map((t) => t / 2) }];
    const top = topScores(nodes, totals, byPlugin, 6);
    assert.equal(top.length, 5);
    assert.ok(top.some((t) => t.node === 'n6'));
    assert.ok(top.every((t) => t.total === 30 && t.plugins.A === 30));
    assert.deepEqual(
      topScores(nodes, [1, 2, 3, 4, 5, 6, 7], [], 6).map((t) => t.node),
      ['n6', 'n5', 'n4', 'n3', 'n2'],
    );
  });
});
