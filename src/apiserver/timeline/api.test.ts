import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { StatusError } from '../../api/errors.js';
import { microTime } from '../../api/time.js';
import type { PodTimeline, PodTimelineStepBatch, TimelineStep } from '../../api/timeline/types.js';
import { stepBatchPath } from '../../client/timeline/recorder.js';
import type { Table } from '../printers/table.js';
import { FakeApi } from '../testing/fakeapi.js';
import { TimelineStore } from './store.js';
import { FakeClock } from '../../util/clock.js';

const t0 = Date.UTC(2026, 0, 1);
const logger = pino({ level: 'silent' });
const timelines = '/apis/timeline.kite.dev/v1alpha1/namespaces/default/podtimelines';
const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const kubelet = (node: string) => ({ name: `system:node:${node}`, groups: ['system:nodes', 'system:authenticated'] });
const step = (name: TimelineStep['step'], atMs: number, extra: Partial<TimelineStep> = {}): TimelineStep => ({ step: name, component: 'test', start: microTime(t0 + atMs), ...extra });
const batch = (records: PodTimelineStepBatch['records']): PodTimelineStepBatch => ({ apiVersion: 'timeline.kite.dev/v1alpha1', kind: 'PodTimelineStepBatch', records });

async function rejected(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  assert.fail('the request was accepted');
}

describe('timeline.kite.dev through the API server', () => {
  const clock = new FakeClock(t0 + 5000);
  const store = new TimelineStore({ clock, logger });
  let api: FakeApi;
  let web: Pod;

  before(async () => {
    await store.start();
    api = await FakeApi.start({ clock, timeline: store });
    web = await api.client().resource('pods').namespace('default').create({ metadata: { name: 'web' }, spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'nginx' }] } });
  });
  after(async () => {
    await api.stop();
    await store.stop();
  });

  const post = (body: unknown, user = kubelet('n1')) => api.client(user).rest.request({ method: 'POST', path: stepBatchPath, body });
  const webRef = () => ({ namespace: 'default', name: 'web', uid: web.metadata!.uid! });

  it('takes a batch (201), fills the pod from the API server, and serves it by get, list and Table', async () => {
    await post(batch([{ pod: webRef(), steps: [step('SandboxCreated', 100), step('Ready', 1300)] }]));
    await post(batch([{ pod: webRef(), steps: [step('RequestReceived', 0)] }]), { name: 'system:kube-scheduler', groups: [] });
    const rest = api.client().rest;
    const t = await rest.request<PodTimeline>({ path: `${timelines}/${web.metadata!.uid}` });
    assert.equal(t.kind, 'PodTimeline');
    assert.deepEqual(t.pod, { ...webRef(), nodeName: 'n1' });
    assert.deepEqual(
      t.steps.map((s) => s.step),
      ['RequestReceived', 'SandboxCreated', 'Ready'],
    );
    const list = await rest.request<{ kind: string; items: PodTimeline[]; metadata: { resourceVersion: string } }>({ path: '/apis/timeline.kite.dev/v1alpha1/podtimelines', query: { fieldSelector: 'pod.name=web' } });
    assert.equal(list.kind, 'PodTimelineList');
    assert.deepEqual(list.items.map((i) => i.metadata.name), [web.metadata!.uid]);
    assert.equal(list.metadata.resourceVersion, String(store.resourceVersion));
    const none = await rest.request<{ items: PodTimeline[] }>({ path: timelines, query: { fieldSelector: 'pod.uid=nope' } });
    assert.deepEqual(none.items, []);
    const table = await rest.request<Table>({ path: timelines, accept: tableAccept });
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Pod', 'Node', 'Steps', 'Last', 'Ready-After', 'Age', 'Owner'],
    );
    assert.deepEqual(table.rows[0]!.cells, [web.metadata!.uid, 'web', 'n1', 3, 'Ready', '1.3s', '0s', '<none>']);
  });

  it('answers upstream Status errors: 404 for an unknown timeline, 400 for an unsupported field label, 405 for a write', async () => {
    const rest = api.client().rest;
    const missing = await rejected(rest.request({ path: `${timelines}/nope` }));
    assert.equal(missing.code, 404);
    assert.equal(missing.message, 'podtimelines.timeline.kite.dev "nope" not found');
    const label = await rejected(rest.request({ path: timelines, query: { fieldSelector: 'spec.nodeName=n1' } }));
    assert.equal(label.code, 400);
    assert.equal(label.message, 'field label not supported: spec.nodeName');
    const write = await rejected(rest.request({ method: 'DELETE', path: `${timelines}/${web.metadata!.uid}` }));
    assert.equal(write.code, 405);
  });

  it('watches: the current records, then steps as they arrive', async () => {
    const abort = new AbortController();
    const events = api.client().rest.watch<PodTimeline>({ path: timelines, query: { watch: true, fieldSelector: 'pod.name=web' }, signal: abort.signal });
    const first = await events.next();
    assert.equal(first.value!.type, 'ADDED');
    await post(batch([{ pod: webRef(), steps: [step('ContainerStarted', 900, { container: 'app' })] }]));
    const second = await events.next();
    assert.equal(second.value!.type, 'MODIFIED');
    assert.ok(second.value!.object.steps.some((s: TimelineStep) => s.step === 'ContainerStarted'));
    abort.abort();
    const expired = await rejected(api.client().rest.request({ path: timelines, query: { watch: true, resourceVersion: 'x' } }));
    assert.equal(expired.code, 422);
  });

  it('drops, with a 201, the records of a kubelet for pods not bound to its node', async () => {
    const other = await api.client().resource('pods').namespace('default').create({ metadata: { name: 'elsewhere' }, spec: { nodeName: 'n2', containers: [{ name: 'app', image: 'nginx' }] } });
    const ref = { namespace: 'default', name: 'elsewhere', uid: other.metadata!.uid! };
    await post(batch([{ pod: ref, steps: [step('SandboxCreated', 100)] }]), kubelet('n1'));
    assert.equal(store.get('default', ref.uid), undefined);
    await post(batch([{ pod: { ...ref, name: 'renamed', namespace: 'kube-system' }, steps: [step('SandboxCreated', 100)] }]), kubelet('n2'));
    const kept = store.get('default', ref.uid)!;
    assert.equal(kept.steps.length, 1);
    assert.deepEqual(kept.pod, { ...ref, nodeName: 'n2' }, 'named as the API server stores the pod');
  });

  it('refuses hostile batches with a 400 or 422 naming the field, and never touches prototypes', async () => {
    const cases: [unknown, number, RegExp][] = [
      ['{not json', 400, /json parse error/],
      [{ apiVersion: 'v1', kind: 'PodTimelineStepBatch', records: [] }, 400, /does not match the expected API version/],
      [{ kind: 'Pod', records: [] }, 400, /cannot be handled as a PodTimelineStepBatch/],
      [{ records: 'many' }, 422, /records: Invalid value: "": must be a list/],
      [{ records: Array.from({ length: 1001 }, () => ({ pod: webRef(), steps: [] })) }, 422, /records: Too many: 1001: must have at most 1000 items/],
      [{ records: Array.from({ length: 2 }, () => ({ pod: webRef(), steps: Array.from({ length: 5001 }, () => step('Ready', 0)) })) }, 422, /records.steps: Too many: 10002/],
      [{ records: [{ pod: webRef(), steps: [{ ...step('Ready', 0), step: 'Exploded' }] }] }, 422, /records\[0\]\.steps\[0\]\.step: Unsupported value: "Exploded"/],
      [{ records: [{ pod: webRef(), steps: [{ ...step('Ready', 0), start: 'yesterday' }] }] }, 422, /records\[0\]\.steps\[0\]\.start: Invalid value: "yesterday"/],
      [{ records: [{ pod: { name: 'web', namespace: 'default' }, steps: [] }] }, 422, /records\[0\]\.pod\.uid: Required value/],
      [{ records: [{ pod: webRef(), steps: [{ ...step('Ready', 0), count: -1 }] }] }, 422, /records\[0\]\.steps\[0\]\.count: Invalid value: -1/],
      [{ records: [{ pod: webRef(), steps: [{ ...step('Ready', 0), attributes: { nested: { a: 1 } } }] }] }, 422, /attributes\[nested\]: Invalid value/],
      // Nested far past any bound (no scan runs before JSON.parse for batches): nothing walks it.
      [`{"records":[{"pod":${JSON.stringify(webRef())},"steps":[{"step":"Ready","component":"k","start":"2026-01-01T00:00:00Z","attributes":{"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}}]}]}`, 422, /attributes\[deep\]: Invalid value/],
      [`{"records":${'['.repeat(200_000)}${']'.repeat(200_000)}}`, 422, /records\[0\]: Invalid value/],
      ...['step', 'start', 'component', 'containerType', 'count'].map((field): [string, number, RegExp] => [
        `{"records":[{"pod":${JSON.stringify(webRef())},"steps":[{"step":"Ready","component":"k","start":"2026-01-01T00:00:00Z","${field}":${'['.repeat(200_000)}${']'.repeat(200_000)}}]}]}`,
        422,
        new RegExp(`steps\\[0\\]\\.${field}: (Invalid|Unsupported) value`),
      ]),
    ];
    for (const [body, code, message] of cases) {
      const err = await rejected(post(body));
      assert.equal(err.code, code, `${JSON.stringify(body).slice(0, 80)}: ${err.message}`);
      assert.match(err.message, message);
    }
    const sneaky = '{"records":[{"pod":{"namespace":"default","name":"web","uid":"' + web.metadata!.uid + '"},"steps":[{"step":"VolumesReady","component":"kubelet","start":"2026-01-01T00:00:00.5Z","attributes":{"__proto__":{"polluted":true},"constructor":"x"}}]}]}';
    const err = await rejected(post(sneaky));
    assert.equal(err.code, 422, 'an object attribute value is refused, whatever its key');
    await post(sneaky.replace('{"polluted":true}', '"p"'));
    const stored = store.get('default', web.metadata!.uid!)!.steps.find((s) => s.step === 'VolumesReady')!;
    assert.equal(stored.start, '2026-01-01T00:00:00.500000Z', 'times are kept in the one MicroTime form');
    assert.equal(Object.getPrototypeOf(stored.attributes), Object.prototype);
    assert.equal(Object.hasOwn(stored.attributes!, '__proto__'), true);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('accepts and drops batches when the timeline is off, and serves an empty list', async () => {
    const off = new TimelineStore({ clock, logger, enabled: false });
    const offApi = await FakeApi.start({ clock, timeline: off });
    try {
      await offApi.client().rest.request({ method: 'POST', path: stepBatchPath, body: batch([{ pod: webRef(), steps: [step('Ready', 0)] }]) });
      const list = await offApi.client().rest.request<{ items: unknown[] }>({ path: timelines });
      assert.deepEqual(list.items, []);
    } finally {
      await offApi.stop();
    }
  });
});
