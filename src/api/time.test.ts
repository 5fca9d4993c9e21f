import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { microTime, rfc3339 } from './time.js';

describe('time wire forms', () => {
  it('formats Time in whole seconds and MicroTime with microseconds', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    assert.equal(rfc3339(t), '2026-01-02T03:04:05Z');
    assert.equal(microTime(t), '2026-01-02T03:04:05.678000Z');
  });
});
