import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { PriorityClass } from '../../../api/types.js';
import { admissionAttributes, admitNamingChanges, fakeLookups, forbiddenMessage } from '../testing.js';
import { findResource } from '../../../api/resources.js';
import type { AdmissionAttributes, AdmissionOperation } from '../interface.js';
import { PriorityAdmission, systemPriorityClassObjects } from './priority.js';

const pc = (name: string, value: number, extra: Partial<PriorityClass> = {}): PriorityClass => ({ metadata: { name }, value, ...extra });

function plugin(classes: PriorityClass[]): PriorityAdmission {
  return new PriorityAdmission({ lookups: fakeLookups({ 'priorityclasses.scheduling.k8s.io': classes }) });
}

function podAttrs(spec: object, operation: AdmissionOperation = 'CREATE', oldSpec?: object): AdmissionAttributes {
  const oldObject = oldSpec ? { metadata: { name: 'web' }, spec: oldSpec } : undefined;
  return admissionAttributes('', 'v1', 'pods', { operation, namespace: 'd', object: { metadata: { name: 'web' }, spec: { ...spec } }, oldObject });
}


test('resolves priority and preemption policy on create', async () => {
  const classes = [pc('high', 1000, { preemptionPolicy: 'Never' }), pc('low', 10, { globalDefault: true, preemptionPolicy: 'PreemptLowerPriority' })];
  const cases: [string, PriorityClass[], object, object][] = [
    ['named class', classes, { priorityClassName: 'high' }, { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' }],
    ['global default', classes, {}, { priorityClassName: 'low', priority: 10, preemptionPolicy: 'PreemptLowerPriority' }],
    ['no default class', [], {}, { priority: 0, preemptionPolicy: 'PreemptLowerPriority' }],
    ['system class before it is stored', [], { priorityClassName: 'system-node-critical' }, { priorityClassName: 'system-node-critical', priority: 2000001000, preemptionPolicy: 'PreemptLowerPriority' }],
    ['matching priority given', classes, { priorityClassName: 'high', priority: 1000 }, { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' }],
  ];
  for (const [name, cls, spec, want] of cases) {
    const a = podAttrs(spec);
    await plugin(cls).admit(a);
    assert.deepEqual(a.object!.spec, want, name);
  }
});

test('refusals worded as upstream', async () => {
  const classes = [pc('high', 1000, { preemptionPolicy: 'Never' })];
  assert.equal(await forbiddenMessage(plugin(classes).admit(podAttrs({ priorityClassName: 'nope' }))), 'pods "web" is forbidden: no PriorityClass with name nope was found');
  assert.equal(
    await forbiddenMessage(plugin(classes).admit(podAttrs({ priorityClassName: 'high', priority: 5 }))),
    'pods "web" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name',
  );
  assert.equal(
    await forbiddenMessage(plugin(classes).admit(podAttrs({ priorityClassName: 'high', preemptionPolicy: 'PreemptLowerPriority' }))),
    'pods "web" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
  );
});

test('updates keep the stored priority', async () => {
  const a = podAttrs({ priorityClassName: 'high' }, 'UPDATE', { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
  await plugin([]).admit(a);
  assert.deepEqual(a.object!.spec, { priorityClassName: 'high', priority: 1000, preemptionPolicy: 'Never' });
});

test('only one global default class', async () => {
  const existing = [pc('low', 10, { globalDefault: true })];
  const attrs = (operation: AdmissionOperation, obj: PriorityClass): AdmissionAttributes => ({
    operation,
    resource: findResource('scheduling.k8s.io', 'v1', 'priorityclasses')!,
    subresource: '',
    namespace: '',
    name: obj.metadata!.name!,
    object: { ...obj },
    user: { name: 'u', groups: [] },
    dryRun: false,
  });
  const p = plugin(existing);
  assert.equal(
    await forbiddenMessage(p.validate(attrs('CREATE', pc('other', 5, { globalDefault: true })))),
    'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist',
  );
  await p.validate(attrs('UPDATE', pc('low', 10, { globalDefault: true })));
  await p.validate(attrs('CREATE', pc('plain', 5)));
});

test('system classes as the server creates them', () => {
  assert.deepEqual(
    systemPriorityClassObjects().map((c) => [c.metadata?.name, c.value]),
    [['system-node-critical', 2000001000], ['system-cluster-critical', 2000000000]],
  );
});

test('names what it sets, for the pod timeline', async () => {
  const classes = [pc('high', 1000, { preemptionPolicy: 'Never' }), pc('low', 10, { globalDefault: true, preemptionPolicy: 'PreemptLowerPriority' })];
  const cases: [string, PriorityClass[], AdmissionAttributes, string[]][] = [
    ['global default', classes, podAttrs({}), ['spec.priorityClassName', 'spec.priority', 'spec.preemptionPolicy']],
    ['named class, priority given', classes, podAttrs({ priorityClassName: 'high', priority: 1000 }), ['spec.preemptionPolicy']],
    ['empty class name, no default', [], podAttrs({ priorityClassName: '' }), ['spec.priorityClassName', 'spec.priority', 'spec.preemptionPolicy']],
    ['update keeping the stored priority', classes, podAttrs({}, 'UPDATE', { priority: 10, preemptionPolicy: 'Never' }), ['spec.priority', 'spec.preemptionPolicy']],
    ['update with both given', classes, podAttrs({ priority: 10, preemptionPolicy: 'Never' }, 'UPDATE', { priority: 10, preemptionPolicy: 'Never' }), []],
  ];
  for (const [name, cls, a, want] of cases) assert.deepEqual(await admitNamingChanges(plugin(cls), a), want, name);
});
