// batch/v1's well-known labels, annotations and finalizer (k8s.io/api/batch/v1 types.go constants).

export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
/** Annotation and label of an Indexed Job's pods. */
export const JOB_COMPLETION_INDEX_ANNOTATION = 'batch.kubernetes.io/job-completion-index';
/** Annotation: how many times the pod's index failed before (backoffLimitPerIndex). */
export const JOB_INDEX_FAILURE_COUNT_ANNOTATION = 'batch.kubernetes.io/job-index-failure-count';
/** Annotation: failures of the index the pod-failure policy ignored. */
export const JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = 'batch.kubernetes.io/job-index-ignored-failure-count';
/** The finalizer the Job controller puts on its pods until it has counted them. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** spec.managedBy's value for the built-in controller. */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';
