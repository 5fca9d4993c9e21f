import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetricsBatch, MetricsPoint } from './decode.js';
import { MetricsStorage, resourceUsage } from './storage.js';

const point = (timestamp: number, cpuSeconds: number, memory: number, startTime = 0): MetricsPoint => ({ startTime, timestamp, cumulativeCpuUsed: Math.round(cpuSeconds * 1e9), memoryUsage: memory });

const batch = (node?: MetricsPoint, containers: Record<string, MetricsPoint> = {}): MetricsBatch => ({
  nodes: new Map(node ? [['n1', node]] : []),
  pods: new Map(Object.keys(containers).length ? [['default/web', new Map(Object.entries(containers))]] : []),
});

test('CPU is the rate between two points, memory the last working set', () => {
  const u = resourceUsage(point(25_000, 13, 12 * 1024 * 1024), point(10_000, 10, 1));
  assert.deepEqual(u, { timestamp: 25_000, window: 15_000, usage: { cpu: '200m', memory: '12Mi' } });
  assert.equal(resourceUsage(point(25_003, 10.000123456, 1000), point(10_000, 10, 1))?.usage.cpu, '8228n');
  assert.equal(resourceUsage(point(25_000, 9, 1), point(10_000, 10, 1)), undefined, 'counter went down');
  assert.equal(resourceUsage(point(10_000, 10, 1), point(10_000, 10, 1)), undefined, 'no window');
});

test('a node needs two scrapes; a failed scrape forgets it', () => {
  const s = new MetricsStorage(15_000);
  s.store(batch(point(10_000, 100, 1024)));
  assert.equal(s.nodeUsage('n1'), undefined);
  s.store(batch(point(25_000, 101.5, 2048)));
  assert.deepEqual(s.nodeUsage('n1'), { timestamp: 25_000, window: 15_000, usage: { cpu: '100m', memory: '2Ki' } });
  // The same point again (the kubelet had nothing newer): the previous point stays.
  s.store(batch(point(25_000, 101.5, 2048)));
  assert.equal(s.nodeUsage('n1')?.usage.cpu, '100m');
  s.store(batch());
  assert.equal(s.nodeUsage('n1'), undefined);
});

test('pods: every container needs two points; a restart starts over', () => {
  const s = new MetricsStorage(15_000);
  s.store(batch(undefined, { a: point(10_000, 1, 10, 1_000) }));
  assert.equal(s.podUsage('default', 'web'), undefined);
  s.store(batch(undefined, { a: point(25_000, 2.5, 20, 1_000), b: point(25_000, 1, 5, 1_000) }));
  assert.equal(s.podUsage('default', 'web'), undefined, 'b has only one point');
  s.store(batch(undefined, { a: point(40_000, 4, 30, 1_000), b: point(40_001, 1.3, 6, 1_000) }));
  assert.deepEqual(s.podUsage('default', 'web'), {
    timestamp: 40_000,
    window: 15_000,
    containers: [
      { name: 'a', usage: { cpu: '100m', memory: '30' } },
      { name: 'b', usage: { cpu: '19998666n', memory: '6' } },
    ],
  });
  // a restarted after the last point: no rate until its next scrape.
  s.store(batch(undefined, { a: point(55_000, 0.1, 1, 50_000), b: point(55_000, 1.6, 6, 1_000) }));
  assert.equal(s.podUsage('default', 'web'), undefined);
});

test('a container started between scrapes (10 s to one resolution ago) gets a rate from its start', () => {
  const s = new MetricsStorage(15_000);
  s.store(batch(undefined, { a: point(20_000, 1.2, 10, 8_000) }));
  assert.deepEqual(s.podUsage('default', 'web'), { timestamp: 20_000, window: 12_000, containers: [{ name: 'a', usage: { cpu: '100m', memory: '10' } }] });
});
