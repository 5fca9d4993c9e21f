import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeStepBatch } from './decode.js';

const pod = { namespace: 'default', name: 'web', uid: 'u1' };

/** Mostly what a recorder sends, sometimes a near miss (empty, null, the wrong type, too long, another form). */
const mostly = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) => fc.oneof({ arbitrary: good, weight: 12 }, { arbitrary: bad, weight: 1 });
const time = mostly(
  fc.integer({ min: 0, max: 999_999 }).map((us) => `2026-01-01T00:00:00.${String(us).padStart(6, '0')}Z`),
  fc.constantFrom('2026-01-01T01:00:00.5+01:00', '2026-13-01T00:00:00.000000Z', '2026-01-01T00:00:00Z', 'soon', 7, null),
);
const text = (max: number) => mostly(fc.string({ minLength: 1, maxLength: 8 }), fc.constantFrom('', 'x'.repeat(max + 1), 3, null, true));
const attributeKey = mostly(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'k'.repeat(254)));
const attributeValue = mostly(fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()), fc.constantFrom(null, 'v'.repeat(4097), { nested: 1 }, [1]));
const step = fc.record(
  {
    step: mostly(fc.constantFrom('Bound', 'ContainerStarted', 'SchedulingQueued'), fc.constantFrom('NoSuchStep', 4, null)),
    component: text(253),
    start: time,
    end: time,
    lastTime: time,
    container: text(253),
    containerType: mostly(fc.constantFrom('init', 'regular', 'ephemeral'), fc.constantFrom('sidecar', '', null)),
    detail: text(4096),
    attributes: mostly(fc.dictionary(attributeKey, attributeValue, { maxKeys: 5 }), fc.oneof(fc.constantFrom(null, 'flat', [1]), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { minKeys: 65, maxKeys: 66 }))),
    count: mostly(fc.integer({ min: 1, max: 100 }), fc.constantFrom(0, -1, 1.5, '2', null)),
  },
  { requiredKeys: ['step', 'component', 'start'] },
);
/** Now and then a field the fast path leaves to the copy: a scheduling summary, an unknown field. */
const sentStep = fc
  .tuple(step, fc.integer({ min: 0, max: 9 }))
  .map(([s, n]) => (n === 0 ? { ...s, scheduling: { result: 'Scheduled', nodes: 3, feasible: 1, plugins: [] } } : n === 1 ? { ...s, extra: 'unknown field' } : s));

/** The decoded records, or the 422's causes. */
function outcome(steps: unknown[], keep: boolean): unknown {
  try {
    return decodeStepBatch({ records: [{ pod, steps }] }, keep);
  } catch (err) {
    return (err as { status?: { details?: unknown } }).status?.details ?? err;
  }
}

test('a step kept as parsed is exactly what the copying decoder makes of it, and every bad one fails alike', () => {
  fc.assert(
    fc.property(fc.array(sentStep, { maxLength: 4 }), (generated) => {
      // As a request body arrives: parsed JSON text, `__proto__` an own key.
      const steps = JSON.parse(JSON.stringify(generated)) as unknown[];
      assert.deepEqual(outcome(steps, true), outcome(steps, false));
    }),
    { numRuns: 3000, seed: 20261204 },
  );
});

test('a step in wire form is kept as parsed, not copied', () => {
  const sent = { step: 'ContainerStarted', component: 'kubelet', start: '2026-01-01T00:00:00.000001Z', container: 'main', containerType: 'regular', attributes: { restarts: 0 } };
  const [record] = decodeStepBatch({ records: [{ pod, steps: [sent] }] });
  assert.equal(record!.steps[0], sent);
  const [copied] = decodeStepBatch({ records: [{ pod, steps: [{ ...sent, start: '2026-01-01T01:00:00.001000+01:00' }] }] });
  assert.equal(copied!.steps[0]!.start, '2026-01-01T00:00:00.001000Z', 'another offset is normalised in a copy');
});
