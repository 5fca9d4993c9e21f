import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import { FakeTimelineRecorder } from '../../client/timeline/recorder.js';
import { FakeClock } from '../../util/clock.js';
import { EndpointTimeline } from './timeline.js';

const slice = (name: string, pods: [uid: string, ready: boolean][]): EndpointSlice => ({
  addressType: 'IPv4',
  metadata: { name },
  endpoints: pods.map(([uid, ready]) => ({ addresses: ['10.217.206.9'], conditions: { ready }, targetRef: { kind: 'Pod', namespace: 'ns', name: uid, uid } })),
});

describe('EndpointTimeline', () => {
  it('takes the slices of a Service first seen as already recorded (a restart announces nothing old)', () => {
    const fake = new FakeTimelineRecorder();
    const t = new EndpointTimeline(fake, new FakeClock());
    const old = slice('web-1', [['a', true]]);
    t.seed('ns/web', [old]);
    t.written('ns/web', 'web', old, slice('web-1', [['a', true], ['b', true]]));
    assert.deepEqual(
      fake.records.map((r) => [r.pod.uid, r.step.step]),
      [['b', 'EndpointAdded']],
    );
  });

  it('an endpoint moved to another slice is neither added again nor removed', () => {
    const fake = new FakeTimelineRecorder();
    const t = new EndpointTimeline(fake, new FakeClock());
    t.seed('ns/web', []);
    const first = slice('web-1', [['a', true]]);
    t.written('ns/web', 'web', undefined, first);
    // The controller's order: creates, then updates, then deletes.
    t.written('ns/web', 'web', undefined, slice('web-2', [['a', true]]));
    t.deleted('ns/web', 'web', first);
    assert.deepEqual(
      fake.records.map((r) => [r.pod.uid, r.step.step, r.step.attributes?.slice]),
      [['a', 'EndpointAdded', 'web-1']],
    );
    t.deleted('ns/web', 'web', slice('web-2', [['a', true]]));
    assert.deepEqual(fake.records.at(-1)?.step.step, 'EndpointRemoved');
  });
});
