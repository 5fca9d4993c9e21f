import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { IntakeHold, type IntakeHoldOptions } from './hold.js';

/** A hold on a virtual clock whose machine is as busy as `machine.busy` says, counting the looks. */
function setup(opts: Partial<IntakeHoldOptions> = {}) {
  const clock = new FakeClock();
  const machine = { busy: true, looks: 0, watched: false };
  const posted: unknown[] = [];
  const hold = new IntakeHold({
    clock,
    busy: () => {
      machine.looks++;
      return machine.busy;
    },
    post: (m) => posted.push(m),
    watched: () => machine.watched,
    ...opts,
  });
  return { clock, machine, posted, hold };
}

describe('IntakeHold', () => {
  it('sends at once while the machine is not busy, looking at it at most every 250 ms', async () => {
    const { clock, machine, posted, hold } = setup();
    machine.busy = false;
    hold.intake({ bytes: 10, message: 'a' });
    hold.intake({ bytes: 10, message: 'b' });
    assert.deepEqual(posted, ['a', 'b']);
    assert.equal(machine.looks, 1);
    await clock.advance(250);
    hold.intake({ bytes: 10, message: 'c' });
    assert.equal(machine.looks, 2);
    assert.equal(hold.holding, false);
  });

  it('holds while the machine is busy and sends everything, in order, once it is not', async () => {
    const { clock, machine, posted, hold } = setup();
    hold.intake({ bytes: 10, message: 'a' });
    hold.intake({ bytes: 10, message: 'b' });
    assert.deepEqual(posted, []);
    assert.equal(hold.holding, true);
    await clock.advance(1000);
    assert.deepEqual(posted, [], 'still busy at every look');
    machine.busy = false;
    await clock.advance(250);
    assert.deepEqual(posted, ['a', 'b']);
    assert.equal(hold.holding, false);
    assert.equal(clock.pending(), 0, 'no look scheduled once released');
  });

  it('lets a read through after what was held, and holds nothing while a timeline is watched', async () => {
    const { clock, machine, posted, hold } = setup();
    hold.intake({ bytes: 10, message: 'a' });
    hold.release();
    posted.push('read');
    assert.deepEqual(posted, ['a', 'read']);
    await clock.advance(250);
    hold.intake({ bytes: 10, message: 'b' });
    assert.deepEqual(posted, ['a', 'read'], 'held again: still busy');
    // A watch opens: its caller releases, and nothing is held while it is open.
    machine.watched = true;
    hold.release();
    assert.deepEqual(posted, ['a', 'read', 'b'], 'a watch releases what was held');
    hold.intake({ bytes: 10, message: 'c' });
    assert.deepEqual(posted, ['a', 'read', 'b', 'c']);
    machine.watched = false;
    hold.intake({ bytes: 10, message: 'd' });
    assert.deepEqual(posted, ['a', 'read', 'b', 'c'], 'the last watch closed: held again');
  });

  it('holds a message no longer than maxHoldMs, and no more bytes than maxHeldBytes', async () => {
    const { clock, posted, hold } = setup({ maxHoldMs: 1000, maxHeldBytes: 100 });
    hold.intake({ bytes: 10, message: 'a' });
    await clock.advance(750);
    assert.deepEqual(posted, []);
    await clock.advance(250);
    assert.deepEqual(posted, ['a'], 'a second held, the machine still busy');
    hold.intake({ bytes: 60, message: 'b' });
    hold.intake({ bytes: 60, message: 'c' });
    assert.deepEqual(posted, ['a', 'b', 'c'], '120 bytes held: sent');
    assert.equal(hold.holding, false);
  });
});
