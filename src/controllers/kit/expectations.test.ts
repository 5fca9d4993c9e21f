import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { ControllerExpectations, EXPECTATIONS_TIMEOUT_MS, UIDTrackingControllerExpectations } from './expectations.js';

describe('ControllerExpectations', () => {
  it('a controller with no expectations may sync', () => {
    assert.equal(new ControllerExpectations(new FakeClock()).satisfiedExpectations('ns/rs'), true);
  });

  it('waits until every expected creation and deletion was observed', () => {
    const e = new ControllerExpectations(new FakeClock());
    e.setExpectations('ns/rs', 2, 1);
    assert.equal(e.satisfiedExpectations('ns/rs'), false);
    e.creationObserved('ns/rs');
    e.deletionObserved('ns/rs');
    assert.equal(e.satisfiedExpectations('ns/rs'), false, 'one creation still outstanding');
    e.creationObserved('ns/rs');
    assert.equal(e.satisfiedExpectations('ns/rs'), true);
    assert.deepEqual({ ...e.getExpectations('ns/rs'), timestamp: 0 }, { add: 0, del: 0, timestamp: 0 });
  });

  it('raise adds to what is expected; lower on an unknown key does nothing', () => {
    const e = new ControllerExpectations(new FakeClock());
    e.expectCreations('a', 1);
    e.raiseExpectations('a', 2, 0);
    e.lowerExpectations('a', 2, 0);
    assert.equal(e.satisfiedExpectations('a'), false);
    e.lowerExpectations('b', 1, 1);
    assert.equal(e.getExpectations('b'), undefined);
  });

  it('expectations expire after five minutes', async () => {
    const clock = new FakeClock();
    const e = new ControllerExpectations(clock);
    e.expectDeletions('ns/rs', 3);
    await clock.advance(EXPECTATIONS_TIMEOUT_MS);
    assert.equal(e.satisfiedExpectations('ns/rs'), false, 'not yet: strictly more than the timeout');
    await clock.advance(1);
    assert.equal(e.satisfiedExpectations('ns/rs'), true);
  });
});

describe('UIDTrackingControllerExpectations', () => {
  it('lowers the expectation once per expected pod key', () => {
    const u = new UIDTrackingControllerExpectations(new ControllerExpectations(new FakeClock()));
    u.expectDeletions('ns/rs', ['ns/p1', 'ns/p2']);
    u.deletionObserved('ns/rs', 'ns/p1');
    u.deletionObserved('ns/rs', 'ns/p1');
    u.deletionObserved('ns/rs', 'ns/other');
    assert.equal(u.satisfiedExpectations('ns/rs'), false);
    assert.deepEqual([...u.getUIDs('ns/rs')!], ['ns/p2']);
    u.deletionObserved('ns/rs', 'ns/p2');
    assert.equal(u.satisfiedExpectations('ns/rs'), true);
    u.deleteExpectations('ns/rs');
    assert.equal(u.getUIDs('ns/rs'), undefined);
  });
});
