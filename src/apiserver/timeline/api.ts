// timeline.kite.dev/v1alpha1 as the router serves it: podtimelines (get, list, watch, Table output)
// from the store, and podtimelinestepbatches (create-only, never stored as such) into it. A kubelet
// (system:node:<name>) may record steps only for pods bound to its node, now or before: records for
// other pods are dropped with a warning, the rest of the batch is kept.
import { invalid, methodNotAllowed, notFound, notFoundPath } from '../../api/errors.js';
import { invalid as invalidField, Path } from '../../api/field.js';
import { NODE_USER_PREFIX, NODES_GROUP } from '../../api/certificates.js';
import type { StoredObject } from '../../api/meta.js';
import { timelineResources } from '../../api/resources.js';
import { timelineAPIVersion, timelineGroup, timelineVersion, type PodTimeline } from '../../api/timeline/types.js';
import type { Clock } from '../../util/clock.js';
import type { UserInfo } from '../authn/user.js';
import { query } from '../handlers/context.js';
import { readBody } from '../http/body.js';
import { negotiateOutput, tableOptions, type Output } from '../http/negotiation.js';
import { addResponseWarning, writeObject } from '../http/respond.js';
import { toTable } from '../printers/table.js';
import { resourceVersionSyntaxError } from '../registry/registry.js';
import type { APIGroupVersion, ResourceContext } from '../router.js';
import { timelineFilter, type PodTimelines, type TimelineQuery } from './service.js';

const [timelinesResource, batchesResource] = timelineResources as [(typeof timelineResources)[0], (typeof timelineResources)[0]];
const qualified = { group: timelineGroup, resource: 'podtimelines' };
/** A batch holds up to 10,000 steps; their JSON is larger than an object's 3 MiB. */
const maxBatchBytes = 16 * 1024 * 1024;
const minRequestTimeoutSeconds = 1800;
const bookmarkIntervalMs = 60_000;
const maxBufferedBytes = 16 * 1024 * 1024;

export interface TimelineApiDependencies {
  timelines: PodTimelines;
  clock: Clock;
}

export function timelineGroupVersion(deps: TimelineApiDependencies): APIGroupVersion {
  const { timelines } = deps;
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
        return createBatch(ctx, user, timelines);
      }
      if (info.resource !== timelinesResource.resource) throw notFoundPath();
      const output = tableOptions(negotiateOutput(ctx.req.headers.accept, true), ctx.url.searchParams);
      switch (info.verb) {
        case 'get': {
          const t = await timelines.get(info.namespace, info.name);
          if (!t) throw notFound(qualified, info.name);
          return writeObject(ctx.res, 200, render(t, output, deps.clock), output.yaml);
        }
        case 'list': {
          const { items, resourceVersion: rv } = await timelines.list(queryOf(ctx));
          const resourceVersion = String(rv);
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

async function createBatch(ctx: ResourceContext, user: UserInfo, timelines: PodTimelines): Promise<void> {
  const body = await readBody(ctx.req, maxBatchBytes);
  const answer = { apiVersion: timelineAPIVersion, kind: batchesResource.kind, metadata: {}, records: [] };
  // Off: accepted and dropped, so components need not know.
  if (!timelines.enabled) return writeObject(ctx.res, 201, answer);
  const node = user.groups.includes(NODES_GROUP) && user.name.startsWith(NODE_USER_PREFIX) ? user.name.slice(NODE_USER_PREFIX.length) : undefined;
  const refused = await timelines.ingest(body, ctx.req.headers['content-type'], node);
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

/** The namespace, a name and the field selector (labelSelector is ignored: timelines carry no labels), checked here: a bad one is a 400 before anything is asked. */
function queryOf(ctx: ResourceContext): TimelineQuery {
  // A watch on one name (kubectl get ptl UID -w) is a watch with a name selector.
  const q: TimelineQuery = { namespace: ctx.info.namespace };
  if (ctx.info.name) q.name = ctx.info.name;
  const fieldSelector = query(ctx, 'fieldSelector');
  if (fieldSelector) q.fieldSelector = fieldSelector;
  timelineFilter(q);
  return q;
}

async function watch(ctx: ResourceContext, output: Output, deps: TimelineApiDependencies): Promise<void> {
  const { req, res, url } = ctx;
  const filter = queryOf(ctx);
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
  cancel = await deps.timelines.watch(filter, rvText ? Number(rvText) : undefined, (e) => write(e.type, render(e.object, output, deps.clock)));
  // Cut off while subscribing (a client that did not read the initial events, or went away).
  if (closed || res.destroyed) {
    cancel();
    return finish();
  }
  req.on('close', finish);
  res.on('close', finish);
  if (!res.headersSent) startResponse();
  timers.push(deps.clock.setTimer(timeoutSeconds * 1000, finish));
  if (bookmarks) {
    const tick = () => {
      if (closed) return;
      void deps.timelines.resourceVersion().then(
        (rv) => write('BOOKMARK', { kind: timelinesResource.kind, apiVersion: timelineAPIVersion, metadata: { resourceVersion: String(rv) } }),
        () => finish(),
      );
      timers.push(deps.clock.setTimer(bookmarkIntervalMs, tick));
    };
    timers.push(deps.clock.setTimer(bookmarkIntervalMs, tick));
  }
}
