import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeClock } from '../../util/clock.js';
import { buildHandlerChain, defaultFilters, ignoreAnnotation, type Handler, type RequestContext } from '../chain.js';
import { defaultRequestLimits, InflightLimiter } from '../http/filters.js';
import { parseRequestInfo, splitRequestTarget } from '../http/requestinfo.js';
import { readBody } from '../http/body.js';
import { writeObject } from '../http/respond.js';
import { notFound } from '../../api/errors.js';
import type { RequestAuthenticator } from '../authn/union.js';
import type { AuditEvent } from './event.js';
import { parsePolicy } from './policy.js';

const policy = parsePolicy(`
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  users: [quiet]
- level: RequestResponse
  omitManagedFields: true
  resources: [{group: "", resources: [pods]}]
- level: Request
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
  omitStages: [RequestReceived]
`);

const events: AuditEvent[] = [];
const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0, 123));
let server: Server;
let port = 0;

const handler: Handler = async (ctx) => {
  const { info, res } = ctx;
  if (info.resource === 'secrets') throw notFound({ group: '', resource: 'secrets' }, info.name);
  if (info.verb === 'watch') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    await clock.advance(1000);
    res.end('{"type":"ADDED"}\n');
    return;
  }
  if (info.verb === 'create') {
    const body = JSON.parse((await readBody(ctx.req)).toString()) as { metadata: Record<string, unknown> };
    await clock.advance(5);
    ctx.annotate('example.com/admitted', 'yes');
    ctx.annotate('example.com/admitted', 'again');
    // Kept only at their level and above.
    ctx.annotate('example.com/patch', 'p', 'Request');
    ctx.annotate('example.com/everything', 'e', 'RequestResponse');
    return writeObject(res, 201, { ...body, metadata: { ...body.metadata, uid: 'u1', resourceVersion: '7', managedFields: [{ manager: 'kubectl' }] } });
  }
  writeObject(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
};

before(async () => {
  const authenticator = { authenticate: async (req) => ({ name: String(req.headers['x-user'] ?? 'jane'), groups: ['system:authenticated'] }) } as RequestAuthenticator;
  const filters = defaultFilters({
    authorizer: { authorize: async (a) => (a.user.name === 'mallory' ? { decision: 'noOpinion' } : { decision: 'allow', reason: 'test allows' }) },
    limits: defaultRequestLimits,
    inflight: new InflightLimiter(defaultRequestLimits),
    clock,
    onLateError: () => undefined,
    audit: { policy, backend: { write: (e) => events.push(e), close: () => undefined }, clock },
  });
  assert.deepEqual(filters.map((f) => f.name), ['timeout', 'authentication', 'audit', 'impersonation', 'priority', 'authorization']);
  const chain = buildHandlerChain(filters, handler);
  server = createServer((req, res) => {
    const target = splitRequestTarget(req.url!);
    const ctx: RequestContext = { req, res, url: new URL(`http://x/?${target.query.toString()}`), info: parseRequestInfo(req.method!, target.path, target.query), authenticator, loopback: false, annotate: ignoreAnnotation };
    chain(ctx).catch((err: { code?: number; toStatus?: () => unknown }) => writeObject(res, err.code ?? 500, err.toStatus?.() ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(() => server.close());

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; auditID?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', 'user-agent': 'kubectl/v1.33.0', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, auditID: res.headers['audit-id'] as string | undefined }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

test('RequestResponse: both stages with the request and response objects, objectRef from the body, annotations', async () => {
  events.length = 0;
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', managedFields: [{ manager: 'x' }] }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  const { status, auditID } = await call('POST', '/api/v1/namespaces/default/pods', pod, { 'x-forwarded-for': '10.0.0.9' });
  assert.equal(status, 201);
  assert.deepEqual(events.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
  const [received, done] = events as [AuditEvent, AuditEvent];
  assert.equal(done.auditID, auditID);
  assert.match(auditID!, /^[0-9a-f-]{36}$/);
  assert.deepEqual(received, {
    kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'RequestResponse', auditID, stage: 'RequestReceived', requestURI: '/api/v1/namespaces/default/pods', verb: 'create',
    user: { username: 'jane', groups: ['system:authenticated'] }, sourceIPs: ['10.0.0.9', '127.0.0.1'], userAgent: 'kubectl/v1.33.0',
    objectRef: { resource: 'pods', namespace: 'default', apiGroup: '', apiVersion: 'v1' },
    requestReceivedTimestamp: '2026-12-03T12:00:00.123000Z', stageTimestamp: '2026-12-03T12:00:00.123000Z',
  });
  assert.equal(done.stageTimestamp, '2026-12-03T12:00:00.128000Z');
  assert.equal(done.requestReceivedTimestamp, received.requestReceivedTimestamp);
  assert.deepEqual(done.objectRef, { resource: 'pods', namespace: 'default', name: 'web', apiGroup: '', apiVersion: 'v1' });
  assert.deepEqual(done.responseStatus, { metadata: {}, code: 201 });
  assert.deepEqual(Object.keys(done), ['kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'sourceIPs', 'userAgent', 'objectRef', 'responseStatus', 'requestObject', 'responseObject', 'requestReceivedTimestamp', 'stageTimestamp', 'annotations'], "upstream's field order");
  assert.deepEqual(done.requestObject, { ...pod, metadata: { name: 'web' } }, 'omitManagedFields strips them');
  assert.deepEqual((done.responseObject as { metadata: unknown }).metadata, { name: 'web', uid: 'u1', resourceVersion: '7' });
  assert.deepEqual(done.annotations, {
    'authorization.k8s.io/decision': 'allow',
    'authorization.k8s.io/reason': 'test allows',
    'example.com/admitted': 'yes',
    'example.com/patch': 'p',
    'example.com/everything': 'e',
  });
});

test('Request level: the request object but no response object; Metadata: neither, and its omitted stage', async () => {
  events.length = 0;
  await call('POST', '/api/v1/namespaces/default/configmaps', { kind: 'ConfigMap', metadata: { name: 'c' } });
  assert.deepEqual(events.map((e) => [e.level, e.stage]), [['Request', 'RequestReceived'], ['Request', 'ResponseComplete']]);
  assert.deepEqual(events[1]!.requestObject, { kind: 'ConfigMap', metadata: { name: 'c' } });
  assert.equal(events[1]!.responseObject, undefined);
  assert.equal(events[1]!.annotations!['example.com/patch'], 'p');
  assert.equal(events[1]!.annotations!['example.com/everything'], undefined, 'an annotation for a higher level is dropped');
  events.length = 0;
  await call('POST', '/api/v1/namespaces/default/services', { kind: 'Service', metadata: { name: 's' } });
  assert.deepEqual(events.map((e) => [e.level, e.stage]), [['Metadata', 'ResponseComplete']]);
  assert.equal(events[0]!.requestObject, undefined);
  assert.equal(events[0]!.objectRef!.name, 's');
  assert.equal(events[0]!.annotations!['example.com/admitted'], 'yes');
  assert.equal(events[0]!.annotations!['example.com/patch'], undefined);
});

test('failures carry their Status; a refused request its forbid decision; level None writes nothing and sends no Audit-ID', async () => {
  events.length = 0;
  await call('GET', '/api/v1/namespaces/default/secrets/gone');
  assert.deepEqual(JSON.parse(JSON.stringify(events[0]!.responseStatus)), { metadata: {}, status: 'Failure', message: 'secrets "gone" not found', reason: 'NotFound', details: { name: 'gone', kind: 'secrets' }, code: 404 });
  events.length = 0;
  const refused = await call('GET', '/api/v1/namespaces/default/pods/p', undefined, { 'x-user': 'mallory' });
  assert.equal(refused.status, 403);
  const done = events.find((e) => e.stage === 'ResponseComplete')!;
  assert.equal(done.annotations!['authorization.k8s.io/decision'], 'forbid');
  assert.equal(done.responseStatus!.code, 403);
  assert.equal((done.responseObject as { reason: string }).reason, 'Forbidden');
  events.length = 0;
  const quiet = await call('GET', '/api/v1/namespaces/default/pods/p', undefined, { 'x-user': 'quiet' });
  assert.equal(events.length, 0);
  assert.equal(quiet.auditID, undefined);
});

test('a long-running request gets ResponseStarted; a client Audit-ID is kept', async () => {
  events.length = 0;
  const { auditID } = await call('GET', '/api/v1/namespaces/default/pods?watch=true', undefined, { 'audit-id': 'my-id' });
  assert.equal(auditID, 'my-id');
  assert.deepEqual(events.map((e) => e.stage), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
  assert.deepEqual(events[1]!.responseStatus, { metadata: {}, code: 200 });
  assert.equal(events[2]!.responseObject, undefined, 'a watch stream is not recorded');
  assert.ok(events.every((e) => e.auditID === 'my-id' && e.verb === 'watch'));
  const odd = await call('GET', '/api/v1/namespaces/default/pods?watch=true', undefined, { 'audit-id': 'x'.repeat(300) });
  assert.match(odd.auditID!, /^[0-9a-f-]{36}$/, 'an unusable one is replaced');
});
