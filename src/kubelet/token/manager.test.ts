import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import { FakeClock } from '../../util/clock.js';
import { rfc3339 } from '../../api/time.js';
import { TokenManager } from './manager.js';

const request = (uid = 'pod-uid', expirationSeconds = 3607): TokenRequest => ({
  spec: { audiences: [], expirationSeconds, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid } },
});

function manager(clock: FakeClock, fail = { now: false }) {
  let issued = 0;
  const tm = new TokenManager({
    clock,
    random: () => 0,
    request: async (_ns, _name, tr) => {
      if (fail.now) throw new Error('apiserver down');
      issued++;
      return { ...tr, status: { token: `t${issued}`, expirationTimestamp: rfc3339(clock.now() + tr.spec.expirationSeconds! * 1000) } };
    },
  });
  return { tm, issued: () => issued };
}

test('caches a token and rotates it once 80 % of its life has passed', async () => {
  const clock = new FakeClock();
  const { tm, issued } = manager(clock);
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request())).status?.token, 't1');
  // 80 % of 3607 s is 2885.6 s; upstream refreshes after exp - floor(20 %) = 2886 s.
  await clock.advance(2886_000);
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request())).status?.token, 't1');
  await clock.advance(1_000);
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request())).status?.token, 't2');
  assert.equal(issued(), 2);
  // Another pod's token is another entry.
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request('other'))).status?.token, 't3');
});

test('a token older than 24 hours is refreshed whatever its lifetime', async () => {
  const clock = new FakeClock();
  const { tm } = manager(clock);
  const week = 7 * 24 * 3600;
  await tm.getServiceAccountToken('ns', 'default', request('u', week));
  await clock.advance(24 * 3600_000);
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request('u', week))).status?.token, 't1');
  await clock.advance(1_000);
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request('u', week))).status?.token, 't2');
});

test('a failed refresh serves the cached token until it expires; a deleted pod forgets its tokens', async () => {
  const clock = new FakeClock();
  const fail = { now: false };
  const { tm } = manager(clock, fail);
  await tm.getServiceAccountToken('ns', 'default', request());
  fail.now = true;
  await clock.advance(3000_000);
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request())).status?.token, 't1');
  await clock.advance(700_000);
  await assert.rejects(tm.getServiceAccountToken('ns', 'default', request()), /apiserver down/);

  fail.now = false;
  await tm.getServiceAccountToken('ns', 'default', request());
  tm.deleteServiceAccountToken('pod-uid');
  assert.equal((await tm.getServiceAccountToken('ns', 'default', request())).status?.token, 't3');
});
