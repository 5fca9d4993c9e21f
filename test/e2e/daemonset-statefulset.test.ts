// The DaemonSet and StatefulSet controllers inside `kite server`, with pods run by `kite sim`,
// checked with the real kubectl: a DaemonSet's pod on each of 5 nodes and on a sixth that joins
// (a second `kite sim --first-node 5` registering one more node while the first runs), `rollout status` for both
// kinds, a StatefulSet's pods created in ordinal order, scaled down in reverse, and rolled highest
// ordinal first; `rollout history` and `rollout undo` on their ControllerRevisions.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { eventually, kubectl, kubectlOk, startSim, type KiteServer, type KiteSim, simCluster } from './harness.js';

const daemonSet = (image: string) => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: default
spec:
  selector:
    matchLabels:
      app: agent
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 1
      maxSurge: 0
  revisionHistoryLimit: 10
  template:
    metadata:
      labels:
        app: agent
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: ${image}
        command: ['sleep', '3600']
`;

const statefulSet = (replicas: number, image: string) => `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: default
spec:
  replicas: ${replicas}
  serviceName: web
  podManagementPolicy: OrderedReady
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      partition: 0
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: ${image}
`;

interface PodList {
  items: { metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> }; spec: { nodeName?: string; hostname?: string; subdomain?: string; containers: { image: string }[] } }[];
}

/** `kubectl get pods -w` in the background: each line "name deletionTimestamp" in watch order. */
function watchPods(server: KiteServer, selector: string): { lines: string[]; proc: ChildProcess } {
  const proc = spawn('kubectl', ['--kubeconfig', server.kubeconfig, 'get', 'pods', '-l', selector, '--watch-only', '-o', 'jsonpath={.metadata.name} {.metadata.deletionTimestamp}{"\\n"}'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buf = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts.filter((l) => l.trim() !== ''));
  });
  return { lines, proc };
}

/** kubectl runs synchronously (spawnSync): the watch's output is read only when the event loop turns. */
const drain = () => new Promise((r) => setTimeout(r, 1000));

/** Names in the order the watch first saw them (created), and first saw them terminating. */
function orders(lines: readonly string[]): { created: string[]; deleted: string[] } {
  const created: string[] = [];
  const deleted: string[] = [];
  for (const line of lines) {
    const [name, deletion] = line.trim().split(/\s+/);
    if (!name) continue;
    if (!created.includes(name)) created.push(name);
    if (deletion && !deleted.includes(name)) deleted.push(name);
  }
  return { created, deleted };
}

describe('DaemonSet and StatefulSet controllers (kite server + kite sim)', () => {
  // Registered first, so it runs before the cluster's: the joined sim stops while its server still runs.
  after(async () => {
    await joined?.stop();
  });
  let joined: KiteSim | undefined;
  const cluster = simCluster(5);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const pods = (selector: string) => (JSON.parse(k(['get', 'pods', '-l', selector, '-o', 'json'])) as PodList).items.filter((p) => !p.metadata.deletionTimestamp);

  it('a DaemonSet runs one pod on each of 5 nodes, then on a sixth that joins; rollout status exits 0', async () => {
    k(['apply', '-f', '-'], daemonSet('busybox:1.35'));
    const rollout = kubectl(cluster.server, ['rollout', 'status', 'ds/agent', '--timeout=90s']);
    assert.equal(rollout.code, 0, rollout.stderr);
    assert.match(rollout.stdout, /daemon set "agent" successfully rolled out/);
    const five = pods('app=agent');
    assert.deepEqual(five.map((p) => p.spec.nodeName).sort(), ['sim-0', 'sim-1', 'sim-2', 'sim-3', 'sim-4']);

    // A sixth node joins: a second simulator registering sim-5 beside the running one.
    joined = await startSim(cluster.server, 1, { extraArgs: ['--first-node', '5'] });
    await eventually(() => (pods('app=agent').some((p) => p.spec.nodeName === 'sim-5') ? true : undefined), 'a pod on the joined node', 60_000);
    const again = kubectl(cluster.server, ['rollout', 'status', 'ds/agent', '--timeout=90s']);
    assert.equal(again.code, 0, again.stderr);
    const six = pods('app=agent');
    assert.equal(six.length, 6);
    assert.equal(new Set(six.map((p) => p.spec.nodeName)).size, 6, 'one per node');
    const row = k(['get', 'ds', 'agent', '-o', 'jsonpath={.status.desiredNumberScheduled} {.status.numberReady} {.status.updatedNumberScheduled} {.status.numberAvailable}']);
    assert.equal(row, '6 6 6 6');

    // A template change rolls every node to the new pod.
    k(['apply', '-f', '-'], daemonSet('busybox:1.36'));
    const rolled = kubectl(cluster.server, ['rollout', 'status', 'ds/agent', '--timeout=120s']);
    assert.equal(rolled.code, 0, rolled.stderr);
    await eventually(() => {
      const now = pods('app=agent');
      return now.length === 6 && now.every((p) => p.spec.containers[0]!.image === 'busybox:1.36') ? true : undefined;
    }, 'six pods of the new template', 60_000);
    // Each template a ControllerRevision: kubectl lists them as the rollout history.
    assert.match(k(['rollout', 'history', 'ds/agent']), /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=DaemonSet,involvedObject.name=agent', '-o', 'custom-columns=REASON:.reason', '--no-headers']);
    assert.ok(events.split('\n').filter((l) => l.trim() === 'SuccessfulCreate').length >= 6, events);
    k(['delete', 'ds', 'agent', '--timeout=60s']);
  });

  it('a StatefulSet creates web-0, web-1, web-2 in order, scales down in reverse, and rolls highest ordinal first', async () => {
    const watch = watchPods(cluster.server, 'app=web');
    try {
      // The watch must be open before the first pod exists.
      await drain();
      k(['apply', '-f', '-'], statefulSet(3, 'nginx:1.22'));
      const rollout = kubectl(cluster.server, ['rollout', 'status', 'sts/web', '--timeout=90s']);
      assert.equal(rollout.code, 0, rollout.stderr);
      // With rollingUpdate.partition set, kubectl reports the partitioned form.
      assert.match(rollout.stdout, /partitioned roll out complete: 3 new pods have been updated\.\.\./);
      const three = pods('app=web');
      assert.deepEqual(three.map((p) => p.metadata.name).sort(), ['web-0', 'web-1', 'web-2']);
      for (const p of three) {
        assert.equal(p.spec.hostname, p.metadata.name);
        assert.equal(p.spec.subdomain, 'web');
        assert.equal(p.metadata.labels?.['statefulset.kubernetes.io/pod-name'], p.metadata.name);
      }
      await eventually(() => (orders(watch.lines).created.length >= 3 ? true : undefined), 'the watch to see three pods', 10_000);
      assert.deepEqual(orders(watch.lines).created, ['web-0', 'web-1', 'web-2']);

      // A template change: replaced one at a time, highest ordinal first.
      await drain();
      const before = watch.lines.length;
      k(['apply', '-f', '-'], statefulSet(3, 'nginx:1.23'));
      const rolled = kubectl(cluster.server, ['rollout', 'status', 'sts/web', '--timeout=120s']);
      assert.equal(rolled.code, 0, rolled.stderr);
      await eventually(() => (orders(watch.lines.slice(before)).deleted.length >= 3 ? true : undefined), 'the watch to see three pods terminating', 10_000);
      assert.deepEqual(orders(watch.lines.slice(before)).deleted, ['web-2', 'web-1', 'web-0']);
      assert.ok(pods('app=web').every((p) => p.spec.containers[0]!.image === 'nginx:1.23'));

      // Undo applies the previous revision's template; that revision becomes the newest.
      k(['rollout', 'undo', 'sts/web']);
      const undone = kubectl(cluster.server, ['rollout', 'status', 'sts/web', '--timeout=120s']);
      assert.equal(undone.code, 0, undone.stderr);
      await eventually(() => (pods('app=web').every((p) => p.spec.containers[0]!.image === 'nginx:1.22') ? true : undefined), 'the pods back at nginx:1.22', 30_000);
      assert.match(k(['rollout', 'history', 'sts/web']), /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);

      await drain();
      const scaleFrom = watch.lines.length;
      k(['scale', 'sts', 'web', '--replicas=1']);
      await eventually(() => (pods('app=web').length === 1 ? true : undefined), 'two pods deleted', 60_000);
      assert.deepEqual(pods('app=web').map((p) => p.metadata.name), ['web-0']);
      await eventually(() => (orders(watch.lines.slice(scaleFrom)).deleted.length >= 2 ? true : undefined), 'the watch to see two pods terminating', 10_000);
      assert.deepEqual(orders(watch.lines.slice(scaleFrom)).deleted, ['web-2', 'web-1']);
      // Terminating pods count in status.replicas until they are gone, as upstream.
      await eventually(() => (k(['get', 'sts', 'web', '-o', 'jsonpath={.status.replicas} {.status.readyReplicas}']) === '1 1' ? true : undefined), 'status 1 1', 30_000);
    } finally {
      watch.proc.kill();
    }
  });
});
