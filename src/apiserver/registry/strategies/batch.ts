// The Job strategy, as upstream's pkg/registry/batch/job/strategy.go: on create a selector unique
// to the Job (its UID) and the matching template labels, status cleared, generation 1; the
// `status.successful` field selector; a delete without a propagation policy orphans the pods.
import { CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL } from '../../../api/batch.js';
import type { StoredObject } from '../../../api/meta.js';
import { findResource } from '../../../api/resources.js';
import type { ResourceStrategy } from '../strategy.js';
import { genericStrategy, metadataFields } from './generic.js';

type Obj = Record<string, any>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const child = (o: Obj, key: string): Obj => (isObj(o[key]) ? o[key] : (o[key] = {}));

/**
 * Upstream's generateSelector: the job-name and controller-uid labels (both spellings) on the
 * template where the user left them out, and the selector on batch.kubernetes.io/controller-uid.
 * Values the user set are kept; validation rejects them if they conflict.
 */
export function generateJobSelector(job: StoredObject): void {
  const spec = child(job as Obj, 'spec');
  const labels = child(child(child(spec, 'template'), 'metadata'), 'labels');
  const name = job.metadata.name ?? '';
  const uid = job.metadata.uid ?? '';
  for (const key of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) if (!Object.hasOwn(labels, key)) labels[key] = name;
  for (const key of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) if (!Object.hasOwn(labels, key)) labels[key] = uid;
  const matchLabels = child(child(spec, 'selector'), 'matchLabels');
  if (!Object.hasOwn(matchLabels, CONTROLLER_UID_LABEL)) matchLabels[CONTROLLER_UID_LABEL] = uid;
}

export function jobStrategy(): ResourceStrategy {
  return genericStrategy(findResource('batch', 'v1', 'jobs')!, {
    tracksGeneration: true,
    // batch/v1 keeps the orphaning default of the original Job API, as upstream.
    defaultGarbageCollectionPolicy: 'Orphan',
    prepareForCreate(obj) {
      const spec = (obj as Obj).spec;
      if (!isObj(spec) || spec.manualSelector !== true) generateJobSelector(obj);
      obj.status = {};
      // Upstream copies the template's labels to an unlabelled Job when it decodes it (defaulting,
      // again on every read from storage): the generated ones included.
      const templateLabels = (obj as Obj).spec?.template?.metadata?.labels;
      if (isObj(templateLabels) && Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...templateLabels };
    },
    selectableFields: (obj) => ({
      ...metadataFields(obj),
      'status.successful': String((obj.status as { succeeded?: number } | undefined)?.succeeded ?? 0),
    }),
  });
}
