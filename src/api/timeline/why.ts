// "Why": one plain sentence naming what a pod waits for now and who acts next, from the pod, its
// timeline when there is one, its node and Lease, its events and a few facts the caller fetched
// (log lines, the owner, the largest free capacity). Each rule starts from the STATUS column
// kubectl prints (api/pod/status.ts) and covers the seeds' failure table: Pending (resources,
// selector, taints), gates, image pulls, init containers, CrashLoopBackOff, probes, Terminating
// (finalizers, an unreachable node). Pure and free of node: imports: the CLI and the console share it.
import { humanDuration, parseDuration } from '../duration.js';
import { Quantity } from '../quantity.js';
import { isPodPhaseTerminal, podConditionTrue, summarizePod, terminatedReason } from '../pod/status.js';
import { podRequests } from '../quota/evaluators.js';
import type { ContainerStatus, CoreEvent, Lease, Node, Pod, Probe } from '../types.js';
import type { PodTimeline, SchedulingAttemptSummary, TimelineStep, TimelineStepName } from './types.js';
import { stepEndMicros, stepMillis } from './waterfall.js';

export interface WhyInput {
  /** Absent when the pod is gone and only its timeline is left. */
  pod?: Pod;
  timeline?: PodTimeline;
  /** The pod's node; null when it is known not to exist. */
  node?: Node | null;
  /** The node's Lease in kube-node-lease. */
  lease?: Lease;
  /** The pod's events, any order. */
  events?: CoreEvent[];
  /** Nodes in the cluster (for "0/N nodes fit" when neither the timeline nor an event says). */
  nodeCount?: number;
  /** The last log line of each container (of its previous run when it crashed). */
  lastLogLines?: Record<string, string>;
  /** Per resource some node lacks: the node with the most of it free (see largestFree). */
  largestFree?: Record<string, { node: string; free: string }>;
  /** Whether the pod's controller (its controller ownerReference) still exists. */
  ownerExists?: boolean;
  /** ms since the epoch. */
  now: number;
}

export interface Why {
  /** The STATUS column, or "Running, not Ready", or "Deleted". */
  status: string;
  /** A short machine reason: Unschedulable, SchedulingGated, ImagePullBackOff, ProbeFailing, ... */
  reason: string;
  /** Who acts next: default-scheduler, kubelet/<node>, node-lifecycle-controller, the user, ... */
  next: string;
  /** The sentence, starting with the status. */
  message: string;
}

/** How long a node may be silent before the node lifecycle controller marks it Unknown (1.33's default). */
export const nodeMonitorGracePeriodMs = 50_000;

const clockTime = (ms: number): string => new Date(ms).toISOString().slice(11, 19);
const parseTime = (t: string | undefined): number => (t ? Date.parse(t) : NaN);
const numberWords = ['zero', 'once', 'twice', 'three times', 'four times', 'five times', 'six times', 'seven times', 'eight times', 'nine times', 'ten times'];
const times = (n: number): string => numberWords[n] ?? `${n} times`;

/** The newest of the pod's events with this reason (and about this container when given). */
function newestEvent(events: CoreEvent[] | undefined, reason: string, container?: string): CoreEvent | undefined {
  let best: CoreEvent | undefined;
  let bestAt = -Infinity;
  for (const e of events ?? []) {
    if (e.reason !== reason) continue;
    if (container && e.involvedObject?.fieldPath && !e.involvedObject.fieldPath.endsWith(`{${container}}`)) continue;
    const at = eventTime(e);
    if (at >= bestAt) [best, bestAt] = [e, at];
  }
  return best;
}

function eventTime(e: CoreEvent): number {
  const t = parseTime(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp);
  return Number.isNaN(t) ? 0 : t;
}

function eventCount(e: CoreEvent): number {
  return e.series?.count ?? e.count ?? 1;
}

/** The latest recorded step with this name (and container). */
function lastStep(timeline: PodTimeline | undefined, name: TimelineStepName, container?: string): TimelineStep | undefined {
  let best: TimelineStep | undefined;
  for (const s of timeline?.steps ?? []) {
    if (s.step !== name || (container !== undefined && s.container !== container)) continue;
    if (!best || stepEndMicros(s) >= stepEndMicros(best)) best = s;
  }
  return best;
}

interface Unreachable {
  since?: number;
  leaseAgeMs?: number;
}

/** Whether the node's kubelet has gone silent: Ready Unknown, or a Lease older than the grace period. */
export function nodeUnreachable(node: Node | null | undefined, lease: Lease | undefined, now: number): Unreachable | undefined {
  const renew = parseTime(lease?.spec?.renewTime);
  const leaseAgeMs = Number.isNaN(renew) ? undefined : Math.max(0, now - renew);
  const ready = node?.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'Unknown') {
    const since = parseTime(ready.lastTransitionTime);
    return { since: Number.isNaN(since) ? renew : since, leaseAgeMs };
  }
  if (leaseAgeMs !== undefined && leaseAgeMs > nodeMonitorGracePeriodMs) return { since: renew, leaseAgeMs };
  return undefined;
}

function unreachablePhrase(nodeName: string, u: Unreachable): string {
  const since = u.since !== undefined && !Number.isNaN(u.since) ? ` since ${clockTime(u.since)}` : '';
  const lease = u.leaseAgeMs !== undefined ? ` (Lease ${humanDuration(u.leaseAgeMs)} old)` : '';
  return `kubelet on ${nodeName} is unreachable${since}${lease}`;
}

const why = (status: string, reason: string, next: string, message: string): Why => ({ status, reason, next, message: `${status}: ${message}` });

export function explainPod(input: WhyInput): Why {
  const { pod, timeline, now } = input;
  if (!pod) {
    const deleted = lastStep(timeline, 'Deleted');
    const at = timeline?.deletedAt ? parseTime(timeline.deletedAt) : deleted ? stepMillis(deleted.start) : NaN;
    const when = Number.isNaN(at) ? '' : ` at ${clockTime(at)} (${humanDuration(now - at)} ago)`;
    return why('Deleted', 'Deleted', 'nobody', `the pod was deleted${when}; only its timeline is left`);
  }
  const status = summarizePod(pod).reason || 'Pending';
  if (pod.metadata?.deletionTimestamp && !isPodPhaseTerminal(pod.status?.phase)) return terminating(input, pod, status);
  if (pod.metadata?.deletionTimestamp && pod.metadata.finalizers?.length) return finalizersLeft(pod, 'Terminating');
  if (pod.metadata?.deletionTimestamp) {
    // Stopped and deleted: the kubelet removes the object once its status is final.
    const node = pod.spec?.nodeName;
    return why(status, 'Deleting', node ? `kubelet/${node}` : 'kube-apiserver', `deleted and stopped; waiting for ${node ? `kubelet on ${node}` : 'the API server'} to remove the pod object`);
  }
  if (status === 'SchedulingGated') {
    const gates = (pod.spec?.schedulingGates ?? []).map((g) => g.name).join(', ');
    return why(status, 'SchedulingGated', 'the gates’ owner', `waiting for scheduling gates ${gates} to be removed; the scheduler does not try before`);
  }
  if (pod.status?.reason === 'Evicted') return evicted(input, pod);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return unscheduled(input, pod, status);
  const unreachable = nodeUnreachable(input.node, input.lease, now);
  if (input.node === null) {
    return why(status, 'NodeGone', 'pod-garbage-collector', `node ${nodeName} no longer exists; the pod garbage collector deletes the pod`);
  }
  if (unreachable && !isPodPhaseTerminal(pod.status?.phase)) {
    return why(status === 'Running' ? 'Running (as last reported)' : status, 'NodeUnreachable', 'node-lifecycle-controller', `${unreachablePhrase(nodeName, unreachable)}; the node lifecycle controller marks its pods not Ready and taint eviction removes them`);
  }
  if (status.startsWith('Init:')) return initializing(input, pod, status);
  const statuses = pod.status?.containerStatuses ?? [];
  for (const cs of statuses) {
    const w = cs.state?.waiting;
    if (w?.reason && w.reason === status) return waitingContainer(input, pod, cs, status, 'container');
  }
  if (status === 'ContainerCreating' || status === 'PodInitializing' || (status === 'Pending' && !pod.status?.containerStatuses?.some((c) => c.state?.running))) {
    return creating(input, pod, status);
  }
  if (pod.status?.phase === 'Succeeded' || status === 'Completed') return completed(input, pod, status);
  if (pod.status?.phase === 'Failed' || terminatedStatus(pod, status)) return failed(input, pod, status);
  if (status === 'Running' || status === 'NotReady') return running(input, pod, status);
  if (status === 'Unknown') return why(status, 'Unknown', `kubelet/${nodeName}`, `kubelet on ${nodeName} has not reported the pod's state`);
  return why(status, status, `kubelet/${nodeName}`, pod.status?.message ?? `kubelet on ${nodeName} reports ${status}`);
}

/** STATUS is a container's termination reason (Error, OOMKilled, ExitCode:N, ContainerStatusUnknown, ...). */
function terminatedStatus(pod: Pod, status: string): boolean {
  return (pod.status?.containerStatuses ?? []).some((cs) => cs.state?.terminated && terminatedReason(cs.state.terminated) === status && status !== 'Completed');
}

// --- scheduling ---

function unscheduled(input: WhyInput, pod: Pod, status: string): Why {
  const schedulerName = pod.spec?.schedulerName ?? 'default-scheduler';
  const attempt = lastStep(input.timeline, 'SchedulingAttempt');
  const event = newestEvent(input.events, 'FailedScheduling');
  const attemptAt = attempt ? stepEndMicros(attempt) / 1000 : event ? eventTime(event) : NaN;
  const last = Number.isNaN(attemptAt) ? '' : ` (last attempt ${humanDuration(input.now - attemptAt)} ago)`;
  const nominated = pod.status?.nominatedNodeName ? `; preemption nominated ${pod.status.nominatedNodeName}, waiting for its victims to go` : '';
  const summary = attempt?.scheduling?.result === 'Unschedulable' ? attempt.scheduling : undefined;
  if (summary || event?.message) {
    const fit = summary ? fromSummary(summary, pod, input) : fromMessage(event!.message!, pod, input);
    return why(status, 'Unschedulable', schedulerName, `${fit}; retrying on cluster changes${last}${nominated}`);
  }
  const queued = lastStep(input.timeline, 'SchedulingQueued');
  const since = queued ? ` since ${clockTime(stepMillis(queued.start))}` : '';
  return why(status, 'SchedulingQueued', schedulerName, `waiting for ${schedulerName} to place it${since} (no attempt yet)`);
}

/** "N reason" items of a FailedScheduling message, worded for people. */
function fitSentence(nodes: number | undefined, items: [string, number][], pod: Pod, input: WhyInput): string {
  const sorted = [...items].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const parts = sorted.map(([reason, n]) => `${n} ${describeReason(reason, pod, input)}`);
  const total = nodes ?? input.nodeCount;
  return `${total === undefined ? '0' : `0/${total}`} nodes fit — ${parts.join(', ')}`;
}

function fromSummary(s: SchedulingAttemptSummary, pod: Pod, input: WhyInput): string {
  const items = new Map<string, number>();
  for (const p of s.plugins) for (const [reason, n] of Object.entries(p.reasons)) items.set(reason, (items.get(reason) ?? 0) + n);
  if (items.size === 0 && s.message) return fromMessage(s.message, pod, input);
  return fitSentence(s.nodes, [...items], pod, input);
}

/** Upstream's FitError message: "0/6 nodes are available: 5 Insufficient cpu, 1 node(s) had .... preemption: ...". */
function fromMessage(message: string, pod: Pod, input: WhyInput): string {
  const m = /^0\/(\d+) nodes are available: (.*?)\.(?: |$)/s.exec(message);
  if (!m) return message.replace(/\.$/, '');
  const items = m[2]!.split(/, (?=\d+ )/).map((part): [string, number] => {
    const sp = part.indexOf(' ');
    return [part.slice(sp + 1), Number(part.slice(0, sp))];
  });
  return fitSentence(Number(m[1]), items, pod, input);
}

function describeReason(reason: string, pod: Pod, input: WhyInput): string {
  const insufficient = /^Insufficient (.+)$/.exec(reason);
  if (insufficient) {
    const resource = insufficient[1]!;
    const needs = podRequests(pod).get(resource);
    const free = input.largestFree && Object.hasOwn(input.largestFree, resource) ? input.largestFree[resource] : undefined;
    const facts = [needs ? `needs ${needs.toString()}` : '', free ? `largest free ${free.free} on ${free.node}` : ''].filter(Boolean);
    return facts.length ? `${reason} (${facts.join(', ')})` : reason;
  }
  const taint = /^node\(s\) had untolerated taint \{(.*?): ?(.*)\}$/.exec(reason);
  if (taint) return `untolerated taint ${taint[1]}${taint[2] ? `=${taint[2]}` : ''}`;
  if (reason === "node(s) didn't match Pod's node affinity/selector") {
    const selector = Object.entries(pod.spec?.nodeSelector ?? {}).map(([k, v]) => `${k}=${v}`);
    return selector.length ? `don't match its nodeSelector ${selector.join(',')}` : "don't match its node affinity";
  }
  return reason.replace(/^node\(s\) /, '');
}

/** Per resource: the node with the most allocatable left after its pods' requests. */
export function largestFree(nodes: Node[], pods: Pod[], resources: readonly string[]): Record<string, { node: string; free: string }> {
  const used = new Map<string, Map<string, Quantity>>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    if (!n || isPodPhaseTerminal(p.status?.phase)) continue;
    const u = used.get(n) ?? new Map<string, Quantity>();
    for (const [r, q] of podRequests(p)) u.set(r, u.get(r)?.add(q) ?? q);
    used.set(n, u);
  }
  const out: Record<string, { node: string; free: string }> = {};
  for (const r of resources) {
    let best: { node: string; q: Quantity } | undefined;
    for (const node of nodes) {
      const alloc = node.status?.allocatable?.[r];
      if (alloc === undefined) continue;
      let q: Quantity;
      try {
        q = Quantity.from(alloc);
      } catch {
        continue;
      }
      const u = used.get(node.metadata?.name ?? '')?.get(r);
      if (u) q = q.sub(u);
      if (!best || q.cmp(best.q) > 0) best = { node: node.metadata?.name ?? '', q };
    }
    if (best) out[r] = { node: best.node, free: best.q.sign() < 0 ? '0' : best.q.toString() };
  }
  return out;
}

// --- the node ---

function creating(input: WhyInput, pod: Pod, status: string, container?: string): Why {
  const node = pod.spec!.nodeName!;
  const kubelet = `kubelet/${node}`;
  const tl = input.timeline;
  const pulling = tl?.steps.find((s) => s.step === 'ImagePull' && !s.end && (!container || s.container === container));
  const pullingEvent = newestEvent(input.events, 'Pulling', container);
  const pulledEvent = newestEvent(input.events, 'Pulled', container);
  if (pulling) {
    const image = String(pulling.attributes?.image ?? 'its image');
    return why(status, 'ImagePull', kubelet, `kubelet on ${node} is pulling ${image} for ${pulling.container} (for ${humanDuration(input.now - stepMillis(pulling.start))})`);
  }
  if (pullingEvent && (!pulledEvent || eventTime(pulledEvent) < eventTime(pullingEvent))) {
    return why(status, 'ImagePull', kubelet, `kubelet on ${node} is ${lowerFirst(pullingEvent.message ?? 'pulling an image')} (for ${humanDuration(input.now - eventTime(pullingEvent))})`);
  }
  const mount = newestEvent(input.events, 'FailedMount');
  if (mount && !lastStep(tl, 'VolumesReady')) return why(status, 'FailedMount', kubelet, `volumes not ready on ${node}: ${mount.message ?? ''}; kubelet retries`);
  const sandbox = newestEvent(input.events, 'FailedCreatePodSandBox');
  if (sandbox && !lastStep(tl, 'SandboxCreated')) return why(status, 'FailedCreatePodSandBox', kubelet, `the pod sandbox cannot be created on ${node}: ${sandbox.message ?? ''}; kubelet retries`);
  const bound = lastStep(tl, 'Bound');
  const since = bound ? ` (bound ${humanDuration(input.now - stepMillis(bound.start))} ago)` : '';
  // The kubelet's own steps say how far it got; without any, the pod's status is all there is.
  const kubeletRecords = tl?.steps.some((s) => s.component.startsWith('kubelet/')) ?? false;
  let what: string;
  if (kubeletRecords && !lastStep(tl, 'KubeletAdmitted')) what = 'to admit the pod';
  else if (kubeletRecords && !lastStep(tl, 'SandboxCreated')) what = 'to create the pod sandbox';
  else if (kubeletRecords && !lastStep(tl, 'PodIPAssigned')) what = 'to assign the pod IP';
  else if (container) what = `to create container ${container}`;
  else if (!pod.status?.containerStatuses?.length) what = 'to start the pod';
  else what = 'to create the containers';
  return why(status, 'ContainerCreating', kubelet, `waiting for kubelet on ${node} ${what}${since}`);
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** Exit codes of a container's earlier runs, from its timeline (or its last state). */
function exitCodes(input: WhyInput, cs: ContainerStatus): number[] {
  const codes = (input.timeline?.steps ?? []).filter((s) => s.step === 'ContainerExited' && s.container === cs.name).map((s) => Number(s.attributes?.exitCode));
  if (codes.length === 0 && cs.lastState?.terminated) codes.push(cs.lastState.terminated.exitCode ?? 0);
  return codes.filter((c) => !Number.isNaN(c));
}

function logSuffix(input: WhyInput, container: string, lead: string): string {
  const line = input.lastLogLines?.[container]?.trim();
  return line ? `${lead}'${line.length > 80 ? `${line.slice(0, 77)}...` : line}'` : '';
}

function initializing(input: WhyInput, pod: Pod, status: string): Why {
  const statuses = pod.status?.initContainerStatuses ?? [];
  const failing = statuses.find((cs) => !(cs.state?.terminated && (cs.state.terminated.exitCode ?? 0) === 0) && !(cs.started && pod.spec?.initContainers?.find((c) => c.name === cs.name)?.restartPolicy === 'Always'));
  const node = pod.spec!.nodeName!;
  if (!failing) return creating(input, pod, status);
  const running = failing.state?.running;
  if (running) {
    const started = parseTime(running.startedAt);
    const codes = exitCodes(input, failing);
    const forHow = Number.isNaN(started) ? '' : ` for ${humanDuration(input.now - started)}`;
    return why(status, 'InitContainerRunning', `init container ${failing.name}`, `init container ${failing.name} running${forHow} (exit codes so far: ${codes.length ? codes.join(', ') : 'none'})${logSuffix(input, failing.name, ' — its log says ')}`);
  }
  const waiting = failing.state?.waiting?.reason;
  if (waiting && waiting !== 'PodInitializing' && waiting !== 'ContainerCreating') return waitingContainer(input, pod, failing, status, 'init container');
  const terminated = failing.state?.terminated;
  if (terminated) {
    const restarts = pod.spec?.restartPolicy !== 'Never';
    return why(status, 'InitContainerFailed', restarts ? `kubelet/${node}` : 'the user', `init container ${failing.name} exited ${terminated.exitCode ?? 0} (${terminatedReason(terminated)})${logSuffix(input, failing.name, ', last log line ')}; ${restarts ? `kubelet on ${node} restarts it after a back-off` : 'restartPolicy Never: the pod has failed'}`);
  }
  return creating(input, pod, status, failing.name);
}

const pullReasons = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable', 'SignatureValidationFailed']);

function waitingContainer(input: WhyInput, pod: Pod, cs: ContainerStatus, status: string, kind: string): Why {
  const node = pod.spec!.nodeName!;
  const kubelet = `kubelet/${node}`;
  const waiting = cs.state!.waiting!;
  const reason = waiting.reason!;
  if (reason === 'CrashLoopBackOff') {
    const last = cs.lastState?.terminated;
    const exit = last ? (last.reason === 'OOMKilled' ? `OOMKilled (exit ${last.exitCode ?? 137})` : `exit ${last.exitCode ?? 0}`) : 'exits';
    const exited = (input.timeline?.steps ?? []).filter((s) => s.step === 'ContainerExited' && s.container === cs.name).length;
    const count = Math.max(exited, cs.restartCount ?? 0, 1);
    return why(status, 'CrashLoopBackOff', kubelet, `${kind} ${cs.name}: ${exit} ${times(count)}, ${nextStart(input, cs)}${logSuffix(input, cs.name, ', last log line ')}`);
  }
  if (pullReasons.has(reason)) {
    const failedStep = lastStep(input.timeline, 'ImagePullFailed', cs.name);
    const failedEvent = newestEvent(input.events, 'Failed', cs.name);
    const error = String(failedStep?.attributes?.error ?? waiting.message ?? failedEvent?.message ?? reason);
    const image = pod.spec?.containers?.concat(pod.spec.initContainers ?? []).find((c) => c.name === cs.name)?.image ?? cs.image;
    const fixable = reason === 'InvalidImageName' || reason === 'ErrImageNeverPull';
    const retry = fixable ? 'the pod spec must change' : nextPull(input, cs, failedStep);
    return why(status, reason, fixable ? 'the user' : kubelet, `image ${image} for ${kind} ${cs.name} cannot be pulled (${error}); ${retry}`);
  }
  if (reason === 'ContainerCreating' || reason === 'PodInitializing') return creating(input, pod, status, cs.name);
  return why(status, reason, kubelet, `${kind} ${cs.name} cannot start: ${waiting.message ?? reason}; kubelet on ${node} retries on its next sync`);
}

/** "next start in 1m20s", from the BackOff step or the waiting message's back-off after the last exit. */
function nextStart(input: WhyInput, cs: ContainerStatus): string {
  const step = lastStep(input.timeline, 'BackOff', cs.name);
  let at = step?.attributes?.nextStart !== undefined ? parseTime(String(step.attributes.nextStart)) : NaN;
  if (Number.isNaN(at)) {
    const delay = /back-off (\S+) restarting/.exec(cs.state?.waiting?.message ?? '')?.[1];
    const finished = parseTime(cs.lastState?.terminated?.finishedAt);
    at = finished + (delay ? goDurationMs(delay) : NaN);
  }
  if (Number.isNaN(at)) return 'next start after the back-off';
  return at > input.now ? `next start in ${humanDuration(at - input.now)}` : 'next start due now';
}

function nextPull(input: WhyInput, cs: ContainerStatus, failed: TimelineStep | undefined): string {
  const node = input.pod?.spec?.nodeName;
  const backOff = lastStep(input.timeline, 'BackOff', cs.name);
  const raw = failed?.attributes?.nextRetry ?? backOff?.attributes?.nextStart;
  const at = raw !== undefined ? parseTime(String(raw)) : NaN;
  if (Number.isNaN(at)) return `kubelet on ${node} retries with back-off (up to 5m)`;
  return at > input.now ? `kubelet on ${node} retries in ${humanDuration(at - input.now)}` : `kubelet on ${node} retries now`;
}

function goDurationMs(s: string): number {
  try {
    return parseDuration(s);
  } catch {
    return NaN;
  }
}

// --- running ---

function probeText(p: Probe): string {
  if (p.httpGet) return `${p.httpGet.scheme === 'HTTPS' ? 'GET https' : 'GET'} :${p.httpGet.port}${p.httpGet.path ?? '/'}`;
  if (p.tcpSocket) return `TCP :${p.tcpSocket.port}`;
  if (p.grpc) return `gRPC :${p.grpc.port}`;
  if (p.exec) return `exec ${(p.exec.command ?? []).join(' ')}`;
  return '';
}

/** The gist of a probe error: "connection refused" out of "Get ...: dial tcp ...: connect: connection refused". */
function probeError(error: string): string {
  const e = error.replace(/^(Readiness|Liveness|Startup) probe failed: /, '').trim();
  const connect = /connect: (.+)$/.exec(e);
  if (connect) return connect[1]!;
  if (/context deadline exceeded|Client\.Timeout/.test(e)) return 'timed out';
  return e.length > 80 ? `${e.slice(0, 77)}...` : e;
}

function running(input: WhyInput, pod: Pod, status: string): Why {
  const node = pod.spec!.nodeName!;
  if (podConditionTrue(pod, 'Ready')) {
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
    const since = parseTime(ready?.lastTransitionTime);
    return why(status, 'Ready', 'nobody', `all containers ready${Number.isNaN(since) ? '' : ` since ${clockTime(since)}`}; nothing to wait for`);
  }
  const label = status === 'Running' ? 'Running, not Ready' : status;
  const specs = pod.spec?.containers ?? [];
  for (const cs of pod.status?.containerStatuses ?? []) {
    if (cs.ready || !cs.state?.running) continue;
    const spec = specs.find((c) => c.name === cs.name);
    const kind = !cs.started && spec?.startupProbe ? 'startup' : 'readiness';
    const probe = kind === 'startup' ? spec?.startupProbe : spec?.readinessProbe;
    const threshold = probe?.failureThreshold ?? 3;
    const step = (input.timeline?.steps ?? []).filter((s) => s.step === 'ProbeFailed' && s.container === cs.name && s.attributes?.probe === kind).at(-1);
    const event = newestEvent(input.events, 'Unhealthy', cs.name);
    const eventOfKind = event?.message?.toLowerCase().startsWith(kind) ? event : undefined;
    if (step || eventOfKind) {
      const failures = Number(step?.attributes?.failures ?? step?.count ?? (eventOfKind ? eventCount(eventOfKind) : 1));
      const error = probeError(String(step?.attributes?.error ?? eventOfKind?.message ?? 'failed'));
      const since = step ? stepMillis(step.start) : parseTime(eventOfKind?.firstTimestamp ?? eventOfKind?.eventTime);
      const desc = probe ? `${probeText(probe)} ` : '';
      return why(label, 'ProbeFailing', `kubelet/${node}`, `${kind} probe ${desc}of ${cs.name} failing ${Math.min(failures, threshold)}/${threshold} (${error})${Number.isNaN(since) ? '' : ` since ${clockTime(since)}`}`);
    }
    if (probe) return why(label, 'ProbeNotPassed', `kubelet/${node}`, `${kind} probe ${probeText(probe)} of ${cs.name} has not passed yet`);
    return why(label, 'ContainerNotReady', `kubelet/${node}`, `container ${cs.name} is not ready`);
  }
  for (const gate of pod.spec?.readinessGates ?? []) {
    if (!podConditionTrue(pod, gate.conditionType)) return why(label, 'ReadinessGate', `the owner of ${gate.conditionType}`, `readiness gate ${gate.conditionType} is not True`);
  }
  const done = (pod.status?.containerStatuses ?? []).filter((cs) => cs.state?.terminated).map((cs) => cs.name);
  if (done.length) return why(label, 'ContainersCompleted', `kubelet/${node}`, `container ${done.join(', ')} exited while others run`);
  return why(label, 'NotReady', `kubelet/${node}`, `waiting for kubelet on ${node} to report the pod Ready`);
}

// --- the end ---

function ownerPhrase(pod: Pod, input: WhyInput): string {
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
  if (!owner) return 'nothing replaces it (no controller owns it)';
  if (input.ownerExists === false) return `its ${owner.kind} ${owner.name} is gone, so nothing replaces it`;
  return owner.kind === 'Job' ? `its Job ${owner.name} counts it` : `its ${owner.kind} ${owner.name} makes a replacement`;
}

function completed(input: WhyInput, pod: Pod, status: string): Why {
  const finished = Math.max(...(pod.status?.containerStatuses ?? []).map((cs) => parseTime(cs.state?.terminated?.finishedAt)).filter((t) => !Number.isNaN(t)));
  const at = Number.isFinite(finished) ? ` (last at ${clockTime(finished)})` : '';
  return why(status, 'Succeeded', 'nobody', `all containers exited 0${at}; restartPolicy ${pod.spec?.restartPolicy ?? 'Always'}, so nothing runs again; ${ownerPhrase(pod, input)}`);
}

function failed(input: WhyInput, pod: Pod, status: string): Why {
  const node = pod.spec?.nodeName ?? '';
  const statuses = [...(pod.status?.containerStatuses ?? [])].reverse();
  const cs = statuses.find((c) => c.state?.terminated && terminatedReason(c.state.terminated) === status) ?? statuses.find((c) => c.state?.terminated && (c.state.terminated.exitCode ?? 0) !== 0);
  const t = cs?.state?.terminated;
  if (!cs || !t) {
    const reason = pod.status?.reason ?? status;
    return why(status, reason, 'nobody', `${pod.status?.message ?? `the pod failed (${reason})`}; ${ownerPhrase(pod, input)}`);
  }
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const restarts = policy !== 'Never' && pod.status?.phase !== 'Failed';
  const finished = parseTime(t.finishedAt);
  const at = Number.isNaN(finished) ? '' : ` at ${clockTime(finished)}`;
  const limit = pod.spec?.containers?.find((c) => c.name === cs.name)?.resources?.limits?.memory;
  const what = t.reason === 'OOMKilled' ? `container ${cs.name} ran out of memory${limit ? ` (limit ${limit})` : ''} and was killed (exit ${t.exitCode ?? 137})${at}` : `container ${cs.name} exited ${t.exitCode ?? 0}${t.signal ? ` (signal ${t.signal})` : ''}${at}`;
  const after = restarts ? `kubelet on ${node} restarts it (restartPolicy ${policy})` : `restartPolicy ${policy}: it stays stopped; ${ownerPhrase(pod, input)}`;
  return why(status, t.reason === 'OOMKilled' || t.reason === 'ContainerStatusUnknown' ? t.reason : 'Error', restarts ? `kubelet/${node}` : 'nobody', `${what}${logSuffix(input, cs.name, ', last log line ')}; ${after}`);
}

function evicted(input: WhyInput, pod: Pod): Why {
  return why('Evicted', 'Evicted', 'nobody', `${(pod.status?.message ?? 'the kubelet evicted the pod').replace(/\.\s*$/, '')}; ${ownerPhrase(pod, input)}`);
}

function terminating(input: WhyInput, pod: Pod, status: string): Why {
  const { now } = input;
  const node = pod.spec?.nodeName;
  const deletion = parseTime(pod.metadata!.deletionTimestamp);
  const grace = pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
  const requested = lastStep(input.timeline, 'DeleteRequested');
  const since = requested ? stepMillis(requested.start) : deletion - grace * 1000;
  const forHow = Number.isNaN(since) ? status : `${status} for ${humanDuration(now - since)}`;
  if (!node || input.node === null) {
    if (pod.metadata?.finalizers?.length) return finalizersLeft(pod, status);
    return why(forHow, 'Deleting', 'kube-apiserver', node ? `node ${node} no longer exists; the pod garbage collector deletes the pod` : 'an unscheduled pod goes at once; the API server removes it');
  }
  const unreachable = nodeUnreachable(input.node, input.lease, now);
  if (unreachable) {
    return why(forHow, 'NodeUnreachable', 'the node or its deletion', `${unreachablePhrase(node, unreachable)}; the pod goes when the node returns or is deleted`);
  }
  const containersStopped = (pod.status?.containerStatuses ?? []).every((cs) => !cs.state?.running) && !(pod.status?.initContainerStatuses ?? []).some((cs) => cs.state?.running);
  if (containersStopped && pod.metadata?.finalizers?.length) return finalizersLeft(pod, status);
  const preStop = (input.timeline?.steps ?? []).find((s) => s.step === 'PreStop' && !s.end);
  const doing = preStop ? `running the preStop hook of ${preStop.container}` : containersStopped ? 'cleaning up the stopped containers' : 'stopping the containers';
  const kill = Number.isNaN(deletion) ? '' : deletion > now ? `, SIGKILL at ${clockTime(deletion)}` : `, past it since ${clockTime(deletion)}`;
  return why(forHow, 'Terminating', `kubelet/${node}`, `kubelet on ${node} is ${doing} (grace period ${grace}s${kill})`);
}

/** Who removes the finalizers kite's own controllers put on pods. */
const knownFinalizers = new Map([
  ['batch.kubernetes.io/job-tracking', 'removed by the Job controller once it counted the pod'],
  ['foregroundDeletion', 'removed by the garbage collector once the dependents are gone'],
  ['orphan', 'removed by the garbage collector once the dependents are orphaned'],
]);

function finalizersLeft(pod: Pod, status: string): Why {
  const finalizers = pod.metadata?.finalizers ?? [];
  const parts = finalizers.map((f) => `${f}, ${knownFinalizers.get(f) ?? 'owned by no running controller'}`);
  const unowned = finalizers.filter((f) => !knownFinalizers.has(f));
  const next = unowned.length ? 'the user' : 'kube-controller-manager';
  const advice = unowned.length ? `; the pod stays until someone removes ${unowned.length === 1 ? 'it' : 'them'} from metadata.finalizers` : '';
  return why(status, 'FinalizerPending', next, `${finalizers.length === 1 ? 'finalizer' : 'finalizers'} ${parts.join('; ')}${advice}`);
}
