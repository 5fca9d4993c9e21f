import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { findResource } from '../api/resources.js';
import { Client } from './client.js';
import { SharedInformer } from './informer.js';
import { RestClient } from './rest.js';

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  body?: unknown;
}

let server: http.Server;

// Just enough of the pods API for an informer: a list at resourceVersion 5, then one watch event.
function informerRoute(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url!, 'http://x');
  res.writeHead(200, { 'Content-Type': 'application/json' });
  if (url.searchParams.get('watch') !== 'true') {
    res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '5' }, items: [{ metadata: { name: 'a', namespace: 'inf', resourceVersion: '4' } }] }));
    return;
  }
  if (url.searchParams.get('resourceVersion') !== '5') return void res.end();
  res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'b', namespace: 'inf', resourceVersion: '6' } } })}\n`);
}
let client: Client;
const seen: Seen[] = [];

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      if (req.url!.startsWith('/api/v1/namespaces/inf/pods')) return informerRoute(req, res);
      seen.push({ method: req.method!, url: req.url!, contentType: req.headers['content-type'], body: body ? JSON.parse(body) : undefined });
      res.writeHead(200, { 'Content-Type': req.url!.includes('/log') ? 'text/plain' : 'application/json' });
      if (req.url!.includes('/log')) {
        res.write('line 1\n');
        return res.end('line 2\n');
      }
      res.end(JSON.stringify({ kind: 'Echo', metadata: { name: 'x' }, items: [] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  client = new Client(new RestClient({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
});

after(async () => {
  client.rest.close();
  await new Promise((r) => server.close(r));
});

async function last(call: () => Promise<unknown>): Promise<Seen> {
  seen.length = 0;
  await call();
  return seen[0]!;
}

const pod: Pod = { metadata: { name: 'web', namespace: 'default', resourceVersion: '7', uid: 'u1' }, spec: { containers: [] } };

void test('paths, verbs and query parameters', async () => {
  const pods = client.resource('pods');
  const deployments = client.resource(findResource('apps', 'v1', 'deployments')!).namespace('prod');
  const nodes = client.resource('', 'v1', 'nodes').namespace('ignored');
  const cases: [string, () => Promise<unknown>, Partial<Seen>][] = [
    ['get', () => pods.namespace('default').get('web'), { method: 'GET', url: '/api/v1/namespaces/default/pods/web' }],
    ['list all namespaces', () => pods.list({ labelSelector: 'app=web', limit: 10 }), { method: 'GET', url: '/api/v1/pods?labelSelector=app%3Dweb&limit=10' }],
    [
      'list paged',
      () => deployments.list({ continue: 'tok', resourceVersion: '5', resourceVersionMatch: 'NotOlderThan', fieldSelector: 'metadata.name=a' }),
      { url: '/apis/apps/v1/namespaces/prod/deployments?continue=tok&resourceVersion=5&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Da' },
    ],
    ['cluster-scoped', () => nodes.get('n1'), { url: '/api/v1/nodes/n1' }],
    [
      'create takes the namespace from the object',
      () => pods.create(pod, { dryRun: true, fieldManager: 'kite' }),
      { method: 'POST', url: '/api/v1/namespaces/default/pods?dryRun=All&fieldManager=kite', contentType: 'application/json' },
    ],
    ['update', () => pods.update(pod), { method: 'PUT', url: '/api/v1/namespaces/default/pods/web' }],
    ['updateStatus', () => pods.updateStatus(pod), { method: 'PUT', url: '/api/v1/namespaces/default/pods/web/status' }],
    [
      'merge patch on status',
      () => pods.namespace('default').patch('web', 'merge', { status: { phase: 'Running' } }, { subresource: 'status' }),
      { method: 'PATCH', url: '/api/v1/namespaces/default/pods/web/status', contentType: 'application/merge-patch+json', body: { status: { phase: 'Running' } } },
    ],
    [
      'apply',
      () => pods.namespace('default').patch('web', 'apply', { metadata: { name: 'web' } }, { fieldManager: 'me', force: true }),
      { url: '/api/v1/namespaces/default/pods/web?fieldManager=me&force=true', contentType: 'application/apply-patch+yaml' },
    ],
    ['json patch', () => pods.namespace('default').patch('web', 'json', []), { contentType: 'application/json-patch+json' }],
    ['strategic', () => pods.namespace('default').patch('web', 'strategic', {}), { contentType: 'application/strategic-merge-patch+json' }],
    [
      'delete with options',
      () => pods.namespace('default').delete('web', { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } }),
      { method: 'DELETE', url: '/api/v1/namespaces/default/pods/web', body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: 'u1' } } },
    ],
    [
      'bind',
      () => client.bind(pod, 'node-1'),
      {
        method: 'POST',
        url: '/api/v1/namespaces/default/pods/web/binding',
        body: { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web', namespace: 'default', uid: 'u1' }, target: { apiVersion: 'v1', kind: 'Node', name: 'node-1' } },
      },
    ],
    [
      'evict',
      () => client.evict('default', 'web', { gracePeriodSeconds: 5 }),
      {
        method: 'POST',
        url: '/api/v1/namespaces/default/pods/web/eviction',
        body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'web', namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 5 } },
      },
    ],
    ['log', () => client.getLog('default', 'web', { container: 'c', tailLines: 10 }), { url: '/api/v1/namespaces/default/pods/web/log?container=c&tailLines=10' }],
  ];
  for (const [name, call, want] of cases) {
    const got = await last(call);
    for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k as keyof Seen], v, `${name}: ${k}`);
  }
  const created = await last(() => pods.create({ metadata: { name: 'p', namespace: 'x' } }));
  assert.deepEqual((created.body as Pod).apiVersion, 'v1', 'apiVersion and kind are filled in');
  assert.deepEqual((created.body as Pod).kind, 'Pod');
});

void test('watch and log streams', async () => {
  seen.length = 0;
  const events = [];
  for await (const ev of client.resource('', 'v1', 'pods').watch({ resourceVersion: '3', allowWatchBookmarks: true })) events.push(ev);
  assert.equal(seen[0]!.url, '/api/v1/pods?resourceVersion=3&allowWatchBookmarks=true&watch=true');
  assert.equal(events.length, 1);
  let text = '';
  for await (const chunk of client.streamLog('default', 'web', { timestamps: true })) text += chunk;
  assert.equal(text, 'line 1\nline 2\n');
  assert.equal(seen.at(-1)!.url, '/api/v1/namespaces/default/pods/web/log?timestamps=true&follow=true');
});

void test('client-side errors', async () => {
  assert.throws(() => client.resource('', 'v1', 'widgets'), { message: 'the server doesn\'t have a resource type "widgets" in v1' });
  const pods = client.resource('pods');
  await assert.rejects(pods.get('web'), { message: 'an empty namespace may not be set when a resource name is provided' });
  await assert.rejects(pods.namespace('default').patch('web', 'apply', {}), { message: 'fieldManager is required for apply patches' });
  await assert.rejects(pods.namespace('default').update({ metadata: {} }), { message: 'resource name may not be empty' });
  await assert.rejects(pods.create({ metadata: { name: 'p' } }), { message: 'an empty namespace may not be set during creation' });
});

void test('a SharedInformer lists and watches through a ResourceClient', async () => {
  const inf = new SharedInformer<Pod>(client.resource('pods').namespace('inf'));
  const added = new Promise<string>((resolve) =>
    inf.addEventHandler({ onAdd: (p, initial) => !initial && resolve(p.metadata!.name!) }),
  );
  inf.start();
  await inf.waitForSync();
  assert.deepEqual(inf.indexer.listKeys(), ['inf/a']);
  assert.equal(await added, 'b');
  assert.equal(inf.lastSyncResourceVersion(), '6');
  await inf.stop();
});
