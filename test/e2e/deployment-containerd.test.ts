// Issue 12's done-when on real containerd (`kite up`): `kubectl create deployment` of the local
// nginx image and `rollout status` to exit 0, a `set image` roll watched pod by pod against
// maxSurge / maxUnavailable, `rollout history` and `undo`, scale to 0 and back, an image that never
// pulls against a short progress deadline, and the cascading delete. Kept short: the sim e2e
// (deployment.test.ts) covers the rest.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { podConditionTrue } from '../../src/api/pod/status.js';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, watchPods, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

describe('Deployment on kite up (containerd)', { skip }, () => {
  let cluster: KiteCluster;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const rolloutStatus = (name: string) => kubectl(cluster, ['rollout', 'status', `deployment/${name}`, '--timeout=180s']);
  const runningPods = (app: string) =>
    (JSON.parse(k(['get', 'pods', '-l', `app=${app}`, '-o', 'json'])) as { items: Pod[] }).items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.phase === 'Running');

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-deploy', '--pod-cidr', '10.217.244.0/24', '--cgroup-root', '/kite-deploy'] });
  });

  after(() => stopAndReset(cluster));

  it('create deployment web --image=nginx:1.22 --replicas=3: rollout status exits 0', () => {
    assert.equal(k(['create', 'deployment', 'web', '--image=nginx:1.22', '--replicas=3']).trim(), 'deployment.apps/web created');
    const status = rolloutStatus('web');
    assert.equal(status.code, 0, status.stderr);
    const lines = status.stdout.trim().split('\n');
    for (const line of lines.slice(0, -1)) assert.match(line, /^Waiting for deployment (spec update to be observed|"web" rollout to finish: .*)\.\.\.$/);
    assert.equal(lines.at(-1), 'deployment "web" successfully rolled out');
    assert.equal(runningPods('web').length, 3);
  });

  it('set image rolls within maxSurge 1 and maxUnavailable 0; history; undo returns to the old template', async () => {
    // 3 replicas at 25 %: maxSurge 1 (rounded up), maxUnavailable 0 (rounded down).
    const pods = new Map<string, Pod>();
    const violations: string[] = [];
    let sawOld = false;
    let overlapped = false;
    let deleted = 0;
    const watch = watchPods(
      cluster,
      (type, pod) => {
        const name = pod.metadata!.name!;
        if (!name.startsWith('web-')) return;
        if (type === 'DELETED') {
          pods.delete(name);
          deleted++;
        } else pods.set(name, pod);
        const live = [...pods.values()].filter((p) => !p.metadata?.deletionTimestamp);
        const ready = live.filter((p) => podConditionTrue(p, 'Ready')).length;
        if (live.length === 3 && ready === 3) sawOld = true;
        if (new Set(live.map((p) => p.metadata?.labels?.['pod-template-hash'])).size > 1) overlapped = true;
        if (live.length > 4) violations.push(`${live.length} pods after ${type} ${name}`);
        if (sawOld && ready < 3) violations.push(`${ready} ready after ${type} ${name}`);
      },
    );
    try {
      await eventually(() => (sawOld ? true : undefined), 'the watch to see the 3 ready pods');
      assert.equal(k(['set', 'image', 'deployment/web', 'nginx=nginx:latest']).trim(), 'deployment.apps/web image updated');
      const status = rolloutStatus('web');
      assert.equal(status.code, 0, status.stderr);
      await eventually(() => (deleted >= 3 ? true : undefined), 'the old pods to be gone', 60_000);
    } finally {
      watch.stop();
    }
    assert.deepEqual(violations, []);
    assert.ok(overlapped, 'old and new pods ran side by side');
    for (const p of runningPods('web')) assert.equal(p.spec?.containers[0]?.image, 'nginx:latest');

    assert.match(k(['rollout', 'history', 'deployment/web']), /^deployment\.apps\/web\s*\nREVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n/);
    assert.equal(k(['rollout', 'undo', 'deployment/web']).trim(), 'deployment.apps/web rolled back');
    assert.equal(rolloutStatus('web').code, 0);
    await eventually(() => {
      const running = runningPods('web');
      return running.length === 3 && running.every((p) => p.spec?.containers[0]?.image === 'nginx:1.22') ? true : undefined;
    }, 'the pods of the first template back', 60_000);
    assert.match(k(['rollout', 'history', 'deployment/web']), /\n2\s+<none>\n3\s+<none>\n/);
  });

  it('scale --replicas=0 then 5', async () => {
    k(['scale', 'deployment', 'web', '--replicas=0']);
    assert.equal(rolloutStatus('web').code, 0);
    await eventually(() => (k(['get', 'pods', '-l', 'app=web', '-o', 'name']).trim() === '' ? true : undefined), 'every pod gone', 60_000);
    k(['scale', 'deployment', 'web', '--replicas=5']);
    assert.equal(rolloutStatus('web').code, 0);
    assert.equal(runningPods('web').length, 5);
  });

  it('an image that never pulls: rollout status exits 1 at the progress deadline', () => {
    k(['create', 'deployment', 'stuck', '--image=busybox:0.0-missing']);
    k(['patch', 'deployment', 'stuck', '-p', '{"spec":{"progressDeadlineSeconds":10}}']);
    const status = rolloutStatus('stuck');
    assert.equal(status.code, 1, status.stdout);
    assert.equal(status.stderr.trim(), 'error: deployment "stuck" exceeded its progress deadline');
  });

  it('delete removes the ReplicaSets and the pods', async () => {
    assert.equal(k(['delete', 'deployment', 'web', 'stuck']).trim(), 'deployment.apps "web" deleted\ndeployment.apps "stuck" deleted');
    await eventually(() => (k(['get', 'rs,pods', '-o', 'name']).trim() === '' ? true : undefined), 'ReplicaSets and pods gone', 90_000);
  });
});
