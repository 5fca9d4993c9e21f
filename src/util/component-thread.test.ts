import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { threadMetrics } from './component-thread.js';

// A thread that answers metrics requests as client/component-thread.ts does, or one that never answers.
const answering = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => {
  if (typeof m === 'object' && 'metricsRequest' in m) parentPort.postMessage({ metricsResponse: m.metricsRequest, text: 'x_total ' + m.metricsRequest + '\\n' });
});`;
const silent = `require('node:worker_threads').parentPort.on('message', () => {});`;

describe('threadMetrics', () => {
  it("returns the thread's answer to its own request", async () => {
    const worker = new Worker(answering, { eval: true });
    try {
      const [a, b] = await Promise.all([threadMetrics(worker), threadMetrics(worker)]);
      assert.match(a, /^x_total \d+\n$/);
      assert.match(b, /^x_total \d+\n$/);
      assert.notEqual(a, b);
    } finally {
      await worker.terminate();
    }
  });

  it('is empty when the thread does not answer within the bound', async () => {
    const worker = new Worker(silent, { eval: true });
    try {
      assert.equal(await threadMetrics(worker, 50), '');
      assert.equal(worker.listenerCount('message'), 0);
    } finally {
      await worker.terminate();
    }
  });
});
