// Upstream's batch/v1 defaulters (SetDefaults_Job and the pod template under it). Objects arrive
// straight from decoding, so fields are read loosely.
import { defaultPodTemplate } from './podspec.js';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const child = (o: Obj, key: string): Obj => (isObj(o[key]) ? o[key] : (o[key] = {}));

/** Go's math.MaxInt32: the backoffLimit of a Job that counts failures per index instead. */
export const MAX_INT32 = 2 ** 31 - 1;

/** SetDefaults_Job (1.33, JobPodReplacementPolicy on). */
export function defaultJob(job: Obj): void {
  const spec = child(job, 'spec');
  // A non-parallel Job may leave both unset: one pod, once.
  if (spec.completions == null && spec.parallelism == null) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  if (spec.parallelism == null) spec.parallelism = 1;
  if (spec.backoffLimit == null) spec.backoffLimit = spec.backoffLimitPerIndex != null ? MAX_INT32 : 6;
  const templateLabels = isObj(spec.template) ? spec.template.metadata?.labels : undefined;
  if (isObj(templateLabels)) {
    const meta = child(job, 'metadata');
    if (!isObj(meta.labels) || Object.keys(meta.labels).length === 0) meta.labels = { ...templateLabels };
  }
  if (spec.completionMode == null || spec.completionMode === '') spec.completionMode = 'NonIndexed';
  if (spec.suspend == null) spec.suspend = false;
  if (isObj(spec.podFailurePolicy)) {
    for (const rule of Array.isArray(spec.podFailurePolicy.rules) ? spec.podFailurePolicy.rules : []) {
      for (const pattern of isObj(rule) && Array.isArray(rule.onPodConditions) ? rule.onPodConditions : []) {
        if (isObj(pattern) && (pattern.status == null || pattern.status === '')) pattern.status = 'True';
      }
    }
  }
  if (spec.podReplacementPolicy == null || spec.podReplacementPolicy === '') {
    spec.podReplacementPolicy = isObj(spec.podFailurePolicy) ? 'Failed' : 'TerminatingOrFailed';
  }
  if (spec.manualSelector == null) spec.manualSelector = false;
  defaultPodTemplate(spec.template);
}
