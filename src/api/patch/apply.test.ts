import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { schemaForKind } from '../schema.js';
import { StatusError } from '../errors.js';
import { applyPatch, lastAppliedAnnotation, managerFromUserAgent, managerOrUserAgent, updateManagedFields, validatePatchOptions, type ResetFields } from './apply.js';
import type { JsonObject } from './json.js';

const schema = schemaForKind('', 'v1', 'Pod');
const resetFields: ResetFields = [['status']];
const t0 = '2026-01-01T00:00:00Z';
const t1 = '2026-01-01T00:01:00Z';
const t2 = '2026-01-01T00:02:00Z';

interface PodOpts {
  labels?: Record<string, string>;
  image?: string;
  containers?: JsonObject[];
}
const manifest = (o: PodOpts = {}): JsonObject => {
  const metadata: JsonObject = { name: 'web', namespace: 'default' };
  if (o.labels) metadata.labels = o.labels;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: o.containers ?? [{ name: 'nginx', image: o.image ?? 'nginx:1.27' }] } };
};

const apply = (live: JsonObject | undefined, applied: JsonObject, manager = 'kubectl', force = false, now = t1) =>
  applyPatch(live, applied, { manager, force, apiVersion: 'v1', now, schema, resetFields });
const write = (old: JsonObject | undefined, updated: JsonObject, manager: string, now = t0, subresource?: string) =>
  updateManagedFields(old, structuredClone(updated), { manager, apiVersion: 'v1', now, schema, resetFields, subresource });

const fieldsOf = (obj: JsonObject) =>
  Object.fromEntries(((obj.metadata as JsonObject).managedFields as JsonObject[] ?? []).map((e) => [`${e.manager}/${e.operation}`, e.fieldsV1]));
const conflictOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof StatusError);
    return err.toStatus();
  }
  assert.fail('expected a conflict');
};

const nginx = (fields: JsonObject) => ({ 'k:{"name":"nginx"}': { '.': {}, 'f:name': {}, ...fields } });

void describe('updateManagedFields', () => {
  void it('records a create as upstream does: maps and list items marked, struct fields and reset fields not', () => {
    const obj = manifest({ labels: { app: 'web' } });
    (obj.metadata as JsonObject).annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}\n' };
    obj.status = { phase: 'Pending' };
    const { object, managedFields } = write(undefined, obj, 'kubectl-client-side-apply');
    assert.deepEqual(managedFields, [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: t0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': {
            'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} },
            'f:labels': { '.': {}, 'f:app': {} },
          },
          'f:spec': { 'f:containers': { '.': {}, ...nginx({ 'f:image': {} }) } },
        },
      },
    ]);
    assert.deepEqual((object.metadata as JsonObject).managedFields, managedFields);
    assert.equal((object.status as JsonObject).phase, 'Pending', 'the object itself is unchanged');
  });

  void it('takes changed fields from other managers and merges into its own entry', () => {
    const created = write(undefined, manifest({ labels: { app: 'web' } }), 'creator').object;
    const changed = structuredClone(created);
    ((changed.metadata as JsonObject).labels as JsonObject).app = 'web2';
    ((changed.metadata as JsonObject).labels as JsonObject).extra = 'x';
    const { object } = write(created, changed, 'editor', t1);
    const f = fieldsOf(object);
    assert.deepEqual(f['editor/Update'], { 'f:metadata': { 'f:labels': { 'f:app': {}, 'f:extra': {} } } });
    assert.deepEqual((f['creator/Update'] as JsonObject)['f:metadata'], { 'f:labels': {} }, 'the map itself stays owned');
  });

  void it('an unchanged write adds no entry', () => {
    const created = write(undefined, manifest(), 'creator').object;
    const { managedFields } = write(created, created, 'noop', t1);
    assert.deepEqual(managedFields.map((m) => m.manager), ['creator']);
  });

  void it('managedFields: [] in the request clears the entries (main resource only)', () => {
    const created = write(undefined, manifest(), 'creator').object;
    const cleared = structuredClone(created);
    (cleared.metadata as JsonObject).managedFields = [];
    assert.equal((write(created, cleared, 'x', t1).object.metadata as JsonObject).managedFields, undefined);
    const viaStatus = write(created, cleared, 'kubelet', t1, 'status');
    assert.deepEqual(viaStatus.managedFields.map((m) => m.manager), ['creator'], 'a subresource keeps the live entries');
  });

  void it('caps Update entries at 10, merging the oldest into ancient-changes', () => {
    let obj = write(undefined, manifest(), 'm00', '2026-01-01T00:00:00Z').object;
    for (let i = 1; i <= 11; i++) {
      const next = structuredClone(obj);
      (next.metadata as JsonObject).labels = { ...((next.metadata as JsonObject).labels as JsonObject), [`l${i}`]: 'x' };
      obj = write(obj, next, `m${String(i).padStart(2, '0')}`, `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`).object;
    }
    const entries = (obj.metadata as JsonObject).managedFields as JsonObject[];
    assert.equal(entries.length, 10);
    assert.deepEqual(entries.map((e) => e.manager), ['ancient-changes', ...Array.from({ length: 9 }, (_, i) => `m${String(i + 3).padStart(2, '0')}`)]);
    const ancient = entries[0]!.fieldsV1 as JsonObject;
    assert.ok(((ancient['f:metadata'] as JsonObject)['f:labels'] as JsonObject)['f:l1'], 'the bucket has the merged fields');
    assert.ok(ancient['f:spec'], 'including the first entry of that version');
    assert.equal(entries[0]!.time, '2026-01-01T00:00:02Z');
  });

  void it('a status write records its subresource', () => {
    const created = write(undefined, manifest(), 'creator').object;
    const withStatus = { ...structuredClone(created), status: { phase: 'Running' } };
    const { managedFields } = updateManagedFields(created, withStatus, { manager: 'kubelet', apiVersion: 'v1', now: t1, schema, subresource: 'status' });
    assert.deepEqual(managedFields[1], {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: t1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:phase': {} } },
      subresource: 'status',
    });
  });
});

void describe('updateManagedFields reuses stored FieldsV1', () => {
  const entriesOf = (obj: JsonObject) => new Map(((obj.metadata as JsonObject).managedFields as JsonObject[]).map((e) => [e.manager, e]));
  const withLabel = (obj: JsonObject, value: string) => {
    const next = structuredClone(obj);
    (next.metadata as JsonObject).labels = { app: value };
    return next;
  };
  const created = write(undefined, manifest({ labels: { app: 'a' } }), 'creator').object;
  const relabelled = write(created, withLabel(created, 'b'), 'labeller', t1).object;

  void it('an untouched manager keeps its entry\'s FieldsV1 object; one whose fields were taken is encoded anew', () => {
    const withStatus = { ...structuredClone(relabelled), status: { phase: 'Running' } };
    const { object } = write(relabelled, withStatus, 'kubelet', t2, 'status');
    const before = entriesOf(relabelled);
    const after = entriesOf(object);
    assert.equal(after.get('creator')!.fieldsV1, before.get('creator')!.fieldsV1);
    assert.equal(after.get('labeller')!.fieldsV1, before.get('labeller')!.fieldsV1);

    const retaken = entriesOf(write(relabelled, withLabel(relabelled, 'c'), 'creator', t2).object);
    assert.notEqual(retaken.get('creator')!.fieldsV1, before.get('creator')!.fieldsV1);
    assert.ok(((retaken.get('creator')!.fieldsV1 as JsonObject)['f:metadata'] as JsonObject)['f:labels'], 'the creator owns the label again');
    assert.equal(retaken.has('labeller'), false, 'the labeller lost its only field');
  });

  void it('a writer rewriting the fields it owns keeps its FieldsV1 object and moves its time', () => {
    const withPhase = (obj: JsonObject, phase: string) => ({ ...structuredClone(obj), status: { phase } });
    const statusWrite = (old: JsonObject, updated: JsonObject, now: string) =>
      updateManagedFields(old, updated, { manager: 'kubelet', apiVersion: 'v1', now, schema, subresource: 'status', resetFields: [['spec']] }).object;
    const running = statusWrite(relabelled, withPhase(relabelled, 'Running'), t1);
    const again = entriesOf(statusWrite(running, withPhase(running, 'Succeeded'), t2)).get('kubelet')!;
    assert.equal(again.fieldsV1, entriesOf(running).get('kubelet')!.fieldsV1);
    assert.equal(again.time, t2);
  });

  void it('a stored or requested entry not in canonical form is normalised', () => {
    const messy = structuredClone(relabelled);
    const entries = (messy.metadata as JsonObject).managedFields as JsonObject[];
    // Elements out of order, a "." not leading, and a leaf spelled {".": {}}.
    entries.find((e) => e.manager === 'creator')!.fieldsV1 = { 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { 'f:name': {}, '.': {}, 'f:image': {} } } }, 'f:metadata': { 'f:labels': { '.': {} } } };
    const want = { 'f:metadata': { 'f:labels': {} }, 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } };
    const withStatus = { ...structuredClone(messy), status: { phase: 'Running' } };
    const stored = entriesOf(write(messy, withStatus, 'kubelet', t2, 'status').object).get('creator')!.fieldsV1;
    assert.equal(JSON.stringify(stored), JSON.stringify(want));
    const requested = entriesOf(write(relabelled, withLabel(messy, 'e'), 'labeller', t2).object).get('creator')!.fieldsV1;
    assert.equal(JSON.stringify(requested), JSON.stringify(want));
  });
});

void describe('applyPatch', () => {
  void it('creates an object and owns exactly the applied fields', () => {
    const { object, managedFields } = apply(undefined, manifest({ labels: { app: 'web' } }));
    assert.deepEqual(managedFields, [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: t1,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:containers': nginx({ 'f:image': {} }) } },
      },
    ]);
    assert.deepEqual({ ...object, metadata: { ...(object.metadata as JsonObject), managedFields: undefined } }, {
      ...manifest({ labels: { app: 'web' } }),
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, managedFields: undefined },
    });
  });

  void it('conflicts with a client-side-apply owner, worded as upstream', () => {
    const live = write(undefined, manifest({ labels: { app: 'web' } }), 'kubectl-client-side-apply').object;
    assert.deepEqual(conflictOf(() => apply(live, manifest({ labels: { app: 'web2' } }))), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .metadata.labels.app',
      reason: 'Conflict',
      details: {
        causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using v1', field: '.metadata.labels.app' }],
      },
      code: 409,
    });
  });

  void it('lists several conflicts grouped by manager', () => {
    const live = write(undefined, manifest({ labels: { app: 'web' } }), 'editor').object;
    const status = conflictOf(() => apply(live, manifest({ labels: { app: 'x' }, image: 'nginx:1.28' })));
    assert.equal(
      status.message,
      'Apply failed with 2 conflicts: conflicts with "editor" using v1:\n- .metadata.labels.app\n- .spec.containers[name="nginx"].image',
    );
    assert.deepEqual(status.details?.causes?.map((c) => c.field), ['.metadata.labels.app', '.spec.containers[name="nginx"].image']);
  });

  void it('applying the value another manager set is no conflict: both own it', () => {
    const live = write(undefined, manifest({ labels: { app: 'web' } }), 'editor').object;
    const f = fieldsOf(apply(live, manifest({ labels: { app: 'web' } })).object);
    assert.deepEqual((f['kubectl/Apply'] as JsonObject)['f:metadata'], { 'f:labels': { 'f:app': {} } });
    assert.deepEqual((f['editor/Update'] as JsonObject)['f:metadata'], { 'f:labels': { '.': {}, 'f:app': {} } });
  });

  void it('force takes ownership from the other manager', () => {
    const live = write(undefined, manifest({ labels: { app: 'web', keep: 'me' } }), 'editor').object;
    const { object } = apply(live, manifest({ labels: { app: 'web2' } }), 'kubectl', true);
    assert.deepEqual((object.metadata as JsonObject).labels, { app: 'web2', keep: 'me' });
    const f = fieldsOf(object);
    assert.deepEqual((f['editor/Update'] as JsonObject)['f:metadata'], { 'f:labels': { '.': {}, 'f:keep': {} } });
    assert.deepEqual((f['kubectl/Apply'] as JsonObject)['f:metadata'], { 'f:labels': { 'f:app': {} } });
  });

  void it('fields the applier stops applying are removed when no one else owns them', () => {
    const first = apply(undefined, manifest({ labels: { a: '1', b: '2' } })).object;
    const second = apply(first, manifest({ labels: { a: '1' } }), 'kubectl', false, t2).object;
    assert.deepEqual((second.metadata as JsonObject).labels, { a: '1' });
    const third = apply(second, manifest({}), 'kubectl', false, t2).object;
    assert.equal((third.metadata as JsonObject).labels, undefined, 'an emptied map goes away');
  });

  void it('a field another manager also owns survives the applier dropping it', () => {
    const first = apply(undefined, manifest({ labels: { a: '1', b: '2' } })).object;
    const shared = apply(first, manifest({ labels: { b: '2' } }), 'other').object;
    const dropped = apply(shared, manifest({ labels: { a: '1' } }), 'kubectl', false, t2).object;
    assert.deepEqual((dropped.metadata as JsonObject).labels, { a: '1', b: '2' });
    assert.deepEqual(fieldsOf(dropped)['other/Apply'], { 'f:metadata': { 'f:labels': { 'f:b': {} } }, 'f:spec': { 'f:containers': nginx({ 'f:image': {} }) } });
  });

  void it('list items merge by key and a dropped item is removed', () => {
    const two = [{ name: 'nginx', image: 'nginx:1.27' }, { name: 'sidecar', image: 'busybox' }];
    const first = apply(undefined, manifest({ containers: two })).object;
    const second = apply(first, manifest({ containers: [{ name: 'nginx', image: 'nginx:1.28' }] }), 'kubectl', false, t2).object;
    assert.deepEqual((second.spec as JsonObject).containers, [{ name: 'nginx', image: 'nginx:1.28' }]);
  });

  void it('merged lists follow the applied order, live-only items keep their place', () => {
    const c = (name: string) => ({ name, image: name });
    const live = write(undefined, manifest({ containers: [c('a'), c('b'), c('c')] }), 'editor').object;
    const { object } = apply(live, manifest({ containers: [c('c'), c('a')] }));
    assert.deepEqual(((object.spec as JsonObject).containers as JsonObject[]).map((x) => x.name), ['b', 'c', 'a']);
    const swapped = apply(live, manifest({ containers: [c('c'), c('b'), c('a'), c('d')] })).object;
    assert.deepEqual(((swapped.spec as JsonObject).containers as JsonObject[]).map((x) => x.name), ['c', 'b', 'a', 'd']);
  });

  void it('another updater keeps a list item alive and the applier merges into it', () => {
    const first = apply(undefined, manifest()).object;
    const edited = structuredClone(first);
    ((edited.spec as JsonObject).containers as JsonObject[])[0]!.imagePullPolicy = 'Always';
    const updated = write(first, edited, 'editor', t1).object;
    const reapplied = apply(updated, manifest({ image: 'nginx:1.28' }), 'kubectl', false, t2).object;
    assert.deepEqual((reapplied.spec as JsonObject).containers, [{ name: 'nginx', image: 'nginx:1.28', imagePullPolicy: 'Always' }]);
  });

  void it('an updater that changed an applied field makes the next apply conflict', () => {
    const first = apply(undefined, manifest()).object;
    const edited = structuredClone(first);
    ((edited.spec as JsonObject).containers as JsonObject[])[0]!.image = 'nginx:patched';
    const updated = write(first, edited, 'kubectl-patch', t1).object;
    assert.deepEqual(fieldsOf(updated)['kubectl/Apply'], { 'f:spec': { 'f:containers': nginx({}) } }, 'the applier lost the image');
    const status = conflictOf(() => apply(updated, manifest({ image: 'nginx:1.27' }), 'kubectl', false, t2));
    assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .spec.containers[name="nginx"].image');
  });

  void it('a no-op apply keeps the object and the entry time', () => {
    const first = apply(undefined, manifest()).object;
    const again = apply(first, manifest(), 'kubectl', false, t2);
    assert.equal(again.managedFields[0]!.time, t1);
    assert.deepEqual(again.object, first);
  });

  void it('applied null owns the field and leaves it unset', () => {
    const applied = manifest();
    (applied.spec as JsonObject).nodeName = null;
    const { object, managedFields } = apply(undefined, applied);
    assert.equal((object.spec as JsonObject).nodeName, undefined);
    assert.ok(((managedFields[0]!.fieldsV1 as JsonObject)['f:spec'] as JsonObject)['f:nodeName']);
  });

  void it('the applier does not conflict with its own earlier apply', () => {
    const first = apply(undefined, manifest({ labels: { app: 'a' } })).object;
    const second = apply(first, manifest({ labels: { app: 'b' } }), 'kubectl', false, t2).object;
    assert.deepEqual((second.metadata as JsonObject).labels, { app: 'b' });
    assert.equal(((second.metadata as JsonObject).managedFields as JsonObject[])[0]!.time, t2);
  });

  it('a port without protocol is keyed with its TCP default, so a defaulted live port matches', () => {
    const applied = manifest({ containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }] });
    const created = apply(undefined, applied).object;
    const ports = ((created.spec as JsonObject).containers as JsonObject[])[0]!.ports as JsonObject[];
    ports[0]!.protocol = 'TCP'; // what defaulting does after the apply
    const again = apply(created, applied, 'kubectl', false, t2);
    assert.deepEqual(((again.object.spec as JsonObject).containers as JsonObject[])[0]!.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    const owned = (((again.managedFields[0]!.fieldsV1 as JsonObject)['f:spec'] as JsonObject)['f:containers'] as JsonObject)['k:{"name":"nginx"}'] as JsonObject;
    assert.deepEqual(Object.keys(owned['f:ports'] as JsonObject), ['k:{"containerPort":80,"protocol":"TCP"}']);
  });

  it('the first apply to an untracked object conflicts with "before-first-apply"', () => {
    const status = conflictOf(() => apply(manifest({ labels: { app: 'web' } }), manifest({ labels: { app: 'x' } })));
    assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .metadata.labels.app');
  });

  describe('upgrading from client-side apply', () => {
    const lastApplied = (o: JsonObject) => JSON.stringify(o) + '\n';
    const csaCreated = () => {
      const obj = manifest({ labels: { app: 'web' } });
      (obj.metadata as JsonObject).annotations = { [lastAppliedAnnotation]: lastApplied(manifest({ labels: { app: 'web' } })) };
      return write(undefined, obj, 'kubectl-client-side-apply').object;
    };

    void it('the kubectl manager takes fields the annotation still matches, and rewrites the annotation', () => {
      const { object } = apply(csaCreated(), manifest({ labels: { app: 'web2' } }));
      const metadata = object.metadata as JsonObject;
      assert.deepEqual(metadata.labels, { app: 'web2' });
      const annotation = (metadata.annotations as JsonObject)[lastAppliedAnnotation] as string;
      assert.equal(
        annotation,
        '{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"app":"web2"},"name":"web","namespace":"default"},"spec":{"containers":[{"image":"nginx:1.27","name":"nginx"}]}}\n',
      );
      assert.deepEqual(fieldsOf(object)['kubectl-client-side-apply/Update'], {
        'f:metadata': { 'f:annotations': { '.': {}, [`f:${lastAppliedAnnotation}`]: {} }, 'f:labels': {} },
        'f:spec': { 'f:containers': { '.': {}, ...nginx({ 'f:image': {} }) } },
      });
    });

    void it('another manager still conflicts', () => {
      const status = conflictOf(() => apply(csaCreated(), manifest({ labels: { app: 'web2' } }), 'my-tool'));
      assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .metadata.labels.app');
    });

    void it('a field changed since the last client-side apply still conflicts', () => {
      const live = csaCreated();
      const edited = structuredClone(live);
      ((edited.metadata as JsonObject).labels as JsonObject).app = 'hand-edited';
      const updated = write(live, edited, 'kubectl-client-side-apply', t1).object;
      const status = conflictOf(() => apply(updated, manifest({ labels: { app: 'web2' } })));
      assert.equal(status.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .metadata.labels.app');
    });
  });

  const refusals: { name: string; body: JsonObject; message: string }[] = [
    { name: 'a body of another version', body: { ...manifest(), apiVersion: 'v2' }, message: 'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1' },
    { name: 'a body without apiVersion', body: { kind: 'Pod', metadata: { name: 'web' } }, message: 'Incorrect version specified in apply patch. Specified patch version: , expected: v1' },
    { name: 'a body carrying managedFields', body: { ...manifest(), metadata: { name: 'web', managedFields: [] } }, message: 'metadata.managedFields must be nil' },
  ];
  for (const r of refusals) {
    void it(`refuses ${r.name} with 400`, () => {
      assert.throws(() => apply(undefined, r.body), (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === r.message);
    });
  }
  const wrongType: [string, JsonObject, string][] = [
    ['kind', { ...manifest(), kind: 'Service' }, 'invalid object type: /v1, Kind=Service'],
    ['group and version', { ...manifest(), apiVersion: 'apps/v1' }, 'invalid object type: apps/v1, Kind=Pod'],
  ];
  for (const [what, body, message] of wrongType) {
    void it(`refuses a body of another ${what} when the kind is known`, () => {
      const opts = { manager: 'kubectl', force: false, apiVersion: 'v1', kind: 'Pod', now: t1, schema };
      assert.throws(() => applyPatch(undefined, body, opts), (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === message);
    });
  }
});

void describe('field manager names', () => {
  const agents: [string, string][] = [
    ['kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07', 'kubectl'],
    ['kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:x', 'kube-controller-manager'],
    ['curl', 'curl'],
    ['bad\u0007name/1', 'badname'],
    ['', ''],
    ['x'.repeat(200), 'x'.repeat(128)],
  ];
  for (const [agent, want] of agents) {
    void it(`User-Agent ${JSON.stringify(agent.slice(0, 40))} → ${JSON.stringify(want.slice(0, 20))}`, () => assert.equal(managerFromUserAgent(agent), want));
  }
  void it('an explicit fieldManager wins', () => assert.equal(managerOrUserAgent('kubectl-label', 'kubectl/v1.33'), 'kubectl-label'));

  const options: { name: string; isApply: boolean; opts: { fieldManager?: string; force?: boolean }; message?: string }[] = [
    { name: 'apply without fieldManager', isApply: true, opts: {}, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' },
    { name: 'force on a merge patch', isApply: false, opts: { force: false }, message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch' },
    { name: 'a non-printable manager', isApply: false, opts: { fieldManager: 'a\u0001' }, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\u0001": invalid character U+0001 (at position 1)' },
    { name: 'a byte offset after multi-byte text', isApply: false, opts: { fieldManager: 'é\u0002' }, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "é\\u0002": invalid character U+0002 (at position 2)' },
    { name: 'a name over 128 bytes', isApply: true, opts: { fieldManager: 'm'.repeat(129) }, message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes' },
    { name: 'apply with a manager', isApply: true, opts: { fieldManager: 'kubectl', force: true } },
    { name: 'merge patch without options', isApply: false, opts: {} },
  ];
  for (const c of options) {
    void it(`validatePatchOptions: ${c.name}`, () => {
      const err = validatePatchOptions(c.isApply, c.opts);
      assert.equal(err?.message, c.message);
      if (err) assert.equal(err.code, 422);
    });
  }
});
