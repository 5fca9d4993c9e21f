// WATCH: newline-delimited JSON events over a chunked response, from the watch cache.
// BOOKMARKs only when asked for; a slow client is cut off rather than buffered without bound.
import { apiVersionOf, type StoredObject } from '../../api/meta.js';
import { invalid, type StatusError } from '../../api/errors.js';
import { invalid as invalidField, Path } from '../../api/field.js';
import { resourceVersionSyntaxError } from '../registry/registry.js';
import { boolQuery, intQuery, objectJson, optionalBoolQuery, query, type ResourceRequest } from './context.js';
import { render } from './crud.js';
import { selectionFor } from './selectors.js';
import { validateListOptions } from './listoptions.js';

/** Upstream's --min-request-timeout: watches without timeoutSeconds last 30 to 60 minutes. */
const minRequestTimeoutSeconds = 1800;
const bookmarkIntervalMs = 60_000;
const maxBufferedBytes = 16 * 1024 * 1024;

export async function handleWatch(r: ResourceRequest): Promise<void> {
  const selection = selectionFor(r, r.info.name || undefined);
  const timeoutSeconds = intQuery(r, 'timeoutSeconds') ?? Math.floor(minRequestTimeoutSeconds * (1 + Math.random()));
  const bookmarks = boolQuery(r, 'allowWatchBookmarks');
  validateListOptions(r, true);
  const rv = query(r, 'resourceVersion');
  // Upstream's InterpretWatchError turns the versioner's complaint into a 422 on the resource.
  const rvError = rv ? resourceVersionSyntaxError(rv) : undefined;
  if (rvError) throw invalid(r.resource.resource, r.resource.group, '', [invalidField(Path.root('resourceVersion'), rv, rvError)]);
  const sendInitialEvents = optionalBoolQuery(r, 'sendInitialEvents');

  const res = r.res;
  let closed = false;
  let lastRv = 0;
  const timers: { cancel(): void }[] = [];
  let cancelWatch: () => void = () => undefined;
  const finish = () => {
    if (closed) return;
    closed = true;
    cancelWatch();
    for (const t of timers) t.cancel();
    res.end();
  };
  // Events of one event-loop turn (a burst of writes, a replay) leave in one socket write, not one each.
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  const write = (type: string, object: unknown, objectJson = JSON.stringify(object)): boolean => {
    if (closed) return false;
    if (!res.headersSent) startResponse();
    if (!corked) {
      corked = true;
      res.cork();
      setImmediate(uncork);
    }
    res.write(`{"type":"${type}","object":${objectJson}}\n`);
    if (res.writableLength > maxBufferedBytes) {
      finish();
      return false;
    }
    return true;
  };
  const bookmark = (rv: number, initialEnd = false) => {
    const object: StoredObject = {
      kind: r.resource.kind,
      apiVersion: apiVersionOf(r.resource.group, r.resource.version),
      metadata: { resourceVersion: String(rv), ...(initialEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) },
    };
    write('BOOKMARK', object);
  };

  // Headers go out with the first event, so errors before it still get their own status code.
  const startResponse = () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
  };
  r.req.on('close', finish);
  res.on('close', finish);

  cancelWatch = await r.registry.watch(
    r.info.namespace,
    { selection, resourceVersion: rv, sendInitialEvents },
    {
      event: (type, obj) => {
        lastRv = Math.max(lastRv, Number(obj.metadata.resourceVersion ?? 0));
        if (r.output.kind !== 'object') return write(type, render(r, obj));
        return write(type, undefined, objectJson(r.resource, obj));
      },
      fail: (err: StatusError) => {
        write('ERROR', err.toStatus());
        finish();
      },
      end: finish,
      initialEventsEnd: sendInitialEvents ? (rv) => bookmark(rv, true) : undefined,
    },
  );
  if (closed) {
    cancelWatch();
    return;
  }
  if (!res.headersSent) startResponse();
  timers.push(r.clock.setTimer(timeoutSeconds * 1000, finish));
  if (bookmarks) {
    const tick = () => {
      if (closed) return;
      bookmark(Math.max(lastRv, r.registry.cacheRevision()));
      timers.push(r.clock.setTimer(bookmarkIntervalMs, tick));
    };
    timers.push(r.clock.setTimer(bookmarkIntervalMs, tick));
  }
}
