import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults } from '../defaults/index.js';
import { fieldErrorMessage } from '../field.js';
import { validateCreate, validateUpdate } from './index.js';

type Obj = Record<string, any>;

function cronJob(mutate: (cj: Obj) => void = () => {}): Obj {
  const cj: Obj = {
    metadata: { name: 'backup', namespace: 'default' },
    spec: {
      schedule: '*/5 * * * *',
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } },
    },
  };
  mutate(cj);
  applyDefaults('batch', 'CronJob', cj);
  return cj;
}

const create = (cj: Obj) => validateCreate('batch', 'CronJob', cj).map(fieldErrorMessage);

void test("defaults: Allow, not suspended, history 3 and 1, the pod template's own", () => {
  const cj = cronJob();
  assert.equal(cj.spec.concurrencyPolicy, 'Allow');
  assert.equal(cj.spec.suspend, false);
  assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
  assert.equal(cj.spec.failedJobsHistoryLimit, 1);
  assert.equal(cj.spec.jobTemplate.spec.template.spec.dnsPolicy, 'ClusterFirst');
  assert.equal(cj.spec.jobTemplate.spec.backoffLimit, undefined);
  assert.deepEqual(create(cj), []);
});

void test('invalid CronJobs get upstream messages', () => {
  const cases: [string, (cj: Obj) => void, string[]][] = [
    ['no schedule', (cj) => delete cj.spec.schedule, ['spec.schedule: Required value']],
    ['six fields', (cj) => (cj.spec.schedule = '0 * * * * *'), ['spec.schedule: Invalid value: "0 * * * * *": expected exactly 5 fields, found 6: [0 * * * * *]']],
    ['a bad macro', (cj) => (cj.spec.schedule = '@sometimes'), ['spec.schedule: Invalid value: "@sometimes": unrecognized descriptor: @sometimes']],
    [
      'TZ in the schedule',
      (cj) => (cj.spec.schedule = 'TZ=UTC 0 * * * *'),
      ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead'],
    ],
    ['an unknown time zone', (cj) => (cj.spec.timeZone = 'Mars/Olympus'), ['spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus']],
    ['odd characters in the time zone', (cj) => (cj.spec.timeZone = '../etc/passwd'), ['spec.timeZone: Invalid value: "../etc/passwd": unknown time zone ../etc/passwd']],
    ['an empty time zone', (cj) => (cj.spec.timeZone = ''), ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']],
    [
      'Local',
      (cj) => (cj.spec.timeZone = 'Local'),
      ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones'],
    ],
    ['a policy', (cj) => (cj.spec.concurrencyPolicy = 'Sometimes'), ['spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"']],
    ['negative deadline', (cj) => (cj.spec.startingDeadlineSeconds = -1), ['spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0']],
    ['negative history', (cj) => (cj.spec.successfulJobsHistoryLimit = -1), ['spec.successfulJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0']],
    [
      'a restarting template',
      (cj) => (cj.spec.jobTemplate.spec.template.spec.restartPolicy = 'Always'),
      ['spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
    ],
    [
      'a selector',
      (cj) => (cj.spec.jobTemplate.spec.selector = { matchLabels: { a: 'b' } }),
      ['spec.jobTemplate.spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: `selector` will be auto-generated'],
    ],
    ['a long name', (cj) => (cj.metadata.name = 'a'.repeat(53)), [`metadata.name: Invalid value: "${'a'.repeat(53)}": must be no more than 52 characters`]],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual(create(cronJob(mutate)), want, name);
});

void test('macros, @every and time zones are accepted', () => {
  for (const schedule of ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly', '@every 1h30m', '0 9 * jan-mar mon-fri']) {
    assert.deepEqual(create(cronJob((cj) => (cj.spec.schedule = schedule))), [], schedule);
  }
  assert.deepEqual(create(cronJob((cj) => (cj.spec.timeZone = 'Europe/Berlin'))), []);
});

void test('an update may keep a TZ the stored schedule had, but not beside timeZone; names are not re-checked', () => {
  const old = cronJob((cj) => {
    cj.metadata.name = 'a'.repeat(60);
    cj.metadata.resourceVersion = '1';
    cj.spec.schedule = 'TZ=UTC 0 * * * *';
  });
  const same = structuredClone(old);
  same.spec.schedule = 'TZ=UTC 5 * * * *';
  assert.deepEqual(validateUpdate('batch', 'CronJob', same, old).map(fieldErrorMessage), []);
  same.spec.timeZone = 'UTC';
  assert.deepEqual(validateUpdate('batch', 'CronJob', same, old).map(fieldErrorMessage), [
    'spec.schedule: Invalid value: "TZ=UTC 5 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule',
  ]);
});
