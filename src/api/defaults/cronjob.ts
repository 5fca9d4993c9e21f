// batch/v1 CronJob defaults (upstream's SetDefaults_CronJob, then the pod template's defaults
// inside jobTemplate; the Job spec in the template keeps its nils, as upstream's defaulter leaves them).
import { defaultPodTemplate } from './podspec.js';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function defaultCronJob(cj: Obj): void {
  if (!isObj(cj.spec)) cj.spec = {};
  const spec = cj.spec as Obj;
  if (!spec.concurrencyPolicy) spec.concurrencyPolicy = 'Allow';
  if (spec.suspend == null) spec.suspend = false;
  if (spec.successfulJobsHistoryLimit == null) spec.successfulJobsHistoryLimit = 3;
  if (spec.failedJobsHistoryLimit == null) spec.failedJobsHistoryLimit = 1;
  defaultPodTemplate(spec.jobTemplate?.spec?.template);
}
