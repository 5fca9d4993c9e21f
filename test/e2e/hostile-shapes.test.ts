// Unexpected shapes in otherwise well-formed bodies: nulls where objects, list items or quantities
// belong, and wrong types in subresource bodies. Upstream decodes null into Go's zero value, so
// each answer is the field error that zero value earns (422 Invalid with its field paths), or the
// object as stored; never a 500.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kiteBin, removeDir, startServer, startSim, tempDir, type KiteServer } from './harness.js';
import { raw, type RawOptions, type RawResponse } from './raw.js';

const pods = '/api/v1/namespaces/default/pods';
const container = { name: 'c', image: 'busybox:1.35' };
const pod = (name: string, spec: unknown, metadata: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata }, spec });
const merge = { 'Content-Type': 'application/merge-patch+json' };
const strategic = { 'Content-Type': 'application/strategic-merge-patch+json' };
const jsonPatch = { 'Content-Type': 'application/json-patch+json' };
const tolerationMessage = 'operator must be Exists when `key` is empty, which means "match all values and all keys"';
const qualifiedNameMessage =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

interface Cause {
  reason: string;
  field: string;
}

/** A 422 Invalid Status for name of group/kind, with these causes in order. */
function assertInvalid(r: RawResponse, group: string, kind: string, name: string, causes: Cause[]): void {
  assert.equal(r.code, 422, r.body);
  const s = r.json();
  assert.equal(s.kind, 'Status');
  assert.equal(s.status, 'Failure');
  assert.equal(s.reason, 'Invalid');
  assert.equal(s.code, 422);
  assert.ok(s.message.startsWith(`${group ? `${kind}.${group}` : kind} "${name}" is invalid: `), s.message);
  assert.equal(s.details.name, name);
  assert.equal(s.details.kind, kind);
  assert.equal(s.details.group ?? '', group);
  assert.deepEqual(
    s.details.causes.map((c: Cause) => ({ reason: c.reason, field: c.field })),
    causes,
  );
}

const required = (field: string): Cause => ({ reason: 'FieldValueRequired', field });
const invalid = (field: string): Cause => ({ reason: 'FieldValueInvalid', field });
const forbidden = (field: string): Cause => ({ reason: 'FieldValueForbidden', field });

/** Runs the built `kite` to its exit (bounded), for commands that must fail at once. */
function kite(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [kiteBin, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('nulls and odd shapes in request bodies', () => {
  let server: KiteServer;
  const templates = tempDir('templates');
  const req = (opts: RawOptions) => raw(server.kubeconfig, opts);
  before(async () => {
    server = await startServer();
    const r = await req({ method: 'POST', path: pods, body: pod('exists', { containers: [container] }) });
    assert.equal(r.code, 201, r.body);
  });
  after(async () => {
    await server.stop();
    removeDir(server.dataDir);
    removeDir(templates);
  });

  it('refuses a null container as an empty Container: name and image required', async () => {
    const r = await req({ method: 'POST', path: pods, body: pod('nullc', { containers: [null] }) });
    assertInvalid(r, '', 'Pod', 'nullc', [required('spec.containers[0].name'), required('spec.containers[0].image')]);
    assert.equal(r.json().message, 'Pod "nullc" is invalid: [spec.containers[0].name: Required value, spec.containers[0].image: Required value]');
  });

  it('refuses a null toleration as an empty Toleration', async () => {
    const r = await req({ method: 'POST', path: pods, body: pod('nullt', { containers: [container], tolerations: [null] }) });
    assertInvalid(r, '', 'Pod', 'nullt', [invalid('spec.tolerations[0].operator')]);
    assert.equal(r.json().details.causes[0].message, `Invalid value: "": ${tolerationMessage}`);
  });

  it('stores a null quantity as zero, as resource.Quantity decodes null', async () => {
    const spec = { containers: [{ ...container, resources: { requests: { cpu: null }, limits: { memory: null } } }] };
    const r = await req({ method: 'POST', path: pods, body: pod('nullq', spec) });
    assert.equal(r.code, 201, r.body);
    // requests default to the limits they lack, as upstream's SetDefaults_Pod.
    assert.deepEqual(r.json().spec.containers[0].resources, { requests: { cpu: '0', memory: '0' }, limits: { memory: '0' } });
  });

  it('refuses a null spec as an empty PodSpec', async () => {
    const r = await req({ method: 'POST', path: pods, body: pod('nulls', null) });
    assertInvalid(r, '', 'Pod', 'nulls', [required('spec.containers')]);
  });

  it('refuses a null owner reference as an empty OwnerReference', async () => {
    const r = await req({ method: 'POST', path: pods, body: pod('nullo', { containers: [container] }, { ownerReferences: [null] }) });
    const at = 'metadata.ownerReferences';
    assertInvalid(r, '', 'Pod', 'nullo', [invalid(`${at}.apiVersion`), invalid(`${at}.kind`), invalid(`${at}.name`), invalid(`${at}.uid`)]);
  });

  it('stores null label and data values as empty strings', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nullv', labels: { a: null } }, data: { k: null } });
    const r = await req({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body });
    assert.equal(r.code, 201, r.body);
    assert.deepEqual(r.json().metadata.labels, { a: '' });
    assert.deepEqual(r.json().data, { k: '' });
  });

  it('refuses a null container in a Deployment template at its template path', async () => {
    const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [null] } };
    const body = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nulld' }, spec: { selector: { matchLabels: { app: 'a' } }, template } });
    const r = await req({ method: 'POST', path: '/apis/apps/v1/namespaces/default/deployments', body });
    assertInvalid(r, 'apps', 'Deployment', 'nulld', [
      required('spec.template.spec.containers[0].name'),
      required('spec.template.spec.containers[0].image'),
    ]);
  });

  it('stores a node whose capacity has a null quantity with zero capacity and allocatable', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'nulln' }, status: { capacity: { cpu: null } } });
    const r = await req({ method: 'POST', path: '/api/v1/nodes', body });
    assert.equal(r.code, 201, r.body);
    assert.deepEqual(r.json().status.capacity, { cpu: '0' });
    assert.deepEqual(r.json().status.allocatable, { cpu: '0' });
  });

  it('refuses a PUT with a null container: the spec errors, then the update rules', async () => {
    const r = await req({ method: 'PUT', path: `${pods}/exists`, body: pod('exists', { containers: [null] }) });
    // ValidatePodUpdate checks the new spec, then the images again, then what an update may change.
    assertInvalid(r, '', 'Pod', 'exists', [
      required('spec.containers[0].name'),
      required('spec.containers[0].image'),
      required('spec.containers[0].image'),
      forbidden('spec'),
    ]);
  });

  for (const [what, headers] of [
    ['merge', merge],
    ['strategic merge', strategic],
  ] as const) {
    it(`refuses a ${what} patch that sets tolerations to [null]`, async () => {
      const r = await req({ method: 'PATCH', path: `${pods}/exists`, body: '{"spec":{"tolerations":[null]}}', headers });
      // The stored pod's default tolerations are gone: only additions are allowed.
      assertInvalid(r, '', 'Pod', 'exists', [invalid('spec.tolerations[0].operator'), forbidden('spec.tolerations')]);
    });
  }

  it('refuses a JSON patch that adds a null container', async () => {
    const r = await req({ method: 'PATCH', path: `${pods}/exists`, body: '[{"op":"add","path":"/spec/containers/-","value":null}]', headers: jsonPatch });
    assertInvalid(r, '', 'Pod', 'exists', [required('spec.containers[1].name'), required('spec.containers[1].image'), forbidden('spec.containers')]);
  });

  it('refuses a status patch with a null condition at upstream`s (metadata.) path', async () => {
    const r = await req({ method: 'PATCH', path: `${pods}/exists/status`, body: '{"status":{"conditions":[null]}}', headers: merge });
    assertInvalid(r, '', 'Pod', 'exists', [invalid('metadata.conditions[0].Type'), invalid('metadata.conditions[0].Type')]);
    assert.deepEqual(
      r.json().details.causes.map((c: { message: string }) => c.message),
      ['Invalid value: "": name part must be non-empty', `Invalid value: "": ${qualifiedNameMessage}`],
    );
  });

  it('refuses a Binding whose target name is not a string, as the decoder does', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'exists' }, target: { name: 5 } });
    const r = await req({ method: 'POST', path: `${pods}/exists/binding`, body });
    assert.equal(r.code, 400, r.body);
    assert.equal(r.json().reason, 'BadRequest');
    assert.equal(
      r.json().message,
      'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal number into Go struct field ObjectReference.target.name of type string',
    );
  });

  it('refuses an Eviction whose deleteOptions.dryRun is not a list', async () => {
    const body = JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'exists' }, deleteOptions: { dryRun: 5 } });
    const r = await req({ method: 'POST', path: `${pods}/exists/eviction`, body });
    assert.equal(r.code, 400, r.body);
    assert.match(r.json().message, /^Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal number into Go struct field DeleteOptions\.deleteOptions\.dryRun of type \[\]string$/);
  });

  it('refuses a Binding without a target name or with another name, as BindingREST does', async () => {
    const noTarget = JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'exists' }, target: { kind: 'Pod' } });
    const r = await req({ method: 'POST', path: `${pods}/exists/binding`, body: noTarget });
    assertInvalid(r, '', 'Binding', 'exists', [{ reason: 'FieldValueNotSupported', field: 'target.kind' }, required('target.name')]);
    assert.equal(r.json().message, 'Binding "exists" is invalid: [target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]');
    // Upstream compares the names as they are: a Binding without one does not name the pod of the URL.
    const unnamed = await req({ method: 'POST', path: `${pods}/exists/binding`, body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', target: { name: 'n1' } }) });
    assert.equal(unnamed.code, 400, unnamed.body);
    assert.equal(unnamed.json().message, 'name in URL does not match name in Binding object');
  });

  it('type-checks DeleteOptions bodies as the decoder does, and reads nulls as absent', async () => {
    const configmaps = '/api/v1/namespaces/default/configmaps';
    assert.equal((await req({ method: 'POST', path: configmaps, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'del' } }) })).code, 201);
    for (const [target, field, type] of [
      [`${configmaps}/del`, 'preconditions', 'v1.Preconditions'],
      [configmaps, 'preconditions', 'v1.Preconditions'],
      [`${configmaps}/del`, 'orphanDependents', 'bool'],
    ]) {
      const value = field === 'preconditions' ? '"x"' : '"yes"';
      const r = await req({ method: 'DELETE', path: target, body: `{"${field}":${value}}` });
      assert.equal(r.code, 400, r.body);
      assert.equal(r.json().message, `DeleteOptions in version "v1" cannot be handled as a DeleteOptions: json: cannot unmarshal string into Go struct field DeleteOptions.${field} of type ${type}`);
    }
    const dry = await req({ method: 'DELETE', path: `${configmaps}/del`, body: '{"dryRun":[null]}' });
    assertInvalid(dry, 'meta.k8s.io', 'DeleteOptions', '', [{ reason: 'FieldValueNotSupported', field: 'dryRun' }]);
    assert.equal(dry.json().message, 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{""}: supported values: "All"');
    assert.equal((await req({ path: `${configmaps}/del` })).code, 200);
    const deleted = await req({ method: 'DELETE', path: `${configmaps}/del`, body: '{"gracePeriodSeconds":null,"preconditions":null,"propagationPolicy":null}' });
    assert.equal(deleted.code, 200, deleted.body);
    assert.equal((await req({ path: `${configmaps}/del` })).code, 404);
  });

  it('kept the pod as it was and wrote nothing for the refused requests', async () => {
    const got = (await req({ path: `${pods}/exists` })).json();
    assert.deepEqual(got.spec.containers.map((c: { name: string }) => c.name), ['c']);
    assert.equal(got.spec.nodeName, undefined);
    const names = (await req({ path: pods })).json().items.map((p: { metadata: { name: string } }) => p.metadata.name).sort();
    assert.deepEqual(names, ['exists', 'nullq']);
  });

  // The sim runs last: its nodes would get the pods above scheduled onto them.
  it('kite sim names the nodes of a template without metadata.name sim-<index>', async () => {
    const file = join(templates, 'unnamed.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: Node\nmetadata:\n  labels:\n    type: kwok\nstatus:\n  capacity: {cpu: "4", memory: 8Gi, pods: "110"}\n');
    const sim = await startSim(server, 2, { nodeTemplate: file, timeoutMs: 60_000 });
    try {
      const names = (await req({ path: '/api/v1/nodes?labelSelector=type%3Dkwok' })).json().items.map((n: { metadata: { name: string } }) => n.metadata.name).sort();
      assert.deepEqual(names, ['sim-0', 'sim-1']);
    } finally {
      await sim.stop();
    }
  });

  it('kite reports each user error in one line and exits 1', () => {
    const misnamed = join(templates, 'misnamed.yaml');
    writeFileSync(misnamed, 'kind: Node\nmetadata:\n  name: worker\n');
    const broken = join(templates, 'broken.yaml');
    writeFileSync(broken, 'kind: Node\nmetadata: {name: [\n');
    const sim = ['sim', '--kubeconfig', server.kubeconfig, '--nodes', '1', '--node-template'];
    const cases: [string[], RegExp][] = [
      [[...sim, misnamed], /^error: the node template names node 0 "worker": nodes are named sim-<index>; leave metadata\.name out or use "\{\{ \.name \}\}"\n$/],
      [[...sim, join(templates, 'missing.yaml')], /^error: ENOENT: no such file or directory, open '.*missing\.yaml'\n$/],
      [[...sim, broken], /^error: [^\n]+\n$/],
      [['sim', '--nodes', '1'], /^error: --kubeconfig is required\n$/],
      [['sim', '--kubeconfig'], /^error: flag --kubeconfig needs a value\n$/],
      [['bogus'], /^error: unknown command "bogus" \(kite help lists the commands\)\n$/],
    ];
    for (const [args, want] of cases) {
      const r = kite(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, want, args.join(' '));
    }
  });
});
