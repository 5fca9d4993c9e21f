import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { IntakeThrottle } from './throttle.js';

/** A throttle on a virtual clock whose loop is as busy as `load.share` says, watched when `load.watching`. */
function throttle(maxDeferMs = 30_000) {
  const clock = new FakeClock();
  const load = { share: 0, watching: false, looks: 0 };
  const t = new IntakeThrottle({
    clock,
    loopBusy: () => {
      load.looks++;
      return load.share;
    },
    watching: () => load.watching,
    maxDeferMs,
  });
  return { clock, load, t };
}

describe('IntakeThrottle', async () => {
  it('holds the intake off while the loop is saturated, and takes it again when the loop has time', async () => {
    const { clock, load, t } = throttle();
    load.share = 0.95;
    // Nothing looked at yet: the loop counts as idle.
    assert.equal(t.defer(), false);
    await clock.advance(500);
    assert.equal(t.defer(), true);
    load.share = 0.5;
    // The last look still stands until the next is due.
    await clock.advance(100);
    assert.equal(t.defer(), true);
    await clock.advance(400);
    assert.equal(t.defer(), false);
  });

  it('looks at the loop at most once per sample', async () => {
    const { clock, load, t } = throttle();
    for (let i = 0; i <= 10; i++) {
      t.defer();
      await clock.advance(100);
    }
    assert.equal(load.looks, 2);
  });

  it('never holds off while someone watches timelines', async () => {
    const { clock, load, t } = throttle();
    load.share = 1;
    load.watching = true;
    await clock.advance(500);
    assert.equal(t.defer(), false);
    load.watching = false;
    assert.equal(t.defer(), true);
  });

  it('takes the intake after maxDeferMs of holding off in a row, until the loop has had time once', async () => {
    const { clock, load, t } = throttle(2000);
    load.share = 0.9;
    await clock.advance(500);
    assert.equal(t.defer(), true);
    await clock.advance(1500);
    assert.equal(t.defer(), true);
    await clock.advance(500);
    assert.equal(t.defer(), false);
    await clock.advance(5000);
    assert.equal(t.defer(), false);
    load.share = 0.1;
    await clock.advance(500);
    assert.equal(t.defer(), false);
    load.share = 0.9;
    await clock.advance(500);
    assert.equal(t.defer(), true);
  });
});
