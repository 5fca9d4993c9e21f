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
import { podFacts, type TimelineRecord, type TimelineStore } from './store.js';

const component = 'kube-apiserver';
const traced = new Set(['create', 'update', 'patch', 'delete']);

/** Whether a request writes a pod (the main resource, not a subresource): those carry a trace. */
export function tracesPod(info: RequestInfo): boolean {
  return info.isResourceRequest && info.apiGroup === '' && info.resource === 'pods' && info.subresource === '' && traced.has(info.verb);
}

export class PodRequestTrace {
  private authenticatedAt?: number;
  private authorizedAt?: number;
  private authorizer?: string;
  private readonly admission: TimelineStep[] = [];
  private readonly steps: { pod: KubeObject; step: TimelineStep }[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly receivedAt: number,
    private readonly userAgent: string | undefined,
    private readonly traceparent: string | undefined,
  ) {}

  now(): number {
    return this.clock.now();
  }

  authenticated(): void {
    this.authenticatedAt = this.clock.now();
  }

  authorized(authorizer: string | undefined): void {
    this.authorizedAt = this.clock.now();
    this.authorizer = authorizer;
  }

  /** One admission plugin ran from `start` to now; `mutated` lists what a mutating one changed. */
  admitted(plugin: string, phase: 'mutating' | 'validating', start: number, mutated: readonly string[]): void {
    const attributes: TimelineStep['attributes'] = { plugin, phase };
    if (mutated.length) attributes.mutated = mutated.join(', ');
    this.admission.push({ step: 'Admission', component, start: microTime(start), end: microTime(this.clock.now()), attributes, detail: mutated.length ? `${plugin} changed ${mutated.join(', ')}` : undefined });
  }

  /** The create was stored: the request's steps up to now, and who made the pod. */
  persisted(pod: StoredObject, user: UserInfo): void {
    const now = this.clock.now();
    const who = { user: user.name };
    this.add(pod, { step: 'RequestReceived', component, start: microTime(this.receivedAt), attributes: { ...who, ...(this.userAgent ? { userAgent: this.userAgent } : {}), ...(this.traceparent ? { traceparent: this.traceparent } : {}) } });
    if (this.authenticatedAt !== undefined) this.add(pod, { step: 'Authenticated', component, start: microTime(this.authenticatedAt), attributes: { ...who, groups: user.groups.join(',') } });
    if (this.authorizedAt !== undefined) this.add(pod, { step: 'Authorized', component, start: microTime(this.authorizedAt), attributes: this.authorizer ? { authorizer: this.authorizer } : {} });
    for (const s of this.admission) this.add(pod, s);
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

/** The controller behind a user, if it is one: a kube-system service account or the controller manager. */
function controllerName(user: UserInfo): string | undefined {
  const sa = /^system:serviceaccount:kube-system:(.+)$/.exec(user.name);
  if (sa) return sa[1];
  return user.name === 'system:kube-controller-manager' ? 'kube-controller-manager' : undefined;
}

/**
 * The paths a mutating admission plugin changed, e.g. `spec.volumes, spec.containers[0].volumeMounts`:
 * down through objects and same-length lists, naming the first level where they differ.
 */
export function changedPaths(before: unknown, after: unknown, path = '', depth = 5): string[] {
  if (stableEqual(before, after)) return [];
  const bothObjects = typeof before === 'object' && before !== null && typeof after === 'object' && after !== null;
  if (depth === 0 || !bothObjects || Array.isArray(before) !== Array.isArray(after)) return [path];
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length) return [path];
    return before.flatMap((b, i) => changedPaths(b, after[i], `${path}[${i}]`, depth - 1));
  }
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return keys.flatMap((k) => changedPaths(Object.hasOwn(b, k) ? b[k] : undefined, Object.hasOwn(a, k) ? a[k] : undefined, path ? `${path}.${k}` : k, depth - 1));
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
    private readonly store: TimelineStore,
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
    this.store.record(records);
  }

  /** The Deleted step of a pod the watch saw leave storage. */
  deleted(pod: StoredObject, at: number): void {
    this.push([{ pod: { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' }, steps: [{ step: 'Deleted', component, start: microTime(at) }] }]);
  }
}
