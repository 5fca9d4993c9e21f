// The ReplicaSet controller inside `kite server`, with pods run by `kite sim`, checked with the real
// kubectl: it creates the pods, reports them in `kubectl get rs`, scales down, records upstream's
// events, and the garbage collector removes its pods with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, simCluster, webReplicaSet } from './harness.js';

interface PodList {
  items: { metadata: { name: string; deletionTimestamp?: string; ownerReferences?: { kind: string; name: string; controller?: boolean }[] } }[];
}

describe('ReplicaSet controller (kite server + kite sim)', () => {
  const cluster = simCluster(3);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const pods = () => (JSON.parse(k(['get', 'pods', '-l', 'app=web', '-o', 'json'])) as PodList).items;

  it('runs 3 replicas, scales to 1, records its events, and its pods go with it', async () => {
    k(['apply', '-f', '-'], webReplicaSet(3));
    const row = await eventually(() => {
      const line = k(['get', 'rs', 'web', '--no-headers']).trim();
      return /^web\s+3\s+3\s+3\s+/.test(line) ? line : undefined;
    }, 'kubectl get rs web to show 3 3 3', 60_000);
    assert.match(row, /^web\s+3\s+3\s+3\s+\S+$/);
    assert.deepEqual(k(['get', 'rs', 'web']).split('\n')[0]!.trim().split(/\s+/), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE']);
    const three = pods();
    assert.equal(three.length, 3);
    for (const pod of three) {
      assert.match(pod.metadata.name, /^web-[a-z0-9]{5}$/);
      assert.deepEqual(
        pod.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
        [['ReplicaSet', 'web', true]],
      );
    }

    k(['scale', 'rs', 'web', '--replicas=1']);
    await eventually(() => (pods().length === 1 ? true : undefined), 'two pods deleted', 60_000);
    await eventually(() => (/^web\s+1\s+1\s+1\s+/.test(k(['get', 'rs', 'web', '--no-headers']).trim()) ? true : undefined), 'kubectl get rs web to show 1 1 1', 30_000);

    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=ReplicaSet,involvedObject.name=web', '-o', 'custom-columns=REASON:.reason,MESSAGE:.message', '--no-headers']);
    const created = events.split('\n').filter((l) => /^SuccessfulCreate\s+Created pod: web-/.test(l));
    const deleted = events.split('\n').filter((l) => /^SuccessfulDelete\s+Deleted pod: web-/.test(l));
    assert.equal(created.length, 3, events);
    assert.equal(deleted.length, 2, events);

    k(['delete', 'rs', 'web', '--timeout=60s']);
    const gone = kubectl(cluster.server, ['get', 'rs', 'web']);
    assert.match(gone.stderr, /replicasets.apps "web" not found/);
    await eventually(() => (pods().length === 0 ? true : undefined), 'the GC to delete the pods', 60_000);
  });
});
