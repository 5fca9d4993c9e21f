// The router in the real API server, in process (SQLite in a temp dir, no components).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ApiServer } from './server.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest.js';

describe('router', () => {
  let dataDir: string;
  let server: ApiServer;
  let client: RestClient;
  const deployments = '/apis/apps/v1/namespaces/default/deployments';
  const scale = `${deployments}/web/scale`;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'kite-router-'));
    server = new ApiServer({ dataDir, listen: '127.0.0.1:0', storage: 'sqlite', components: [], logger: pino({ level: 'silent' }) });
    await server.start();
    client = new RestClient(await loadKubeconfig(server.kubeconfigPath));
    const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    await client.request({ method: 'POST', path: deployments, body: { metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template } } });
  });

  after(async () => {
    client.close();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const patchScale = (contentType: string, body: unknown) =>
    client.request<{ spec: { replicas: number } }>({ method: 'PATCH', path: scale, contentType, body });

  it('applies a strategic merge patch on scale as one, against the Scale schema', async () => {
    assert.equal((await patchScale('application/strategic-merge-patch+json', { spec: { replicas: 2 } })).spec.replicas, 2);
    // A merge patch keeps "$patch" as a field (spec.replicas stays); a strategic one replaces spec, so replicas is 0.
    assert.equal((await patchScale('application/merge-patch+json', { spec: { $patch: 'replace' } })).spec.replicas, 2);
    assert.equal((await patchScale('application/strategic-merge-patch+json', { spec: { $patch: 'replace' } })).spec.replicas, 0);
    const stored = await client.request<{ spec: { replicas: number } }>({ path: `${deployments}/web` });
    assert.equal(stored.spec.replicas, 0);
  });

  it('serves the aggregated metrics group through the same routing, discovery included', async () => {
    const groups = await client.request<{ groups: { name: string }[] }>({ path: '/apis' });
    assert.ok(groups.groups.some((g) => g.name === 'metrics.k8s.io'));
    const list = await client.request<{ resources: { name: string }[] }>({ path: '/apis/metrics.k8s.io/v1beta1' });
    assert.deepEqual(list.resources.map((r) => r.name), ['nodes', 'pods']);
    const nodes = await client.request<{ kind: string }>({ path: '/apis/metrics.k8s.io/v1beta1/nodes' });
    assert.equal(nodes.kind, 'NodeMetricsList');
    await assert.rejects(client.request({ path: '/apis/metrics.k8s.io/v1/nodes' }), (err: { code?: number }) => err.code === 404);
  });
});
