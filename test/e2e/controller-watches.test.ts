// The controller manager shares its informers: however many controllers watch a resource (the
// namespace controller and the garbage collector both watch namespaces; the CSR approver, the
// signer and the GC all watch CSRs), the API server sees at most one watch of it — counted by
// upstream's apiserver_longrunning_requests gauge. Only the controllers run beside the API server
// here, so every watch it counts is theirs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectlOk, removeDir, startServer, type KiteServer } from './harness.js';

/** resource (with group) → open WATCH requests, from the /metrics text. */
function openWatches(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (labels.verb !== 'WATCH') continue;
    const key = labels.group ? `${labels.resource}.${labels.group}` : labels.resource!;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

describe('controller manager watches', () => {
  let server: KiteServer;
  before(async () => {
    server = await startServer({ extraArgs: ['--components', 'controllers'] });
  });
  after(async () => {
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });

  it('opens at most one watch per resource, the garbage collector included', async () => {
    // The GC watches every collectable resource: wait until all its watches are open.
    const watches = await eventually(() => {
      const w = openWatches(kubectlOk(server, ['get', '--raw', '/metrics']));
      return w.has('namespaces') && w.has('certificatesigningrequests.certificates.k8s.io') && w.has('configmaps') && w.has('deployments.apps') ? w : undefined;
    }, 'the controllers to watch namespaces, CSRs, configmaps and deployments');
    const repeated = [...watches].filter(([, n]) => n > 1);
    assert.deepEqual(repeated, [], 'resources watched more than once');
    assert.equal(watches.get('namespaces'), 1);
    assert.equal(watches.get('certificatesigningrequests.certificates.k8s.io'), 1);
    assert.equal(watches.get('pods'), 1);
  });

  it('the garbage collector still collects through its metadata-only watches', async () => {
    kubectlOk(server, ['create', 'configmap', 'owner']);
    const uid = kubectlOk(server, ['get', 'configmap', 'owner', '-o', 'jsonpath={.metadata.uid}']);
    kubectlOk(
      server,
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid }] } }),
    );
    kubectlOk(server, ['delete', 'configmap', 'owner']);
    await eventually(() => (kubectlOk(server, ['get', 'configmaps', '-o', 'name']).includes('configmap/dependent') ? undefined : true), 'the dependent to be collected');
  });
});
