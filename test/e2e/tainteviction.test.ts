// Taint-based eviction inside `kite server` (the taint-eviction-controller), with pods run by
// `kite sim`, driven by the real kubectl: `kubectl taint node ... :NoExecute` deletes at once the
// pods that do not tolerate it, those with tolerationSeconds when it runs out, never those that
// tolerate it forever; `kubectl taint node ... key-` before then cancels. Pods on a node whose Node
// object is deleted are removed by the pod garbage collector after its 40 s quarantine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, simCluster } from './harness.js';

interface PodList {
  items: { metadata: { name: string; deletionTimestamp?: string }; status?: { phase?: string } }[];
}

/** A busybox pod bound to `node`, tolerating dedicated=x:NoExecute for `seconds` (null: forever; undefined: no toleration). */
const pod = (name: string, node: string, seconds?: number | null) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { test: 'taints' } },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'busybox:1.35', command: ['sleep', '3600'] }],
      ...(seconds === undefined
        ? {}
        : { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoExecute', ...(seconds === null ? {} : { tolerationSeconds: seconds }) }] }),
    },
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('taint-based eviction (kite server + kite sim)', () => {
  const cluster = simCluster(3);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  /** Pods by name, those terminating included. */
  const pods = () => new Map((JSON.parse(k(['get', 'pods', '-l', 'test=taints', '-o', 'json'])) as PodList).items.map((p) => [p.metadata.name, p]));
  const running = (names: string[]) => eventually(() => (names.every((n) => pods().get(n)?.status?.phase === 'Running') ? true : undefined), `${names.join(', ')} Running`, 60_000);
  /** Gone, or terminating (the simulated kubelet finishes it within its 1 s grace). */
  const evicted = (name: string) => {
    const p = pods().get(name);
    return !p || p.metadata.deletionTimestamp !== undefined;
  };
  const taintEvents = () => k(['get', 'events', '--field-selector', 'reason=TaintManagerEviction', '-o', 'custom-columns=OBJECT:.involvedObject.name,SOURCE:.source.component,MESSAGE:.message', '--no-headers']);

  it('kubectl taint NoExecute deletes pods not tolerating it at once, those tolerating it for 10 s after 10 s, not those tolerating it forever', async () => {
    for (const [name, seconds] of [
      ['intolerant', undefined],
      ['ten-seconds', 10],
      ['forever', null],
    ] as const)
      k(['apply', '-f', '-'], pod(name, 'sim-1', seconds));
    await running(['intolerant', 'ten-seconds', 'forever']);

    const tainted = Date.now();
    assert.equal(k(['taint', 'node', 'sim-1', 'dedicated=x:NoExecute']).trim(), 'node/sim-1 tainted');
    await eventually(() => (evicted('intolerant') ? true : undefined), 'the pod not tolerating the taint deleted', 10_000);
    assert.match(taintEvents(), /^intolerant\s+taint-eviction-controller\s+Marking for deletion Pod default\/intolerant$/m);
    assert.equal(evicted('ten-seconds'), false, 'tolerated for 10 s');

    await eventually(() => (evicted('ten-seconds') ? true : undefined), 'the pod tolerating it for 10 s deleted', 30_000);
    const after = (Date.now() - tainted) / 1000;
    assert.ok(after >= 9, `deleted ${after} s after the taint, not before 10 s`);
    assert.match(taintEvents(), /^ten-seconds\s+taint-eviction-controller\s+Marking for deletion Pod default\/ten-seconds$/m);
    const forever = pods().get('forever');
    assert.equal(forever?.metadata.deletionTimestamp, undefined, 'tolerating forever: stays');
    assert.equal(forever?.status?.phase, 'Running');
    // The simulated kubelet finishes the deleted pods.
    await eventually(() => (!pods().has('intolerant') && !pods().has('ten-seconds') ? true : undefined), 'the evicted pods gone', 30_000);
    assert.equal(kubectl(cluster.server, ['get', 'pod', 'intolerant']).code, 1);
  });

  it('removing the taint before tolerationSeconds runs out cancels the deletion', async () => {
    k(['apply', '-f', '-'], pod('saved', 'sim-2', 8));
    await running(['saved']);
    assert.equal(k(['taint', 'node', 'sim-2', 'dedicated=x:NoExecute']).trim(), 'node/sim-2 tainted');
    await sleep(3000);
    assert.equal(k(['taint', 'node', 'sim-2', 'dedicated-']).trim(), 'node/sim-2 untainted');
    await eventually(() => (/^saved\s+taint-eviction-controller\s+Cancelling deletion of Pod default\/saved$/m.test(taintEvents()) ? true : undefined), 'the Cancelling deletion event', 10_000);
    // Past the 8 s it tolerated the taint for.
    await sleep(8000);
    assert.equal(evicted('saved'), false);
    assert.doesNotMatch(taintEvents(), /Marking for deletion Pod default\/saved/);
  });

  it('pods on a node whose Node object is deleted are removed by the pod garbage collector', async () => {
    k(['apply', '-f', '-'], pod('orphan', 'sim-2'));
    await running(['orphan']);
    assert.equal(k(['delete', 'node', 'sim-2']).trim(), 'node "sim-2" deleted');
    // A 40 s quarantine, checked every 20 s.
    await eventually(() => (pods().has('orphan') ? undefined : true), 'the pod of the deleted node removed', 90_000);
    assert.ok(pods().has('forever'), 'pods on other nodes stay');
  });
});
