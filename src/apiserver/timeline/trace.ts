// The API server's own steps for a pod, recorded in process: a PodRequestTrace rides along one pod
// write (the chain's first filter makes it, authentication, authorization, admission and the registry
// mark it), and when the request is done what it saw goes to a queue that is merged into the store off
// the request path. Only pod writes carry a trace, so other resources pay nothing.
//
// The request's event loop only notes times and names (PodRequestNote); the steps, with their time
// texts, attributes and admission summaries, are made by noteRecord where the notes are merged (the
// timeline process). Making them here, and copying them to that process as objects, cost the API
// server's main thread more than the rest of the timeline's work on it together.
import type { KubeObject, StoredObject } from '../../api/meta.js';
import type { Pod } from '../../api/types.js';
import { microTime } from '../../api/time.js';
import type { TimelineStep } from '../../api/timeline/types.js';
import type { Clock, Timer } from '../../util/clock.js';
import { stableEqual } from '../registry/registry.js';
import type { UserInfo } from '../authn/user.js';
import type { RequestInfo } from '../http/requestinfo.js';
import type { AdmissionPhase, AdmissionTrace } from '../admission/interface.js';
import type { PodTimelines } from './service.js';
import { withPodFacts, type TimelineRecord } from './store.js';

const component = 'kube-apiserver';
const traced = new Set(['create', 'update', 'patch', 'delete']);

/** Whether a request writes a pod (the main resource, not a subresource): those carry a trace. */
export function tracesPod(info: RequestInfo): boolean {
  return info.isResourceRequest && info.apiGroup === '' && info.resource === 'pods' && info.subresource === '' && traced.has(info.verb);
}

/**
 * The admission plugins a request ran, in order (the mutating ones first), as flat lists: each one's
 * name, its start and end in microseconds after the request arrived, and the paths it set (joined by
 * ", "; "" for none). Flat lists of strings and numbers are what crosses to the timeline process
 * cheapest: a small array per plugin cost the serializer twice as much.
 */
interface AdmissionRuns {
  plugins: string[];
  mutating: number;
  micros: number[];
  mutated: string[];
}

/**
 * What a pod write saw, in numbers and names (times are the clock's milliseconds): what crosses to
 * the timeline process, where noteRecord makes the steps.
 */
export type PodRequestNote =
  | {
      kind: 'created';
      pod: TimelineRecord['pod'];
      received: number;
      authenticated?: number;
      authorized?: number;
      authorizer?: string;
      user: string;
      groups: readonly string[];
      userAgent?: string;
      traceparent?: string;
      admission: AdmissionRuns;
      persisted: number;
      resourceVersion: string;
    }
  | { kind: 'finalizersRemoved'; pod: TimelineRecord['pod']; at: number; finalizers: readonly string[]; user: string }
  | { kind: 'deleteRequested'; pod: TimelineRecord['pod']; at: number; user: string; gracePeriodSeconds: number }
  | { kind: 'deleted'; pod: TimelineRecord['pod']; at: number };

export class PodRequestTrace implements AdmissionTrace {
  private authenticatedAt?: number;
  private authorizedAt?: number;
  private authorizer?: string;
  private readonly admission: AdmissionRuns = { plugins: [], mutating: 0, micros: [], mutated: [] };
  /** What the running admission plugin named so far. */
  private mutations?: string[];
  /** What the request did, for the queue. */
  readonly notes: PodRequestNote[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly receivedAt: number,
    private readonly userAgent: string | undefined,
    private readonly traceparent: string | undefined,
  ) {}

  /** performance.now() when the trace was made, at `receivedAt`. */
  private readonly receivedMark = performance.now();

  /** A high-resolution mark for timing an admission plugin (performance.now()). */
  mark(): number {
    return performance.now();
  }

  authenticated(): void {
    this.authenticatedAt = this.clock.now();
  }

  authorized(authorizer: string | undefined): void {
    this.authorizedAt = this.clock.now();
    this.authorizer = authorizer;
  }

  mutated(path: string): void {
    this.mutations ??= [];
    if (!this.mutations.includes(path)) this.mutations.push(path);
  }

  admitted(plugin: string, phase: AdmissionPhase, start: number, end: number): void {
    const runs = this.admission;
    runs.plugins.push(plugin);
    if (phase === 'mutating') runs.mutating++;
    runs.micros.push(Math.round((start - this.receivedMark) * 1000), Math.round((end - this.receivedMark) * 1000));
    runs.mutated.push(this.mutations ? this.mutations.join(', ') : '');
    this.mutations = undefined;
  }

  /** The create was stored: the request's steps up to now, and who made the pod. */
  persisted(pod: StoredObject, user: UserInfo): void {
    this.notes.push({
      kind: 'created',
      pod: notedPod(pod),
      received: this.receivedAt,
      authenticated: this.authenticatedAt,
      authorized: this.authorizedAt,
      authorizer: this.authorizer,
      user: user.name,
      groups: user.groups,
      userAgent: this.userAgent,
      traceparent: this.traceparent,
      admission: this.admission,
      persisted: this.clock.now(),
      resourceVersion: pod.metadata.resourceVersion ?? '',
    });
  }

  /** An update or patch stored: each finalizer it took off. */
  updated(before: StoredObject, after: StoredObject, user: UserInfo): void {
    const kept = new Set(after.metadata.finalizers ?? []);
    const finalizers = (before.metadata.finalizers ?? []).filter((f) => !kept.has(f));
    if (finalizers.length) this.notes.push({ kind: 'finalizersRemoved', pod: notedPod(after), at: this.clock.now(), finalizers, user: user.name });
  }

  /** A delete request was accepted (graceful or not). */
  deleteRequested(pod: StoredObject, gracePeriodSeconds: number | undefined, user: UserInfo): void {
    const grace = gracePeriodSeconds ?? (pod as Pod).spec?.terminationGracePeriodSeconds ?? 30;
    this.notes.push({ kind: 'deleteRequested', pod: notedPod(pod), at: this.receivedAt, user: user.name, gracePeriodSeconds: grace });
  }
}

/** A pod as a note names it: its key and what its object says of its node and controller. */
function notedPod(pod: KubeObject): TimelineRecord['pod'] {
  return withPodFacts({ namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' }, pod as Pod);
}

/** A note's steps. */
export function noteRecord(note: PodRequestNote): TimelineRecord {
  const steps: TimelineStep[] = [];
  switch (note.kind) {
    case 'created': {
      const who = { user: note.user };
      steps.push({ step: 'RequestReceived', component, start: microTime(note.received), attributes: { ...who, ...(note.userAgent ? { userAgent: note.userAgent } : {}), ...(note.traceparent ? { traceparent: note.traceparent } : {}) } });
      if (note.authenticated !== undefined) steps.push({ step: 'Authenticated', component, start: microTime(note.authenticated), attributes: { ...who, groups: note.groups.join(',') } });
      if (note.authorized !== undefined) steps.push({ step: 'Authorized', component, start: microTime(note.authorized), attributes: note.authorizer ? { authorizer: note.authorizer } : {} });
      const { admission } = note;
      for (const [phase, from, to] of [['mutating', 0, admission.mutating], ['validating', admission.mutating, admission.plugins.length]] as const) {
        if (to > from) steps.push(admissionStep(phase, note.received, admission, from, to));
      }
      steps.push({ step: 'Persisted', component, start: microTime(note.persisted), attributes: { resourceVersion: note.resourceVersion } });
      const owner = note.pod.owner;
      const controller = controllerName(note.user);
      if (owner && controller) {
        steps.push({ step: 'CreatedByController', component, start: microTime(note.persisted), attributes: { controller, ownerKind: owner.kind, ownerName: owner.name }, detail: `${controller} for ${owner.kind} ${owner.name}` });
      }
      break;
    }
    case 'finalizersRemoved':
      for (const finalizer of note.finalizers) steps.push({ step: 'FinalizerRemoved', component, start: microTime(note.at), attributes: { finalizer, user: note.user } });
      break;
    case 'deleteRequested':
      steps.push({ step: 'DeleteRequested', component, start: microTime(note.at), attributes: { user: note.user, gracePeriodSeconds: note.gracePeriodSeconds }, detail: `by ${note.user}, grace ${note.gracePeriodSeconds}s` });
      break;
    case 'deleted':
      steps.push({ step: 'Deleted', component, start: microTime(note.at) });
      break;
  }
  return { pod: note.pod, steps };
}

/**
 * One step per admission phase (its plugins are runs `from` to `to`), in the order they ran with their durations
 * (`plugins: "LimitRanger 4µs, ServiceAccount 210µs"`), and what each mutating one changed
 * (`mutated: "ServiceAccount: spec.volumes; DefaultTolerationSeconds: spec.tolerations"`): a create
 * runs a dozen plugins, and a step each made them most of the pod's API server steps.
 */
function admissionStep(phase: AdmissionPhase, received: number, runs: AdmissionRuns, from: number, to: number): TimelineStep {
  const ran: { plugin: string; micros: number; mutated: string }[] = [];
  for (let i = from; i < to; i++) ran.push({ plugin: runs.plugins[i]!, micros: runs.micros[2 * i + 1]! - runs.micros[2 * i]!, mutated: runs.mutated[i]! });
  const changers = ran.filter((a) => a.mutated);
  const attributes: NonNullable<TimelineStep['attributes']> = { phase, plugins: ran.map((a) => `${a.plugin} ${a.micros}µs`).join(', ') };
  if (changers.length) attributes.mutated = changers.map((a) => `${a.plugin}: ${a.mutated}`).join('; ');
  const ranLabel = `${ran.length} ${phase} plugin${ran.length === 1 ? '' : 's'}`;
  const detail = changers.length ? `${ranLabel}; ${changers.map((a) => `${a.plugin} changed ${a.mutated}`).join('; ')}` : ranLabel;
  return { step: 'Admission', component, start: microTime(received + runs.micros[2 * from]! / 1000), end: microTime(received + runs.micros[2 * to - 1]! / 1000), attributes, detail };
}

/** The controller behind a user, if it is one: a kube-system service account or the controller manager. */
function controllerName(user: string): string | undefined {
  const sa = /^system:serviceaccount:kube-system:(.+)$/.exec(user);
  if (sa) return sa[1];
  return user === 'system:kube-controller-manager' ? 'kube-controller-manager' : undefined;
}

/**
 * The paths where `after` differs from `before`, e.g. `spec.volumes, spec.containers[0].volumeMounts`:
 * down through objects and same-length lists, naming the first level where they differ. What a
 * mutating webhook's patch changed, which no plugin code can name for it.
 */
export function changedPaths(before: unknown, after: unknown): string[] {
  const out: string[] = [];
  differences(before, after, '', 5, out);
  return out;
}

function differences(before: unknown, after: unknown, path: string, depth: number, out: string[]): void {
  if (stableEqual(before, after)) return;
  const bothObjects = typeof before === 'object' && before !== null && typeof after === 'object' && after !== null;
  if (depth === 0 || !bothObjects || Array.isArray(before) !== Array.isArray(after) || (Array.isArray(before) && before.length !== (after as unknown[]).length)) {
    out.push(path);
    return;
  }
  if (Array.isArray(before)) {
    const a = after as unknown[];
    for (let i = 0; i < before.length; i++) differences(before[i], a[i], `${path}[${i}]`, depth - 1, out);
    return;
  }
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const at = (k: string) => (path ? `${path}.${k}` : k);
  for (const k of Object.keys(b)) differences(b[k], Object.hasOwn(a, k) ? a[k] : undefined, at(k), depth - 1, out);
  for (const k of Object.keys(a)) if (!Object.hasOwn(b, k) && a[k] !== undefined) out.push(at(k));
}

/**
 * The API server's notes on their way into the store: enqueued by requests and the pod watch, and
 * merged together (one store transaction) `flushIntervalMs` after the first of them, as a
 * component's recorder batches its steps.
 */
export class PodStepQueue {
  private pending: PodRequestNote[] = [];
  private timer?: Timer;

  constructor(
    private readonly timelines: Pick<PodTimelines, 'record'>,
    private readonly clock: Clock,
    private readonly flushIntervalMs = 50,
  ) {}

  push(notes: readonly PodRequestNote[]): void {
    if (notes.length === 0) return;
    this.pending.push(...notes);
    this.timer ??= this.clock.setTimer(this.flushIntervalMs, () => this.flush());
  }

  /** Merges what is queued now. */
  flush(): void {
    this.timer?.cancel();
    this.timer = undefined;
    const notes = this.pending;
    this.pending = [];
    this.timelines.record(notes);
  }

  /** The Deleted step of a pod the watch saw leave storage. */
  deleted(pod: StoredObject, at: number): void {
    this.push([{ kind: 'deleted', pod: { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' }, at }]);
  }
}
