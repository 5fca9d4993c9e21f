import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { Supervisor, type SupervisedDaemon, type SupervisorEvent } from './supervisor.js';

/** A daemon whose health is set by the test and whose start() succeeds or fails as scripted. */
class FakeDaemon implements SupervisedDaemon {
  up = true;
  starts: number[] = [];
  failStarts = 0;
  constructor(private readonly clock: FakeClock) {}
  async healthy() {
    return this.up;
  }
  async start() {
    this.starts.push(this.clock.now());
    if (this.failStarts > 0) {
      this.failStarts--;
      throw new Error('containerd exited during start-up');
    }
    this.up = true;
  }
}

function setup(opts: Partial<ConstructorParameters<typeof Supervisor>[1]> = {}) {
  const clock = new FakeClock(0);
  const daemon = new FakeDaemon(clock);
  const events: SupervisorEvent['type'][] = [];
  const sup = new Supervisor(daemon, { clock, checkIntervalMs: 1_000, backoffInitialMs: 2_000, backoffMaxMs: 8_000, backoffResetMs: 60_000, onEvent: (e) => events.push(e.type), ...opts });
  return { clock, daemon, events, sup };
}

describe('Supervisor', () => {
  it('leaves a healthy daemon alone', async () => {
    const { clock, daemon, sup } = setup();
    sup.start();
    await clock.advance(10_000);
    assert.deepEqual(daemon.starts, []);
    await sup.stop();
    assert.equal(sup.current, 'stopped');
  });

  it('restarts a dead daemon at the next check', async () => {
    const { clock, daemon, events, sup } = setup();
    sup.start();
    await clock.advance(1_500);
    daemon.up = false;
    await clock.advance(1_000);
    assert.deepEqual(daemon.starts, [2_000]);
    assert.deepEqual(events, ['unhealthy', 'restarted']);
    await sup.stop();
  });

  it('backs off exponentially, capped, while restarts fail', async () => {
    const { clock, daemon, sup } = setup();
    daemon.failStarts = 4;
    daemon.up = false;
    sup.start();
    await clock.advance(60_000);
    // check at 1 s, then each retry waits one interval plus 2, 4, 8, 8 s.
    assert.deepEqual(daemon.starts, [1_000, 4_000, 9_000, 18_000, 27_000]);
    await sup.stop();
  });

  it('starts the backoff over after a long healthy stretch', async () => {
    const { clock, daemon, sup } = setup();
    sup.start();
    daemon.up = false;
    await clock.advance(1_000); // restart 1 at 1 s
    daemon.up = false;
    await clock.advance(1_000); // dies again at once: waits 2 s, restart 2 at 4 s
    await clock.advance(2_000);
    assert.deepEqual(daemon.starts, [1_000, 4_000]);
    await clock.advance(70_000);
    daemon.up = false;
    await clock.advance(1_000);
    assert.equal(daemon.starts.length, 3);
    assert.equal(daemon.starts[2], 75_000, 'no backoff wait after a minute of health');
    await sup.stop();
  });

  it('stop() ends the loop even while it waits', async () => {
    const { clock, daemon, sup } = setup();
    daemon.failStarts = 100;
    daemon.up = false;
    sup.start();
    await clock.advance(1_500);
    await sup.stop();
    const n = daemon.starts.length;
    await clock.advance(60_000);
    assert.equal(daemon.starts.length, n);
    assert.equal(clock.pending(), 0);
  });
});
