// batch/v1 CronJob validation as upstream's pkg/apis/batch/validation (ValidateCronJobCreate,
// ValidateCronJobUpdate): the schedule as robfig/cron's standard parser reads it, TZ in the
// schedule refused (kept only when the stored schedule had it), timeZone an IANA name, the job
// template as a Job's spec with a generated selector, names short enough for the Job names.
import { validateJobSpecFields } from './batch.js';
import { invalid, notSupported, Path, required, type FieldError } from '../field.js';
import { loadLocation, parseStandard } from '../cron.js';
import { isObj, str, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate, type Obj } from './meta.js';
import { nameIsDNSSubdomain } from './names.js';

const specPath = Path.root('spec');
/** DNS1035LabelMaxLength − 11: the controller appends "-<minutes since the epoch>" for its Jobs. */
const MAX_CRONJOB_NAME_LENGTH = 52;
/** Upstream's validTimeZoneCharacters, per path element. */
const timeZonePart = /^[A-Za-z.\-_0-9+]{1,14}$/;

const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});

function validateScheduleFormat(schedule: string, allowTZInSchedule: boolean, timeZone: unknown, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  try {
    parseStandard(schedule);
  } catch (err) {
    errs.push(invalid(p, schedule, (err as Error).message));
  }
  if (allowTZInSchedule && schedule.includes('TZ') && timeZone != null) {
    errs.push(invalid(p, schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'));
  } else if (!allowTZInSchedule && schedule.includes('TZ')) {
    errs.push(invalid(p, schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  return errs;
}

export function validateTimeZone(timeZone: unknown, p: Path): FieldError[] {
  if (timeZone == null) return [];
  const tz = str(timeZone);
  if (tz === '') return [invalid(p, tz, 'timeZone must be nil or non-empty string')];
  if (tz.split('/').some((part) => part === '.' || part === '..' || part.startsWith('-') || !timeZonePart.test(part))) {
    return [invalid(p, tz, `unknown time zone ${tz}`)];
  }
  const errs: FieldError[] = [];
  if (tz.toLowerCase() === 'local') errs.push(invalid(p, tz, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'));
  const loc = loadLocation(tz);
  if ('error' in loc) errs.push(invalid(p, tz, loc.error));
  return errs;
}

/**
 * The Job spec rules a CronJob's template must meet (upstream's validateJobSpec core: counts,
 * deadline, the pod template that never restarts), and the selector it may not set.
 */
export function validateJobTemplateSpec(template: unknown, p: Path): FieldError[] {
  const t = isObj(template) ? template : {};
  const s: Obj = isObj(t.spec) ? t.spec : {};
  const sp = p.child('spec');
  const errs = validateJobSpecFields(s, sp);
  if (s.selector != null) errs.push(invalid(sp.child('selector'), s.selector, '`selector` will be auto-generated'));
  if (s.manualSelector === true) errs.push(notSupported(sp.child('manualSelector'), true, ['nil', 'false']));
  return errs;
}

function validateConcurrencyPolicy(policy: unknown, p: Path): FieldError[] {
  const v = str(policy);
  if (v === 'Allow' || v === 'Forbid' || v === 'Replace') return [];
  return v === '' ? [required(p, '')] : [notSupported(p, v, ['Allow', 'Forbid', 'Replace'])];
}

function validateCronJobSpec(s: Obj, old: Obj | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const schedule = str(s.schedule);
  if (schedule === '') errs.push(required(specPath.child('schedule'), ''));
  else errs.push(...validateScheduleFormat(schedule, str(old?.schedule).includes('TZ'), s.timeZone, specPath.child('schedule')));
  errs.push(...validateNonnegative(s.startingDeadlineSeconds, specPath.child('startingDeadlineSeconds')));
  if (!old || old.timeZone !== s.timeZone) errs.push(...validateTimeZone(s.timeZone, specPath.child('timeZone')));
  errs.push(...validateConcurrencyPolicy(s.concurrencyPolicy, specPath.child('concurrencyPolicy')));
  errs.push(...validateJobTemplateSpec(s.jobTemplate, specPath.child('jobTemplate')));
  errs.push(...validateNonnegative(s.successfulJobsHistoryLimit, specPath.child('successfulJobsHistoryLimit')));
  errs.push(...validateNonnegative(s.failedJobsHistoryLimit, specPath.child('failedJobsHistoryLimit')));
  return errs;
}

export function validateCronJob(cj: Obj): FieldError[] {
  const errs = [...validateObjectMeta(cj.metadata, true, nameIsDNSSubdomain), ...validateCronJobSpec(spec(cj), undefined)];
  const name = str(cj.metadata?.name);
  if (name.length > MAX_CRONJOB_NAME_LENGTH) errs.push(invalid(Path.root('metadata').child('name'), name, `must be no more than ${MAX_CRONJOB_NAME_LENGTH} characters`));
  return errs;
}

/** Updates skip the name length, so CronJobs named before the limit can still change. */
export function validateCronJobUpdate(cj: Obj, old: Obj): FieldError[] {
  return [...validateObjectMetaUpdate(cj.metadata, old.metadata), ...validateCronJobSpec(spec(cj), spec(old))];
}
