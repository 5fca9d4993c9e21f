import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './clock.js';
import { TokenBucket } from './flowcontrol.js';

test('the token bucket starts full, refills at qps, and never accepts at qps 0', async () => {
  const clock = new FakeClock();
  const bucket = new TokenBucket(0.1, 1, clock);
  assert.equal(bucket.tryAccept(), true);
  assert.equal(bucket.tryAccept(), false);
  await clock.advance(9_999);
  assert.equal(bucket.tryAccept(), false, 'a failed try spends nothing');
  await clock.advance(1);
  assert.equal(bucket.tryAccept(), true);
  assert.equal(new TokenBucket(0, 1, clock).tryAccept(), false);
});
