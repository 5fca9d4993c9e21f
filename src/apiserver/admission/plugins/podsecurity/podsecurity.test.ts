import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Namespace, Pod } from 'kubernetes-types/core/v1.js';
import { admissionAttributes, type AttributeOverrides, fakeLookups, statusRefusal } from '../../testing.js';
import { PodSecurity, policyOf, type PodSecurityExemptions } from './podsecurity.js';

const ns = (name: string, labels: Record<string, string>): Namespace => ({ metadata: { name, labels } });
const privilegedPod = (name = 'p'): Pod => ({ metadata: { name, namespace: 'n' }, spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] } });
const restrictedViolations =
  'privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

const attrs = (group: string, version: string, resource: string, object: object, extra: AttributeOverrides = {}, warnings: string[] = []) =>
  admissionAttributes(group, version, resource, { object, warnings, ...extra });

function plugin(namespaces: Namespace[], pods: Pod[] = [], exemptions?: PodSecurityExemptions) {
  return new PodSecurity({ lookups: fakeLookups({ namespaces, pods }), exemptions });
}

/** A refusal as `code message`. */
async function refusal(p: Promise<void>): Promise<string> {
  const err = await statusRefusal(p);
  return `${err.code} ${err.message}`;
}

test('namespace labels make the policy; invalid values fall back to restricted and latest', () => {
  assert.deepEqual(policyOf(undefined).policy.enforce, { level: 'privileged', version: 'latest' });
  const { policy, errors } = policyOf({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.29', 'pod-security.kubernetes.io/warn': 'bogus', 'pod-security.kubernetes.io/audit-version': 'v1.99' });
  assert.deepEqual(policy, { enforce: { level: 'baseline', version: 'v1.29' }, audit: { level: 'privileged', version: 'latest' }, warn: { level: 'restricted', version: 'latest' } });
  assert.deepEqual(errors.map((e) => e.field), ['metadata.labels[pod-security.kubernetes.io/warn]']);
});

test('enforce refuses a pod with upstream message; warn adds a warning', async () => {
  const p = plugin([ns('n', { 'pod-security.kubernetes.io/enforce': 'restricted' }), ns('w', { 'pod-security.kubernetes.io/warn': 'restricted' }), ns('open', {})]);
  assert.equal(await refusal(p.validate(attrs('', 'v1', 'pods', privilegedPod()))), `403 pods "p" is forbidden: violates PodSecurity "restricted:latest": ${restrictedViolations}`);
  const warnings: string[] = [];
  await p.validate(attrs('', 'v1', 'pods', { ...privilegedPod(), metadata: { name: 'p', namespace: 'w' } }, {}, warnings));
  assert.deepEqual(warnings, [`would violate PodSecurity "restricted:latest": ${restrictedViolations}`]);
  const none: string[] = [];
  await p.validate(attrs('', 'v1', 'pods', { ...privilegedPod(), metadata: { name: 'p', namespace: 'open' } }, {}, none));
  assert.deepEqual(none, []);
});

test('a refused pod gets no warning, a baseline-enforced one warns about restricted', async () => {
  const p = plugin([ns('n', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted' })]);
  const warnings: string[] = [];
  assert.match(await refusal(p.validate(attrs('', 'v1', 'pods', privilegedPod(), {}, warnings))), /violates PodSecurity "baseline:latest": privileged \(container "c"/);
  assert.deepEqual(warnings, []);
  const plain: Pod = { metadata: { name: 'q', namespace: 'n' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
  await p.validate(attrs('', 'v1', 'pods', plain, {}, warnings));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/);
});

test('workload templates only warn, at the warn level', async () => {
  const p = plugin([ns('n', { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' })]);
  const template = { metadata: {}, spec: privilegedPod().spec };
  const objects: [string, string, string, object][] = [
    ['apps', 'v1', 'deployments', { metadata: { name: 'd', namespace: 'n' }, spec: { template } }],
    ['batch', 'v1', 'cronjobs', { metadata: { name: 'cj', namespace: 'n' }, spec: { jobTemplate: { spec: { template } } } }],
    ['', 'v1', 'podtemplates', { metadata: { name: 't', namespace: 'n' }, template }],
  ];
  for (const [g, v, r, obj] of objects) {
    const warnings: string[] = [];
    await p.validate(attrs(g, v, r, obj, {}, warnings));
    assert.deepEqual(warnings, ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)'], r);
  }
});

test('pod updates that cannot change the verdict, ignored subresources and exemptions pass', async () => {
  const enforced = [ns('n', { 'pod-security.kubernetes.io/enforce': 'restricted' })];
  const old = privilegedPod();
  const relabelled = { ...privilegedPod(), metadata: { name: 'p', namespace: 'n', labels: { a: 'b' } } };
  const p = plugin(enforced);
  assert.equal(p.handles(attrs('', 'v1', 'pods', relabelled, { subresource: 'status', operation: 'UPDATE' })), false);
  await p.validate(attrs('', 'v1', 'pods', relabelled, { operation: 'UPDATE', oldObject: old }));
  const newImage: Pod = { ...old, spec: { containers: [{ ...old.spec!.containers[0], image: 'y' }] } };
  await p.validate(attrs('', 'v1', 'pods', newImage, { operation: 'UPDATE', oldObject: old }));
  await plugin(enforced, [], { namespaces: ['n'] }).validate(attrs('', 'v1', 'pods', privilegedPod()));
  await plugin(enforced, [], { usernames: ['u'] }).validate(attrs('', 'v1', 'pods', privilegedPod()));
});

test('namespaces: invalid labels refused on create, a stricter enforce level warns about existing pods', async () => {
  const bad = ns('n', { 'pod-security.kubernetes.io/enforce': 'strict' });
  assert.equal(
    await refusal(plugin([]).validate(attrs('', 'v1', 'namespaces', bad))),
    '422 Namespace "n" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Unsupported value: "strict": supported values: "privileged", "baseline", "restricted"',
  );
  const pods = [privilegedPod('b'), privilegedPod('a'), { metadata: { name: 'h', namespace: 'n' }, spec: { hostPID: true, containers: [{ name: 'c', image: 'x' }] } }, { ...privilegedPod('z'), metadata: { name: 'z', namespace: 'other' } }];
  const warnings: string[] = [];
  const update = attrs('', 'v1', 'namespaces', ns('n', { 'pod-security.kubernetes.io/enforce': 'baseline' }), { operation: 'UPDATE', oldObject: ns('n', {}) }, warnings);
  await plugin([], pods).validate(update);
  assert.deepEqual(warnings, ['existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"', 'a (and 1 other pod): privileged', 'h: host namespaces']);
  // Relaxing the level does not look at pods.
  const relaxed: string[] = [];
  await plugin([], pods).validate(attrs('', 'v1', 'namespaces', ns('n', { 'pod-security.kubernetes.io/enforce': 'baseline' }), { operation: 'UPDATE', oldObject: ns('n', { 'pod-security.kubernetes.io/enforce': 'restricted' }) }, relaxed));
  assert.deepEqual(relaxed, []);
});

test("audit annotations: the enforced policy, the audit level's violations, exemptions, label errors", async () => {
  const p = plugin(
    [
      ns('open', {}),
      ns('a', { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.30', 'pod-security.kubernetes.io/audit': 'restricted' }),
      ns('bad', { 'pod-security.kubernetes.io/audit': 'bogus' }),
    ],
    [],
    { usernames: ['admin'], runtimeClasses: ['kata'] },
  );
  const audited = async (object: Pod, extra: AttributeOverrides = {}) => {
    const annotations: Record<string, string> = {};
    const a = attrs('', 'v1', 'pods', object, { annotate: (k, v) => void (annotations[k] = v), ...extra });
    await p.validate(a).catch(() => undefined);
    return annotations;
  };
  const inNs = (namespace: string, pod: Pod = privilegedPod()): Pod => ({ ...pod, metadata: { name: 'p', namespace } });
  assert.deepEqual(await audited(inNs('open')), { 'pod-security.kubernetes.io/enforce-policy': 'privileged:latest' });
  const plain: Pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
  assert.deepEqual(await audited(inNs('a', plain)), {
    'pod-security.kubernetes.io/enforce-policy': 'baseline:v1.30',
    'pod-security.kubernetes.io/audit-violations':
      'would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  });
  // A refused pod is audited too.
  const refused = await audited(inNs('a'));
  assert.equal(refused['pod-security.kubernetes.io/enforce-policy'], 'baseline:v1.30');
  assert.match(refused['pod-security.kubernetes.io/audit-violations'] ?? '', /^would violate PodSecurity "restricted:latest": privileged/);
  assert.deepEqual(await audited(inNs('a'), { user: { name: 'admin', groups: [] } }), { 'pod-security.kubernetes.io/exempt': 'user' });
  assert.deepEqual(await audited(inNs('a', { ...privilegedPod(), spec: { ...privilegedPod().spec!, runtimeClassName: 'kata' } })), { 'pod-security.kubernetes.io/exempt': 'runtimeClass' });
  const bad = await audited(inNs('bad', plain));
  assert.equal(bad['pod-security.kubernetes.io/error'], 'Failed to parse policy: metadata.labels[pod-security.kubernetes.io/audit]: Unsupported value: "bogus": supported values: "privileged", "baseline", "restricted"');
  assert.equal(bad['pod-security.kubernetes.io/enforce-policy'], 'privileged:latest');
});
