// The pod timelines as the API server's handlers reach them (PodTimelines): batches to decode and
// merge, the server's own steps, reads and watches. LocalPodTimelines does it in the calling thread
// around a TimelineStore; it is what the timeline process runs (process.ts), and what unit tests and
// the fake API server use directly.
import { badRequest } from '../../api/errors.js';
import { checkFieldLabels, parseFieldSelector, type FieldSelector } from '../../api/fields.js';
import { timelineResources } from '../../api/resources.js';
import { timelineAPIVersion, timelineVersion, type PodTimeline } from '../../api/timeline/types.js';
import type { Service } from '../../util/lifecycle.js';
import { checkTypeMeta, decodeObjectBody } from '../http/body.js';
import { decodeStepBatch } from './decode.js';
import type { PodIndex } from './podindex.js';
import { withPodFacts, type TimelineEvent, type TimelineFilter, type TimelineRecord, type TimelineStore } from './store.js';
import { noteRecord, type PodRequestNote } from './trace.js';

const batchKind = timelineResources.find((r) => r.resource === 'podtimelinestepbatches')!.kind;

/** A podtimelines query that can cross to the timeline process: the namespace ('' for all), one name, a field selector's text. */
export interface TimelineQuery {
  namespace: string;
  name?: string;
  fieldSelector?: string;
}

/** What the API server's pod says of a pod a batch names: its stored name, its node and its controller. */
export type PodFacts = { namespace: string; name: string } & Pick<TimelineRecord['pod'], 'nodeName' | 'owner'>;

/** The API server's pods by UID (its PodIndex). */
export type PodsByUid = Pick<PodIndex, 'get'>;

/** The facts of those of `uids` the API server has. */
export function podFactsIn(pods: PodsByUid, uids: readonly string[]): Map<string, PodFacts> {
  const known = new Map<string, PodFacts>();
  for (const uid of uids) {
    const pod = pods.get(uid);
    if (pod) known.set(uid, withPodFacts({ namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' }, pod));
  }
  return known;
}

/** Those of `uids` whose pods the API server still has. */
export function existingPodsIn(pods: PodsByUid, uids: readonly string[]): Set<string> {
  return new Set(uids.filter((uid) => pods.get(uid) !== undefined));
}

/** The facts of the pods the API server has, by UID (a UID it does not have is absent). */
export type PodFactsLookup = (uids: readonly string[]) => Promise<ReadonlyMap<string, PodFacts>>;

export interface PodTimelines extends Service {
  /** --pod-timeline: false answers batches without reading them and serves nothing. */
  readonly enabled: boolean;
  /**
   * A PodTimelineStepBatch body, decoded, checked and merged; resolves once durable with the pods whose
   * steps were refused (a node may record steps only for pods bound to it). Throws the Status to answer.
   */
  ingest(body: Uint8Array, contentType: string | undefined, node: string | undefined): Promise<string[]>;
  /** The API server's own steps, as its requests and its pods watch noted them. */
  record(notes: readonly PodRequestNote[]): void;
  get(namespace: string, uid: string): Promise<PodTimeline | undefined>;
  /** Sorted by namespace, then name, with the store's resourceVersion. */
  list(query: TimelineQuery): Promise<{ items: PodTimeline[]; resourceVersion: number }>;
  /** As TimelineStore.watch (410 when `resourceVersion` is too old); resolves to the watch's cancel. */
  watch(query: TimelineQuery, resourceVersion: number | undefined, send: (e: TimelineEvent) => void): Promise<() => void>;
  resourceVersion(): Promise<number>;
}

const fieldLabels = ['metadata.name', 'metadata.namespace', 'pod.name', 'pod.namespace', 'pod.uid', 'pod.nodeName'];

/** The field set a selector on podtimelines can name. */
function fieldsOf(t: PodTimeline): Record<string, string> {
  return {
    'metadata.name': t.metadata.name ?? '',
    'metadata.namespace': t.metadata.namespace ?? '',
    'pod.name': t.pod.name,
    'pod.namespace': t.pod.namespace,
    'pod.uid': t.pod.uid,
    'pod.nodeName': t.pod.nodeName ?? '',
  };
}

/** The store's filter for a query; throws 400 for a selector that does not parse or names an unknown field. */
export function timelineFilter(query: TimelineQuery): TimelineFilter {
  let selector: FieldSelector;
  try {
    selector = parseFieldSelector(query.fieldSelector ?? '');
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  checkFieldLabels(selector, fieldLabels);
  const { namespace, name } = query;
  if (selector.empty() && !name) return { namespace };
  return { namespace, matches: (t) => (!name || t.metadata.name === name) && selector.matches(fieldsOf(t)) };
}

export class LocalPodTimelines implements PodTimelines {
  readonly name = 'pod-timelines';

  constructor(
    private readonly store: TimelineStore,
    private readonly facts: PodFactsLookup,
  ) {}

  get enabled(): boolean {
    return this.store.enabled;
  }

  start(): Promise<void> {
    return this.store.start();
  }

  stop(): Promise<void> {
    return this.store.stop();
  }

  async ingest(body: Uint8Array, contentType: string | undefined, node: string | undefined): Promise<string[]> {
    if (!this.store.enabled) return [];
    // decodeStepBatch copies known fields of fixed depth: no pass for duplicate keys or nesting first.
    const obj = decodeObjectBody(contentType, Buffer.from(body.buffer, body.byteOffset, body.byteLength), { scan: false });
    checkTypeMeta(obj);
    if (obj.apiVersion && obj.apiVersion !== timelineAPIVersion) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${timelineAPIVersion})`);
    }
    if (obj.kind && obj.kind !== batchKind) {
      throw badRequest(`${String(obj.kind)} in version "${timelineVersion}" cannot be handled as a ${batchKind}: the object kind does not match the resource`);
    }
    const decoded = decodeStepBatch(obj);
    const facts = await this.facts(decoded.map((r) => r.pod.uid));
    const records: TimelineRecord[] = [];
    const refused: string[] = [];
    for (const rec of decoded) {
      const known = facts.get(rec.pod.uid);
      if (node !== undefined && known?.nodeName !== node && this.store.nodeOf(rec.pod.uid) !== node) {
        refused.push(`${rec.pod.namespace}/${rec.pod.name}`);
        continue;
      }
      // A pod the API server knows is named as it is stored, whatever the batch says.
      records.push({ pod: { ...rec.pod, ...known }, steps: rec.steps });
    }
    this.store.record(records);
    // Answered once durable: a recorder drops what it was told is kept.
    await this.store.committed();
    return refused;
  }

  record(notes: readonly PodRequestNote[]): void {
    this.store.record(notes.map(noteRecord));
  }

  async get(namespace: string, uid: string): Promise<PodTimeline | undefined> {
    return this.store.get(namespace, uid);
  }

  async list(query: TimelineQuery): Promise<{ items: PodTimeline[]; resourceVersion: number }> {
    return { items: this.store.list(timelineFilter(query)), resourceVersion: this.store.resourceVersion };
  }

  async watch(query: TimelineQuery, resourceVersion: number | undefined, send: (e: TimelineEvent) => void): Promise<() => void> {
    return this.store.watch(timelineFilter(query), resourceVersion, send);
  }

  async resourceVersion(): Promise<number> {
    return this.store.resourceVersion;
  }
}
