// What other controllers ask of a Job (upstream's pkg/controller/job/util): is it finished, and how.
import type { Job, JobCondition } from 'kubernetes-types/batch/v1.js';

/** The Job's Complete or Failed condition with status True, if any. */
export function finishedCondition(job: Job): JobCondition | undefined {
  return job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
}

export const isJobFinished = (job: Job): boolean => finishedCondition(job) !== undefined;
