// The pod timelines in their own process, whose every thread has the idle CPU policy (SCHED_IDLE,
// below nice 19): parsing, decoding and merging batches, the server's own steps, the file and the
// reads all run there, so under load the timeline takes only the CPU the pods' own work leaves (it
// catches up once the load drops; a recorder whose batch waits keeps buffering, within its cap),
// and the V8 helpers that compile and collect for it are idle too, which a worker thread's are not.
// Idle priority alone still let the merging take the moments a burst leaves free, at a cost the
// burst felt; so the store here also waits to merge until the machine's CPUs are less than half
// busy (a batch is checked, written as it came and answered at once; see TimelineStore `busy`).
// ProcessPodTimelines is the API server's side; servePodTimelines answers it over any TimelinePort
// (the child's IPC channel, or a MessageChannel in tests).
import { fork, type ChildProcess } from 'node:child_process';
import { internalError, isStatusError, StatusError, type StatusReason } from '../../api/errors.js';
import type { Status } from '../../api/meta.js';
import type { PodTimeline, TimelineStep } from '../../api/timeline/types.js';
import { realClock, type Clock } from '../../util/clock.js';
import { cpuBusySampler, machineCpuTimesBesides } from '../../util/cpuload.js';
import type { Logger } from '../../util/log.js';
import { IntakeHold } from './hold.js';
import { existingPodsIn, LocalPodTimelines, podFactsIn, type PodFacts, type PodFactsLookup, type PodsByUid, type PodTimelines, type TimelineQuery } from './service.js';
import type { TimelineSink } from './sink.js';
import { TimelineStore, type TimelineEvent, type TimelineStoreOptions } from './store.js';
import type { PodRequestNote } from './trace.js';

/** Merging waits while more than this share of the machine's CPU time is busy. */
const busyShare = 0.5;

/** What the child's store is made with (its clock, logger, sinks and pod lookups are the child's own). */
export type TimelineProcessOptions = Omit<TimelineStoreOptions, 'clock' | 'logger' | 'sinks' | 'podsExisting' | 'writer'> & { file: string; sinks: boolean };

/** The calls the API server makes; each with an id the answer carries. */
type Call =
  | { op: 'ingest'; body: Uint8Array; contentType: string | undefined; node: string | undefined }
  | { op: 'get'; namespace: string; uid: string }
  | { op: 'list'; query: TimelineQuery }
  | { op: 'watch'; query: TimelineQuery; resourceVersion: number | undefined }
  | { op: 'resourceVersion' }
  | { op: 'stop' };

/** The API server to the child. */
export type ToTimelines =
  | ({ id: number } & Call)
  | { op: 'record'; notes: readonly PodRequestNote[] }
  | { op: 'unwatch'; watch: number }
  | { op: 'facts'; ask: number; facts: string[] }
  | { op: 'existing'; ask: number; uids: ReadonlySet<string> };

/** The child to the API server. */
export type FromTimelines =
  | { op: 'answer'; id: number; result?: unknown; error?: Pick<Status, 'code' | 'reason' | 'message' | 'details'> }
  | { op: 'event'; watch: number; event: TimelineEvent }
  | { op: 'askFacts'; ask: number; uids: readonly string[] }
  | { op: 'askExisting'; ask: number; uids: readonly string[] }
  | { op: 'sink'; timeline: PodTimeline; added: readonly TimelineStep[] }
  | { op: 'ready' };

/** One side of the conversation: the child's IPC channel from either end, or a MessageChannel's end in tests. */
export interface TimelinePort {
  postMessage(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
}

export interface ProcessPodTimelinesOptions {
  enabled: boolean;
  /** What the child asks about: the facts of a batch's pods, which quiet records' pods still exist. */
  pods: PodsByUid;
  sinks: readonly TimelineSink[];
  logger: Logger;
  /** Whether the machine is busy (the child's own CPU aside): the child's intake waits meanwhile (IntakeHold); never, when absent. */
  busy?: () => boolean;
  clock?: Clock;
}

/** The API server's side: every call crosses to the child, each answer and event comes back. */
export class ProcessPodTimelines implements PodTimelines {
  readonly name = 'pod-timelines';
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (err: unknown) => void }>();
  private readonly watches = new Map<number, (e: TimelineEvent) => void>();
  private failed?: StatusError;
  private readonly hold?: IntakeHold;

  /** `port`: the child's (startTimelineProcess) or a channel's end. */
  constructor(
    private readonly port: TimelinePort,
    private readonly opts: ProcessPodTimelinesOptions,
  ) {
    port.onMessage((m) => this.receive(m as FromTimelines));
    if (opts.busy) this.hold = new IntakeHold({ clock: opts.clock ?? realClock, busy: opts.busy, post: (m) => port.postMessage(m), watched: () => this.watches.size > 0 });
  }

  get enabled(): boolean {
    return this.opts.enabled;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.read({ op: 'stop' }).catch(() => {});
    this.watches.clear();
  }

  /** The child is gone: every call waiting and every later one fails. */
  fail(err: Error): void {
    this.hold?.release();
    this.failed ??= internalError(`the pod timeline process failed: ${err.message}`);
    for (const p of this.pending.values()) p.reject(this.failed);
    this.pending.clear();
  }

  ingest(body: Uint8Array, contentType: string | undefined, node: string | undefined): Promise<string[]> {
    return this.call({ op: 'ingest', body, contentType, node }, ++this.nextId, body.byteLength) as Promise<string[]>;
  }

  record(notes: readonly PodRequestNote[]): void {
    if (this.failed) return;
    this.postIntake({ op: 'record', notes } satisfies ToTimelines, notes.length * 200);
  }

  async get(namespace: string, uid: string): Promise<PodTimeline | undefined> {
    return ((await this.read({ op: 'get', namespace, uid })) as PodTimeline | null) ?? undefined;
  }

  list(query: TimelineQuery): Promise<{ items: PodTimeline[]; resourceVersion: number }> {
    return this.read({ op: 'list', query }) as Promise<{ items: PodTimeline[]; resourceVersion: number }>;
  }

  async watch(query: TimelineQuery, resourceVersion: number | undefined, send: (e: TimelineEvent) => void): Promise<() => void> {
    const id = ++this.nextId;
    // Routed before asking: the child sends the initial events before its answer.
    this.watches.set(id, send);
    this.hold?.release();
    try {
      await this.call({ op: 'watch', query, resourceVersion }, id);
    } catch (err) {
      this.watches.delete(id);
      throw err;
    }
    return () => {
      if (this.watches.delete(id) && !this.failed) this.port.postMessage({ op: 'unwatch', watch: id } satisfies ToTimelines);
    };
  }

  resourceVersion(): Promise<number> {
    return this.read({ op: 'resourceVersion' }) as Promise<number>;
  }

  /** A call that answers from what the child has: what is held goes first. */
  private read(call: Call): Promise<unknown> {
    this.hold?.release();
    return this.call(call);
  }

  /** Posts a call; one with `intakeBytes` is intake, held while the machine is busy. */
  private call(call: Call, id = ++this.nextId, intakeBytes?: number): Promise<unknown> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const message = { id, ...call } satisfies ToTimelines;
      if (intakeBytes !== undefined) this.postIntake(message, intakeBytes);
      else this.port.postMessage(message);
    });
  }

  /** Notes and batches: through the hold when there is one. */
  private postIntake(message: ToTimelines, bytes: number): void {
    if (this.hold) this.hold.intake({ bytes, message });
    else this.port.postMessage(message);
  }

  private receive(m: FromTimelines): void {
    switch (m.op) {
      case 'answer': {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (!m.error) p?.resolve(m.result);
        else p?.reject(new StatusError(m.error.code ?? 500, (m.error.reason ?? 'InternalError') as StatusReason, m.error.message ?? '', m.error.details));
        return;
      }
      case 'event':
        this.watches.get(m.watch)?.(m.event);
        return;
      case 'askFacts':
        this.port.postMessage({ op: 'facts', ask: m.ask, facts: flatFacts(podFactsIn(this.opts.pods, m.uids)) } satisfies ToTimelines);
        return;
      case 'askExisting':
        this.port.postMessage({ op: 'existing', ask: m.ask, uids: existingPodsIn(this.opts.pods, m.uids) } satisfies ToTimelines);
        return;
      case 'sink':
        for (const sink of this.opts.sinks) {
          try {
            sink.stepsRecorded(m.timeline, m.added);
          } catch (err) {
            this.opts.logger.warn({ err }, 'a pod timeline sink failed');
          }
        }
        return;
      case 'ready':
        // The child's port (childPort) holds what was posted until then.
        return;
    }
  }
}

/**
 * Pod facts as they cross: six strings a pod (UID, namespace, name, node, owner kind, owner name; ""
 * for none), as the serializer's cost goes by the objects it walks.
 */
function flatFacts(facts: ReadonlyMap<string, PodFacts>): string[] {
  const flat: string[] = [];
  for (const [uid, f] of facts) flat.push(uid, f.namespace, f.name, f.nodeName ?? '', f.owner?.kind ?? '', f.owner?.name ?? '');
  return flat;
}

function unflatFacts(flat: readonly string[]): Map<string, PodFacts> {
  const facts = new Map<string, PodFacts>();
  for (let i = 0; i + 6 <= flat.length; i += 6) {
    const [uid, namespace, name, nodeName, ownerKind, ownerName] = flat.slice(i, i + 6) as [string, string, string, string, string, string];
    facts.set(uid, { namespace, name, ...(nodeName ? { nodeName } : {}), ...(ownerKind ? { owner: { kind: ownerKind, name: ownerName } } : {}) });
  }
  return facts;
}

/** The running child: its end of the conversation, and how to end it. */
export interface TimelineProcess {
  readonly pid: number | undefined;
  readonly port: TimelinePort;
  /** Whether the rest of the machine (this process aside) was more than half busy since the last call. */
  busy(): boolean;
  /** Lets the child finish (it stops its store, so flushes, when its channel closes) and waits for it to exit; kills it after `graceMs`. */
  end(graceMs?: number): Promise<void>;
}

/**
 * Forks the child (timeline-process.js, or its TypeScript source under tsx when run from the sources)
 * for a store with these options. `onExit` hears of an exit or failure that end() did not ask for.
 */
export function startTimelineProcess(options: TimelineProcessOptions, onExit: (err: Error) => void): TimelineProcess {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSources ? './timeline-process.ts' : './timeline-process.js', import.meta.url);
  const child = fork(entry, [JSON.stringify(options)], {
    // Structured clone: a batch body crosses as bytes, sets as sets.
    serialization: 'advanced',
    execArgv: fromSources ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let ending = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!ending) onExit(new Error(`the process exited (${signal ?? `code ${code}`})`));
      resolve();
    }),
  );
  child.on('error', (err) => {
    if (!ending) onExit(err);
  });
  const busy = child.pid ? cpuBusySampler(() => machineCpuTimesBesides(child.pid!)) : () => 0;
  return {
    pid: child.pid,
    port: childPort(child),
    busy: () => busy() > busyShare,
    async end(graceMs = 5000) {
      ending = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The API server's end of the child's channel: what is posted before the child is serving waits here (the child would drop it). */
function childPort(child: ChildProcess): TimelinePort {
  let waiting: unknown[] | undefined = [];
  const send = (message: unknown) => {
    // A child gone: its exit fails every call (ProcessPodTimelines.fail), so what is lost here was not acknowledged.
    if (child.connected) child.send(message as object, (err) => void err);
  };
  child.on('message', (message: FromTimelines) => {
    if (message.op !== 'ready' || !waiting) return;
    const held = waiting;
    waiting = undefined;
    for (const m of held) send(m);
  });
  return {
    postMessage: (message) => (waiting ? waiting.push(message) : send(message)),
    onMessage: (listener) => child.on('message', listener),
  };
}

/**
 * The child's side: a LocalPodTimelines around its own store, asking the API server for the pods it
 * needs to know of. Resolves, once the store is started and the port is served, with what stops the
 * store (what the port's 'stop' calls too).
 */
export async function servePodTimelines(port: TimelinePort, options: TimelineProcessOptions, clock: Clock, logger: Logger): Promise<() => Promise<void>> {
  let nextAsk = 0;
  const asked = new Map<number, (answer: unknown) => void>();
  const ask = <T>(message: FromTimelines & { ask: number }): Promise<T> =>
    new Promise((resolve) => {
      asked.set(message.ask, resolve as (answer: unknown) => void);
      port.postMessage(message);
    });
  const facts: PodFactsLookup = async (uids) => unflatFacts(await ask<string[]>({ op: 'askFacts', ask: ++nextAsk, uids }));
  const { sinks, ...storeOptions } = options;
  const busy = cpuBusySampler();
  const store = new TimelineStore({
    ...storeOptions,
    clock,
    logger,
    busy: () => busy() > busyShare,
    podsExisting: (uids) => ask<ReadonlySet<string>>({ op: 'askExisting', ask: ++nextAsk, uids }),
    sinks: sinks ? [{ stepsRecorded: (timeline, added) => port.postMessage({ op: 'sink', timeline, added } satisfies FromTimelines) }] : [],
  });
  const timelines = new LocalPodTimelines(store, facts);
  const watches = new Map<number, () => void>();
  const answer = (id: number, work: () => Promise<unknown>) => {
    work().then(
      (result) => port.postMessage({ op: 'answer', id, result } satisfies FromTimelines),
      (err: unknown) => {
        const status = isStatusError(err) ? err : internalError(err instanceof Error ? err.message : String(err));
        if (!isStatusError(err)) logger.error({ err }, 'a pod timeline call failed');
        port.postMessage({ op: 'answer', id, error: { code: status.code, reason: status.reason, message: status.message, details: status.details } } satisfies FromTimelines);
      },
    );
  };
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      for (const cancel of watches.values()) cancel();
      watches.clear();
      await timelines.stop();
    })());
  await timelines.start();
  // Calls posted while the file loaded wait in the port until this listener takes them.
  port.onMessage((message) => {
    const m = message as ToTimelines;
    switch (m.op) {
      case 'record':
        return timelines.record(m.notes);
      case 'unwatch':
        watches.get(m.watch)?.();
        watches.delete(m.watch);
        return;
      case 'facts':
        asked.get(m.ask)?.(m.facts);
        asked.delete(m.ask);
        return;
      case 'existing':
        asked.get(m.ask)?.(m.uids);
        asked.delete(m.ask);
        return;
      case 'ingest':
        return answer(m.id, () => timelines.ingest(m.body, m.contentType, m.node));
      case 'get':
        return answer(m.id, async () => (await timelines.get(m.namespace, m.uid)) ?? null);
      case 'list':
        return answer(m.id, () => timelines.list(m.query));
      case 'resourceVersion':
        return answer(m.id, () => timelines.resourceVersion());
      case 'watch':
        return answer(m.id, async () => {
          watches.set(m.id, await timelines.watch(m.query, m.resourceVersion, (event) => port.postMessage({ op: 'event', watch: m.id, event } satisfies FromTimelines)));
        });
      case 'stop':
        return answer(m.id, stop);
    }
  });
  return stop;
}
