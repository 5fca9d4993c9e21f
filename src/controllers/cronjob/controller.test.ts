import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import { CronJobController } from './controller.js';
import { mostRecentScheduleTime, SCHEDULED_TIMESTAMP_ANNOTATION } from './schedule.js';
import { parseStandard } from '../../api/cron.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

// 10:00:30 UTC: a */1 schedule is next due at 10:01.
const NOW = Date.UTC(2026, 0, 1, 10, 0, 30);
const MINUTE = 60_000;
const controllerUser = { name: 'system:serviceaccount:kube-system:cronjob-controller', groups: ['system:authenticated'] };

const cronJob = (name: string, spec: Partial<CronJob['spec']> = {}): CronJob => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: {
    schedule: '*/1 * * * *',
    timeZone: 'UTC',
    jobTemplate: {
      metadata: { labels: { app: name } },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    },
    ...spec,
  },
});

class Cluster extends ControllerHarness<CronJobController> {
  constructor() {
    super({ user: controllerUser, now: NOW, steps: 20 });
  }

  protected newController(deps: ControllerDeps): CronJobController {
    return new CronJobController({ ...deps, recorder: this.recorder });
  }

  cronJobs() {
    return this.admin.resource<CronJob>('batch', 'v1', 'cronjobs').namespace('ns');
  }

  jobs() {
    return this.admin.resource<Job>('batch', 'v1', 'jobs').namespace('ns');
  }

  async jobNames(): Promise<string[]> {
    return (await this.jobs().list()).items.map((j) => j.metadata!.name!).sort();
  }

  /** Moves virtual time to just after the given minute mark (10:mm:00.5) and lets the controller act. */
  async until(minute: number): Promise<void> {
    const target = Date.UTC(2026, 0, 1, 10, minute, 0, 500);
    await this.clock.advance(Math.max(0, target - this.clock.now()));
    await this.settle();
  }

  async finish(name: string, type: 'Complete' | 'Failed', startedMinute: number): Promise<void> {
    const job = await this.jobs().get(name);
    const at = new Date(Date.UTC(2026, 0, 1, 10, startedMinute)).toISOString().replace('.000', '');
    job.status = {
      startTime: at,
      ...(type === 'Complete' ? { completionTime: at, succeeded: 1 } : { failed: 1 }),
      // 1.31+: Complete and Failed follow SuccessCriteriaMet and FailureTarget.
      conditions: [type === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget', type].map((t) => ({ type: t, status: 'True', lastProbeTime: at, lastTransitionTime: at })),
    };
    await this.jobs().updateStatus(job);
  }

  reasons(): string[] {
    return this.recorder.events.map((e) => e.reason);
  }
}

async function withCluster(fn: (c: Cluster) => Promise<void>): Promise<void> {
  const c = await new Cluster().start();
  try {
    await fn(c);
  } finally {
    await c.stop();
  }
}

const minutes = (m: number) => Math.floor(Date.UTC(2026, 0, 1, 10, m) / MINUTE);

describe('CronJob controller', () => {
  it('creates the Job of each scheduled time once, named by the time, and records it in status', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('tick'));
      await c.settle();
      assert.deepEqual(await c.jobNames(), [], 'nothing before the first scheduled time');
      await c.until(1);
      assert.deepEqual(await c.jobNames(), [`tick-${minutes(1)}`]);
      const job = await c.jobs().get(`tick-${minutes(1)}`);
      assert.equal(job.metadata?.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION], '2026-01-01T10:01:00Z');
      assert.equal(job.metadata?.labels?.app, 'tick');
      const ref = job.metadata?.ownerReferences?.[0];
      assert.deepEqual([ref?.kind, ref?.name, ref?.controller, ref?.blockOwnerDeletion], ['CronJob', 'tick', true, true]);
      const cj = await c.cronJobs().get('tick');
      assert.equal(cj.status?.lastScheduleTime, '2026-01-01T10:01:00Z');
      assert.deepEqual(
        cj.status?.active?.map((r) => [r.kind, r.name, r.uid]),
        [['Job', job.metadata?.name, job.metadata?.uid]],
      );
      await c.until(2);
      assert.deepEqual(await c.jobNames(), [`tick-${minutes(1)}`, `tick-${minutes(2)}`], 'Allow: the second runs beside the first');
      assert.deepEqual(c.reasons(), ['SuccessfulCreate', 'SuccessfulCreate']);
      const creates = c.api.actions.filter((a) => a.verb === 'create' && a.resource === 'jobs');
      assert.equal(creates.length, 2, 'each Job created once');
    }));

  it('Forbid skips a time while a Job runs; Replace deletes the running one first', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('forbid', { concurrencyPolicy: 'Forbid' }));
      await c.cronJobs().create(cronJob('replace', { concurrencyPolicy: 'Replace' }));
      await c.until(1);
      await c.until(2);
      assert.deepEqual(await c.jobNames(), [`forbid-${minutes(1)}`, `replace-${minutes(2)}`]);
      assert.ok(c.reasons().includes('JobAlreadyActive'));
      assert.ok(c.recorder.events.some((e) => e.reason === 'SuccessfulDelete' && e.message === `Deleted job replace-${minutes(1)}`));
      const replace = await c.cronJobs().get('replace');
      assert.deepEqual(replace.status?.active?.map((r) => r.name), [`replace-${minutes(2)}`]);
    }));

  it('a suspended CronJob creates nothing', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('sleepy', { suspend: true }));
      await c.until(3);
      assert.deepEqual(await c.jobNames(), []);
    }));

  it('finished Jobs leave the active list and the oldest beyond the history limits are deleted', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('hist', { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 0 }));
      for (let m = 1; m <= 3; m++) await c.until(m);
      assert.equal((await c.jobNames()).length, 3);
      await c.finish(`hist-${minutes(1)}`, 'Complete', 1);
      await c.finish(`hist-${minutes(2)}`, 'Complete', 2);
      await c.finish(`hist-${minutes(3)}`, 'Failed', 3);
      await c.settle();
      assert.deepEqual(await c.jobNames(), [`hist-${minutes(2)}`], 'the newer success kept, the older and the failure deleted');
      const cj = await c.cronJobs().get('hist');
      assert.equal(cj.status?.active, undefined);
      assert.equal(cj.status?.lastSuccessfulTime, '2026-01-01T10:02:00Z');
      assert.ok(c.recorder.events.some((e) => e.reason === 'SawCompletedJob' && e.message === `Saw completed job: hist-${minutes(2)}, condition: Complete`));
      assert.equal(c.reasons().filter((r) => r === 'SuccessfulDelete').length, 2);
    }));

  it('an active Job deleted by someone else leaves the list (MissingJob); one it did not make is an UnexpectedJob', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('gone', { schedule: '1 10 * * *' }));
      await c.until(1);
      // As kubectl deletes (a Job deleted naming no policy would orphan its pods and wait for the GC).
      await c.jobs().delete(`gone-${minutes(1)}`, { propagationPolicy: 'Background' });
      await c.settle();
      const cj = await c.cronJobs().get('gone');
      assert.equal(cj.status?.active, undefined);
      // kubectl create job --from=cronjob/gone: owned by the CronJob, not in its active list.
      await c.jobs().create({
        metadata: { name: 'manual', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'gone', uid: cj.metadata!.uid!, controller: true }] },
        spec: structuredClone(cj.spec!.jobTemplate.spec!),
      });
      await c.settle();
      assert.ok(c.recorder.events.some((e) => e.reason === 'UnexpectedJob' && e.message === 'Saw a job that the controller did not create or forgot: manual'));
      assert.ok(c.recorder.events.some((e) => e.reason === 'MissingJob' && e.message === `Active job went missing: gone-${minutes(1)}`));
      assert.deepEqual(await c.jobNames(), ['manual'], 'the deleted scheduled time is not run again');
    }));

  it('a time zone shows in the scheduled-timestamp annotation', () =>
    withCluster(async (c) => {
      // 11:01 in Berlin is 10:01 UTC in January.
      await c.cronJobs().create(cronJob('zoned', { schedule: '1 11 * * *', timeZone: 'Europe/Berlin' }));
      await c.until(1);
      const zoned = await c.jobs().get(`zoned-${minutes(1)}`);
      assert.equal(zoned.metadata?.annotations?.[SCHEDULED_TIMESTAMP_ANNOTATION], '2026-01-01T11:01:00+01:00');
    }));

  it('a time older than startingDeadlineSeconds is not run when the CronJob is resumed late', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('late', { schedule: '1 10 * * *', startingDeadlineSeconds: 10, suspend: true }));
      await c.until(3);
      const cj = await c.cronJobs().get('late');
      cj.spec!.suspend = false;
      await c.cronJobs().update(cj);
      await c.settle();
      assert.deepEqual(await c.jobNames(), []);
      assert.equal((await c.cronJobs().get('late')).status?.lastScheduleTime, undefined);
    }));

  it('a controller that starts long after the last run records TooManyMissedTimes and runs only the latest time', () =>
    withCluster(async (c) => {
      await c.cronJobs().create(cronJob('backlog', { suspend: true }));
      // Three hours on: 180 missed minutes.
      await c.clock.advance(3 * 60 * MINUTE);
      const cj = await c.cronJobs().get('backlog');
      cj.spec!.suspend = false;
      await c.cronJobs().update(cj);
      await c.settle();
      assert.deepEqual(await c.jobNames(), [`backlog-${minutes(180)}`]);
      // The Job's own event may sync the CronJob again before its status write is seen (as upstream).
      assert.ok(c.reasons().includes('TooManyMissedTimes'));
      assert.equal(c.reasons().filter((r) => r === 'SuccessfulCreate').length, 1);
    }));
});

describe('mostRecentScheduleTime', () => {
  const schedule = parseStandard('TZ=UTC */1 * * * *');
  const at = (iso: string) => Date.parse(iso);
  const cj = (created: string, last?: string, deadline?: number): CronJob => ({
    metadata: { creationTimestamp: created },
    spec: { schedule: '*/1 * * * *', jobTemplate: {}, startingDeadlineSeconds: deadline },
    status: last ? { lastScheduleTime: last } : {},
  });
  it('table', () => {
    const cases: [string, CronJob, string, boolean, { mostRecent?: string; missed: string }][] = [
      ['not yet due', cj('2026-01-01T10:00:10Z'), '2026-01-01T10:00:50Z', true, { missed: 'none' }],
      ['one due', cj('2026-01-01T10:00:10Z'), '2026-01-01T10:01:10Z', true, { mostRecent: '2026-01-01T10:01:00.000Z', missed: 'none' }],
      ['a few missed', cj('2026-01-01T10:00:10Z'), '2026-01-01T10:05:10Z', true, { mostRecent: '2026-01-01T10:05:00.000Z', missed: 'few' }],
      ['over 100 missed', cj('2026-01-01T00:00:10Z'), '2026-01-01T10:05:10Z', true, { mostRecent: '2026-01-01T10:05:00.000Z', missed: 'many' }],
      ['the deadline bounds the walk', cj('2026-01-01T00:00:10Z', undefined, 120), '2026-01-01T10:05:10Z', true, { mostRecent: '2026-01-01T10:05:00.000Z', missed: 'few' }],
      ['from the last schedule time', cj('2026-01-01T00:00:10Z', '2026-01-01T10:04:00Z'), '2026-01-01T10:04:30Z', true, { missed: 'none' }],
    ];
    for (const [name, obj, now, withDeadline, want] of cases) {
      const got = mostRecentScheduleTime(obj, at(now), schedule, withDeadline);
      const shown = got.mostRecent === undefined ? { missed: got.missed } : { mostRecent: new Date(got.mostRecent).toISOString(), missed: got.missed };
      assert.deepEqual(shown, want, name);
    }
  });
});
