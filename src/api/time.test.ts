import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { microTime, rfc3339 } from './time.js';

describe('time wire forms', () => {
  it('formats Time in whole seconds and MicroTime with microseconds', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    assert.equal(rfc3339(t), '2026-01-02T03:04:05Z');
    assert.equal(microTime(t), '2026-01-02T03:04:05.678000Z');
  });

  it('gives what toISOString gives, second after second and back, for any millisecond', () => {
    const base = Date.UTC(2026, 11, 31, 23, 59, 58, 0);
    for (const ms of [base, base + 7, base + 42.9, base + 999, base + 1000, base + 2001, base + 1, -1, -1000.5, 0, -0, 253402300800000]) {
      const iso = new Date(ms).toISOString();
      assert.equal(microTime(ms), iso.replace(/Z$/, '000Z'), `microTime(${ms})`);
      assert.equal(rfc3339(ms), iso.replace(/\.\d{3}Z$/, 'Z'), `rfc3339(${ms})`);
    }
    assert.throws(() => microTime(NaN), RangeError);
    assert.throws(() => rfc3339(8.64e15 + 1), RangeError);
  });
});
