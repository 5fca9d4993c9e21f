import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, within } from './clock.js';

describe('within', () => {
  it('is true when the work ends in time, and leaves no timer', async () => {
    const clock = new FakeClock();
    assert.equal(await within(clock, 1000, Promise.resolve()), true);
    assert.equal(clock.pending(), 0);
  });

  it('is false once the time is up, not before', async () => {
    const clock = new FakeClock();
    let result: boolean | undefined;
    void within(clock, 1000, new Promise(() => {})).then((r) => (result = r));
    await clock.advance(999);
    assert.equal(result, undefined);
    await clock.advance(1);
    assert.equal(result, false);
  });

  it('throws what the work throws, and leaves no timer', async () => {
    const clock = new FakeClock();
    await assert.rejects(within(clock, 1000, Promise.reject(new Error('boom'))), /boom/);
    assert.equal(clock.pending(), 0);
  });
});
