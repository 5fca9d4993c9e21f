// PodDisruptionBudgets inside `kite server` (the disruption controller and the eviction subresource),
// with pods run by `kite sim`, checked with the real kubectl: `kubectl create pdb`, `kubectl get pdb`,
// and `kubectl drain`, refused with upstream's message for the last healthy pod and let through
// within the budget.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, simCluster, webReplicaSet } from './harness.js';

interface PodList {
  items: { metadata: { name: string; deletionTimestamp?: string }; spec: { nodeName?: string }; status: { conditions?: { type: string; status: string }[] } }[];
}

describe('PodDisruptionBudget (kite server + kite sim)', () => {
  const cluster = simCluster(3);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const readyPods = () =>
    (JSON.parse(k(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as PodList).items.filter(
      (p) => !p.metadata.deletionTimestamp && p.spec.nodeName && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
  const pdbRow = () => k(['get', 'pdb', 'web', '--no-headers']).trim();
  const allowed = (n: number) => eventually(() => (new RegExp(`^web\\s+1\\s+N/A\\s+${n}\\s+`).test(pdbRow()) ? pdbRow() : undefined), `ALLOWED DISRUPTIONS ${n}`, 60_000);

  it('blocks draining the last healthy pod with upstream message, and lets a drain within budget through', async () => {
    k(['apply', '-f', '-'], webReplicaSet(1));
    assert.equal(k(['create', 'pdb', 'web', '--selector=app=web', '--min-available=1']).trim(), 'poddisruptionbudget.policy/web created');
    const [only] = await eventually(() => (readyPods().length === 1 ? readyPods() : undefined), 'one Ready web pod', 60_000);
    assert.deepEqual(k(['get', 'pdb', 'web']).split('\n')[0]!.trim().split(/\s{2,}/), ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE']);
    await allowed(0);

    // kubectl drain retries a refused eviction every 5 s until its timeout.
    const blocked = kubectl(cluster.server, ['drain', only!.spec.nodeName!, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=8s']);
    assert.notEqual(blocked.code, 0);
    assert.match(blocked.stderr, new RegExp(`error when evicting pods/"${only!.metadata.name}" -n "default" \\(will retry after 5s\\): Cannot evict pod as it would violate the pod's disruption budget\\.`));
    assert.equal(readyPods()[0]?.metadata.name, only!.metadata.name, 'the pod was not evicted');
    k(['uncordon', only!.spec.nodeName!]);

    // Two healthy pods, one may go.
    k(['scale', 'rs', 'web', '--replicas=2']);
    await eventually(() => (readyPods().length === 2 ? true : undefined), 'two Ready web pods', 60_000);
    await allowed(1);
    const status = JSON.parse(k(['get', 'pdb', 'web', '-o', 'jsonpath={.status}'])) as { currentHealthy: number; desiredHealthy: number; expectedPods: number };
    assert.deepEqual([status.currentHealthy, status.desiredHealthy, status.expectedPods], [2, 1, 2]);

    const drained = kubectl(cluster.server, ['drain', only!.spec.nodeName!, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=30s']);
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(drained.stdout, new RegExp(`pod/${only!.metadata.name} evicted`));
    assert.match(drained.stdout, /node\/\S+ drained/);
    // The ReplicaSet replaces the evicted pod on another node; the budget allows one disruption again.
    await eventually(() => (readyPods().length === 2 && readyPods().every((p) => p.spec.nodeName !== only!.spec.nodeName) ? true : undefined), 'a replacement elsewhere', 60_000);
    await allowed(1);
  });
});
