import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { Job } from '../../api/types.js';
import { jobPrinter } from './batch.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const meta = (name: string) => ({ name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: ago(600) });
const cond = (type: string, status = 'True') => ({ type, status });

void test('job columns as upstream', () => {
  assert.deepEqual(
    jobPrinter.columns.map((c) => [c.name, c.type, c.priority]),
    [
      ['Name', 'string', 0],
      ['Status', 'string', 0],
      ['Completions', 'string', 0],
      ['Duration', 'string', 0],
      ['Age', 'string', 0],
      ['Containers', 'string', 1],
      ['Images', 'string', 1],
      ['Selector', 'string', 1],
    ],
  );
});

void test('job rows: STATUS, COMPLETIONS and DURATION as upstream printJob', () => {
  const template = { spec: { containers: [{ name: 'pi', image: 'perl:5.34' }, { name: 'side', image: 'busybox' }] } };
  const selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u1' } };
  const cases: [string, Job, unknown[]][] = [
    ['not started', { metadata: meta('a'), spec: { completions: 3, template, selector } }, ['a', 'Running', '0/3', '', '10m']],
    [
      'running, parallel without completions',
      { metadata: meta('b'), spec: { parallelism: 2, template, selector }, status: { startTime: ago(90), succeeded: 1, conditions: [cond('Complete', 'False')] } },
      ['b', 'Running', '1/1 of 2', '90s', '10m'],
    ],
    [
      'complete',
      { metadata: meta('c'), spec: { completions: 1, template, selector }, status: { startTime: ago(300), completionTime: ago(150), succeeded: 1, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] } },
      ['c', 'Complete', '1/1', '2m30s', '10m'],
    ],
    ['failed', { metadata: meta('d'), spec: { template }, status: { startTime: ago(60), conditions: [cond('FailureTarget'), cond('Failed')] } }, ['d', 'Failed', '0/1', '60s', '10m']],
    [
      'terminating wins over suspension',
      { metadata: { ...meta('e'), deletionTimestamp: ago(1) }, spec: { template }, status: { conditions: [cond('Suspended')] } },
      ['e', 'Terminating', '0/1', '', '10m'],
    ],
    ['suspended', { metadata: meta('f'), spec: { template }, status: { conditions: [cond('Suspended')] } }, ['f', 'Suspended', '0/1', '', '10m']],
    ['failure target', { metadata: meta('g'), spec: { template }, status: { startTime: ago(5), conditions: [cond('FailureTarget')] } }, ['g', 'FailureTarget', '0/1', '5s', '10m']],
    ['success criteria met', { metadata: meta('h'), spec: { template }, status: { startTime: ago(5), conditions: [cond('SuccessCriteriaMet')] } }, ['h', 'SuccessCriteriaMet', '0/1', '5s', '10m']],
  ];
  for (const [name, job, cells] of cases) {
    const row = jobPrinter.print(job as StoredObject, NOW);
    assert.deepEqual(row.cells.slice(0, 5), cells, name);
  }
  const wide = jobPrinter.print({ metadata: meta('w'), spec: { template, selector } } as StoredObject, NOW).cells.slice(5);
  assert.deepEqual(wide, ['pi,side', 'perl:5.34,busybox', 'batch.kubernetes.io/controller-uid=u1']);
});
