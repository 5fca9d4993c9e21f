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
import type { StatusError } from '../../api/errors.js';
import { stepBatchPath, type PodTimeline, type PodTimelineStepBatch, type TimelineStep } from '../../api/timeline/types.js';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { RestClient } from '../../client/rest.js';
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

describe('while the timelines intake waits', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kite-timeline-intake-'));
  const intake = { held: true, defer: () => intake.held };
  const server = new ApiServer({ dataDir, listen: '127.0.0.1:0', storage: 'sqlite', components: [], admission: { disable: ['ServiceAccount'] }, timelineIntake: intake, logger: pino({ level: 'silent' }) });
  let rest: RestClient;
  const ref = { namespace: 'default', name: 'batch-pod', uid: '0a0b0c0d-0000-4000-8000-000000000001' };
  const batch: PodTimelineStepBatch = {
    apiVersion: 'timeline.kite.dev/v1alpha1',
    kind: 'PodTimelineStepBatch',
    records: [{ pod: ref, steps: [{ step: 'Bound', component: 'default-scheduler', start: '2026-01-01T00:00:00.000000Z' }] }],
  };
  const timeline = (uid: string) => rest.request<PodTimeline>({ path: `/apis/timeline.kite.dev/v1alpha1/namespaces/default/podtimelines/${uid}` });

  before(async () => {
    await server.start();
    rest = new RestClient(await loadKubeconfig(server.kubeconfigPath));
  });
  after(async () => {
    rest.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('turns a batch that asks first away before its body is made (429, Retry-After), and takes it once the wait is over', async () => {
    let made = 0;
    const body = () => {
      made++;
      return batch;
    };
    intake.held = true;
    await assert.rejects(rest.request({ method: 'POST', path: stepBatchPath, body }), (err: StatusError) => err.code === 429);
    assert.equal(made, 0, 'the body was never asked for');
    // The connection the body was held back on is not used again: the next requests are answered.
    assert.equal((await rest.request<{ kind: string }>({ path: '/api/v1/namespaces/default' })).kind, 'Namespace');
    // Another request that asks first is asked for its body at once.
    const made2 = await rest.request<{ metadata: { name: string } }>({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: () => ({ metadata: { name: 'asked' } }) });
    assert.equal(made2.metadata.name, 'asked');
    await assert.rejects(timeline(ref.uid), (err: StatusError) => err.code === 404);
    intake.held = false;
    await rest.request({ method: 'POST', path: stepBatchPath, body });
    assert.equal(made, 1);
    assert.deepEqual(
      (await timeline(ref.uid)).steps.map((s) => s.step),
      ['Bound'],
    );
  });

  it('takes a batch that does not ask first as it comes', async () => {
    intake.held = true;
    const other = { ...ref, name: 'plain-batch', uid: '0a0b0c0d-0000-4000-8000-000000000002' };
    await rest.request({ method: 'POST', path: stepBatchPath, body: { ...batch, records: [{ ...batch.records[0]!, pod: other }] } });
    assert.equal((await timeline(other.uid)).steps.length, 1);
  });

  it("holds the server's own steps, and merges them when the wait is over", async () => {
    intake.held = true;
    const pod = await rest.request<Pod>({ method: 'POST', path: '/api/v1/namespaces/default/pods', body: { metadata: { name: 'held-steps' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } });
    const uid = pod.metadata!.uid!;
    // Past the queue's first flush and the retry after it: still held.
    await new Promise((r) => setTimeout(r, 1200));
    await assert.rejects(timeline(uid), (err: StatusError) => err.code === 404);
    intake.held = false;
    for (;;) {
      const t = await timeline(uid).catch(() => undefined);
      if (t?.steps.some((s) => s.step === 'Persisted')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
