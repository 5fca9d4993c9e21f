import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../api/types.js';
import { FakeTimelineRecorder } from '../../client/timeline/recorder.js';
import { FakeClock } from '../../util/clock.js';
import { KubeletMetrics } from '../metrics/metrics.js';
import { KubeletTimeline, type PodStartMetrics } from './timeline.js';

const T0 = Date.UTC(2026, 0, 1);

function pod(status: Pod['status'] = {}): Pod {
  return { metadata: { name: 'web', namespace: 'default', uid: 'u1', creationTimestamp: new Date(T0).toISOString() }, spec: { containers: [{ name: 'c' }] }, status };
}
const running: Pod['status'] = { phase: 'Running', startTime: '2026-01-01T00:00:01Z', containerStatuses: [{ name: 'c', image: 'x', imageID: '', ready: false, restartCount: 0, state: { running: {} } }] };

function setup() {
  const clock = new FakeClock(T0);
  const observed: [number, number][] = [];
  const metrics: PodStartMetrics = { observePodStart: (sli, total) => observed.push([sli, total]) };
  const steps = new FakeTimelineRecorder();
  return { clock, observed, steps, timeline: new KubeletTimeline({ recorder: steps, nodeName: 'n1', clock, metrics }) };
}

describe('KubeletTimeline', () => {
  it('the start-up SLIs: creation to all containers running on the watch, the SLI less the image pulls', async () => {
    const { clock, observed, timeline } = setup();
    timeline.observedOnWatch(pod({ phase: 'Pending' }));
    await clock.advance(1000);
    timeline.span(pod(), 'ImagePull', clock.now(), { container: 'c', attributes: { image: 'x', size: 1 } }, clock.now() + 2500);
    await clock.advance(4000);
    timeline.observedOnWatch(pod({ phase: 'Pending', startTime: '2026-01-01T00:00:01Z' }));
    assert.deepEqual(observed, [], 'not all running yet');
    timeline.observedOnWatch(pod(running));
    timeline.observedOnWatch(pod(running));
    assert.deepEqual(observed, [[2.5, 5]], 'once per pod');
  });

  it('a pod first seen already started (a kubelet restart) is not observed', () => {
    const { observed, timeline } = setup();
    timeline.observedOnWatch(pod(running));
    timeline.observedOnWatch(pod(running));
    assert.deepEqual(observed, []);
  });

  it('a present image does not count as pulling', async () => {
    const { clock, observed, timeline } = setup();
    timeline.observedOnWatch(pod({ phase: 'Pending' }));
    timeline.span(pod(), 'ImagePull', clock.now(), { container: 'c', attributes: { image: 'x', present: true } }, clock.now() + 100);
    await clock.advance(3000);
    timeline.observedOnWatch(pod(running));
    assert.deepEqual(observed, [[3, 3]]);
  });

  it('once, series and exits: one row each, counted', async () => {
    const { clock, steps, timeline } = setup();
    timeline.once(pod(), 'Ready', 'Ready');
    timeline.once(pod(), 'Ready', 'Ready');
    timeline.series(pod(), 'ProbeFailed', { container: 'c', attributes: { probe: 'liveness' } });
    await clock.advance(5000);
    timeline.series(pod(), 'ProbeFailed', { container: 'c', attributes: { probe: 'liveness' } });
    timeline.series(pod(), 'ProbeFailed', { container: 'c', attributes: { probe: 'readiness' } });
    const state = { uid: 'u1', name: 'web', namespace: 'default', sandboxes: [], containers: [{ id: 'a', sandboxId: 's', name: 'c', state: 'CONTAINER_EXITED' as const, createdAt: T0, finishedAt: T0 + 42, exitCode: 1, reason: 'Error', message: '', restartCount: 0, hash: '', image: '', imageRef: '' }] };
    timeline.containersObserved(pod(), state);
    timeline.containersObserved(pod(), state);
    const got = steps.steps('u1');
    assert.deepEqual(got.map((s) => [s.step, s.attributes?.probe ?? '', s.count ?? 0]), [
      ['Ready', '', 0],
      ['ProbeFailed', 'liveness', 1],
      ['ProbeFailed', 'liveness', 2],
      ['ProbeFailed', 'readiness', 1],
      ['ContainerExited', '', 0],
    ]);
    assert.equal(got[2]!.start, '2026-01-01T00:00:00.000000Z');
    assert.equal(got[2]!.lastTime, '2026-01-01T00:00:05.000000Z');
    assert.equal(got[4]!.start, '2026-01-01T00:00:00.042000Z', 'the runtime\'s exit time');
    timeline.once(pod(), 'VolumesRemoved', 'VolumesRemoved', {}, T0 + 100, T0 + 130);
    timeline.once(pod(), 'VolumesRemoved', 'VolumesRemoved', {}, T0 + 200, T0 + 210);
    const removed = steps.steps('u1').filter((s) => s.step === 'VolumesRemoved');
    assert.deepEqual(removed.map((s) => [s.start, s.end]), [['2026-01-01T00:00:00.100000Z', '2026-01-01T00:00:00.130000Z']], 'a clean-up done twice is one span');
    timeline.forgetPod('u1');
    // A clean-up the worker repeats after housekeeping forgot the pod (CI once showed CgroupsRemoved twice).
    timeline.once(pod(), 'CgroupsRemoved', 'CgroupsRemoved', {}, T0 + 300, T0 + 310);
    timeline.instant(pod(), 'StatusFinal');
    assert.equal(steps.steps('u1').length, 6, 'a forgotten pod records nothing more');
  });

  it('the metrics render with upstream names and buckets', async () => {
    const metrics = new KubeletMetrics();
    metrics.observePodStart(1.5, 7);
    const text = await metrics.render();
    assert.match(text, /^kubelet_pod_start_sli_duration_seconds_bucket\{le="2"\} 1$/m);
    assert.match(text, /^kubelet_pod_start_sli_duration_seconds_bucket\{le="1"\} 0$/m);
    assert.match(text, /^kubelet_pod_start_total_duration_seconds_bucket\{le="8"\} 1$/m);
    assert.match(text, /^kubelet_pod_start_total_duration_seconds_bucket\{le="3600"\} 1$/m);
    assert.match(text, /^kubelet_pod_start_total_duration_seconds_sum 7$/m);
  });
});
