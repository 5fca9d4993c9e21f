// Validation of DaemonSet, StatefulSet, ControllerRevision, ReplicationController and PodTemplate, on defaulted objects as the API server validates them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { applyDefaults } from '../defaults/index.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';

type Obj = Record<string, any>;

const messages = (errs: ReturnType<typeof validateCreate>) => errs.map(fieldErrorMessage);

function make(group: string, kind: string, obj: Obj, mutate: (o: Obj) => void = () => {}): Obj {
  applyDefaults(group, kind, obj);
  mutate(obj);
  return obj;
}

const template = () => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });
const meta = (name = 'web') => ({ name, namespace: 'default', uid: 'u', resourceVersion: '1' });
const ds = (m?: (o: Obj) => void) => make('apps', 'DaemonSet', { metadata: meta(), spec: { selector: { matchLabels: { app: 'web' } }, template: template() } }, m);
const sts = (m?: (o: Obj) => void) =>
  make('apps', 'StatefulSet', { metadata: meta(), spec: { serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template: template() } }, m);
const rc = (m?: (o: Obj) => void) => make('', 'ReplicationController', { metadata: meta(), spec: { template: template() } }, m);

test('a defaulted minimal object of each workload kind is valid', () => {
  assert.deepEqual(messages(validateCreate('apps', 'DaemonSet', ds())), []);
  assert.deepEqual(messages(validateCreate('apps', 'StatefulSet', sts())), []);
  assert.deepEqual(messages(validateCreate('', 'ReplicationController', rc())), []);
  assert.deepEqual(messages(validateCreate('', 'PodTemplate', make('', 'PodTemplate', { metadata: meta(), template: template() }))), []);
  assert.deepEqual(messages(validateCreate('apps', 'ControllerRevision', { metadata: meta(), data: { spec: {} }, revision: 1 })), []);
});

test('DaemonSet create errors', () => {
  const cases: [string, (o: Obj) => void, string[]][] = [
    ['selector mismatch', (o) => (o.spec.selector.matchLabels.app = 'db'), ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`']],
    [
      'no selector',
      (o) => delete o.spec.selector,
      ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`'],
    ],
    ['restart policy', (o) => (o.spec.template.spec.restartPolicy = 'Never'), ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"']],
    ['deadline', (o) => (o.spec.template.spec.activeDeadlineSeconds = 5), ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported']],
    ['no containers', (o) => (o.spec.template.spec.containers = []), ['spec.template.spec.containers: Required value']],
    ['surge and unavailable', (o) => (o.spec.updateStrategy.rollingUpdate.maxSurge = 1), ['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero']],
    [
      'both zero',
      (o) => (o.spec.updateStrategy.rollingUpdate.maxUnavailable = 0),
      ['spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0'],
    ],
    [
      'over 100%',
      (o) => (o.spec.updateStrategy.rollingUpdate.maxUnavailable = '150%'),
      ['spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 150%: must not be greater than 100%'],
    ],
    [
      'strategy type',
      (o) => (o.spec.updateStrategy = { type: 'Sometimes' }),
      ['spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"'],
    ],
    ['history', (o) => (o.spec.revisionHistoryLimit = -1), ['spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0']],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual(messages(validateCreate('apps', 'DaemonSet', ds(mutate))), want, name);
});

test('DaemonSet updates: the selector is immutable; status counts non-negative', () => {
  const old = ds();
  const changed = ds((o) => {
    o.spec.selector.matchLabels = { app: 'web', tier: 'x' };
    o.spec.template.metadata.labels.tier = 'x';
  });
  assert.deepEqual(messages(validateUpdate('apps', 'DaemonSet', changed, old)), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  ]);
  const st = ds((o) => (o.status = { numberReady: -1, collisionCount: 1 }));
  const stOld = ds((o) => (o.status = { collisionCount: 2 }));
  assert.deepEqual(messages(validateStatusUpdate('apps', 'DaemonSet', st, stOld)), [
    'status.numberReady: Invalid value: -1: must be greater than or equal to 0',
    'status.collisionCount: Invalid value: 1: cannot be decremented',
  ]);
});

test('StatefulSet create errors', () => {
  const cases: [string, (o: Obj) => void, string[]][] = [
    [
      'name is a DNS label',
      (o) => (o.metadata.name = 'web.v1'),
      ['metadata.name: Invalid value: "web.v1": must not contain dots'],
    ],
    ['pod management', (o) => (o.spec.podManagementPolicy = 'Random'), [`spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`]],
    [
      'strategy type',
      (o) => (o.spec.updateStrategy = { type: 'Sometimes' }),
      [`spec.updateStrategy: Invalid value: apps.StatefulSetUpdateStrategy{Type:"Sometimes", RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'`],
    ],
    [
      'OnDelete with rollingUpdate',
      (o) => (o.spec.updateStrategy = { type: 'OnDelete', rollingUpdate: { partition: 2 } }),
      [
        `spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'`,
      ],
    ],
    ['partition', (o) => (o.spec.updateStrategy.rollingUpdate.partition = -1), ['spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0']],
    [
      'retention',
      (o) => (o.spec.persistentVolumeClaimRetentionPolicy.whenScaled = 'Keep'),
      ['spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "Keep": supported values: "Retain", "Delete"'],
    ],
    ['ordinals', (o) => (o.spec.ordinals = { start: -1 }), ['spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0']],
    [
      'empty selector',
      (o) => (o.spec.selector = {}),
      ['spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset'],
    ],
    ['selector mismatch', (o) => (o.spec.selector.matchLabels.app = 'db'), ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`']],
    // As upstream, the pod spec itself is not validated here.
    ['no containers', (o) => (o.spec.template.spec.containers = []), []],
    ['deadline', (o) => (o.spec.template.spec.activeDeadlineSeconds = 5), ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported']],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual(messages(validateCreate('apps', 'StatefulSet', sts(mutate))), want, name);
});

test('StatefulSet updates: only the updatable fields may change', () => {
  const forbidden =
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
  const old = sts();
  const ok = sts((o) => {
    o.spec.replicas = 5;
    o.spec.template.spec.containers[0].image = 'nginx:2';
    o.spec.updateStrategy = { type: 'OnDelete' };
    o.spec.minReadySeconds = 3;
    o.spec.persistentVolumeClaimRetentionPolicy.whenDeleted = 'Delete';
  });
  assert.deepEqual(messages(validateUpdate('apps', 'StatefulSet', ok, old)), []);
  assert.deepEqual(messages(validateUpdate('apps', 'StatefulSet', sts((o) => (o.spec.serviceName = 'other')), old)), [forbidden]);
  assert.deepEqual(messages(validateUpdate('apps', 'StatefulSet', sts((o) => (o.spec.podManagementPolicy = 'Parallel')), old)), [forbidden]);
  const selector = sts((o) => {
    o.spec.selector.matchLabels = {};
    o.spec.selector.matchExpressions = [{ key: 'app', operator: 'Exists' }];
  });
  assert.deepEqual(messages(validateUpdate('apps', 'StatefulSet', selector, old)), [forbidden]);
  const st = sts((o) => (o.status = { replicas: 1, readyReplicas: 2, availableReplicas: 2 }));
  assert.deepEqual(messages(validateStatusUpdate('apps', 'StatefulSet', st, old)), [
    'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas',
  ]);
});

test('ReplicationController: defaults fill the selector; errors as upstream', () => {
  assert.deepEqual(rc().spec.selector, { app: 'web' });
  const cases: [string, (o: Obj) => void, string[]][] = [
    ['no template', (o) => delete o.spec.template, ['spec.template: Required value']],
    ['mismatch', (o) => (o.spec.selector = { app: 'db' }), ['spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`']],
    ['replicas', (o) => (o.spec.replicas = -2), ['spec.replicas: Invalid value: -2: must be greater than or equal to 0']],
    ['restart', (o) => (o.spec.template.spec.restartPolicy = 'OnFailure'), ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"']],
    ['deadline', (o) => (o.spec.template.spec.activeDeadlineSeconds = 1), ['spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported']],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual(messages(validateCreate('', 'ReplicationController', rc(mutate))), want, name);
  const noSelector = make('', 'ReplicationController', { metadata: meta(), spec: { template: { spec: template().spec } } });
  assert.deepEqual(messages(validateCreate('', 'ReplicationController', noSelector)), ['spec.selector: Required value']);
  // Unlike apps/v1, an RC's selector may change.
  const moved = rc((o) => {
    o.spec.selector = { app: 'web', v: '2' };
    o.spec.template.metadata.labels.v = '2';
  });
  assert.deepEqual(messages(validateUpdate('', 'ReplicationController', moved, rc())), []);
  const st = rc((o) => (o.status = { replicas: 1, fullyLabeledReplicas: 2 }));
  assert.deepEqual(messages(validateStatusUpdate('', 'ReplicationController', st, rc())), ['status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas']);
});

test('PodTemplate and ControllerRevision', () => {
  const pt = make('', 'PodTemplate', { metadata: meta(), template: { spec: { containers: [{ name: 'App', image: 'x' }] } } });
  assert.match(messages(validateCreate('', 'PodTemplate', pt))[0]!, /^template\.spec\.containers\[0\]\.name: Invalid value: "App"/);
  assert.deepEqual(messages(validateCreate('apps', 'ControllerRevision', { metadata: meta(), revision: -1 })), [
    'data: Required value: data is mandatory',
    'revision: Invalid value: -1: must be greater than or equal to 0',
  ]);
  const old = { metadata: meta(), data: { a: 1 }, revision: 1 };
  assert.deepEqual(messages(validateUpdate('apps', 'ControllerRevision', { metadata: meta(), data: { a: 1 }, revision: 2 }, old)), []);
  assert.equal(messages(validateUpdate('apps', 'ControllerRevision', { metadata: meta(), data: { a: 2 }, revision: 1 }, old)).length, 1);
});
