import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateMessage, fieldErrorMessage } from '../field.js';
import { defaultPodTemplate } from '../defaults/podspec.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';
import { validateIndexesFormat } from './batch.js';

type Obj = Record<string, any>;
const uid = '1a2b3c';
const generated = { 'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': 'myjob', 'controller-uid': uid, 'job-name': 'myjob' };

/** A Job as the API would hold it after defaulting and selector generation, with explicit fields. */
function job(mutate: (j: Obj) => void = () => {}): Obj {
  const template: Obj = { metadata: { labels: { ...generated } }, spec: { restartPolicy: 'Never', containers: [{ name: 'abc', image: 'image' }] } };
  defaultPodTemplate(template);
  const j: Obj = {
    metadata: { name: 'myjob', namespace: 'default', uid },
    spec: { parallelism: 1, completions: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } }, template },
  };
  mutate(j);
  return j;
}

const create = (j: Obj) => validateCreate('batch', 'Job', j).map(fieldErrorMessage);

test('a generated-selector Job, a manual one and an Indexed one are valid', () => {
  assert.deepEqual(create(job()), []);
  assert.deepEqual(
    create(
      job((j) => {
        j.spec.manualSelector = true;
        j.spec.selector = { matchLabels: { a: 'b' } };
        j.spec.template.metadata.labels = { a: 'b' };
      }),
    ),
    [],
  );
  assert.deepEqual(
    create(
      job((j) => {
        Object.assign(j.spec, { completionMode: 'Indexed', completions: 10, backoffLimitPerIndex: 1, maxFailedIndexes: 5 });
        j.spec.successPolicy = { rules: [{ succeededIndexes: '0,2,4', succeededCount: 1 }, { succeededIndexes: '1,3,5-9' }] };
        j.spec.podFailurePolicy = {
          rules: [
            { action: 'FailIndex', onExitCodes: { operator: 'In', values: [42] } },
            { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
          ],
        };
      }),
    ),
    [],
  );
});

test('table of invalid Jobs with upstream paths and messages', () => {
  const cases: [string, (j: Obj) => void, string[]][] = [
    ['negative counts', (j) => Object.assign(j.spec, { parallelism: -1, backoffLimit: -1 }), [
      'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
      'spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0',
    ]],
    ['restartPolicy Always', (j) => (j.spec.template.spec.restartPolicy = 'Always'), ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']],
    // The pod spec's own check reports it too, as upstream's ValidatePodTemplateSpec does.
    ['restartPolicy bogus', (j) => (j.spec.template.spec.restartPolicy = 'Sometimes'), [
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "OnFailure", "Never"',
    ]],
    ['generated labels missing', (j) => delete j.spec.template.metadata.labels['job-name'], ['spec.template.metadata.labels[job-name]: Required value: myjob']],
    ['selector not generated', (j) => {
      j.spec.selector = { matchLabels: { a: 'b' } };
      j.spec.template.metadata.labels.a = 'b';
    }, [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated',
    ]],
    ['selector does not match the template', (j) => {
      j.spec.manualSelector = true;
      j.spec.selector = { matchLabels: { a: 'b' } };
    }, [
      'spec.template.metadata.labels: Invalid value: map[string]string{"batch.kubernetes.io/controller-uid":"1a2b3c", "batch.kubernetes.io/job-name":"myjob", "controller-uid":"1a2b3c", "job-name":"myjob"}: `selector` does not match template `labels`',
    ]],
    ['no selector', (j) => delete j.spec.selector, ['spec.selector: Required value']],
    ['bad completion mode', (j) => (j.spec.completionMode = 'Sometimes'), ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"']],
    ['Indexed without completions', (j) => {
      j.spec.completionMode = 'Indexed';
      delete j.spec.completions;
    }, ['spec.completions: Required value: when completion mode is Indexed']],
    ['Indexed parallelism limit', (j) => Object.assign(j.spec, { completionMode: 'Indexed', parallelism: 100001 }), [
      'spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed',
    ]],
    ['per-index limits need Indexed', (j) => Object.assign(j.spec, { backoffLimitPerIndex: 1, maxFailedIndexes: 1 }), [
      'spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode',
      'spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode',
    ]],
    ['maxFailedIndexes without backoffLimitPerIndex', (j) => Object.assign(j.spec, { completionMode: 'Indexed', completions: 4, maxFailedIndexes: 5 }), [
      'spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified',
      'spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions',
    ]],
    ['high completions need maxFailedIndexes', (j) => Object.assign(j.spec, { completionMode: 'Indexed', completions: 100001, parallelism: 10001, backoffLimitPerIndex: 1 }), [
      'spec.maxFailedIndexes: Required value: must be specified when completions is above 100000',
      'spec.parallelism: Invalid value: 10001: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index',
    ]],
    ['Indexed pod hostname too long', (j) => {
      const name = 'x'.repeat(62);
      j.metadata.name = name;
      Object.assign(j.spec.template.metadata.labels, { 'job-name': name, 'batch.kubernetes.io/job-name': name });
      Object.assign(j.spec, { completionMode: 'Indexed', completions: 10 });
    }, [`metadata.name: Invalid value: "${'x'.repeat(62)}": will not able to create pod with invalid DNS label: ${'x'.repeat(62)}-9`]],
    ['managedBy not domain-prefixed', (j) => (j.spec.managedBy = 'foo'), ['spec.managedBy: Invalid value: "foo": must be a domain-prefixed path (such as "acme.io/foo")']],
    ['managedBy too long', (j) => (j.spec.managedBy = `example.com/${'x'.repeat(60)}`), ['spec.managedBy: Too long: may not be more than 63 bytes']],
    ['successPolicy needs Indexed', (j) => (j.spec.successPolicy = { rules: [{ succeededCount: 1 }] }), [
      'spec.successPolicy: Invalid value: {"rules":[{"succeededCount":1}]}: requires indexed completion mode',
    ]],
    ['successPolicy rules', (j) => {
      Object.assign(j.spec, { completionMode: 'Indexed', completions: 5 });
      j.spec.successPolicy = { rules: [{}, { succeededIndexes: '3-1' }, { succeededIndexes: '0-1', succeededCount: 3 }, { succeededIndexes: '7' }] };
    }, [
      'spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified',
      'spec.successPolicy.rules[1].succeededIndexes: Invalid value: "3-1": error parsing succeededIndexes: non-increasing order, previous: 3, current: 1',
      'spec.successPolicy.rules[2].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes field)',
      'spec.successPolicy.rules[3].succeededIndexes: Invalid value: "7": error parsing succeededIndexes: too large index: "7"',
    ]],
    ['podFailurePolicy needs Never', (j) => {
      j.spec.template.spec.restartPolicy = 'OnFailure';
      j.spec.podFailurePolicy = { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] };
    }, ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified']],
    ['podFailurePolicy rules', (j) => {
      j.spec.podFailurePolicy = {
        rules: [
          { action: '', onExitCodes: { operator: 'In', values: [0, 2, 1, 1], containerName: 'nope' } },
          { action: 'FailIndex', onPodConditions: [{ type: 'Ready', status: 'Maybe' }] },
          { action: 'Panic' },
          { action: 'Count', onExitCodes: { operator: 'Between', values: [1] }, onPodConditions: [{ type: 'Ready', status: '' }] },
        ],
      };
    }, [
      'spec.podFailurePolicy.rules[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]',
      'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "nope": must be one of the container or initContainer names in the pod template',
      'spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator',
      'spec.podFailurePolicy.rules[0].onExitCodes.values[3]: Duplicate value: 1',
      'spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [0 2 1 1]: must be ordered',
      'spec.podFailurePolicy.rules[1].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
      'spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      'spec.podFailurePolicy.rules[2].action: Unsupported value: "Panic": supported values: "Count", "FailIndex", "FailJob", "Ignore"',
      'spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required',
      'spec.podFailurePolicy.rules[3].onExitCodes.operator: Unsupported value: "Between": supported values: "In", "NotIn"',
      'spec.podFailurePolicy.rules[3].onPodConditions[0].status: Required value: valid values: ["False" "True" "Unknown"]',
      'spec.podFailurePolicy.rules[3]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported',
    ]],
    ['podReplacementPolicy with podFailurePolicy', (j) => {
      j.spec.podReplacementPolicy = 'TerminatingOrFailed';
      j.spec.podFailurePolicy = { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] };
    }, ['spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"']],
    ['podReplacementPolicy bogus', (j) => (j.spec.podReplacementPolicy = 'Never'), [
      'spec.podReplacementPolicy: Unsupported value: "Never": supported values: "Failed", "TerminatingOrFailed"',
    ]],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual(create(job(mutate)), want, name);
});

test('the 422 message of a Job whose restartPolicy defaulted to Always is upstream\'s', () => {
  const errs = validateCreate('batch', 'Job', job((j) => (j.spec.template.spec.restartPolicy = 'Always')));
  assert.equal(aggregateMessage(errs), 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');
});

test('update: immutable fields, elastic Indexed completions, scheduling directives while suspended', () => {
  const update = (old: Obj, mutate: (j: Obj) => void) => {
    const j = structuredClone(old);
    mutate(j);
    return [...new Set(validateUpdate('batch', 'Job', j, old).map(fieldErrorMessage))];
  };
  const old = job();
  assert.deepEqual(update(old, (j) => (j.spec.completions = 2)), ['spec.completions: Invalid value: 2: field is immutable']);
  assert.deepEqual(update(old, (j) => (j.spec.template.spec.containers[0].image = 'other')), ['spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable']);
  assert.deepEqual(update(old, (j) => (j.spec.completionMode = 'Indexed')), ['spec.completionMode: Invalid value: "Indexed": field is immutable']);
  assert.deepEqual(update(old, (j) => (j.spec.parallelism = 5)), []);
  const indexed = job((j) => Object.assign(j.spec, { completionMode: 'Indexed', completions: 3, parallelism: 3 }));
  assert.deepEqual(update(indexed, (j) => Object.assign(j.spec, { completions: 5, parallelism: 5 })), []);
  assert.deepEqual(update(indexed, (j) => (j.spec.completions = 5)), ['spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism']);
  const suspended = job((j) => (j.spec.suspend = true));
  assert.deepEqual(update(suspended, (j) => (j.spec.template.spec.nodeSelector = { zone: 'a' })), []);
  const started = structuredClone(suspended);
  started.status = { startTime: '2026-01-01T00:00:00Z' };
  assert.deepEqual(update(started, (j) => (j.spec.template.spec.nodeSelector = { zone: 'a' })), ['spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable']);
  // A Job created before the prefixed labels existed is not failed for lacking them.
  const legacy = job((j) => {
    j.spec.selector = { matchLabels: { 'controller-uid': uid } };
    j.spec.template.metadata.labels = { 'controller-uid': uid, 'job-name': 'myjob' };
  });
  assert.deepEqual(update(legacy, (j) => (j.spec.parallelism = 2)), []);
});

test('status updates: upstream\'s transition rules', () => {
  const running = job((j) => (j.status = { active: 1, startTime: '2026-01-01T00:00:00Z' }));
  const status = (old: Obj, st: Obj) => {
    const j = structuredClone(old);
    j.status = st;
    return validateStatusUpdate('batch', 'Job', j, old).map(fieldErrorMessage);
  };
  const cond = (type: string) => ({ type, status: 'True' });
  const start = '2026-01-01T00:00:00Z';
  const end = '2026-01-01T00:01:00Z';
  assert.deepEqual(status(running, { active: 0, succeeded: 1, startTime: start, completionTime: end, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }), []);
  assert.deepEqual(status(running, { active: 0, succeeded: 1, startTime: start, completionTime: end, conditions: [cond('Complete')] }), [
    'status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition',
  ]);
  assert.deepEqual(status(running, { active: 1, startTime: start, conditions: [cond('Failed')] }), [
    'status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition',
    'status.active: Invalid value: 1: active>0 is invalid for finished job',
  ]);
  assert.deepEqual(status(running, { active: -1, startTime: start, ready: 2 }), [
    'status.active: Invalid value: -1: must be greater than or equal to 0',
    'status.ready: Invalid value: 2: cannot set more ready pods than active',
  ]);
  const failed = structuredClone(running);
  failed.status = { failed: 3, startTime: start, conditions: [cond('FailureTarget'), cond('Failed')] };
  assert.deepEqual(status(failed, { failed: 2, startTime: start, conditions: [cond('FailureTarget')] }), [
    'status.conditions: Invalid value: cannot disable the terminal Failed=True condition',
    'status.failed: Invalid value: 2: cannot decrease the failed counter',
  ]);
  assert.deepEqual(status(running, { active: 1, startTime: start, completedIndexes: '1' }), [
    'status.completedIndexes: Invalid value: "1": error parsing completedIndexes: too large index: "1"',
    'status.completedIndexes: Invalid value: "1": cannot set non-empty completedIndexes when non-indexed completion mode',
  ]);
});

test('index lists parse as upstream', () => {
  assert.equal(validateIndexesFormat('0,2-4,7', 8), 5);
  assert.equal(validateIndexesFormat('1-2-3', 8), `the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`);
  assert.equal(validateIndexesFormat('a', 8), 'cannot convert string to integer for index: "a"');
  assert.equal(validateIndexesFormat('3,2', 8), 'non-increasing order, previous: 3, current: 2');
});
