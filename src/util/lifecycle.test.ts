import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DisposableStore, ServiceGroup, StopError, service, toDisposable } from './lifecycle.js';

function recorder() {
  const log: string[] = [];
  const svc = (name: string, fail?: 'start' | 'stop') =>
    service(
      name,
      () => {
        log.push(`start ${name}`);
        if (fail === 'start') throw new Error(`${name} broke`);
      },
      () => {
        log.push(`stop ${name}`);
        if (fail === 'stop') throw new Error(`${name} stuck`);
      },
    );
  return { log, svc };
}

test('a group starts in order and stops in reverse', async () => {
  const { log, svc } = recorder();
  const g = new ServiceGroup('node', [svc('runtime'), svc('kubelet')]);
  g.add(svc('proxy'));
  await g.start();
  await g.stop();
  assert.deepEqual(log, ['start runtime', 'start kubelet', 'start proxy', 'stop proxy', 'stop kubelet', 'stop runtime']);
});

test('a failed start stops what started, the failing member included, and rethrows', async () => {
  const { log, svc } = recorder();
  const g = new ServiceGroup('node', [svc('runtime'), svc('kubelet', 'start'), svc('proxy')]);
  await assert.rejects(g.start(), /kubelet broke/);
  assert.deepEqual(log, ['start runtime', 'start kubelet', 'stop kubelet', 'stop runtime']);
  log.length = 0;
  await g.stop();
  assert.deepEqual(log, [], 'nothing left to stop');
});

test('stop asks every member even when one fails, then reports the failures', async () => {
  const { log, svc } = recorder();
  const g = new ServiceGroup('node', [svc('a'), svc('b', 'stop'), svc('c')]);
  await g.start();
  const err = await g.stop().then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof StopError);
  assert.deepEqual(err.failures.map((f) => f.name), ['b']);
  assert.deepEqual(log.slice(3), ['stop c', 'stop b', 'stop a']);
});

test('a group may be started again after it stopped', async () => {
  const { log, svc } = recorder();
  const g = new ServiceGroup('node', [svc('a')]);
  await g.start();
  await g.start();
  await g.stop();
  await g.start();
  assert.deepEqual(log, ['start a', 'stop a', 'start a']);
});

test('a disposable store disposes newest first, once, and disposes late additions at once', () => {
  const log: string[] = [];
  const store = new DisposableStore();
  store.add(toDisposable(() => log.push('first')));
  const second = store.add(toDisposable(() => log.push('second')));
  store.dispose();
  second.dispose();
  assert.deepEqual(log, ['second', 'first']);
  store.add(toDisposable(() => log.push('late')));
  assert.deepEqual(log, ['second', 'first', 'late']);
});
