// batch/v1 Job: upstream's printJob columns and cells.
import type { Job } from '../../api/types.js';
import { humanDuration } from '../../api/duration.js';
import { column, formatLabelSelector, nameColumn, printer, templateCells, templateColumns } from './printer.js';

type JobCondition = NonNullable<NonNullable<Job['status']>['conditions']>[number];
const has = (conditions: JobCondition[] | undefined, type: string) => (conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** The STATUS cell: terminal conditions first, then deletion, suspension and the interim conditions. */
function jobStatus(job: Job): string {
  const conditions = job.status?.conditions;
  if (has(conditions, 'Complete')) return 'Complete';
  if (has(conditions, 'Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (has(conditions, 'Suspended')) return 'Suspended';
  if (has(conditions, 'FailureTarget')) return 'FailureTarget';
  if (has(conditions, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function completions(job: Job): string {
  const succeeded = job.status?.succeeded ?? 0;
  if (job.spec?.completions != null) return `${succeeded}/${job.spec.completions}`;
  const parallelism = job.spec?.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** DURATION: start to completion, or start to now while running; empty before the Job starts. */
function duration(job: Job, now: number): string {
  const start = Date.parse(job.status?.startTime ?? '');
  if (Number.isNaN(start)) return '';
  const end = Date.parse(job.status?.completionTime ?? '');
  return humanDuration((Number.isNaN(end) ? now : end) - start);
}

export const jobPrinter = printer<Job>(
  [
    nameColumn,
    column('Status', 'string', 'Status of the job.'),
    column(
      'Completions',
      'string',
      'The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.',
    ),
    column('Duration', 'string', 'Time required to complete the job.'),
    ...templateColumns(
      'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    ),
  ],
  (job, now) => ({
    cells: [
      job.metadata.name,
      jobStatus(job),
      completions(job),
      duration(job, now),
      ...templateCells(job, now, job.spec?.template?.spec?.containers, formatLabelSelector(job.spec?.selector)),
    ],
  }),
);
