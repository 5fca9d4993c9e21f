// timeline.kite.dev/v1alpha1 as the router serves it: podtimelines (get, list, watch, Table output)
// from the store, and podtimelinestepbatches (create-only, never stored as such) into it. A kubelet
// (system:node:<name>) may record steps only for pods bound to its node, now or before: records for
// other pods are dropped with a warning, the rest of the batch is kept.
import { badRequest, invalid, methodNotAllowed, notFound, notFoundPath } from '../../api/errors.js';
import { checkFieldLabels, parseFieldSelector, type FieldSelector } from '../../api/fields.js';
import { invalid as invalidField, Path } from '../../api/field.js';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../api/certificates.js';
import type { StoredObject } from '../../api/meta.js';
import { timelineResources } from '../../api/resources.js';
import { timelineAPIVersion, timelineGroup, timelineVersion, type PodTimeline } from '../../api/timeline/types.js';
import type { Clock } from '../../util/clock.js';
import type { UserInfo } from '../authn/user.js';
import { query } from '../handlers/context.js';
import { checkTypeMeta, decodeObjectBody, readBody } from '../http/body.js';
import { negotiateOutput, tableOptions, type Output } from '../http/negotiation.js';
import { addResponseWarning, writeObject } from '../http/respond.js';
import { toTable } from '../printers/table.js';
import { resourceVersionSyntaxError } from '../registry/registry.js';
import type { APIGroupVersion, ResourceContext } from '../router.js';
import { decodeStepBatch } from './decode.js';
import type { PodIndex } from './podindex.js';
import { podFacts, type TimelineFilter, type TimelineRecord, type TimelineStore } from './store.js';

const [timelinesResource, batchesResource] = timelineResources as [(typeof timelineResources)[0], (typeof timelineResources)[0]];
const qualified = { group: timelineGroup, resource: 'podtimelines' };
/** A batch holds up to 10,000 steps; their JSON is larger than an object's 3 MiB. */
const maxBatchBytes = 16 * 1024 * 1024;
const fieldLabels = ['metadata.name', 'metadata.namespace', 'pod.name', 'pod.namespace', 'pod.uid', 'pod.nodeName'];
const minRequestTimeoutSeconds = 1800;
const bookmarkIntervalMs = 60_000;
const maxBufferedBytes = 16 * 1024 * 1024;

export interface TimelineApiDependencies {
  store: TimelineStore;
  /** The pods by UID, as the API server's watch cache has them. */
  pods: PodIndex;
  clock: Clock;
}

export function timelineGroupVersion(deps: TimelineApiDependencies): APIGroupVersion {
  const index = deps.pods;
  return {
    group: timelineGroup,
    version: timelineVersion,
    resources: timelineResources,
    serve: async (ctx, user) => {
      const { info } = ctx;
      if (info.subresource) throw notFoundPath();
      if (info.resource === batchesResource.resource) {
        if (info.namespace) throw notFoundPath();
        if (info.verb !== 'create' || info.name) throw methodNotAllowed();
        return createBatch(ctx, user, deps.store, index);
      }
      if (info.resource !== timelinesResource.resource) throw notFoundPath();
      const output = tableOptions(negotiateOutput(ctx.req.headers.accept, true), ctx.url.searchParams);
      switch (info.verb) {
        case 'get': {
          const t = deps.store.get(info.namespace, info.name);
          if (!t) throw notFound(qualified, info.name);
          return writeObject(ctx.res, 200, render(t, output, deps.clock), output.yaml);
        }
        case 'list': {
          const items = deps.store.list(filterOf(ctx));
          const resourceVersion = String(deps.store.resourceVersion);
          if (output.kind === 'table') {
            const table = toTable(timelinesResource, items as unknown as StoredObject[], { includeObject: output.includeObject ?? 'Metadata', now: deps.clock.now() });
            table.metadata.resourceVersion = resourceVersion;
            return writeObject(ctx.res, 200, table, output.yaml);
          }
          return writeObject(ctx.res, 200, { apiVersion: timelineAPIVersion, kind: timelinesResource.listKind, metadata: { resourceVersion }, items }, output.yaml);
        }
        case 'watch':
          return watch(ctx, output, deps);
        default:
          throw methodNotAllowed();
      }
    },
  };
}

async function createBatch(ctx: ResourceContext, user: UserInfo, store: TimelineStore, index: PodIndex): Promise<void> {
  const body = await readBody(ctx.req, maxBatchBytes);
  const answer = { apiVersion: timelineAPIVersion, kind: batchesResource.kind, metadata: {}, records: [] };
  // Off: accepted and dropped, so components need not know.
  if (!store.enabled) return writeObject(ctx.res, 201, answer);
  // decodeStepBatch copies known fields of fixed depth: no pass for duplicate keys or nesting first.
  const obj = decodeObjectBody(ctx.req.headers['content-type'], body, { scan: false });
  checkTypeMeta(obj);
  if (obj.apiVersion && obj.apiVersion !== timelineAPIVersion) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${timelineAPIVersion})`);
  }
  if (obj.kind && obj.kind !== batchesResource.kind) {
    throw badRequest(`${String(obj.kind)} in version "${timelineVersion}" cannot be handled as a ${batchesResource.kind}: the object kind does not match the resource`);
  }
  const decoded = decodeStepBatch(obj);
  const node = user.groups.includes(NODES_GROUP) && user.name.startsWith(NODE_USER_PREFIX) ? user.name.slice(NODE_USER_PREFIX.length) : undefined;
  const records: TimelineRecord[] = [];
  const refused: string[] = [];
  for (const rec of decoded) {
    const pod = index.get(rec.pod.uid);
    if (node !== undefined && pod?.spec?.nodeName !== node && store.nodeOf(rec.pod.uid) !== node) {
      refused.push(`${rec.pod.namespace}/${rec.pod.name}`);
      continue;
    }
    // A pod the API server knows is named as it is stored, whatever the batch says.
    const known = pod?.metadata ? { namespace: pod.metadata.namespace ?? rec.pod.namespace, name: pod.metadata.name ?? rec.pod.name } : {};
    records.push({ pod: { ...rec.pod, ...known, ...podFacts(pod) }, steps: rec.steps });
  }
  store.record(records);
  // Answered once durable: a recorder drops what it was told is kept.
  await store.committed();
  if (refused.length) {
    const named = refused.slice(0, 3).join(', ') + (refused.length > 3 ? ` and ${refused.length - 3} more` : '');
    addResponseWarning(ctx.res, `steps for ${named} dropped: node ${node} may record steps only for pods bound to it`);
  }
  writeObject(ctx.res, 201, answer);
}

function render(t: PodTimeline, output: Output, clock: Clock): unknown {
  if (output.kind === 'table') return toTable(timelinesResource, [t as unknown as StoredObject], { includeObject: output.includeObject ?? 'Metadata', now: clock.now() });
  if (output.kind === 'partial') return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: t.metadata };
  return t;
}

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

/** The namespace and field selector (labelSelector is ignored: timelines carry no labels). */
function filterOf(ctx: ResourceContext): TimelineFilter {
  let selector: FieldSelector;
  try {
    selector = parseFieldSelector(query(ctx, 'fieldSelector') ?? '');
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  checkFieldLabels(selector, fieldLabels);
  // A watch on one name (kubectl get ptl UID -w) is a watch with a name selector.
  const name = ctx.info.name;
  if (selector.empty() && !name) return { namespace: ctx.info.namespace };
  return { namespace: ctx.info.namespace, matches: (t) => (!name || t.metadata.name === name) && selector.matches(fieldsOf(t)) };
}

async function watch(ctx: ResourceContext, output: Output, deps: TimelineApiDependencies): Promise<void> {
  const { req, res, url } = ctx;
  const filter = filterOf(ctx);
  const rvText = query(ctx, 'resourceVersion');
  const rvError = rvText ? resourceVersionSyntaxError(rvText) : undefined;
  if (rvError) throw invalid(timelinesResource.resource, timelineGroup, '', [invalidField(Path.root('resourceVersion'), rvText, rvError)]);
  const timeoutText = url.searchParams.get('timeoutSeconds');
  const timeoutSeconds = timeoutText && /^\d+$/.test(timeoutText) ? Number(timeoutText) : Math.floor(minRequestTimeoutSeconds * (1 + Math.random()));
  const bookmarks = ['true', '1'].includes(url.searchParams.get('allowWatchBookmarks') ?? '');

  let closed = false;
  let cancel = () => {};
  const timers: { cancel(): void }[] = [];
  const finish = () => {
    if (closed) return;
    closed = true;
    cancel();
    for (const t of timers) t.cancel();
    res.end();
  };
  const startResponse = () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
  };
  const write = (type: string, object: unknown) => {
    if (closed) return;
    if (!res.headersSent) startResponse();
    res.write(`{"type":"${type}","object":${JSON.stringify(object)}}\n`);
    // A client that does not read is cut off rather than buffered without bound.
    if (res.writableLength > maxBufferedBytes) finish();
  };
  // Subscribing first: an expired resourceVersion is still a plain 410 answer.
  cancel = deps.store.watch(filter, rvText ? Number(rvText) : undefined, (e) => write(e.type, render(e.object, output, deps.clock)));
  req.on('close', finish);
  res.on('close', finish);
  if (!res.headersSent) startResponse();
  timers.push(deps.clock.setTimer(timeoutSeconds * 1000, finish));
  if (bookmarks) {
    const tick = () => {
      if (closed) return;
      write('BOOKMARK', { kind: timelinesResource.kind, apiVersion: timelineAPIVersion, metadata: { resourceVersion: String(deps.store.resourceVersion) } });
      timers.push(deps.clock.setTimer(bookmarkIntervalMs, tick));
    };
    timers.push(deps.clock.setTimer(bookmarkIntervalMs, tick));
  }
}
