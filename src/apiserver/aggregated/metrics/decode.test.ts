import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderResourceMetrics } from '../../../kubelet/stats/resource-metrics.js';
import { decodeBatch, parseText, ParseError } from './decode.js';

test('parseText reads names, escaped labels, values and timestamps', () => {
  const series = parseText('# HELP x y\n# TYPE x gauge\nx{a="q\\"\\\\",b="n\\n"} 1.5e+07 1700000000123\ny 0\nz{} +Inf\n');
  assert.deepEqual(series, [
    { name: 'x', labels: { a: 'q"\\', b: 'n\n' }, value: 1.5e7, timestampMs: 1700000000123 },
    { name: 'y', labels: {}, value: 0 },
    { name: 'z', labels: {}, value: Infinity },
  ]);
  assert.throws(() => parseText('x{a="1"} nope\n'), ParseError);
  assert.throws(() => parseText('x{a="1} 1\n'), ParseError);
});

test('a kubelet exposition decodes into node and container points', () => {
  const text = renderResourceMetrics({
    node: { nodeName: 'n1', cpu: { time: 10_000, usageCoreNanoSeconds: 5_000_000_000 }, memory: { time: 10_000, workingSetBytes: 1 << 30 } },
    pods: [
      {
        podRef: { name: 'web', namespace: 'default', uid: 'u' },
        containers: [{ name: 'nginx', startTime: 1.5, cpu: { time: 9_000, usageCoreNanoSeconds: 250_000_000 }, memory: { time: 9_000, workingSetBytes: 4096 } }],
      },
      // No CPU yet: the whole pod is unknown for this scrape.
      { podRef: { name: 'new', namespace: 'default', uid: 'v' }, containers: [{ name: 'c', startTime: 2, memory: { time: 9_000, workingSetBytes: 1 } }] },
    ],
  });
  const batch = decodeBatch(text, 99, 'n1');
  assert.deepEqual([...batch.nodes], [['n1', { startTime: 0, timestamp: 10_000, cumulativeCpuUsed: 5_000_000_000, memoryUsage: 1 << 30 }]]);
  assert.deepEqual([...batch.pods.keys()], ['default/web']);
  assert.deepEqual(batch.pods.get('default/web')?.get('nginx'), { startTime: 1500, timestamp: 9_000, cumulativeCpuUsed: 250_000_000, memoryUsage: 4096 });
});

test('a node without memory is dropped; missing timestamps take the scrape time', () => {
  assert.equal(decodeBatch('node_cpu_usage_seconds_total 1\n', 5, 'n').nodes.size, 0);
  assert.equal(decodeBatch('node_cpu_usage_seconds_total 1\nnode_memory_working_set_bytes 2\n', 5, 'n').nodes.get('n')?.timestamp, 5);
});
