import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter } from './limiter.js';

test('at most max run at once; waiting writes go before leases, leases before events', async () => {
  const limiter = new Limiter(2);
  const order: string[] = [];
  let active = 0;
  let peak = 0;
  const releases: (() => void)[] = [];
  const job = (name: string) => async () => {
    active++;
    peak = Math.max(peak, active);
    order.push(name);
    await new Promise<void>((r) => releases.push(r));
    active--;
  };
  const all = [
    limiter.run(job('a')),
    limiter.run(job('b')),
    limiter.run(job('event-1'), 'event'),
    limiter.run(job('lease-1'), 'lease'),
    limiter.run(job('c')),
    limiter.run(job('event-2'), 'event'),
    limiter.run(job('d'), 'write'),
  ];
  assert.equal(limiter.queued(), 5);
  while (order.length < 7 || releases.length > 0) {
    await new Promise((r) => setImmediate(r));
    releases.shift()?.();
  }
  await Promise.all(all);
  assert.equal(peak, 2);
  assert.deepEqual(order, ['a', 'b', 'c', 'd', 'lease-1', 'event-1', 'event-2']);
  assert.equal(limiter.queued(), 0);
});
