// Table-driven like upstream's replica_calculator_test.go: pods with requests, readiness and
// metric levels in; the proposed count, utilization and raw value (or the error) out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { plainMetricReplicas, resourceReplicas, type PodMetricsInfo } from './replicas.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const iso = (ms: number) => new Date(ms).toISOString();

interface Case {
  name: string;
  currentReplicas: number;
  /** Per pod: its CPU request (millicores). */
  requests: number[];
  /** Per pod: its usage (millicores), or null for no metric. */
  levels: (number | null)[];
  /** Per pod: Ready status (default True) and phase (default Running). */
  ready?: ('True' | 'False')[];
  phases?: string[];
  /** Pods started this long ago (default 10 min, past the CPU initialization period). */
  startedAgoMs?: number;
  targetUtilization?: number;
  targetAverageValue?: number;
  want: { replicas: number; utilization?: number; raw?: number } | { error: string };
}

function setup(c: Case): { pods: Pod[]; metrics: PodMetricsInfo } {
  const started = NOW - (c.startedAgoMs ?? 10 * 60_000);
  const pods = c.requests.map<Pod>((request, i) => {
    const ready = c.ready?.[i] ?? 'True';
    return {
      metadata: { name: `p${i}`, namespace: 'ns', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'img', resources: { requests: { cpu: `${request}m` } } }] },
      status: {
        phase: c.phases?.[i] ?? 'Running',
        startTime: iso(started),
        // Never ready pods turned unready at start; ready ones became ready 20 s after it.
        conditions: [{ type: 'Ready', status: ready, lastTransitionTime: iso(ready === 'True' ? started + 20_000 : started) }],
      },
    };
  });
  const metrics: PodMetricsInfo = new Map();
  c.levels.forEach((v, i) => {
    if (v !== null) metrics.set(`p${i}`, { timestamp: NOW - 5_000, windowMs: 30_000, value: v });
  });
  return { pods, metrics };
}

const cases: Case[] = [
  { name: 'scale up', currentReplicas: 3, requests: [1000, 1000, 1000], levels: [300, 500, 700], targetUtilization: 30, want: { replicas: 5, utilization: 50, raw: 500 } },
  {
    name: 'scale up with an unready pod counts it as idle',
    currentReplicas: 3,
    requests: [1000, 1000, 1000],
    levels: [300, 500, 700],
    ready: ['False', 'True', 'True'],
    targetUtilization: 30,
    want: { replicas: 4, utilization: 60, raw: 600 },
  },
  {
    name: 'scale up ignores a failed pod',
    currentReplicas: 2,
    requests: [1000, 1000, 1000],
    levels: [500, 500, 900],
    phases: ['Running', 'Running', 'Failed'],
    targetUtilization: 30,
    want: { replicas: 4, utilization: 50, raw: 500 },
  },
  { name: 'scale down', currentReplicas: 5, requests: [1000, 1000, 1000, 1000, 1000], levels: [100, 300, 500, 250, 250], targetUtilization: 50, want: { replicas: 3, utilization: 28, raw: 280 } },
  { name: 'within tolerance', currentReplicas: 3, requests: [900, 1000, 1100], levels: [1010, 1030, 1020], targetUtilization: 100, want: { replicas: 3, utilization: 102, raw: 1020 } },
  {
    name: 'scale down with a pod missing metrics counts it at its request',
    currentReplicas: 4,
    requests: [1000, 1000, 1000, 1000],
    levels: [100, 100, 100, null],
    targetUtilization: 50,
    want: { replicas: 3, utilization: 10, raw: 100 },
  },
  {
    name: 'scale up with a pod missing metrics counts it as idle',
    currentReplicas: 4,
    requests: [1000, 1000, 1000, 1000],
    levels: [900, 900, 900, null],
    targetUtilization: 50,
    want: { replicas: 6, utilization: 90, raw: 900 },
  },
  {
    name: 'missing metrics that would reverse the direction keep the count',
    currentReplicas: 3,
    requests: [1000, 1000, 1000],
    levels: [450, null, null],
    targetUtilization: 40,
    want: { replicas: 3, utilization: 45, raw: 450 },
  },
  {
    name: 'a pod still initializing whose sample predates a full window is unready',
    currentReplicas: 2,
    requests: [1000, 1000],
    levels: [800, 800],
    startedAgoMs: 30_000,
    targetUtilization: 50,
    want: { error: 'did not receive metrics for targeted pods (pods might be unready)' },
  },
  { name: 'a pending pod has no usable metric', currentReplicas: 1, requests: [1000], levels: [500], phases: ['Pending'], targetUtilization: 50, want: { error: 'did not receive metrics for targeted pods (pods might be unready)' } },
  { name: 'no pods', currentReplicas: 1, requests: [], levels: [], targetUtilization: 50, want: { error: 'no pods returned by selector while calculating replica count' } },
  { name: 'average value: scale up', currentReplicas: 3, requests: [1000, 1000, 1000], levels: [300, 500, 700], targetAverageValue: 200, want: { replicas: 8, raw: 500 } },
  { name: 'average value: within tolerance', currentReplicas: 3, requests: [1000, 1000, 1000], levels: [190, 200, 210], targetAverageValue: 200, want: { replicas: 3, raw: 200 } },
  {
    name: 'average value: scale down with a missing pod at the target',
    currentReplicas: 4,
    requests: [1000, 1000, 1000, 1000],
    levels: [50, 50, 50, null],
    targetAverageValue: 200,
    want: { replicas: 2, raw: 50 },
  },
];

test('replica calculator table', () => {
  for (const c of cases) {
    const { pods, metrics } = setup(c);
    const opts = { now: NOW };
    if (c.targetAverageValue !== undefined) {
      const r = plainMetricReplicas(c.currentReplicas, c.targetAverageValue, 'cpu', pods, metrics, opts);
      if ('error' in c.want) assert.deepEqual(r, { ok: false, error: c.want.error }, c.name);
      else assert.deepEqual(r, { ok: true, replicas: c.want.replicas, usage: c.want.raw }, c.name);
      continue;
    }
    const r = resourceReplicas(c.currentReplicas, c.targetUtilization!, 'cpu', '', pods, metrics, opts);
    if ('error' in c.want) assert.deepEqual(r, { ok: false, error: c.want.error }, c.name);
    else assert.deepEqual(r, { ok: true, replicas: c.want.replicas, utilization: c.want.utilization, rawUtilization: c.want.raw }, c.name);
  }
});

test('a container without a request is an error naming it', () => {
  const { pods, metrics } = setup({ name: '', currentReplicas: 1, requests: [1000], levels: [500], want: { replicas: 1 } });
  delete pods[0]!.spec!.containers[0]!.resources;
  assert.deepEqual(resourceReplicas(1, 50, 'cpu', '', pods, metrics, { now: NOW }), { ok: false, error: 'missing request for cpu in container c of Pod p0' });
});
