import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lastRecorded } from './eventttl.js';

describe('lastRecorded', () => {
  it('takes the latest of the event\'s timestamps', () => {
    const ev = {
      metadata: { creationTimestamp: '2026-01-01T00:00:00Z' },
      lastTimestamp: '2026-01-01T00:10:00Z',
      series: { lastObservedTime: '2026-01-01T00:20:00.000000Z' },
    };
    assert.equal(lastRecorded(ev), Date.UTC(2026, 0, 1, 0, 20));
    assert.equal(lastRecorded({ metadata: { creationTimestamp: '2026-01-01T00:00:00Z' } }), Date.UTC(2026, 0, 1));
    assert.equal(lastRecorded({ metadata: {} }), 0);
  });
});

describe('EventSweeper', () => {
  it('deletes events last recorded over an hour ago and keeps the rest', async () => {
    const { SqliteStore } = await import('../storage/sqlite/sqlite-store.js');
    const { FakeClock } = await import('../util/clock.js');
    const { Registries } = await import('./registry/registries.js');
    const { EventSweeper } = await import('./eventttl.js');
    const { newLogger } = await import('../util/log.js');
    const store = new SqliteStore(':memory:');
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 2, 0));
    const admitter = { mutate: async () => undefined, validate: async () => undefined };
    const registries = new Registries({ store, clock, admitter, synchronousWatch: true });
    await registries.start();
    const user = { name: 'test', groups: [] };
    const event = (name: string, last: string) => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Test',
      lastTimestamp: last,
    });
    await registries.of('', 'events').create('default', event('old', '2026-01-01T02:00:00Z'), { dryRun: false, user, subresource: '' });
    await clock.advance(61 * 60 * 1000);
    await registries.of('', 'events').create('default', event('recent', '2026-01-01T03:01:00Z'), { dryRun: false, user, subresource: '' });
    const removed = await new EventSweeper(registries, clock, newLogger('test')).sweep();
    assert.equal(removed, 1);
    assert.deepEqual(registries.cachedList('events').map((e) => e.metadata.name), ['recent']);
    registries.stop();
    await store.close();
  });
});
