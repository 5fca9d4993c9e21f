// A pod timeline as OpenTelemetry spans, before any SDK sees them: one trace per pod whose id is
// the pod UID's 32 hex digits (anyone holding the UID finds the trace), a root span "Pod" for the
// pod's life (first step .. Deleted) and one child span per step. Span ids are hashes of what the
// span stands for, so a step sent twice, or exported again after an API server restart, keeps its id
// and the root's children always name the same parent, whichever server exported them.
import { createHash } from 'node:crypto';
import { SpanStatusCode, TraceFlags, trace, type Attributes, type HrTime, type Link, type SpanStatus } from '@opentelemetry/api';
import {
  ATTR_K8S_CONTAINER_NAME,
  ATTR_K8S_DAEMONSET_NAME,
  ATTR_K8S_JOB_NAME,
  ATTR_K8S_NAMESPACE_NAME,
  ATTR_K8S_NODE_NAME,
  ATTR_K8S_POD_NAME,
  ATTR_K8S_POD_UID,
  ATTR_K8S_REPLICASET_NAME,
  ATTR_K8S_STATEFULSET_NAME,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import type { PodTimeline, TimelineStep } from '../../../api/timeline/types.js';
import { getOwn } from '../../../util/own.js';

/** Who exported a span: becomes the span's resource (service.name per component). */
export interface SpanService {
  [ATTR_SERVICE_NAME]: string;
  [ATTR_SERVICE_INSTANCE_ID]?: string;
  [ATTR_K8S_NODE_NAME]?: string;
}

/** A span as the mapping plans it; the exporter hands it to the SDK unchanged. */
export interface PlannedSpan {
  name: string;
  service: SpanService;
  traceId: string;
  spanId: string;
  /** Absent for the pod's root span. */
  parentSpanId?: string;
  start: HrTime;
  end: HrTime;
  attributes: Attributes;
  links: Link[];
  status?: SpanStatus;
}

/** The pod's trace id: its UID's hex digits when it is a UUID (kite's are), else a hash of it. */
export function podTraceId(uid: string): string {
  const hex = uid.replaceAll('-', '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) && !/^0+$/.test(hex) ? hex : digest(uid).slice(0, 32);
}

/** The root span's id: the same for every export of the pod. */
export function podSpanId(uid: string): string {
  return spanId(uid, 'Pod');
}

function spanId(uid: string, what: string): string {
  return digest(`${uid}\0${what}`).slice(0, 16);
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A series (restarts, back-offs, probe failures, repeated attempts): the store replaces it as it grows. */
export const isSeries = (s: TimelineStep): boolean => s.count !== undefined;

/**
 * A step's span id. A series is one span whatever its count, keyed like the store keys it (step,
 * container, probe); any other step by all it says, so two different steps never share an id.
 */
export function stepSpanId(uid: string, s: TimelineStep): string {
  if (isSeries(s)) return spanId(uid, `series\0${s.step}\0${s.container ?? ''}\0${String(s.attributes ? getOwn(s.attributes, 'probe') ?? '' : '')}`);
  return spanId(uid, JSON.stringify(s));
}

/**
 * A W3C traceparent header's span context ("00-<trace id>-<span id>-<flags>"); undefined when it is
 * malformed or names the all-zero ids, which the spec says to ignore.
 */
export function parseTraceparent(header: string): Link['context'] | undefined {
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/.exec(header.trim());
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return undefined;
  const context = { traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) & TraceFlags.SAMPLED, isRemote: true };
  return trace.isSpanContextValid(context) ? context : undefined;
}

/** A MicroTime ("2026-01-01T00:00:00.123456Z") as [seconds, nanoseconds]; undefined when it is not one. */
export function hrTimeOf(time: string): HrTime | undefined {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(time);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}Z`);
  if (Number.isNaN(ms)) return undefined;
  return [ms / 1000, Number((m[2] ?? '').padEnd(9, '0'))];
}

/** service.name per component; a kubelet's node is its instance. */
export function serviceOf(component: string): SpanService {
  const node = /^kubelet\/(.+)$/.exec(component)?.[1];
  if (node !== undefined) return { [ATTR_SERVICE_NAME]: 'kubelet', [ATTR_SERVICE_INSTANCE_ID]: node, [ATTR_K8S_NODE_NAME]: node };
  return { [ATTR_SERVICE_NAME]: component };
}

/** The k8s.<kind>.name attribute of the pod's owner, for the owner kinds the conventions name. */
const ownerAttribute: Record<string, string> = {
  ReplicaSet: ATTR_K8S_REPLICASET_NAME,
  StatefulSet: ATTR_K8S_STATEFULSET_NAME,
  DaemonSet: ATTR_K8S_DAEMONSET_NAME,
  Job: ATTR_K8S_JOB_NAME,
};

function podAttributes(tl: PodTimeline): Attributes {
  return { [ATTR_K8S_POD_NAME]: tl.pod.name, [ATTR_K8S_POD_UID]: tl.pod.uid, [ATTR_K8S_NAMESPACE_NAME]: tl.pod.namespace };
}

/**
 * The spans to export for one merge of steps into `tl`. Each step with an end is a span from start
 * to end; an instant is a zero-length span (not a span event: an event would sit under another
 * span and lose its own component's service.name). A series is held back until the pod is gone and
 * then exported once, start..lastTime with its count, so a crash loop is one span, not one per
 * restart. The root span is exported when Deleted arrives: only then is the pod's life known.
 */
export function planSpans(tl: PodTimeline, added: readonly TimelineStep[]): PlannedSpan[] {
  const deletedNow = added.some((s) => s.step === 'Deleted');
  const gone = deletedNow || tl.deletedAt !== undefined;
  const planned: PlannedSpan[] = [];
  for (const s of added) {
    if (isSeries(s) && !gone) continue;
    if (isSeries(s) && deletedNow) continue; // exported below from the final timeline
    const span = stepSpan(tl, s);
    if (span) planned.push(span);
  }
  if (deletedNow) {
    for (const s of tl.steps) {
      if (!isSeries(s)) continue;
      const span = stepSpan(tl, s);
      if (span) planned.push(span);
    }
    const root = rootSpan(tl);
    if (root) planned.push(root);
  }
  return planned;
}

/** The client's span from the create request's traceparent, when it sent one. */
function clientLinks(tl: PodTimeline): Link[] {
  const received = tl.steps.find((s) => s.step === 'RequestReceived');
  const header = received?.attributes ? getOwn(received.attributes, 'traceparent') : undefined;
  const context = typeof header === 'string' ? parseTraceparent(header) : undefined;
  return context ? [{ context, attributes: { 'kite.link': 'create request' } }] : [];
}

function rootSpan(tl: PodTimeline): PlannedSpan | undefined {
  const first = tl.steps[0];
  const deleted = tl.steps.findLast((s) => s.step === 'Deleted');
  const start = first && hrTimeOf(first.start);
  const end = deleted && hrTimeOf(deleted.start);
  if (!start || !end) return undefined;
  const attributes = podAttributes(tl);
  if (tl.pod.nodeName) attributes[ATTR_K8S_NODE_NAME] = tl.pod.nodeName;
  const owner = tl.pod.owner && ownerAttribute[tl.pod.owner.kind];
  if (owner) attributes[owner] = tl.pod.owner!.name;
  if (tl.truncated) attributes['kite.timeline.truncated'] = true;
  return {
    name: 'Pod',
    service: serviceOf('kube-apiserver'),
    traceId: podTraceId(tl.pod.uid),
    spanId: podSpanId(tl.pod.uid),
    start,
    end,
    attributes,
    links: clientLinks(tl),
  };
}

function stepSpan(tl: PodTimeline, s: TimelineStep): PlannedSpan | undefined {
  const start = hrTimeOf(s.start);
  const endText = s.end ?? (isSeries(s) ? s.lastTime : undefined);
  const end = endText === undefined ? start : hrTimeOf(endText);
  if (!start || !end) return undefined;
  const service = serviceOf(s.component);
  const attributes: Attributes = { ...podAttributes(tl), 'kite.step.name': s.step, 'kite.step.component': s.component };
  const node = service[ATTR_K8S_NODE_NAME] ?? nodeNamed(s);
  if (node !== undefined) attributes[ATTR_K8S_NODE_NAME] = node;
  if (s.container !== undefined) attributes[ATTR_K8S_CONTAINER_NAME] = s.container;
  if (s.containerType !== undefined) attributes['kite.step.container_type'] = s.containerType;
  if (s.detail !== undefined) attributes['kite.step.detail'] = s.detail;
  if (s.count !== undefined) attributes['kite.step.count'] = s.count;
  if (s.lastTime !== undefined) attributes['kite.step.last_time'] = s.lastTime;
  for (const [key, value] of Object.entries(s.attributes ?? {})) attributes[`kite.step.attributes.${key}`] = value;
  const sched = s.scheduling;
  if (sched) {
    attributes['kite.scheduling.result'] = sched.result;
    attributes['kite.scheduling.nodes'] = sched.nodes;
    attributes['kite.scheduling.feasible'] = sched.feasible;
    if (sched.node !== undefined) attributes['kite.scheduling.node'] = sched.node;
    if (sched.message !== undefined) attributes['kite.scheduling.message'] = sched.message;
  }
  const status = statusOf(s);
  return {
    name: s.step,
    service,
    traceId: podTraceId(tl.pod.uid),
    spanId: stepSpanId(tl.pod.uid, s),
    parentSpanId: podSpanId(tl.pod.uid),
    start,
    end,
    attributes,
    links: s.step === 'RequestReceived' ? clientLinks(tl) : [],
    ...(status && { status }),
  };
}

/** The node a scheduler step names (Bound, Nominated, the attempt that chose one). */
function nodeNamed(s: TimelineStep): string | undefined {
  const node = s.attributes ? getOwn(s.attributes, 'node') : undefined;
  if (typeof node === 'string') return node;
  return s.scheduling?.node;
}

/** ERROR for the steps that are failures, with what failed; the others leave the status unset. */
function statusOf(s: TimelineStep): SpanStatus | undefined {
  const attr = (key: string) => (s.attributes ? getOwn(s.attributes, key) : undefined);
  const error = (message: unknown) => ({ code: SpanStatusCode.ERROR, message: String(message ?? s.detail ?? s.step) });
  switch (s.step) {
    case 'KubeletRejected':
      return error(attr('reason'));
    case 'ImagePullFailed':
    case 'ProbeFailed':
      return error(attr('error'));
    case 'ContainerExited': {
      const code = attr('exitCode');
      return code !== undefined && Number(code) !== 0 ? error(`exit code ${String(code)}`) : undefined;
    }
    case 'PostStart':
    case 'PreStop':
      return attr('error') !== undefined ? error(attr('error')) : undefined;
    case 'SchedulingAttempt':
      return s.scheduling && s.scheduling.result !== 'Scheduled' ? error(s.scheduling.message ?? s.scheduling.result) : undefined;
    default:
      return undefined;
  }
}
