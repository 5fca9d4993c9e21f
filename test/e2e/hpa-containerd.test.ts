// `kubectl autoscale` on real containerd (`kite up`): a Deployment whose one container burns CPU up
// to its limit (200m, twice its 100m request) is scaled by the HPA controller from the kubelet's
// metrics (metrics.k8s.io, scraped every 2 s here) towards the 50 % target, capped at --max=3.
// Short intervals (HPA sync 2 s) so it finishes in about a minute.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/types.js';
import { eventually, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, watchPods, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

const burn = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: burn
spec:
  replicas: 1
  selector:
    matchLabels:
      app: burn
  template:
    metadata:
      labels:
        app: burn
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: burn
        image: busybox:1.35
        command: ['sh', '-c', 'while true; do :; done']
        resources:
          requests:
            cpu: 100m
          limits:
            cpu: 200m
`;

interface Hpa {
  status: {
    currentReplicas?: number;
    desiredReplicas?: number;
    currentMetrics?: { resource?: { current?: { averageUtilization?: number } } }[];
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

describe('kubectl autoscale on kite up (containerd)', { skip }, () => {
  let cluster: KiteCluster;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);
  const hpa = () => JSON.parse(k(['get', 'hpa', 'burn', '-o', 'json'])) as Hpa;

  before(async () => {
    cluster = await startCluster({
      extraArgs: ['--bridge', 'kite-hpa', '--pod-cidr', '10.217.239.0/24', '--cgroup-root', '/kite-hpa', '--metric-resolution', '2s', '--horizontal-pod-autoscaler-sync-period', '2s'],
    });
  });

  after(() => stopAndReset(cluster));

  it('scales the CPU burner up from the real utilization, never above --max', async (t) => {
    // Every pod of the Deployment as the watch sees it, and the most that were ever live at once.
    const pods = new Map<string, Pod>();
    let mostLive = 0;
    const watch = watchPods(cluster, (type, pod) => {
      const name = pod.metadata!.name!;
      if (!name.startsWith('burn-')) return;
      if (type === 'DELETED') pods.delete(name);
      else pods.set(name, pod);
      mostLive = Math.max(mostLive, [...pods.values()].filter((p) => !p.metadata?.deletionTimestamp).length);
    });
    try {
      assert.equal(k(['apply', '-f', '-'], burn).trim(), 'deployment.apps/burn created');
      const status = kubectl(cluster, ['rollout', 'status', 'deployment/burn', '--timeout=120s']);
      assert.equal(status.code, 0, status.stderr);
      assert.equal(k(['autoscale', 'deployment', 'burn', '--cpu-percent=50', '--min=1', '--max=3']).trim(), 'horizontalpodautoscaler.autoscaling/burn autoscaled');

      // The controller sees the burner at about its limit, 200 % of its request: ceil(1 × 200 / 50) = 4, capped at 3.
      const scaled = await eventually(() => {
        const h = hpa();
        return (h.status.desiredReplicas ?? 0) > 1 ? h : undefined;
      }, 'the HPA to want more than 1 replica', 90_000);
      assert.ok(scaled.status.desiredReplicas! <= 3, `desiredReplicas ${scaled.status.desiredReplicas}`);
      const utilization = scaled.status.currentMetrics?.[0]?.resource?.current?.averageUtilization;
      // Above the target, and held near 200 % by the CPU limit (an unlimited busy loop would read ~1000 %).
      assert.ok(utilization !== undefined && utilization > 50 && utilization < 300, `averageUtilization ${utilization}`);
      t.diagnostic(`desiredReplicas ${scaled.status.desiredReplicas}, averageUtilization ${utilization}`);

      const event = await eventually(() => {
        const events = k(['get', 'events', '--field-selector', 'involvedObject.kind=HorizontalPodAutoscaler,involvedObject.name=burn,reason=SuccessfulRescale', '-o', 'custom-columns=MESSAGE:.message', '--no-headers']);
        return events.trim() === '' ? undefined : events;
      }, 'the SuccessfulRescale event', 30_000);
      const size = /^New size: (\d+); reason: cpu resource utilization \(percentage of request\) above target$/m.exec(event);
      assert.ok(size, event);
      t.diagnostic(event.trim());
      assert.ok(Number(size[1]) > 1 && Number(size[1]) <= 3, event);

      // kubectl get hpa: the real utilization against the target, and the replicas the Deployment now runs.
      const row = await eventually(() => {
        const line = k(['get', 'hpa', 'burn', '--no-headers']).trim();
        return /\s3\s+\S+$/.test(line) && !line.includes('<unknown>') ? line : undefined;
      }, 'kubectl get hpa to show 3 replicas and a percentage', 90_000);
      const targets = /^burn\s+Deployment\/burn\s+cpu: (\d+)%\/50%\s+1\s+3\s+3\s+\S+$/.exec(row);
      assert.ok(targets, row);
      t.diagnostic(row);
      assert.ok(Number(targets[1]) > 50, row);

      await eventually(() => (k(['get', 'deployment', 'burn', '-o', 'jsonpath={.status.readyReplicas}']) === '3' ? true : undefined), '3 ready replicas', 90_000);
      // Still 200 % each with 3 pods: the HPA would want 12 and holds at its maximum.
      const held = await eventually(() => {
        const h = hpa();
        return h.status.conditions?.find((c) => c.type === 'AbleToScale')?.reason === 'ReadyForNewScale' ? h : undefined;
      }, 'a sync after the rescale', 30_000);
      assert.equal(held.status.desiredReplicas, 3);
      assert.deepEqual(
        held.status.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
        [
          ['AbleToScale', 'True', 'ReadyForNewScale', 'recommended size matches current size'],
          ['ScalingActive', 'True', 'ValidMetricFound', 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)'],
          ['ScalingLimited', 'True', 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'],
        ],
      );
      assert.equal(k(['get', 'deployment', 'burn', '-o', 'jsonpath={.spec.replicas}']), '3');
    } finally {
      watch.stop();
    }
    assert.ok(mostLive <= 3, `${mostLive} pods live at once`);
    assert.equal(k(['delete', 'hpa,deployment', 'burn']).trim(), 'horizontalpodautoscaler.autoscaling "burn" deleted\ndeployment.apps "burn" deleted');
  });
});
