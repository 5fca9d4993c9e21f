// The CronJob controller, as upstream's pkg/controller/cronjob/cronjob_controllerv2.go: each
// CronJob is synced when it or one of its Jobs changes and again just after its next scheduled
// time. A sync reconciles status.active with the Jobs it owns, deletes the oldest finished Jobs
// beyond the history limits, and creates the Job of the most recent unmet scheduled time (named by
// that time, so a repeated sync or a new leader never makes it twice) as concurrencyPolicy,
// startingDeadlineSeconds and suspend allow.
import { isDeepStrictEqual } from 'node:util';
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import type { ObjectReference } from 'kubernetes-types/core/v1.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import { loadLocation, type CronSchedule } from '../../api/cron.js';
import { findResource } from '../../api/resources.js';
import { rfc3339 } from '../../api/time.js';
import { DeletedFinalStateUnknown, metaNamespaceKeyFunc, namespaceIndex, splitMetaNamespaceKey, type Indexer } from '../../client/indexer.js';
import { type EventBroadcaster, type EventRecorder, type EventType } from '../../client/record/recorder.js';
import { controllerEvents } from '../kit/events.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';
import { NAMESPACE_TERMINATING_CAUSE } from '../kit/podcontrol.js';
import { getControllerOf, resolveControllerRef } from '../kit/refmanager.js';
import { jobFromTemplate, jobName, mostRecentScheduleTime, nextScheduleTimeDuration, parseSchedule } from './schedule.js';

const cronJobsResource = findResource('batch', 'v1', 'cronjobs')!;
const jobsResource = findResource('batch', 'v1', 'jobs')!;
const KIND = 'CronJob';

export interface CronJobControllerOptions extends ControllerOptions {
  /** Upstream's --concurrent-cron-job-syncs (default 5). */
  workers?: number;
}

/** The Complete or Failed condition that is True (upstream's getFinishedStatus). */
export function finishedCondition(job: Job): 'Complete' | 'Failed' | undefined {
  const c = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  return c?.type as 'Complete' | 'Failed' | undefined;
}

/** Upstream's byJobStartTime: started first, oldest first, then by name. */
function byStartTime(a: Job, b: Job): number {
  const sa = a.status?.startTime ? Date.parse(a.status.startTime) : undefined;
  const sb = b.status?.startTime ? Date.parse(b.status.startTime) : undefined;
  if (sa === undefined && sb !== undefined) return 1;
  if (sa !== undefined && sb === undefined) return -1;
  if (sa === sb) return (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1;
  return sa! - sb!;
}

/** Go's time.RFC1123Z in UTC: "Mon, 02 Jan 2006 15:04:05 +0000". */
function rfc1123z(t: number): string {
  const [day, date, month, year, time] = new Date(t).toUTCString().split(' ');
  return `${day} ${date} ${month} ${year} ${time} +0000`;
}

export class CronJobController {
  private readonly cronJobs: Indexer<CronJob>;
  private readonly jobs: Indexer<Job>;
  private readonly controller: QueueController;
  private readonly events?: EventBroadcaster;
  private readonly recorder: EventRecorder;

  constructor(private readonly opts: CronJobControllerOptions) {
    const cjInformer = opts.informers.informerFor<CronJob>(cronJobsResource);
    const jobInformer = opts.informers.informerFor<Job>(jobsResource);
    this.cronJobs = cjInformer.indexer;
    this.jobs = jobInformer.indexer;
    ({ recorder: this.recorder, events: this.events } = controllerEvents(opts, 'cronjob-controller'));
    this.controller = new QueueController({
      name: 'cronjob',
      clock: opts.clock,
      logger: opts.logger,
      sources: [cjInformer, jobInformer],
      workers: opts.workers ?? 5,
      sync: (key) => this.sync(key),
    });
    cjInformer.addEventHandler({
      onAdd: (cj) => this.controller.enqueue(metaNamespaceKeyFunc(cj)),
      onUpdate: (old, cur) => this.updateCronJob(old, cur),
      onDelete: (obj) => this.controller.enqueue(metaNamespaceKeyFunc(obj)),
    });
    jobInformer.addEventHandler({
      onAdd: (job) => this.enqueueOwner(job),
      onUpdate: (old, cur) => {
        if (old.metadata?.resourceVersion === cur.metadata?.resourceVersion) return;
        if (!isDeepStrictEqual(getControllerOf(old), getControllerOf(cur))) this.enqueueOwner(old);
        this.enqueueOwner(cur);
      },
      onDelete: (obj) => this.enqueueOwner(obj instanceof DeletedFinalStateUnknown ? obj.obj : obj),
    });
  }

  start(): void {
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.events?.stop();
  }

  /** The CronJob a Job's controller reference names, if it still is that one. */
  private enqueueOwner(job: Job): void {
    const cj = resolveControllerRef(this.cronJobs, KIND, job.metadata?.namespace ?? '', getControllerOf(job));
    if (cj) this.controller.enqueue(metaNamespaceKeyFunc(cj));
  }

  /** A changed schedule or time zone moves the next sync to the new schedule's next time. */
  private updateCronJob(old: CronJob, cur: CronJob): void {
    const key = metaNamespaceKeyFunc(cur);
    if (old.spec?.schedule !== cur.spec?.schedule || old.spec?.timeZone !== cur.spec?.timeZone) {
      let schedule: CronSchedule;
      try {
        schedule = parseSchedule(cur);
      } catch (err) {
        this.event(cur, 'Warning', 'UnParseableCronJobSchedule', `unparseable schedule for cronjob: ${cur.spec?.schedule ?? ''}`);
        this.opts.logger.debug({ err, cronjob: key }, 'unparseable schedule');
        return;
      }
      this.controller.enqueueAfter(key, nextScheduleTimeDuration(cur, this.opts.clock.now(), schedule));
      return;
    }
    this.controller.enqueue(key);
  }

  private event(cj: CronJob, type: EventType, reason: string, message: string): void {
    const m = cj.metadata ?? {};
    this.recorder.event({ kind: KIND, apiVersion: 'batch/v1', namespace: m.namespace, name: m.name, uid: m.uid, resourceVersion: m.resourceVersion }, type, reason, message);
  }

  private jobClient(namespace: string | undefined) {
    return this.opts.client.resource<Job>(jobsResource).namespace(namespace);
  }

  /** Upstream's sync: cleanup, then syncCronJob, then one status write for both; the delay until the next look. */
  async sync(key: string): Promise<number | void> {
    const stored = this.cronJobs.getByKey(key);
    if (!stored) return;
    const { namespace } = splitMetaNamespaceKey(key);
    const jobs = this.jobs.byIndex(namespaceIndex, namespace).filter((j) => getControllerOf(j)?.name === stored.metadata?.name);
    const cj = structuredClone(stored);
    cj.status ??= {};
    const cleaned = await this.cleanupFinishedJobs(cj, jobs);
    let requeue: number | undefined;
    let changed: boolean;
    let syncErr: unknown;
    try {
      ({ requeue, changed } = await this.syncCronJob(cj, jobs));
    } catch (err) {
      // The status gathered so far is still written, as upstream.
      syncErr = err;
      changed = (err as { statusChanged?: boolean }).statusChanged ?? false;
    }
    if (cleaned || changed) {
      if (cj.status.active?.length === 0) delete cj.status.active;
      await this.opts.client.resource<CronJob>(cronJobsResource).namespace(namespace).updateStatus(cj);
    }
    if (requeue !== undefined) return requeue;
    if (syncErr) throw syncErr;
  }

  private async syncCronJob(cj: CronJob, jobs: Job[]): Promise<{ requeue?: number; changed: boolean }> {
    const now = this.opts.clock.now();
    const status = cj.status!;
    let changed = false;
    const fail = (err: unknown): never => {
      throw Object.assign(err instanceof Error ? err : new Error(String(err)), { statusChanged: changed });
    };
    const inActive = (uid: string | undefined) => (status.active ?? []).some((r) => r.uid === uid);
    const dropActive = (uid: string | undefined) => (status.active = (status.active ?? []).filter((r) => r.uid !== uid));

    const children = new Set<string>();
    for (const job of jobs) {
      children.add(job.metadata?.uid ?? '');
      const found = inActive(job.metadata?.uid);
      const finished = finishedCondition(job);
      if (!found && !finished) {
        // Our status may lag the Job we created: check the stored CronJob before complaining.
        const fresh = await this.opts.client
          .resource<CronJob>(cronJobsResource)
          .namespace(cj.metadata?.namespace)
          .get(cj.metadata?.name ?? '')
          .catch(fail);
        if ((fresh.status?.active ?? []).some((r) => r.uid === job.metadata?.uid)) {
          status.active = fresh.status?.active;
          continue;
        }
        this.event(cj, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${job.metadata?.name}`);
      } else if (found && finished) {
        dropActive(job.metadata?.uid);
        this.event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${job.metadata?.name}, condition: ${finished}`);
        changed = true;
      } else if (finished === 'Complete') {
        const completed = job.status?.completionTime;
        if (completed && (!status.lastSuccessfulTime || Date.parse(completed) > Date.parse(status.lastSuccessfulTime))) {
          status.lastSuccessfulTime = completed;
          changed = true;
        }
      }
    }
    // An active Job gone from storage (read live: the cache may just lag) leaves the list.
    for (const ref of [...(status.active ?? [])]) {
      if (children.has(ref.uid ?? '')) continue;
      try {
        await this.jobClient(ref.namespace).get(ref.name ?? '');
      } catch (err) {
        if (!hasStatusCode(err, 404)) fail(err);
        this.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${ref.name}`);
        dropActive(ref.uid);
        changed = true;
      }
    }
    if (cj.metadata?.deletionTimestamp) return { changed };

    const tz = cj.spec?.timeZone;
    if (tz != null) {
      const loc = loadLocation(tz);
      if ('error' in loc) {
        this.event(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: ${JSON.stringify(tz)}: ${loc.error}`);
        return { changed };
      }
    }
    if (cj.spec?.suspend === true) return { changed };
    if ((cj.spec?.schedule ?? '').includes('TZ')) {
      this.event(
        cj,
        'Warning',
        'UnsupportedSchedule',
        `CRON_TZ or TZ used in schedule ${JSON.stringify(cj.spec?.schedule)} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`,
      );
    }
    let schedule: CronSchedule;
    try {
      schedule = parseSchedule(cj);
    } catch (err) {
      // A user error: nothing to do until the spec changes.
      this.event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(cj.spec?.schedule)} : ${(err as Error).message}`);
      return { changed };
    }
    const next = () => nextScheduleTimeDuration(cj, now, schedule);

    const due = mostRecentScheduleTime(cj, now, schedule, true);
    if (due.missed === 'many' && due.mostRecent !== undefined) {
      this.event(cj, 'Warning', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
    }
    if (due.error) {
      this.event(cj, 'Warning', 'InvalidSchedule', `invalid schedule: ${cj.spec?.schedule} : ${due.error}`);
      return { changed };
    }
    const scheduled = due.mostRecent;
    if (scheduled === undefined || scheduled > now) return { requeue: next(), changed };

    const deadline = cj.spec?.startingDeadlineSeconds;
    if (deadline != null && scheduled + deadline * 1000 < now) {
      this.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`);
      return { requeue: next(), changed };
    }
    const name = jobName(cj, scheduled);
    const lastScheduled = status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : undefined;
    if ((status.active ?? []).some((r) => r.name === name && r.namespace === cj.metadata?.namespace) || lastScheduled === scheduled) {
      return { requeue: next(), changed };
    }
    const policy = cj.spec?.concurrencyPolicy;
    if (policy === 'Forbid' && (status.active ?? []).length > 0) {
      this.event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return { requeue: next(), changed };
    }
    if (policy === 'Replace') {
      for (const ref of [...(status.active ?? [])]) {
        let job: Job;
        try {
          job = await this.jobClient(ref.namespace).get(ref.name ?? '');
        } catch (err) {
          this.event(cj, 'Warning', 'FailedGet', `Get job: ${(err as Error).message}`);
          return fail(err);
        }
        if (!(await this.deleteJob(cj, job))) fail(new Error(`could not replace job ${job.metadata?.namespace}/${job.metadata?.name}`));
        changed = true;
      }
    }

    let created: Job;
    try {
      created = await this.jobClient(cj.metadata?.namespace).create(jobFromTemplate(cj, scheduled));
      this.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${created.metadata?.name}`);
    } catch (err) {
      if (err instanceof StatusError && (err.details?.causes ?? []).some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE)) return fail(err);
      if (!hasStatusCode(err, 409)) {
        this.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${(err as Error).message}`);
        return fail(err);
      }
      // Made before (by us, with the status write lost, or by someone else).
      const existing = await this.jobClient(cj.metadata?.namespace).get(name).catch(fail);
      const ref = getControllerOf(existing);
      if (ref?.uid !== cj.metadata?.uid || inActive(existing.metadata?.uid)) return { changed };
      this.opts.logger.info({ cronjob: metaNamespaceKeyFunc(cj), job: name }, 'Job already exists');
      created = existing;
    }
    const ref: ObjectReference = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      namespace: created.metadata?.namespace,
      name: created.metadata?.name,
      uid: created.metadata?.uid,
      resourceVersion: created.metadata?.resourceVersion,
    };
    status.active = [...(status.active ?? []), ref];
    status.lastScheduleTime = rfc3339(scheduled);
    return { requeue: next(), changed: true };
  }

  /** Upstream's cleanupFinishedJobs: the oldest finished Jobs beyond each history limit are deleted. */
  private async cleanupFinishedJobs(cj: CronJob, jobs: Job[]): Promise<boolean> {
    const { successfulJobsHistoryLimit: okLimit, failedJobsHistoryLimit: failLimit } = cj.spec ?? {};
    if (okLimit == null && failLimit == null) return false;
    let changed = false;
    const removeOldest = async (list: Job[], limit: number | undefined) => {
      if (limit == null || list.length <= limit) return;
      for (const job of list.sort(byStartTime).slice(0, list.length - limit)) if (await this.deleteJob(cj, job)) changed = true;
    };
    await removeOldest(
      jobs.filter((j) => finishedCondition(j) === 'Complete'),
      okLimit,
    );
    await removeOldest(
      jobs.filter((j) => finishedCondition(j) === 'Failed'),
      failLimit,
    );
    return changed;
  }

  /** Deletes the Job (its pods in the background) and its reference in status.active. */
  private async deleteJob(cj: CronJob, job: Job): Promise<boolean> {
    try {
      await this.jobClient(job.metadata?.namespace).delete(job.metadata?.name ?? '', { propagationPolicy: 'Background' });
    } catch (err) {
      this.event(cj, 'Warning', 'FailedDelete', `Deleted job: ${(err as Error).message}`);
      return false;
    }
    cj.status!.active = (cj.status!.active ?? []).filter((r) => r.uid !== job.metadata?.uid);
    this.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata?.name}`);
    return true;
  }
}
