// The API server's own steps for a pod, recorded in process: a PodRequestTrace rides along one pod
// write (the chain's first filter makes it, authentication, authorization, admission and the registry
// mark it), and when the request is done its steps go to a queue that is merged into the store off
// the request path. Only pod writes carry a trace, so other resources pay nothing.
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
import { podFacts, type TimelineRecord } from './store.js';

const component = 'kube-apiserver';
const traced = new Set(['create', 'update', 'patch', 'delete']);

/** Whether a request writes a pod (the main resource, not a subresource): those carry a trace. */
export function tracesPod(info: RequestInfo): boolean {
  return info.isResourceRequest && info.apiGroup === '' && info.resource === 'pods' && info.subresource === '' && traced.has(info.verb);
}

export class PodRequestTrace implements AdmissionTrace {
  private authenticatedAt?: number;
  private authorizedAt?: number;
  private authorizer?: string;
  private readonly admission: AdmittedBy[] = [];
  /** What the running admission plugin named so far. */
  private mutations: string[] = [];
  private readonly steps: { pod: KubeObject; step: TimelineStep }[] = [];

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
    if (!this.mutations.includes(path)) this.mutations.push(path);
  }

  admitted(plugin: string, phase: AdmissionPhase, start: number, end: number): void {
    this.admission.push({ plugin, phase, start: this.wallTime(start), end: this.wallTime(end), mutated: this.mutations });
    this.mutations = [];
  }

  /** A mark as clock time: the request's arrival plus the high-resolution time since. */
  private wallTime(mark: number): number {
    return this.receivedAt + (mark - this.receivedMark);
  }

  /** The create was stored: the request's steps up to now, and who made the pod. */
  persisted(pod: StoredObject, user: UserInfo): void {
    const now = this.clock.now();
    const who = { user: user.name };
    this.add(pod, { step: 'RequestReceived', component, start: microTime(this.receivedAt), attributes: { ...who, ...(this.userAgent ? { userAgent: this.userAgent } : {}), ...(this.traceparent ? { traceparent: this.traceparent } : {}) } });
    if (this.authenticatedAt !== undefined) this.add(pod, { step: 'Authenticated', component, start: microTime(this.authenticatedAt), attributes: { ...who, groups: user.groups.join(',') } });
    if (this.authorizedAt !== undefined) this.add(pod, { step: 'Authorized', component, start: microTime(this.authorizedAt), attributes: this.authorizer ? { authorizer: this.authorizer } : {} });
    for (const phase of ['mutating', 'validating'] as const) {
      const step = admissionStep(phase, this.admission);
      if (step) this.add(pod, step);
    }
    this.add(pod, { step: 'Persisted', component, start: microTime(now), attributes: { resourceVersion: pod.metadata.resourceVersion ?? '' } });
    const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
    const controller = controllerName(user);
    if (owner && controller) {
      this.add(pod, { step: 'CreatedByController', component, start: microTime(now), attributes: { controller, ownerKind: owner.kind, ownerName: owner.name }, detail: `${controller} for ${owner.kind} ${owner.name}` });
    }
  }

  /** An update or patch stored: each finalizer it took off. */
  updated(before: StoredObject, after: StoredObject, user: UserInfo): void {
    const kept = new Set(after.metadata.finalizers ?? []);
    for (const finalizer of before.metadata.finalizers ?? []) {
      if (!kept.has(finalizer)) this.add(after, { step: 'FinalizerRemoved', component, start: microTime(this.clock.now()), attributes: { finalizer, user: user.name } });
    }
  }

  /** A delete request was accepted (graceful or not). */
  deleteRequested(pod: StoredObject, gracePeriodSeconds: number | undefined, user: UserInfo): void {
    const grace = gracePeriodSeconds ?? (pod as Pod).spec?.terminationGracePeriodSeconds ?? 30;
    this.add(pod, { step: 'DeleteRequested', component, start: microTime(this.receivedAt), attributes: { user: user.name, gracePeriodSeconds: grace }, detail: `by ${user.name}, grace ${grace}s` });
  }

  /** What the request recorded, by pod. */
  records(): TimelineRecord[] {
    const byUid = new Map<string, TimelineRecord & { steps: TimelineStep[] }>();
    for (const { pod, step } of this.steps) {
      const uid = pod.metadata?.uid ?? '';
      let rec = byUid.get(uid);
      if (!rec) byUid.set(uid, (rec = { pod: { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid, ...podFacts(pod as Pod) }, steps: [] }));
      rec.steps.push(step);
    }
    return [...byUid.values()];
  }

  private add(pod: KubeObject, step: TimelineStep): void {
    if (step.detail === undefined) delete step.detail;
    this.steps.push({ pod, step });
  }
}

interface AdmittedBy {
  plugin: string;
  phase: AdmissionPhase;
  start: number;
  end: number;
  mutated: readonly string[];
}

/**
 * One step per admission phase, its plugins in the order they ran with their durations
 * (`plugins: "LimitRanger 4µs, ServiceAccount 210µs"`), and what each mutating one changed
 * (`mutated: "ServiceAccount: spec.volumes; DefaultTolerationSeconds: spec.tolerations"`): a create
 * runs a dozen plugins, and a step each made them most of the pod's API server steps.
 */
function admissionStep(phase: AdmissionPhase, all: readonly AdmittedBy[]): TimelineStep | undefined {
  const ran = all.filter((a) => a.phase === phase);
  if (ran.length === 0) return undefined;
  const changers = ran.filter((a) => a.mutated.length);
  const attributes: NonNullable<TimelineStep['attributes']> = { phase, plugins: ran.map((a) => `${a.plugin} ${Math.round((a.end - a.start) * 1000)}µs`).join(', ') };
  if (changers.length) attributes.mutated = changers.map((a) => `${a.plugin}: ${a.mutated.join(', ')}`).join('; ');
  const ranLabel = `${ran.length} ${phase} plugin${ran.length === 1 ? '' : 's'}`;
  const detail = changers.length ? `${ranLabel}; ${changers.map((a) => `${a.plugin} changed ${a.mutated.join(', ')}`).join('; ')}` : ranLabel;
  return { step: 'Admission', component, start: microTime(ran[0]!.start), end: microTime(ran.at(-1)!.end), attributes, detail };
}

/** The controller behind a user, if it is one: a kube-system service account or the controller manager. */
function controllerName(user: UserInfo): string | undefined {
  const sa = /^system:serviceaccount:kube-system:(.+)$/.exec(user.name);
  if (sa) return sa[1];
  return user.name === 'system:kube-controller-manager' ? 'kube-controller-manager' : undefined;
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
 * The API server's steps on their way into the store: enqueued by requests and the pod watch, and
 * merged together (one store transaction) `flushIntervalMs` after the first of them, as a
 * component's recorder batches its steps.
 */
export class PodStepQueue {
  private pending: TimelineRecord[] = [];
  private timer?: Timer;

  constructor(
    private readonly timelines: Pick<PodTimelines, 'record'>,
    private readonly clock: Clock,
    private readonly flushIntervalMs = 50,
  ) {}

  push(records: readonly TimelineRecord[]): void {
    if (records.length === 0) return;
    this.pending.push(...records);
    this.timer ??= this.clock.setTimer(this.flushIntervalMs, () => this.flush());
  }

  /** Merges what is queued now. */
  flush(): void {
    this.timer?.cancel();
    this.timer = undefined;
    const records = this.pending;
    this.pending = [];
    this.timelines.record(records);
  }

  /** The Deleted step of a pod the watch saw leave storage. */
  deleted(pod: StoredObject, at: number): void {
    this.push([{ pod: { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' }, steps: [{ step: 'Deleted', component, start: microTime(at) }] }]);
  }
}
