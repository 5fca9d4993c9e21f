// Probes and lifecycle hooks on real containerd, driven by the real kubectl against `kite up`: the
// seed's pod (its init container made to succeed) goes 1/1 Ready on its readiness probe and is
// killed and restarted again and again by its liveness probe (nginx answers /healthz with 404);
// a startup probe that never succeeds kills its container; a failing readiness probe keeps a
// Running pod at READY 0/1. The cluster has its own bridge, subnet and cgroup root.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import { eventually, kubectlOk, examplesDir } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

/** The seed's pod with an init container that exits 0 (there is no `myservice` to wait for). */
function seedPod(): string {
  const yaml = readFileSync(join(examplesDir, 'web-pod.yaml'), 'utf8');
  const waiting = "command: ['sh', '-c', 'until nslookup myservice.default.svc.cluster.local; do echo waiting; sleep 2; done']";
  assert.ok(yaml.includes(waiting), 'the seed pod still has its waiting init container');
  return yaml.replace(waiting, "command: ['sh', '-c', 'exit 0']");
}

function pod(name: string, container: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: 'busybox:1.35', command: ['sh', '-c', 'sleep 3600'], ...container }] },
  });
}

const others: Record<string, string> = {
  'startup-never': pod('startup-never', { startupProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 } }),
  'not-ready': pod('not-ready', { readinessProbe: { exec: { command: ['false'] }, periodSeconds: 1 } }),
};

describe('probes and lifecycle hooks on containerd', { skip, timeout: 600_000 }, () => {
  let cluster: KiteCluster;

  const getPod = (name: string): Pod => JSON.parse(kubectlOk(cluster, ['get', 'pod', name, '-o', 'json'])) as Pod;
  const condition = (p: Pod, type: string) => p.status?.conditions?.find((c) => c.type === type)?.status;
  /** kubectl get's columns: NAME READY STATUS RESTARTS AGE (RESTARTS may read "2 (5s ago)"). */
  const row = (name: string) => {
    const cols = kubectlOk(cluster, ['get', 'pod', name, '--no-headers']).trim().split(/\s+/);
    return { ready: cols[1], status: cols[2], restarts: Number(cols[3]) };
  };
  const events = (name: string) =>
    kubectlOk(cluster, ['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'jsonpath={range .items[*]}{.reason}|{.message}{"\\n"}{end}'])
      .trim()
      .split('\n');

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-probe', '--pod-cidr', '10.217.240.0/24', '--cgroup-root', '/kite-probe'] });
    kubectlOk(cluster, ['apply', '-f', '-'], seedPod());
    for (const manifest of Object.values(others)) kubectlOk(cluster, ['apply', '-f', '-'], manifest);
  });

  after(() => stopAndReset(cluster));

  it('the seed pod: readiness on / makes it 1/1 Ready', async () => {
    await eventually(() => (row('web').ready === '1/1' ? true : undefined), `web 1/1 Ready (now ${JSON.stringify(row('web'))})`, 120_000);
    const p = getPod('web');
    assert.equal(condition(p, 'Ready'), 'True');
    assert.equal(condition(p, 'ContainersReady'), 'True');
    assert.equal(p.status?.containerStatuses?.[0]?.started, true);
  });

  it('the seed pod: liveness on /healthz gets 404, so nginx is killed and restarted again and again', async () => {
    // initialDelaySeconds 5, periodSeconds 5, failureThreshold 3: a kill about every 15-20 s.
    await eventually(() => (row('web').restarts >= 2 ? true : undefined), `web restarted twice (now ${JSON.stringify(row('web'))})`, 180_000);
    const evs = events('web');
    assert.ok(evs.includes('Unhealthy|Liveness probe failed: HTTP probe failed with statuscode: 404'), evs.join('\n'));
    assert.ok(evs.includes('Killing|Container nginx failed liveness probe, will be restarted'), evs.join('\n'));
    const nginx = getPod('web').status?.containerStatuses?.find((c) => c.name === 'nginx');
    assert.ok((nginx?.restartCount ?? 0) >= 2);
    assert.ok(nginx?.lastState?.terminated, 'the killed attempt is the last state');
  });

  it('a startup probe that never succeeds kills the container', async () => {
    await eventually(() => (row('startup-never').restarts >= 1 ? true : undefined), 'startup-never restarted', 90_000);
    const evs = events('startup-never');
    assert.ok(evs.includes('Killing|Container app failed startup probe, will be restarted'), evs.join('\n'));
    assert.ok(evs.some((e) => e.startsWith('Unhealthy|Startup probe failed:')), evs.join('\n'));
    assert.equal(condition(getPod('startup-never'), 'Ready'), 'False');
  });

  it('a failing readiness probe keeps a Running pod at READY 0/1, without restarts', async () => {
    await eventually(() => (row('not-ready').status === 'Running' ? true : undefined), 'not-ready Running', 60_000);
    await eventually(() => (events('not-ready').some((e) => e.startsWith('Unhealthy|Readiness probe failed:')) ? true : undefined), 'a Readiness Unhealthy event', 30_000);
    const r = row('not-ready');
    assert.equal(r.ready, '0/1');
    assert.equal(r.status, 'Running');
    assert.equal(r.restarts, 0);
    const p = getPod('not-ready');
    assert.equal(condition(p, 'Ready'), 'False');
    assert.equal(condition(p, 'ContainersReady'), 'False');
    assert.equal(p.status?.containerStatuses?.[0]?.started, true);
  });
});
