// The pod timeline (timeline.kite.dev/v1alpha1): what each component did for one pod, when, and
// who recorded it, kept by the API server per pod UID past the pod's deletion. Components send
// their steps in batches (PodTimelineStepBatch, create-only, never stored as such); clients read
// PodTimeline objects (get, list, watch; Table output). Nothing here is upstream's: upstream keeps
// no per-pod history (see docs/architecture.md, "The pod timeline").
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

export const timelineGroup = 'timeline.kite.dev';
export const timelineVersion = 'v1alpha1';
export const timelineAPIVersion = `${timelineGroup}/${timelineVersion}`;

/**
 * The vocabulary of steps, in the seeds' order. Who records each is in the comment; a component
 * records only its own steps.
 */
export const timelineSteps = [
  // kube-apiserver, on the pod's create request
  'RequestReceived', // the create request arrived (attributes.user, attributes.userAgent; traceparent when sent)
  'Authenticated', // who (attributes.user, attributes.groups)
  'Authorized', // by which authorizer (attributes.authorizer, attributes.reason)
  'Admission', // one per phase (attributes.phase; attributes.plugins: "ServiceAccount 210µs, ..." in order; attributes.mutated: "ServiceAccount: spec.volumes; ...")
  'Persisted', // stored (attributes.resourceVersion)
  'CreatedByController', // the creator is a controller (attributes.controller, attributes.ownerKind, attributes.ownerName)
  // the scheduler
  'SchedulingQueued', // entered activeQ (attributes.queue: active|backoff|unschedulable on later moves)
  'SchedulingGated', // held by schedulingGates (attributes.gates)
  'SchedulingUngated',
  'SchedulingAttempt', // one per cycle: `scheduling` holds the verdicts; a series when repeated with the same result
  'Nominated', // preemption nominated a node (attributes.node, attributes.victims)
  'Bound', // the binding succeeded (attributes.node)
  // the kubelet
  'KubeletAdmitted', // or 'KubeletRejected' (attributes.reason)
  'KubeletRejected',
  'VolumesReady',
  'ImagePull', // per container: start = queued, attributes.waitMs (queue wait), end = pulled; attributes.image, attributes.size
  'ImagePullFailed', // a series: attributes.error, attributes.nextRetry
  'SandboxCreated',
  'PodIPAssigned', // attributes.ip
  'ContainerCreated', // per container (init containers too: containerType)
  'ContainerStarted',
  'ContainerExited', // attributes.exitCode, attributes.reason
  'ContainerRestarted', // a series (count = restartCount)
  'BackOff', // CrashLoopBackOff/ImagePullBackOff series (attributes.delayMs, attributes.nextStart)
  'PostStart', // start..end of the hook (attributes.error when it failed)
  'StartupProbePassed',
  'ReadinessProbePassed', // the first pass
  'ProbeFailed', // a series per probe kind and container: attributes.probe (startup|liveness|readiness), attributes.failures, attributes.threshold, attributes.error
  'ContainersReady',
  'Ready',
  // the EndpointSlice controller
  'EndpointAdded', // attributes.slice, attributes.service, attributes.ready
  'EndpointTerminating',
  'EndpointRemoved',
  // on the way down
  'DeleteRequested', // kube-apiserver: attributes.user, attributes.gracePeriodSeconds
  'PreStop', // kubelet: start..end of the hook
  'SIGTERM', // kubelet, per container
  'SIGKILL', // kubelet, per container, at grace expiry
  'SandboxRemoved',
  'VolumesRemoved',
  'CgroupsRemoved',
  'StatusFinal', // kubelet: the terminal status written (attributes.phase)
  'FinalizerRemoved', // kube-apiserver: attributes.finalizer, attributes.user
  'Deleted', // kube-apiserver: the object is gone from storage
] as const;
export type TimelineStepName = (typeof timelineSteps)[number];

/** One step. Times are RFC 3339 with microseconds (MicroTime's wire form). */
export interface TimelineStep {
  step: TimelineStepName;
  /** Who recorded it: 'kube-apiserver', 'default-scheduler', 'kubelet/<node>', 'endpointslice-controller'. */
  component: string;
  /** When it began; for an instant, when it happened. */
  start: string;
  /** When it ended; absent for an instant or a step still under way. */
  end?: string;
  /** The container the step is about. */
  container?: string;
  containerType?: 'init' | 'regular' | 'ephemeral';
  /** One line for people: "pulled registry.kite.local/busybox:1.36 (1.1 MB) in 340 ms". */
  detail?: string;
  /** Facts for machines (exit code, failure count, plugin); documented per step above. */
  attributes?: Record<string, string | number | boolean>;
  /**
   * A series (restarts, back-offs, probe failures, repeated scheduling attempts, pull errors): how
   * many times it happened, first at `start`, last at `lastTime`. A recorded series step replaces
   * the stored one with the same step, container and attributes.probe instead of adding a row.
   */
  count?: number;
  lastTime?: string;
  /** SchedulingAttempt only. */
  scheduling?: SchedulingAttemptSummary;
}

/** One scheduling cycle's verdicts, capped so a 5,000-node cluster stays small. */
export interface SchedulingAttemptSummary {
  result: 'Scheduled' | 'Unschedulable' | 'Error';
  /** Nodes considered, and those that passed every filter. */
  nodes: number;
  feasible: number;
  /** Per filter plugin: how many nodes it rejected, by reason (the FailedScheduling histogram, attributed). */
  plugins: { plugin: string; rejected: number; reasons: Record<string, number> }[];
  /** Up to 20 rejected nodes with the plugin and reason that rejected them. */
  rejectedNodes?: { node: string; plugin: string; reason: string }[];
  /** The best-scored feasible nodes (up to 5), with each score plugin's weighted part. */
  topScores?: { node: string; total: number; plugins: Record<string, number> }[];
  /** The node chosen. */
  node?: string;
  /** The FailedScheduling message for this attempt, exactly as the event says it. */
  message?: string;
}

export interface TimelinePodRef {
  namespace: string;
  name: string;
  uid: string;
}

/** The kept record of one pod: metadata.name is the pod's UID, metadata.namespace the pod's. */
export interface PodTimeline {
  apiVersion: typeof timelineAPIVersion;
  kind: 'PodTimeline';
  metadata: ObjectMeta;
  pod: TimelinePodRef & { nodeName?: string; owner?: { kind: string; name: string } };
  /** Sorted by start. */
  steps: TimelineStep[];
  /** When the pod object was removed from storage; the record is kept for the retention after it. */
  deletedAt?: string;
  /** Steps were dropped to stay within the per-pod cap. */
  truncated?: boolean;
}

/** The most pods (records) and steps one PodTimelineStepBatch may carry. */
export const maxBatchRecords = 1000;
export const maxBatchSteps = 10_000;

/** What components POST to /apis/timeline.kite.dev/v1alpha1/podtimelinestepbatches. */
export interface PodTimelineStepBatch {
  apiVersion: typeof timelineAPIVersion;
  kind: 'PodTimelineStepBatch';
  metadata?: ObjectMeta;
  records: { pod: TimelinePodRef; steps: TimelineStep[] }[];
}
