import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { alreadyExists, notFound, staleConflict } from '../api/errors.js';
import { FakeClock } from '../util/clock.js';
import { LeaderElector, LeaseLock, type LeaderElectionConfig, type LeaseClient } from './leaderelection.js';

const leases = { group: 'coordination.k8s.io', resource: 'leases' };

/** One stored Lease with resourceVersion compare-and-swap, as the API server keeps it. */
class FakeLeaseStore {
  lease?: Lease;
  private rv = 0;
  writes = 0;

  client(state: { down: boolean }): LeaseClient {
    const check = () => {
      if (state.down) throw new Error('connect ECONNREFUSED');
    };
    return {
      get: async (name) => {
        check();
        if (!this.lease) throw notFound(leases, name);
        return structuredClone(this.lease);
      },
      create: async (lease) => {
        check();
        if (this.lease) throw alreadyExists(leases, lease.metadata!.name!);
        this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
        this.writes++;
        return structuredClone(this.lease);
      },
      update: async (lease) => {
        check();
        if (!this.lease || lease.metadata?.resourceVersion !== this.lease.metadata!.resourceVersion) throw staleConflict(leases, lease.metadata!.name!);
        this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
        this.writes++;
        return structuredClone(this.lease);
      },
    };
  }
}

function candidate(store: FakeLeaseStore, clock: FakeClock, id: string, log: string[], extra: Partial<LeaderElectionConfig> = {}) {
  const net = { down: false };
  const ac = new AbortController();
  let leading: AbortSignal | undefined;
  const elector = new LeaderElector({
    lock: new LeaseLock(store.client(net), 'kube-system', 'kite-scheduler', id),
    clock,
    random: () => 0,
    callbacks: {
      onStartedLeading: (signal) => {
        leading = signal;
        log.push(`${id} started@${(clock.now() - start) / 1000}`);
      },
      onStoppedLeading: () => log.push(`${id} stopped@${(clock.now() - start) / 1000}`),
      onNewLeader: (holder) => log.push(`${id} sees ${holder || '<none>'}`),
    },
    ...extra,
  });
  const done = elector.run(ac.signal);
  return { elector, net, ac, done, leadingSignal: () => leading };
}

const start = Date.UTC(2026, 0, 1);

void test('two candidates: one leads; when it stops renewing the other takes over after the lease duration', async () => {
  const clock = new FakeClock(start);
  const store = new FakeLeaseStore();
  const log: string[] = [];
  const a = candidate(store, clock, 'a', log);
  await clock.advance(0);
  const b = candidate(store, clock, 'b', log);
  await clock.advance(0);
  assert.equal(a.elector.isLeader(), true);
  assert.equal(b.elector.isLeader(), false);
  assert.equal(b.elector.getLeader(), 'a');
  assert.deepEqual(log, ['a sees a', 'a started@0', 'b sees a']);
  assert.deepEqual(store.lease?.spec, {
    holderIdentity: 'a',
    leaseDurationSeconds: 15,
    acquireTime: '2026-01-01T00:00:00.000000Z',
    renewTime: '2026-01-01T00:00:00.000000Z',
    leaseTransitions: 0,
  });

  // a renews every retry period while b waits.
  await clock.advance(30_000);
  assert.equal(a.elector.isLeader(), true);
  assert.equal(store.lease?.spec?.renewTime, '2026-01-01T00:00:30.000000Z');
  assert.equal(store.lease?.spec?.acquireTime, '2026-01-01T00:00:00.000000Z');
  log.length = 0;

  // a loses the API server: it steps down once renewDeadline (10 s) passes without a renewal.
  a.net.down = true;
  await clock.advance(9_000);
  assert.equal(a.leadingSignal()?.aborted, false);
  await clock.advance(1_000);
  assert.equal(a.leadingSignal()?.aborted, true);
  await a.done;
  assert.deepEqual(log, ['a stopped@40']);

  // b may only take over once 15 s have passed since it saw the last renewal (at 30 s).
  await clock.advance(4_000); // 44 s
  assert.equal(b.elector.isLeader(), false);
  await clock.advance(4_000); // 48 s
  assert.equal(b.elector.isLeader(), true);
  assert.equal(store.lease?.spec?.holderIdentity, 'b');
  assert.equal(store.lease?.spec?.leaseTransitions, 1);
  assert.ok(Date.parse(store.lease!.spec!.acquireTime!) - start >= 45_000, 'acquired no earlier than 15 s after the last renewal');
  assert.ok(log.includes('b sees b'));
  assert.ok(log.some((l) => l.startsWith('b started@4')));

  b.ac.abort();
  await b.done;
});

void test('release on cancel hands the lease over without waiting for expiry', async () => {
  const clock = new FakeClock(start);
  const store = new FakeLeaseStore();
  const log: string[] = [];
  const a = candidate(store, clock, 'a', log, { releaseOnCancel: true });
  await clock.advance(0);
  const b = candidate(store, clock, 'b', log);
  await clock.advance(5_000);
  a.ac.abort();
  await a.done;
  assert.equal(store.lease?.spec?.holderIdentity, '');
  assert.equal(store.lease?.spec?.leaseDurationSeconds, 1);
  assert.equal(a.leadingSignal()?.aborted, true);
  await clock.advance(2_000);
  assert.equal(b.elector.isLeader(), true, 'b takes it at its next retry');
  b.ac.abort();
  await b.done;
  assert.ok(log.indexOf('a stopped@5') < log.findIndex((l) => l.startsWith('b started')));
});

void test('a cancelled candidate that never led still reports stopped', async () => {
  const clock = new FakeClock(start);
  const store = new FakeLeaseStore();
  const log: string[] = [];
  const a = candidate(store, clock, 'a', log);
  await clock.advance(0);
  const b = candidate(store, clock, 'b', log);
  await clock.advance(0);
  b.ac.abort();
  await b.done;
  assert.deepEqual(log.filter((l) => l.startsWith('b')), ['b sees a', 'b stopped@0']);
  a.ac.abort();
  await a.done;
});

void test('a stale resourceVersion makes the leader re-read before renewing', async () => {
  const clock = new FakeClock(start);
  const store = new FakeLeaseStore();
  const a = candidate(store, clock, 'a', []);
  await clock.advance(0);
  // Someone else touched the lease (e.g. kubectl annotate): the fast-path update conflicts.
  store.lease = { ...store.lease!, metadata: { ...store.lease!.metadata, resourceVersion: '99' } };
  const writes = store.writes;
  await clock.advance(2_000);
  assert.equal(a.elector.isLeader(), true);
  assert.equal(store.writes, writes + 1);
  assert.equal(store.lease?.spec?.renewTime, '2026-01-01T00:00:02.000000Z');
  a.ac.abort();
  await a.done;
});

void test('configuration is validated as upstream', () => {
  const lock = new LeaseLock(new FakeLeaseStore().client({ down: false }), 'ns', 'l', 'me');
  const callbacks = { onStartedLeading: () => {}, onStoppedLeading: () => {} };
  const cases: [Partial<LeaderElectionConfig>, string][] = [
    [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, 'leaseDuration must be greater than renewDeadline'],
    [{ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }, 'renewDeadline must be greater than retryPeriod*JitterFactor'],
    [{ lock: new LeaseLock(new FakeLeaseStore().client({ down: false }), 'ns', 'l', '') }, 'Lock identity is empty'],
  ];
  for (const [extra, message] of cases) assert.throws(() => new LeaderElector({ lock, callbacks, ...extra }), { message });
});
