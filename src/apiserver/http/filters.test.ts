import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { InflightLimiter, isLongRunning, requestDeadlineMs, withDeadline } from './filters.js';
import { parseRequestInfo, splitRequestTarget } from './requestinfo.js';

const info = (method: string, target: string) => {
  const { path, query } = splitRequestTarget(target);
  return parseRequestInfo(method, path, query);
};
const user = { name: 'u', groups: ['system:authenticated'] };

describe('request filters', () => {
  it('long-running: watches, proxies, log, exec, attach, port-forward', () => {
    for (const t of ['/api/v1/pods?watch=1', '/api/v1/namespaces/d/pods/p/log', '/api/v1/namespaces/d/pods/p/exec', '/api/v1/namespaces/d/pods/p/portforward', '/api/v1/namespaces/d/pods/p/attach', '/api/v1/watch/pods']) {
      assert.equal(isLongRunning(info('GET', t)), true, t);
    }
    for (const t of ['/api/v1/pods', '/api/v1/namespaces/d/pods/p', '/api/v1/namespaces/d/pods/p/status', '/readyz']) assert.equal(isLongRunning(info('GET', t)), false, t);
  });

  it('the timeout parameter shortens --request-timeout, never lengthens it', () => {
    const q = (s: string) => new URLSearchParams(s);
    assert.equal(requestDeadlineMs(q(''), 60_000), 60_000);
    assert.equal(requestDeadlineMs(q('timeout=5s'), 60_000), 5000);
    assert.equal(requestDeadlineMs(q('timeout=2m'), 60_000), 60_000);
    assert.equal(requestDeadlineMs(q('timeout=0'), 60_000), 60_000);
    assert.throws(() => requestDeadlineMs(q('timeout=soon'), 60_000), (err: any) => err.code === 400 && err.message === 'invalid timeout specified in the request URL - time: invalid duration "soon"');
  });

  it('a request past its deadline is the 504, on the injected clock', async () => {
    const clock = new FakeClock(0);
    let late: unknown;
    let fail!: (err: Error) => void;
    const never = new Promise<void>((_, reject) => (fail = reject));
    const done = withDeadline(never, 1000, clock, (err) => (late = err)).then(() => undefined, (err: unknown) => err);
    await clock.advance(1000);
    const err = (await done) as any;
    assert.equal(err.code, 504);
    assert.equal(err.reason, 'Timeout');
    assert.equal(err.message, 'Timeout: request did not complete within requested timeout - context deadline exceeded');
    fail(new Error('late'));
    await new Promise((r) => setImmediate(r));
    assert.equal((late as Error).message, 'late');
    assert.equal(await withDeadline(Promise.resolve(7), 1000, clock, () => undefined), 7);
  });

  it('bounds non-mutating and mutating requests apart; long-running, probes and system:masters are exempt', () => {
    const limiter = new InflightLimiter({ requestTimeoutMs: 1000, maxRequestsInflight: 2, maxMutatingRequestsInflight: 1 });
    const get = info('GET', '/api/v1/namespaces/d/pods/p');
    const a = limiter.acquire(get, user);
    const b = limiter.acquire(get, user);
    assert.ok(a && b);
    assert.equal(limiter.acquire(get, user), undefined);
    assert.ok(limiter.acquire(info('POST', '/api/v1/namespaces/d/pods'), user), 'the mutating pool is separate');
    assert.equal(limiter.acquire(info('DELETE', '/api/v1/namespaces/d/pods/p'), user), undefined);
    assert.ok(limiter.acquire(info('GET', '/api/v1/pods?watch=true'), user));
    assert.ok(limiter.acquire(info('GET', '/readyz'), undefined));
    assert.ok(limiter.acquire(get, { name: 'admin', groups: ['system:masters'] }));
    a();
    a();
    assert.ok(limiter.acquire(get, user), 'a release frees one slot, once');
    assert.equal(limiter.acquire(get, user), undefined);
  });
});
