// The pod timeline of the seeds' pod on real containerd (`kite up` on its own bridge): with
// myservice in place, `web` (examples/web-pod.yaml) starts; the test measures create → Ready with
// its own watch and reads the timeline the API server keeps (`kite timeline web`): every
// step that applies, in order, with non-negative durations, the relay from RequestReceived to Ready
// within 50 ms of the watch's measure; after `kubectl delete pod web`, the termination rows, and the
// timeline is still served once the pod is gone. The pod's nginx gets a preStop hook here, so the
// way down has one to show.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Pod } from '../../src/api/types.js';
import type { PodTimeline, TimelineStep, TimelineStepName } from '../../src/api/timeline/types.js';
import { Client } from '../../src/client/client.js';
import { relaySegments } from '../../src/api/timeline/waterfall.js';
import { eventually, examplesDir, kiteBin, kubectl, kubectlOk } from './harness.js';
import { canRunContainers, startCluster, stopAndReset, watchPods, type KiteCluster } from './cluster.js';

const skip = canRunContainers ? false : 'running containers needs root';

/** The timeline of a pod by name, as `kite timeline NAME -o json` prints it: the one helper every check here goes through. */
function readTimeline(cluster: KiteCluster, name: string, namespace = 'default'): PodTimeline | undefined {
  const r = kite(cluster, ['timeline', name, '-n', namespace, '-o', 'json']);
  if (r.status !== 0) {
    if (/no timeline|not found/i.test(r.stderr)) return undefined;
    throw new Error(`kite timeline ${name}: ${r.stderr}`);
  }
  return JSON.parse(r.stdout) as PodTimeline;
}

function kite(cluster: KiteCluster, args: string[]) {
  return spawnSync(process.execPath, [kiteBin, ...args], { env: { ...process.env, KUBECONFIG: cluster.kubeconfig }, encoding: 'utf8', timeout: 30_000 });
}

const ms = (t: string | undefined) => (t ? Date.parse(t) + Number(/\.\d{3}(\d{3})Z$/.exec(t)?.[1] ?? 0) / 1000 : NaN);

/** Finds a step (the first of its name, for a container when given); fails the test when it is missing. */
function step(tl: PodTimeline, name: TimelineStepName, container?: string): TimelineStep {
  const s = tl.steps.find((x) => x.step === name && (container === undefined || x.container === container));
  assert.ok(s, `step ${name}${container ? ` ${container}` : ''} in ${tl.steps.map((x) => `${x.step}${x.container ? `(${x.container})` : ''}`).join(', ')}`);
  return s;
}

/** Each step begins no earlier than the one before it. */
function assertInOrder(tl: PodTimeline, chain: [TimelineStepName, string?][]): void {
  const found = chain.map(([n, c]) => step(tl, n, c));
  for (let i = 1; i < found.length; i++) {
    const [a, b] = [found[i - 1]!, found[i]!];
    assert.ok(ms(a.start) <= ms(b.start), `${a.step}${a.container ? ` ${a.container}` : ''} (${a.start}) before ${b.step}${b.container ? ` ${b.container}` : ''} (${b.start})`);
  }
}

/** The steps as test diagnostics, one line each: offset, step, container, component, duration. */
function describeSteps(t: { diagnostic(msg: string): void }, tl: PodTimeline): void {
  const t0 = ms(tl.steps[0]?.start);
  for (const s of tl.steps) {
    const took = s.end ? ` ${(ms(s.end) - ms(s.start)).toFixed(1)} ms` : '';
    t.diagnostic(`+${(ms(s.start) - t0).toFixed(1)} ms ${s.step}${s.container ? ` ${s.container}` : ''} ${s.component}${took}${s.count ? ` ×${s.count}` : ''}`);
  }
}

describe("the seeds' pod's timeline on kite up (containerd)", { skip }, () => {
  let cluster: KiteCluster;
  let client: Client;
  const k = (args: string[], input?: string) => kubectlOk(cluster, args, input);

  before(async () => {
    cluster = await startCluster({ extraArgs: ['--bridge', 'kite-tlk', '--pod-cidr', '10.217.200.0/24', '--cgroup-root', '/kite-tlk'] });
    client = await Client.fromKubeconfig(cluster.kubeconfig);
    // The Service (and its nginx Deployment) first: the init container's lookup succeeds at once.
    k(['apply', '-f', join(examplesDir, 'myservice.yaml')]);
    const status = kubectl(cluster, ['rollout', 'status', 'deployment/myservice', '--timeout=120s']);
    assert.equal(status.code, 0, status.stderr);
  });

  after(async () => {
    client?.close();
    await stopAndReset(cluster);
  });

  it('web: every step from the request to Ready, in order, adding up to the create → Ready a watch measures', async (t) => {
    const pod = JSON.parse(k(['create', '--dry-run=client', '-o', 'json', '-f', join(examplesDir, 'web-pod.yaml')])) as Pod;
    pod.spec!.containers[0]!.lifecycle!.preStop = { exec: { command: ['/bin/sh', '-c', 'sleep 1'] } };
    let readySeen: number | undefined;
    const watch = watchPods(
      cluster,
      (type, p) => {
        if (type !== 'DELETED' && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) readySeen ??= Date.now();
      },
      'metadata.name=web',
    );
    try {
      // The watch is open before the create goes out.
      await new Promise((r) => setTimeout(r, 500));
      const sent = Date.now();
      await client.resource('pods').namespace('default').create(pod);
      const seen = await eventually(() => readySeen, 'the watch to see web Ready', 180_000);
      const measured = seen - sent;
      t.diagnostic(`create → Ready seen by the watch: ${measured} ms`);

      const tl = await eventually(() => {
        const got = readTimeline(cluster, 'web');
        return got?.steps.some((s) => s.step === 'Ready') ? got : undefined;
      }, 'the timeline to have Ready', 30_000);
      assert.equal(tl.kind, 'PodTimeline');
      assert.equal(tl.pod.name, 'web');
      describeSteps(t, tl);

      const kubelet = `kubelet/${cluster.nodeName}`;
      assertInOrder(tl, [
        ['KubeletAdmitted'],
        ['VolumesReady'],
        ['SandboxCreated'],
        ['PodIPAssigned'],
        ['ContainerCreated', 'wait-service'],
        ['ContainerStarted', 'wait-service'],
        ['ContainerExited', 'wait-service'],
        ['ContainerCreated', 'nginx'],
        ['ContainerStarted', 'nginx'],
        ['PostStart', 'nginx'],
        ['ReadinessProbePassed', 'nginx'],
        ['ContainersReady'],
        ['Ready'],
      ]);
      assertInOrder(tl, [['SandboxCreated'], ['ImagePull', 'wait-service'], ['ContainerCreated', 'wait-service']]);
      assertInOrder(tl, [['ContainerExited', 'wait-service'], ['ImagePull', 'nginx'], ['ContainerCreated', 'nginx']]);
      for (const name of ['KubeletAdmitted', 'SandboxCreated', 'PodIPAssigned', 'ContainerStarted', 'PostStart', 'Ready'] as const) assert.equal(step(tl, name).component, kubelet);

      assert.match(String(step(tl, 'PodIPAssigned').attributes?.ip), /^10\.217\.200\.\d+$/);
      assert.equal(step(tl, 'ContainerStarted', 'wait-service').containerType, 'init');
      assert.equal(step(tl, 'ContainerStarted', 'nginx').containerType, 'regular');
      assert.deepEqual(step(tl, 'ContainerExited', 'wait-service').attributes, { exitCode: 0, reason: 'Completed' });
      assert.equal(step(tl, 'PostStart', 'nginx').attributes?.error, undefined, 'the hook succeeded');
      for (const c of ['wait-service', 'nginx']) {
        const pull = step(tl, 'ImagePull', c);
        assert.ok(pull.attributes?.present === true || typeof pull.attributes?.waitMs === 'number', `${c}: present, or pulled after a queue wait`);
        assert.ok(Number(pull.attributes?.size) > 0, `${c}: the image size`);
      }
      for (const s of tl.steps) {
        assert.ok(Number.isFinite(ms(s.start)), `${s.step} has a start`);
        if (s.end) assert.ok(ms(s.end) - ms(s.start) >= 0, `${s.step} ${s.container ?? ''}: a non-negative duration`);
      }
      // Before the kubelet's: the API server's steps, and the scheduler's when it records them.
      assertInOrder(tl, [['RequestReceived'], ['Authenticated'], ['Authorized'], ['Persisted'], ['KubeletAdmitted']]);
      assert.equal(step(tl, 'RequestReceived').component, 'kube-apiserver');
      assertInOrder(tl, [['Persisted'], ['SchedulingQueued'], ['SchedulingAttempt'], ['Bound'], ['KubeletAdmitted']]);
      // The relay adds up: from the request's arrival to the Ready write, as the watch measured it.
      const relay = ms(step(tl, 'Ready').start) - ms(step(tl, 'RequestReceived').start);
      t.diagnostic(`RequestReceived → Ready on the timeline: ${relay.toFixed(1)} ms`);
      assert.ok(Math.abs(relay - measured) <= 50, `timeline ${relay.toFixed(1)} ms vs watch ${measured} ms`);
      // The waterfall's relay: back-to-back segments, none negative, adding up to the same span.
      const segments = relaySegments(tl);
      assert.ok(segments.every((x) => x.durationMs >= 0));
      const summed = segments.reduce((a, x) => a + x.durationMs, 0);
      assert.ok(Math.abs(summed - measured) <= 50, `relay segments ${summed.toFixed(1)} ms vs watch ${measured} ms`);
      // And the terminal waterfall names the rows.
      const text = kite(cluster, ['timeline', 'web']);
      assert.equal(text.status, 0, text.stderr);
      for (const row of ['RequestReceived', 'SchedulingAttempt', 'SandboxCreated', 'PodIPAssigned', 'ContainerStarted', 'PostStart', 'ReadinessProbePassed', 'Ready']) assert.match(text.stdout, new RegExp(`\\b${row}\\b`), row);
    } finally {
      watch.stop();
    }
  });

  it('kubectl delete pod web: the termination rows follow, and the timeline outlives the pod', async (t) => {
    const uid = (JSON.parse(k(['get', 'pod', 'web', '-o', 'json'])) as Pod).metadata!.uid!;
    assert.equal(k(['delete', 'pod', 'web']).trim(), 'pod "web" deleted');
    assert.notEqual(kubectl(cluster, ['get', 'pod', 'web']).code, 0, 'the pod is gone');
    const tl = await eventually(() => {
      const got = readTimeline(cluster, 'web');
      return got?.steps.some((s) => s.step === 'CgroupsRemoved') ? got : undefined;
    }, "the timeline to have the kubelet's way down", 60_000);
    describeSteps(t, tl);
    assert.equal(tl.metadata.name, uid, 'keyed by the pod UID');
    assertInOrder(tl, [
      ['Ready'],
      ['PreStop', 'nginx'],
      ['SIGTERM', 'nginx'],
      ['VolumesRemoved'],
      ['SandboxRemoved'],
      ['CgroupsRemoved'],
    ]);
    // The terminal status is written behind the clean-up's start: after the stop, in any order with it.
    assertInOrder(tl, [['SIGTERM', 'nginx'], ['StatusFinal']]);
    for (const name of ['VolumesRemoved', 'SandboxRemoved', 'CgroupsRemoved'] as const) assert.equal(tl.steps.filter((s) => s.step === name).length, 1, `${name} once`);
    const exits = tl.steps.filter((s) => s.step === 'ContainerExited' && s.container === 'nginx');
    assert.ok(exits.some((s) => ms(s.start) >= ms(step(tl, 'SIGTERM', 'nginx').start)), 'nginx exits after its SIGTERM');
    assert.ok(ms(step(tl, 'PreStop', 'nginx').end) - ms(step(tl, 'PreStop', 'nginx').start) >= 1000, 'the preStop sleep lasted 1 s');
    assert.match(String(step(tl, 'StatusFinal').attributes?.phase), /^(Succeeded|Failed)$/);
    assert.equal(tl.steps.find((s) => s.step === 'SIGKILL'), undefined, 'nginx stops on SIGTERM: no SIGKILL');
    for (const s of tl.steps) if (s.end) assert.ok(ms(s.end) >= ms(s.start), `${s.step}: a non-negative duration`);
    // Served by UID too, with the pod gone.
    const byUid = JSON.parse(k(['get', '--raw', `/apis/timeline.kite.dev/v1alpha1/namespaces/default/podtimelines/${uid}`])) as PodTimeline;
    assert.equal(byUid.pod.uid, uid);
    assert.ok(byUid.steps.some((s) => s.step === 'CgroupsRemoved'));
    // The API server's: the delete request before the kubelet's way down, the object gone after it.
    const full = await eventually(() => {
      const got = readTimeline(cluster, 'web');
      return got?.steps.some((s) => s.step === 'Deleted') ? got : undefined;
    }, 'the timeline to have Deleted', 30_000).catch(() => tl);
    assertInOrder(full, [['Ready'], ['DeleteRequested'], ['PreStop', 'nginx']]);
    assertInOrder(full, [['StatusFinal'], ['Deleted']]);
    assert.ok(readTimeline(cluster, 'web')?.deletedAt, 'marked deleted');
  });
});
