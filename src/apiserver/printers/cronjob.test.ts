import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CronJob } from 'kubernetes-types/batch/v1.js';
import type { StoredObject } from '../../api/meta.js';
import { cronJobPrinter } from './cronjob.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');

void test("CronJob columns and rows as upstream's printCronJob", () => {
  assert.deepEqual(
    cronJobPrinter.columns.map((c) => [c.name, c.type, c.priority]),
    [
      ['Name', 'string', 0],
      ['Schedule', 'string', 0],
      ['Timezone', 'string', 0],
      ['Suspend', 'boolean', 0],
      ['Active', 'integer', 0],
      ['Last Schedule', 'string', 0],
      ['Age', 'string', 0],
      ['Containers', 'string', 1],
      ['Images', 'string', 1],
      ['Selector', 'string', 1],
    ],
  );
  const cj = {
    metadata: { name: 'backup', creationTimestamp: '2025-06-01T11:00:00Z' },
    spec: {
      schedule: '*/1 * * * *',
      suspend: false,
      jobTemplate: { spec: { template: { spec: { containers: [{ name: 'a', image: 'busybox' }, { name: 'b', image: 'nginx' }] } } } },
    },
    status: { active: [{ name: 'backup-1' }], lastScheduleTime: '2025-06-01T11:59:00Z' },
  } as CronJob & StoredObject;
  assert.deepEqual(cronJobPrinter.print(cj, NOW).cells, ['backup', '*/1 * * * *', '<none>', 'False', 1, '60s', '60m', 'a,b', 'busybox,nginx', '<none>']);
  const bare = { metadata: { name: 'x' }, spec: { schedule: '@daily', timeZone: 'Europe/Berlin' } } as CronJob & StoredObject;
  assert.deepEqual(cronJobPrinter.print(bare, NOW).cells.slice(0, 6), ['x', '@daily', 'Europe/Berlin', '<unset>', 0, '<none>']);
});
