// The API server's own pod steps, through the whole request path of an in-process server: the
// filter chain, admission, the registry and the pods watch.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { pino } from 'pino';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodTimeline, TimelineStep } from '../../api/timeline/types.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { ApiServer } from '../server.js';
import { changedPaths } from './trace.js';

describe('changedPaths', () => {
  it('names the first level where a patch changed the object', () => {
    const before = { spec: { containers: [{ name: 'a', image: 'x' }], priority: 0 } };
    const after = { spec: { containers: [{ name: 'a', image: 'x', volumeMounts: [{ name: 'v' }] }], priority: 0, volumes: [{ name: 'v' }] }, metadata: { labels: { a: 'b' } } };
    assert.deepEqual(changedPaths(before, after), ['spec.containers[0].volumeMounts', 'spec.volumes', 'metadata']);
    assert.deepEqual(changedPaths(before, structuredClone(before)), []);
  });

  it('names what was removed or replaced, and leaves both objects as they were', () => {
    const before = { metadata: { name: 'web', labels: { a: 'b', gone: 'x' } }, spec: { containers: [{ name: 'a', image: 'x' }], priority: 0 } };
    const after = { metadata: { name: 'web', labels: { a: 'b' } }, spec: { containers: [{ name: 'a', image: 'y' }], priority: 7, tolerations: [{ key: 't' }] } };
    const copies = structuredClone([before, after]);
    assert.deepEqual(changedPaths(before, after), ['metadata.labels.gone', 'spec.containers[0].image', 'spec.priority', 'spec.tolerations']);
    assert.deepEqual([before, after], copies);
  });
});

describe('the API server records its own pod steps', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kite-timeline-steps-'));
  const server = new ApiServer({ dataDir, listen: '127.0.0.1:0', storage: 'sqlite', components: [], admission: { disable: ['ServiceAccount'] }, logger: pino({ level: 'silent' }) });
  let call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: unknown }>;

  before(async () => {
    await server.start();
    const cfg = await loadKubeconfig(server.kubeconfigPath);
    const url = new URL(cfg.server);
    const agent = new https.Agent({ ca: cfg.ca, cert: cfg.cert, key: cfg.key });
    call = (method, path, body, headers = {}) =>
      new Promise((resolve, reject) => {
        const text = body === undefined ? '' : JSON.stringify(body);
        const sent = { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers };
        const req = https.request({ agent, host: url.hostname, port: url.port, path, method, headers: sent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
        });
        req.on('error', reject);
        req.end(text);
      });
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The pod's timeline once it has `step` (steps are merged after the request's turn). */
  async function timelineWith(uid: string, step: TimelineStep['step']): Promise<PodTimeline> {
    for (;;) {
      const { status, body } = await call('GET', `/apis/timeline.kite.dev/v1alpha1/namespaces/default/podtimelines/${uid}`);
      if (status === 200 && (body as PodTimeline).steps.some((s) => s.step === step)) return body as PodTimeline;
      await turn();
    }
  }

  it('records a create: received (with the client and its traceparent), authenticated, authorized, admission (each plugin, what it changed), persisted', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const created = await call('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } }, { traceparent, 'User-Agent': 'kubectl/v1.33.0' });
    assert.equal(created.status, 201);
    const pod = created.body as Pod;
    const t = await timelineWith(pod.metadata!.uid!, 'Persisted');
    const names = t.steps.map((s) => s.step);
    assert.deepEqual(names.slice(0, 3), ['RequestReceived', 'Authenticated', 'Authorized']);
    assert.equal(names.at(-1), 'Persisted');
    const received = t.steps[0]!;
    assert.deepEqual(received.attributes, { user: 'kubernetes-admin', userAgent: 'kubectl/v1.33.0', traceparent });
    assert.equal(t.steps[2]!.attributes?.authorizer, 'Privileged');
    const admission = t.steps.filter((s) => s.step === 'Admission');
    assert.deepEqual(
      admission.map((s) => s.attributes?.phase),
      ['mutating', 'validating'],
      'one step per phase',
    );
    const [mutating, validating] = admission;
    assert.match(String(mutating!.attributes?.plugins), /(^|, )DefaultTolerationSeconds \d+µs(, |$)/, 'each plugin that ran, with its duration');
    assert.match(String(mutating!.attributes?.mutated), /(^|; )DefaultTolerationSeconds: spec\.tolerations(; |$)/, JSON.stringify(mutating));
    assert.match(mutating!.detail!, /DefaultTolerationSeconds changed spec\.tolerations/);
    assert.doesNotMatch(String(mutating!.attributes?.mutated), /NamespaceLifecycle/, 'a plugin that changed nothing is not named as a mutation');
    assert.match(String(validating!.attributes?.plugins), /\bPodSecurity \d+µs/);
    assert.ok(mutating!.start <= mutating!.end! && mutating!.end! <= validating!.start, 'mutating, then validating');
    assert.equal(t.steps.at(-1)!.attributes?.resourceVersion, pod.metadata!.resourceVersion);
    assert.deepEqual(t.pod, { namespace: 'default', name: 'web', uid: pod.metadata!.uid });
    for (let i = 1; i < t.steps.length; i++) assert.ok(t.steps[i - 1]!.start <= t.steps[i]!.start, 'sorted by start');
  });

  it('records which controller made a pod, for which owner', async () => {
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d4', uid: '11111111-2222-3333-4444-555555555555', controller: true };
    const created = await call(
      'POST',
      '/api/v1/namespaces/default/pods',
      { metadata: { name: 'web-5d4-x', ownerReferences: [owner] }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
      { 'Impersonate-User': 'system:serviceaccount:kube-system:replicaset-controller' },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const t = await timelineWith((created.body as Pod).metadata!.uid!, 'CreatedByController');
    const step = t.steps.find((s) => s.step === 'CreatedByController')!;
    assert.deepEqual(step.attributes, { controller: 'replicaset-controller', ownerKind: 'ReplicaSet', ownerName: 'web-5d4' });
    assert.deepEqual(t.pod.owner, { kind: 'ReplicaSet', name: 'web-5d4' });
  });

  it('records the way down: delete requested (by whom, grace), each finalizer removed, then gone (deletedAt)', async () => {
    const created = await call('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'app', image: 'nginx' }] },
    });
    const uid = (created.body as Pod).metadata!.uid!;
    const deleted = await call('DELETE', '/api/v1/namespaces/default/pods/held', { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 });
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    const requested = (await timelineWith(uid, 'DeleteRequested')).steps.find((s) => s.step === 'DeleteRequested')!;
    assert.deepEqual(requested.attributes, { user: 'kubernetes-admin', gracePeriodSeconds: 0 });
    const patched = await call('PATCH', '/api/v1/namespaces/default/pods/held', { metadata: { finalizers: null } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const t = await timelineWith(uid, 'Deleted');
    assert.deepEqual(t.steps.find((s) => s.step === 'FinalizerRemoved')?.attributes, { finalizer: 'example.com/hold', user: 'kubernetes-admin' });
    assert.equal(t.deletedAt, t.steps.find((s) => s.step === 'Deleted')!.start);
  });
});
