import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { MutatingWebhook, ValidatingWebhook } from 'kubernetes-types/admissionregistration/v1.js';
import { findResource } from '../../../api/resources.js';
import { FakeClock, realClock } from '../../../util/clock.js';
import { admitNamingChanges, fakeLookups, type LookupObjects, statusRefusal } from '../testing.js';
import type { AdmissionAttributes } from '../interface.js';
import { MutatingAdmissionWebhook } from './mutating.js';
import { ValidatingAdmissionWebhook } from './validating.js';
import type { RuleWithOperations } from './matching.js';
import { startTestWebhookServer, type TestWebhookServer } from './testing.js';

let server: TestWebhookServer;
const calls = new Map<string, number>();

before(async () => {
  server = await startTestWebhookServer((path, req) => {
    calls.set(path, (calls.get(path) ?? 0) + 1);
    const labels = req.object?.metadata?.labels ?? {};
    switch (path) {
      case '/deny':
        return { allowed: false, status: { code: 403, message: 'pods named bad are not allowed' }, warnings: ['be nice'] };
      case '/allow':
        return { allowed: true, warnings: ['looked at it'] };
      case '/label':
        return { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }], auditAnnotations: { checked: 'labels', ignored: 7 } };
      case '/label-b':
        return { allowed: true, patch: labels.b ? [] : [{ op: 'add', path: '/metadata/labels/b', value: 'set' }] };
      case '/copy-b':
        // Copies label b to c once b exists: needs a second round when b comes later.
        return { allowed: true, patch: labels.b && !labels.c ? [{ op: 'add', path: '/metadata/labels/c', value: labels.b }] : [] };
      case '/bad-patch':
        return { allowed: true, patch: [{ op: 'remove', path: '/spec/nothing' }] };
      case '/hang':
        return undefined;
      case '/stall':
        return { allowed: true, stall: true };
      default:
        return { allowed: true };
    }
  });
});
after(() => server.close());

function pod(labels: Record<string, string> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: findResource('', 'v1', 'pods')!,
    subresource: '',
    namespace: 'd',
    name: 'web',
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'd', labels: { ...labels } }, spec: { containers: [] } },
    user: { name: 'alice', groups: ['devs'] },
    dryRun: false,
    warnings: [],
  };
}

function hook<W extends MutatingWebhook | ValidatingWebhook>(name: string, path: string, extra: Partial<W> = {}): W {
  return {
    name,
    clientConfig: { url: `${server.url}${path}`, caBundle: server.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    ...extra,
  } as unknown as W;
}

function lookups(objects: { mutating?: MutatingWebhook[][]; validating?: ValidatingWebhook[][] }) {
  const o: LookupObjects = {
    namespaces: [{ metadata: { name: 'd' } }],
    // Service webhook:8443 in d, backed by the test server's port on 127.0.0.1.
    services: [{ metadata: { name: 'webhook', namespace: 'd' }, spec: { ports: [{ name: 'https', port: 8443, targetPort: server.port }] } }],
    endpoints: [{ metadata: { name: 'webhook', namespace: 'd' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: server.port }] }] }],
    'mutatingwebhookconfigurations.admissionregistration.k8s.io': (objects.mutating ?? []).map((webhooks, i) => ({ metadata: { name: `m${i}` }, webhooks })),
    'validatingwebhookconfigurations.admissionregistration.k8s.io': (objects.validating ?? []).map((webhooks, i) => ({ metadata: { name: `v${i}` }, webhooks })),
  };
  return fakeLookups(o);
}


/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

test('a validating webhook denial carries its message and code; the review names the request', async () => {
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook('deny.example.com', '/deny')]] }), clock: realClock });
  const a = pod();
  const err = await statusRefusal(plugin.validate(a));
  assert.equal(err.code, 403);
  assert.equal(err.message, 'admission webhook "deny.example.com" denied the request: pods named bad are not allowed');
  assert.deepEqual(a.warnings, ['be nice']);
  const req = server.received.at(-1)!.request;
  assert.deepEqual(req.kind, { group: '', version: 'v1', kind: 'Pod' });
  assert.deepEqual(req.resource, { group: '', version: 'v1', resource: 'pods' });
  assert.equal(req.operation, 'CREATE');
  assert.equal(req.namespace, 'd');
  assert.equal(req.userInfo.username, 'alice');
  assert.equal(req.object?.metadata?.name, 'web');
  assert.deepEqual(req.options, { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' });
});

test('validating webhooks that allow pass the request with their warnings; rules that do not match are not called', async () => {
  const before = calls.get('/deny') ?? 0;
  const rules: RuleWithOperations[] = [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
  const other = hook<ValidatingWebhook>('deny.example.com', '/deny', { rules });
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook('allow.example.com', '/allow'), other]] }), clock: realClock });
  const a = pod();
  await plugin.validate(a);
  assert.deepEqual(a.warnings, ['looked at it']);
  assert.equal(calls.get('/deny') ?? 0, before);
});

test('a mutating webhook JSON patch is applied to the object in place', async () => {
  const plugin = new MutatingAdmissionWebhook({ lookups: lookups({ mutating: [[hook('label.example.com', '/label')]] }), clock: realClock });
  const a = pod({ app: 'web' });
  const obj = a.object;
  await plugin.admit(a);
  assert.equal(a.object, obj);
  assert.deepEqual(a.object?.metadata?.labels, { app: 'web', mutated: 'yes' });
  assert.deepEqual(await admitNamingChanges(plugin, pod({ app: 'web' })), ['metadata.labels.mutated'], 'what its patch changed, for the pod timeline');
});

test('a patch that does not apply is an internal error', async () => {
  const plugin = new MutatingAdmissionWebhook({ lookups: lookups({ mutating: [[hook('bad.example.com', '/bad-patch')]] }), clock: realClock });
  const err = await statusRefusal(plugin.admit(pod()));
  assert.equal(err.code, 500);
  assert.match(err.message, /^Internal error occurred: /);
});

test('reinvocationPolicy IfNeeded calls a webhook again once a later webhook changed the object', async () => {
  const copy = hook<MutatingWebhook>('copy.example.com', '/copy-b', { reinvocationPolicy: 'IfNeeded' });
  const plugin = new MutatingAdmissionWebhook({ lookups: lookups({ mutating: [[copy], [hook('b.example.com', '/label-b')]] }), clock: realClock });
  const copies = calls.get('/copy-b') ?? 0;
  const a = pod();
  await plugin.admit(a);
  assert.deepEqual(a.object?.metadata?.labels, { b: 'set', c: 'set' });
  assert.equal((calls.get('/copy-b') ?? 0) - copies, 2);

  // With Never, the first webhook does not see the later change.
  const never = new MutatingAdmissionWebhook({ lookups: lookups({ mutating: [[{ ...copy, reinvocationPolicy: 'Never' }], [hook('b.example.com', '/label-b')]] }), clock: realClock });
  const b = pod();
  await never.admit(b);
  assert.deepEqual(b.object?.metadata?.labels, { b: 'set' });
});

test('matchPolicy Equivalent sends an autoscaling/v2 request to a v1 rule as v1, requestKind naming v2', async () => {
  const rules: RuleWithOperations[] = [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }];
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook('hpa.example.com', '/allow', { rules })]] }), clock: realClock });
  const hpa = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'd' },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      maxReplicas: 3,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
    },
  };
  await plugin.validate({ ...pod(), resource: findResource('autoscaling', 'v2', 'horizontalpodautoscalers')!, object: hpa });
  const req = server.received.at(-1)!.request;
  assert.deepEqual(req.kind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
  assert.deepEqual(req.requestKind, { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
  assert.equal(req.object?.apiVersion, 'autoscaling/v1');
  assert.equal((req.object?.spec as { targetCPUUtilizationPercentage?: number }).targetCPUUtilizationPercentage, 50);
});

test('a dead webhook fails the request under failurePolicy Fail and is skipped under Ignore', async () => {
  const port = await deadPort();
  const dead = (failurePolicy: string) => ({ ...hook<ValidatingWebhook>('dead.example.com', '/'), failurePolicy, clientConfig: { url: `https://127.0.0.1:${port}/check`, caBundle: server.caBundle } });
  const fail = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[dead('Fail')]] }), clock: realClock });
  const err = await statusRefusal(fail.validate(pod()));
  assert.equal(err.code, 500);
  assert.equal(err.reason, 'InternalError');
  assert.equal(
    err.message,
    `Internal error occurred: failed calling webhook "dead.example.com": failed to call webhook: Post "https://127.0.0.1:${port}/check?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
  );
  const ignore = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[dead('Ignore')]] }), clock: realClock });
  await ignore.validate(pod());
});

test('a service reference is called at a ready endpoint, verified as <service>.<namespace>.svc', async () => {
  const svc = { ...hook<ValidatingWebhook>('svc.example.com', '/'), clientConfig: { service: { namespace: 'd', name: 'webhook', port: 8443, path: '/deny' }, caBundle: server.caBundle } };
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[svc]] }), clock: realClock });
  const err = await statusRefusal(plugin.validate(pod()));
  assert.equal(err.message, 'admission webhook "svc.example.com" denied the request: pods named bad are not allowed');
  const missing = { ...svc, clientConfig: { service: { namespace: 'd', name: 'webhook', port: 443 }, caBundle: server.caBundle } };
  const none = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[missing]] }), clock: realClock });
  assert.match((await statusRefusal(none.validate(pod()))).message, /failed calling webhook "svc\.example\.com": failed to call webhook: service "d\/webhook" has no ready endpoints for port 443$/);
});

test('a webhook whose certificate the caBundle does not sign is a call failure', async () => {
  const untrusted = { ...hook<ValidatingWebhook>('tls.example.com', '/allow'), clientConfig: { url: `${server.url}/allow` } };
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[untrusted]] }), clock: realClock });
  const err = await statusRefusal(plugin.validate(pod()));
  assert.match(err.message, /failed calling webhook "tls\.example\.com": .*x509: certificate signed by unknown authority$/);
});

test('a webhook that never answers fails the request at its timeout', async () => {
  const clock = new FakeClock();
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook('hang.example.com', '/hang', { timeoutSeconds: 2 })]] }), clock });
  const hangs = calls.get('/hang') ?? 0;
  const result = statusRefusal(plugin.validate(pod()));
  // Wait for the webhook to have the request, then let its 2 s pass.
  while ((calls.get('/hang') ?? 0) === hangs) await new Promise((r) => setImmediate(r));
  await clock.advance(2000);
  const err = await result;
  assert.equal(err.code, 500);
  assert.equal(
    err.message,
    `Internal error occurred: failed calling webhook "hang.example.com": failed to call webhook: Post "${server.url}/hang?timeout=2s": context deadline exceeded`,
  );
});

test('a webhook that stalls in the middle of its answer fails the request at its timeout', async () => {
  const clock = new FakeClock();
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook('stall.example.com', '/stall', { timeoutSeconds: 3 })]] }), clock });
  const stalls = calls.get('/stall') ?? 0;
  const result = statusRefusal(plugin.validate(pod()));
  while ((calls.get('/stall') ?? 0) === stalls) await new Promise((r) => setImmediate(r));
  await clock.advance(3000);
  const err = await result;
  assert.match(err.message, /failed calling webhook "stall\.example\.com": failed to call webhook: Post "[^"]+\/stall\?timeout=3s": context deadline exceeded$/);
});

test('dry run requests are refused by webhooks with side effects', async () => {
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook('fx.example.com', '/allow', { sideEffects: 'Some' })]] }), clock: realClock });
  const err = await statusRefusal(plugin.validate({ ...pod(), dryRun: true }));
  assert.equal(err.code, 400);
  assert.equal(err.message, 'admission webhook "fx.example.com" does not support dry run');
});

test('webhook configurations themselves are never sent to webhooks', () => {
  const plugin = new ValidatingAdmissionWebhook({ lookups: lookups({}), clock: realClock });
  const a = { ...pod(), resource: findResource('admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations')!, namespace: '' };
  assert.equal(plugin.handles(a), false);
  assert.equal(plugin.handles(pod()), true);
});

test('matchConditions: all true calls the webhook, one false skips it, an error follows failurePolicy', async () => {
  const conditions = (...expressions: string[]) => expressions.map((expression, i) => ({ name: `c${i}`, expression }));
  const deny = (matchConditions: { name: string; expression: string }[], failurePolicy: 'Fail' | 'Ignore' = 'Fail') =>
    new ValidatingAdmissionWebhook({ lookups: lookups({ validating: [[hook<ValidatingWebhook>('deny.example.com', '/deny', { matchConditions, failurePolicy })]] }), clock: realClock });
  const allTrue = await statusRefusal(deny(conditions("object.metadata.name == 'web'", "request.userInfo.username == 'alice'", 'oldObject == null')).validate(pod()));
  assert.match(allTrue.message, /denied the request/);
  const before = calls.get('/deny') ?? 0;
  // A false one skips the call even beside an error.
  await deny(conditions('object.metadata.nothing.size() > 0', "object.metadata.name == 'other'")).validate(pod());
  await deny(conditions("'team' in object.metadata.labels")).validate(pod());
  assert.equal(calls.get('/deny') ?? 0, before);
  const err = await statusRefusal(deny(conditions('true', 'object.metadata.nothing.size() > 0')).validate(pod()));
  assert.equal(err.code, 403);
  assert.match(err.message, /^pods "web" is forbidden: expression 'object\.metadata\.nothing\.size\(\) > 0' resulted in error: /);
  await deny(conditions('object.metadata.nothing.size() > 0'), 'Ignore').validate(pod());
  assert.equal(calls.get('/deny') ?? 0, before);
});

test("matchConditions of a mutating webhook see the earlier webhooks' changes", async () => {
  const labelled = hook<MutatingWebhook>('copy.example.com', '/label-b', { matchConditions: [{ name: 'has-mutated', expression: "'mutated' in object.metadata.labels" }] });
  const plugin = new MutatingAdmissionWebhook({ lookups: lookups({ mutating: [[hook('label.example.com', '/label'), labelled]] }), clock: realClock });
  const a = pod();
  await plugin.admit(a);
  assert.deepEqual(a.object?.metadata?.labels, { mutated: 'yes', b: 'set' });
  const skipped = new MutatingAdmissionWebhook({ lookups: lookups({ mutating: [[labelled]] }), clock: realClock });
  const b = pod();
  await skipped.admit(b);
  assert.deepEqual(b.object?.metadata?.labels, {});
});

test('audit annotations: each mutating call and its patch by round and index, the webhooks\' own under their names, failing open', async () => {
  const annotations = new Map<string, [string, string | undefined]>();
  const annotate = (key: string, value: string, level?: string) => void annotations.set(key, [value, level]);
  const dead = `https://127.0.0.1:${await deadPort()}/x`;
  const ignored = hook<MutatingWebhook>('dead.example.com', '/x', { failurePolicy: 'Ignore', clientConfig: { url: dead, caBundle: server.caBundle } });
  const plugin = new MutatingAdmissionWebhook({
    lookups: lookups({ mutating: [[hook('allow.example.com', '/allow'), hook('label.example.com', '/label')], [ignored]] }),
    clock: realClock,
  });
  await plugin.admit({ ...pod(), annotate });
  assert.deepEqual(Object.fromEntries(annotations), {
    'mutation.webhook.admission.k8s.io/round_0_index_0': [JSON.stringify({ configuration: 'm0', webhook: 'allow.example.com', mutated: false }), undefined],
    'label.example.com/checked': ['labels', undefined],
    'patch.webhook.admission.k8s.io/round_0_index_1': [
      JSON.stringify({ configuration: 'm0', webhook: 'label.example.com', patch: [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }], patchType: 'JSONPatch' }),
      'Request',
    ],
    'mutation.webhook.admission.k8s.io/round_0_index_1': [JSON.stringify({ configuration: 'm0', webhook: 'label.example.com', mutated: true }), undefined],
    'failed-open.mutation.webhook.admission.k8s.io/round_0_index_2': ['dead.example.com', undefined],
    'mutation.webhook.admission.k8s.io/round_0_index_2': [JSON.stringify({ configuration: 'm1', webhook: 'dead.example.com', mutated: false }), undefined],
  });
});
