// The stage engine: plays a stage set against the objects of one resource, whatever the resource.
// Informer events put keys on one work queue; a worker looks at the object's latest state, picks
// the first matching stage, waits out its delay on a shared deadline heap (no timer per object),
// then runs the steps. The write's watch event brings the object back to the queue, where the next
// stage takes over: a lifecycle is a chain of stages, with no per-object polling.
import { metaNamespaceKeyFunc, type MetaObject } from '../client/indexer.js';
import { ItemExponentialFailureRateLimiter, WorkQueue } from '../client/workqueue.js';
import { hasStatusCode } from '../api/errors.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { builtinFunctions, type Env, type SimFunction } from './expr.js';
import type { Stage } from './stage.js';
import { DueQueue } from './wheel.js';

/** What the steps do to an object; the node and pod simulators implement them with the client. */
export interface StageActions<T> {
  /** Sends `{ status }` as a strategic merge patch to the status subresource; resolves with the result. */
  patchStatus(obj: T, status: unknown): Promise<T>;
  /** Deletes with grace period 0 (the object is gone once containers are stopped). */
  delete(obj: T): Promise<void>;
  /** Records an event; rendered from the step's template (an object or a list of them). */
  event(obj: T, event: Record<string, unknown>): void;
}

export interface StageEngineOptions<T> {
  /** Only the stages for this engine's resource, in precedence order. */
  stages: readonly Stage[];
  actions: StageActions<T>;
  /** The latest state of the object under a key (the informer's cache). */
  get(key: string): T | undefined;
  clock: Clock;
  logger: Logger;
  /** Functions templates may call besides the built-in ones. */
  functions?: Readonly<Record<string, SimFunction>>;
  /** Uniform in [0, 1); injected so tests can pin the jitter. */
  random?: () => number;
  /** Concurrent syncs; each holds at most one request in flight. */
  workers?: number;
  /** Objects not to play for now (e.g. of a node whose heartbeat is stopped); observe() them again to resume. */
  paused?: (obj: T) => boolean;
}

interface Plan {
  stage: Stage;
  uid: string | undefined;
  dueAt: number;
}

/** kite's resourceVersions are the store's global revision: integers that only grow. */
function revision(obj: MetaObject): bigint | undefined {
  const rv = obj.metadata?.resourceVersion;
  return rv && /^\d+$/.test(rv) ? BigInt(rv) : undefined;
}

export class StageEngine<T extends MetaObject> {
  private readonly queue = new WorkQueue<string>();
  private readonly due: DueQueue<string>;
  private readonly plans = new Map<string, Plan>();
  // The revision of our last write per key: an older cached object is not played again.
  private readonly written = new Map<string, bigint>();
  private readonly backoff = new ItemExponentialFailureRateLimiter<string>(200, 30_000);
  private readonly fns: Readonly<Record<string, SimFunction>>;
  private readonly random: () => number;
  private workers: Promise<void>[] = [];
  private stopped = false;

  constructor(private readonly opts: StageEngineOptions<T>) {
    this.due = new DueQueue(opts.clock, (key) => this.queue.add(key));
    this.fns = { ...builtinFunctions, ...opts.functions };
    this.random = opts.random ?? Math.random;
  }

  start(): void {
    const n = this.opts.workers ?? 16;
    for (let i = 0; i < n; i++) this.workers.push(this.work());
  }

  /** Stops taking work and waits for the steps in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.due.stop();
    this.queue.shutDown();
    await Promise.all(this.workers);
  }

  /** An object was added or changed (informer handler). */
  observe(obj: T): void {
    this.queue.add(metaNamespaceKeyFunc(obj));
  }

  /** An object is gone: forget its plan. */
  forget(key: string): void {
    this.due.cancel(key);
    this.plans.delete(key);
    this.written.delete(key);
    this.backoff.forget(key);
  }

  /** Objects with a stage waiting on its delay. */
  pending(): number {
    return this.plans.size;
  }

  /**
   * The object once the stages due at once (no delay, status patches only) have played, computed
   * locally with `applyStatus`: for an object about to be created, so it starts in that state.
   */
  settle(obj: T, applyStatus: (obj: T, status: unknown) => T): T {
    // Bounded, so stages that keep matching each other cannot loop forever.
    for (let round = 0; round < this.opts.stages.length; round++) {
      const env = this.env(obj);
      const stage = this.opts.stages.find((s) => s.matches(env));
      if (!stage || stage.steps.some((s) => s.kind !== 'patchStatus') || stage.delay(env, this.random) > 0) break;
      for (const step of stage.steps) if (step.kind === 'patchStatus') obj = applyStatus(obj, step.template(env));
    }
    return obj;
  }

  private env(obj: T): Env {
    return { root: obj, now: this.opts.clock.now(), fns: this.fns };
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      // Keys still queued at stop are let go rather than played.
      if (this.stopped) {
        this.queue.done(key);
        continue;
      }
      try {
        await this.sync(key);
        this.backoff.forget(key);
      } catch (err) {
        if (hasStatusCode(err, 404)) {
          this.forget(key);
        } else {
          this.opts.logger.warn({ err, key }, 'stage step failed; retrying');
          this.plans.delete(key);
          this.due.schedule(key, this.opts.clock.now() + this.backoff.when(key));
        }
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async sync(key: string): Promise<void> {
    const obj = this.opts.get(key);
    if (!obj) {
      this.forget(key);
      return;
    }
    if (this.opts.paused?.(obj)) {
      // Whatever was due waits: nothing is played until the object is observed unpaused.
      this.due.cancel(key);
      this.plans.delete(key);
      return;
    }
    const rv = revision(obj);
    const written = this.written.get(key);
    if (written !== undefined) {
      // Our own write has not come back through the watch yet: this state is already played.
      if (rv === undefined || rv < written) return;
      this.written.delete(key);
    }
    const env = this.env(obj);
    const stage = this.opts.stages.find((s) => s.matches(env));
    let plan = this.plans.get(key);
    if (!stage) {
      this.due.cancel(key);
      this.plans.delete(key);
      return;
    }
    const uid = obj.metadata?.uid;
    if (!plan || plan.stage !== stage || plan.uid !== uid) {
      plan = { stage, uid, dueAt: env.now + stage.delay(env, this.random) };
      this.plans.set(key, plan);
    }
    if (plan.dueAt > env.now) {
      if (this.due.dueAt(key) !== plan.dueAt) this.due.schedule(key, plan.dueAt);
      return;
    }
    this.plans.delete(key);
    await this.play(key, stage, obj, env);
  }

  private async play(key: string, stage: Stage, obj: T, env: Env): Promise<void> {
    this.opts.logger.debug({ key, stage: stage.name }, 'stage');
    // Each state is played once: until the object moves past it (past our own write, if any), a
    // stage that changed nothing is not repeated.
    const rv = revision(obj);
    let next = rv === undefined ? undefined : rv + 1n;
    for (const step of stage.steps) {
      switch (step.kind) {
        case 'event': {
          const rendered = step.template(env);
          for (const ev of Array.isArray(rendered) ? rendered : [rendered]) if (ev && typeof ev === 'object') this.opts.actions.event(obj, ev as Record<string, unknown>);
          break;
        }
        case 'patchStatus': {
          next = revision(await this.opts.actions.patchStatus(obj, step.template(env))) ?? next;
          break;
        }
        case 'delete':
          await this.opts.actions.delete(obj);
          break;
      }
    }
    if (next !== undefined) this.written.set(key, next);
  }
}
