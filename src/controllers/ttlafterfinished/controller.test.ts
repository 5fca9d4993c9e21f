import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Job } from 'kubernetes-types/batch/v1.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { needsCleanup, timeLeft, TTLAfterFinishedController } from './controller.js';

const NOW = Date.UTC(2026, 0, 1);
const t = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const finished = (type: string | undefined, ttl: number | undefined, at = NOW): Job => ({
  metadata: { name: 'j', namespace: 'ns' },
  spec: { ...(ttl !== undefined ? { ttlSecondsAfterFinished: ttl } : {}), template: {} },
  status: type ? { conditions: [{ type, status: 'True', lastTransitionTime: t(at) }] } : {},
});

describe('TTL after finished', () => {
  it('needsCleanup and timeLeft, as upstream', () => {
    const cases: [string, Job, boolean][] = [
      ['unfinished', finished(undefined, 10), false],
      ['no TTL', finished('Complete', undefined), false],
      ['complete with TTL', finished('Complete', 10), true],
      ['failed with TTL 0', finished('Failed', 0), true],
      ['only SuccessCriteriaMet', finished('SuccessCriteriaMet', 10), false],
    ];
    for (const [name, job, want] of cases) assert.equal(needsCleanup(job), want, name);
    assert.equal(timeLeft(finished('Complete', 10), NOW + 4000), 6000);
    assert.equal(timeLeft(finished('Complete', 10), NOW + 12_000), -2000);
    const noTime = finished('Complete', 10);
    delete noTime.status!.conditions![0]!.lastTransitionTime;
    assert.throws(() => timeLeft(noTime, NOW), /unable to find the time when the Job ns\/j finished/);
  });

  it('deletes a finished Job, foreground, once its TTL has passed', async () => {
    const clock = new FakeClock(NOW);
    const api = await FakeApi.start({ clock });
    const admin = api.client();
    await admin.resource('namespaces').create({ metadata: { name: 'ns' } });
    const client = api.client({ name: 'system:serviceaccount:kube-system:ttl-after-finished-controller', groups: ['system:authenticated'] });
    const informers = new SharedInformerFactory({ client, clock });
    const controller = new TTLAfterFinishedController({ client, informers, clock, logger: pino({ level: 'silent' }) });
    controller.start();
    informers.start();
    try {
      const jobs = admin.resource<Job>('batch', 'v1', 'jobs').namespace('ns');
      const spec = { ttlSecondsAfterFinished: 5, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } };
      const j = await jobs.create({ metadata: { name: 'j' }, spec } as Job);
      await jobs.create({ metadata: { name: 'keep' }, spec } as Job);
      await jobs.updateStatus({ ...j, status: {
          conditions: ['SuccessCriteriaMet', 'Complete'].map((type) => ({ type, status: 'True', lastTransitionTime: t(NOW) })),
          startTime: t(NOW),
          completionTime: t(NOW),
          succeeded: 1,
        } });
      for (let i = 0; i < 16; i++) await clock.advance(250);
      assert.ok(await jobs.get('j'), 'kept before the TTL');
      for (let i = 0; i < 8; i++) await clock.advance(250);
      // Foreground: marked, the garbage collector (not running here) deletes the pods, then the Job.
      const deleting = await jobs.get('j');
      assert.ok(deleting.metadata?.deletionTimestamp);
      assert.deepEqual(deleting.metadata?.finalizers, ['foregroundDeletion']);
      assert.ok(await jobs.get('keep'), 'an unfinished Job stays');
      const del = api.actions.find((a) => a.verb === 'delete' && a.resource === 'jobs');
      assert.equal((del?.body as { propagationPolicy?: string }).propagationPolicy, 'Foreground');
      assert.ok((del?.body as { preconditions?: { resourceVersion?: string } }).preconditions?.resourceVersion);
    } finally {
      await controller.stop();
      await informers.shutdown();
      await api.stop();
    }
  });
});
