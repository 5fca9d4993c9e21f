import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { PodDisruptionBudget } from '../../api/types.js';
import { podDisruptionBudgetPrinter } from './policy.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const meta = { name: 'web', namespace: 'default', creationTimestamp: new Date(NOW - 90_000).toISOString() };

void test('pdb rows: MIN AVAILABLE or MAX UNAVAILABLE, the other N/A, and ALLOWED DISRUPTIONS from the status', () => {
  const cases: { pdb: PodDisruptionBudget; cells: unknown[] }[] = [
    { pdb: { metadata: meta, spec: { minAvailable: 2 }, status: { disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3 } }, cells: ['web', '2', 'N/A', 1, '90s'] },
    { pdb: { metadata: meta, spec: { maxUnavailable: '25%' } }, cells: ['web', 'N/A', '25%', 0, '90s'] },
    { pdb: { metadata: meta, spec: {} }, cells: ['web', 'N/A', 'N/A', 0, '90s'] },
  ];
  for (const c of cases) assert.deepEqual(podDisruptionBudgetPrinter.print(c.pdb as PodDisruptionBudget & StoredObject, NOW).cells, c.cells);
  assert.deepEqual(
    podDisruptionBudgetPrinter.columns.map((c) => c.name),
    ['Name', 'Min Available', 'Max Unavailable', 'Allowed Disruptions', 'Age'],
  );
});
