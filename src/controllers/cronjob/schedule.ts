// The CronJob controller's time arithmetic, as upstream's pkg/controller/cronjob/utils.go: which
// scheduled time is due, how many were missed, when to look again, and the Job a time makes.
import type { CronJob, Job } from 'kubernetes-types/batch/v1.js';
import { loadLocation, parseStandard, rfc3339In, ZERO_TIME, type CronSchedule } from '../../api/cron.js';
import { newControllerRef } from '../kit/refmanager.js';

/** Upstream's nextScheduleDelta: requeue a little after the time, for clock skew. */
export const NEXT_SCHEDULE_DELTA_MS = 100;
/** More missed start times than this is a clock or configuration problem, not a backlog. */
export const MAX_MISSED_SCHEDULES = 100;
export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

export type Missed = 'none' | 'few' | 'many';

export interface MostRecent {
  /** The last schedule time, or the creation time (or the starting deadline, when later and asked for). */
  earliest: number;
  /** The latest scheduled time not after now, if any came since earliest. */
  mostRecent?: number;
  missed: Missed;
  error?: string;
}

const parseTime = (t: string | undefined): number | undefined => (t ? Date.parse(t) : undefined);

/** Upstream's formatSchedule: the schedule with the timeZone as a TZ= prefix (a TZ already in it wins). */
export function formatSchedule(cj: CronJob): string {
  const schedule = cj.spec?.schedule ?? '';
  if (schedule.includes('TZ')) return schedule;
  const tz = cj.spec?.timeZone;
  if (tz != null && 'zone' in loadLocation(tz)) return `TZ=${tz} ${schedule}`;
  return schedule;
}

export const parseSchedule = (cj: CronJob): CronSchedule => parseStandard(formatSchedule(cj));

/** Upstream's mostRecentScheduleTime. */
export function mostRecentScheduleTime(cj: CronJob, now: number, schedule: CronSchedule, includeStartingDeadline: boolean): MostRecent {
  let earliest = parseTime(cj.status?.lastScheduleTime) ?? parseTime(cj.metadata?.creationTimestamp) ?? ZERO_TIME;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (includeStartingDeadline && deadline != null) earliest = Math.max(earliest, now - deadline * 1000);
  const t1 = schedule.next(earliest);
  const t2 = t1 === ZERO_TIME ? ZERO_TIME : schedule.next(t1);
  if (now < t1) return { earliest, missed: 'none' };
  if (now < t2) return { earliest, mostRecent: t1, missed: 'none' };
  // "59 23 31 2 *" parses but never fires.
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) return { earliest, missed: 'none', error: 'time difference between two schedules is less than 1 second' };
  // An estimate from the interval of the first two, then the exact walk over the last stretch.
  const missedCount = Math.floor((now - t1) / 1000 / between) + 1;
  let mostRecent: number | undefined;
  for (let t = schedule.next(t1 + (missedCount - 2) * between * 1000); t !== ZERO_TIME && t <= now; t = schedule.next(t)) mostRecent = t;
  const missed: Missed = missedCount > MAX_MISSED_SCHEDULES ? 'many' : missedCount > 0 ? 'few' : 'none';
  return { earliest, mostRecent, missed };
}

/** Upstream's nextScheduleTimeDuration: ms until just after the next scheduled time. */
export function nextScheduleTimeDuration(cj: CronJob, now: number, schedule: CronSchedule): number {
  const r = mostRecentScheduleTime(cj, now, schedule, false);
  const from = r.error ? now : (r.mostRecent ?? (r.missed === 'none' ? r.earliest : now));
  return schedule.next(from) + NEXT_SCHEDULE_DELTA_MS - now;
}

/** The Job for a scheduled time is named by it, in minutes since the epoch, so it is made once. */
export const jobName = (cj: CronJob, scheduled: number): string => `${cj.metadata?.name ?? ''}-${Math.floor(scheduled / 60_000)}`;

/** Upstream's getJobFromTemplate2. */
export function jobFromTemplate(cj: CronJob, scheduled: number): Job {
  const template = cj.spec?.jobTemplate;
  const loc = loadLocation(cj.spec?.timeZone ?? '');
  const zone = 'zone' in loc ? loc.zone : 'UTC';
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cj, scheduled),
      labels: { ...template?.metadata?.labels },
      annotations: { ...template?.metadata?.annotations, [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339In(scheduled, zone) },
      ownerReferences: [newControllerRef(cj, 'batch/v1', 'CronJob')],
    },
    spec: structuredClone(template?.spec ?? { template: {} }),
  };
}
