// The request path's bookkeeping cannot end the process: a metrics recorder that throws (as prom-client
// does when Object.prototype is polluted) is logged, and the request still gets its answer.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ApiServer } from './server.js';
import type { ApiMetrics } from './metrics.js';
import { loadKubeconfig } from '../client/kubeconfig.js';

describe('ApiServer request bookkeeping', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kite-server-test-'));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const server = new ApiServer({ dataDir, listen: '127.0.0.1:0', storage: 'sqlite', components: [], logger: pino({ level: 'warn' }, sink) });
  let get: (path: string) => Promise<number>;
  before(async () => {
    await server.start();
    const cfg = await loadKubeconfig(server.kubeconfigPath);
    const url = new URL(cfg.server);
    const agent = new https.Agent({ ca: cfg.ca, cert: cfg.cert, key: cfg.key });
    get = (path) =>
      new Promise((resolve, reject) => {
        https
          .get({ agent, host: url.hostname, port: url.port, path }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject);
      });
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers and logs when recording metrics throws, and keeps serving', async () => {
    const metrics = (server as unknown as { metrics: ApiMetrics }).metrics;
    const observe = metrics.observe.bind(metrics);
    metrics.observe = () => {
      throw new Error('Added label "polluted" is not included in initial labelset');
    };
    try {
      assert.equal(await get('/api/v1/namespaces/default/configmaps'), 200);
      assert.equal(await get('/api/v1/namespaces/default/configmaps/missing'), 404);
    } finally {
      metrics.observe = observe;
    }
    assert.ok(logs.some((l) => l.includes('request bookkeeping failed') && l.includes('initial labelset')), logs.join(''));
    assert.equal(await get('/api/v1/namespaces'), 200);
  });
});
