import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Container, Pod, PodStatus } from '../../api/types.js';
import { summarizePod } from '../../api/pod/status.js';
import { FakeClock } from '../../util/clock.js';
import { defaultKubeletConfig } from '../config.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { CONTAINER_HASH_ANNOTATION, CONTAINER_NAME_LABEL, CONTAINER_RESTART_COUNT_ANNOTATION, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, hashContainer } from '../kuberuntime/labels.js';
import type { ContainerConfigInput } from '../kuberuntime/container.js';
import { KubeRuntimeManager } from '../kuberuntime/manager.js';
import type { ImageManager } from '../images/manager.js';
import { makePod } from '../kuberuntime/testing.js';
import { FakeRuntime } from '../runtime/fake/fake.js';
import { RuntimeError, type ExecSyncResponse, type PodSandboxConfig } from '../runtime/types.js';
import { HandlerRunner, runtimePodIP } from '../lifecycle/handlers.js';
import { ProbeManager } from '../prober/manager.js';
import { Prober } from '../prober/prober.js';
import type { Disposable } from '../../util/lifecycle.js';
import { StatusManager, type PodStatusClient } from '../status/manager.js';
import { Pleg } from './pleg.js';
import { KubeletPodSyncer } from './sync.js';
import { PodWorkers } from './workers.js';
import { FakeTimelineRecorder } from '../../client/timeline/recorder.js';
import { KubeletTimeline } from '../timeline/timeline.js';

function podLabels(pod: Pod): Record<string, string> {
  return { [POD_NAME_LABEL]: pod.metadata!.name!, [POD_NAMESPACE_LABEL]: pod.metadata!.namespace!, [POD_UID_LABEL]: pod.metadata!.uid! };
}

function fakeSandboxConfig(pod: Pod, attempt: number): PodSandboxConfig {
  return {
    metadata: { name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, uid: pod.metadata!.uid!, attempt },
    labels: podLabels(pod),
    linux: { security_context: { namespace_options: { network: pod.spec?.hostNetwork ? 'NODE' : 'POD' } } },
  };
}

/** The API server's copy of the pods, patched by the status manager. */
class FakeAPI implements PodStatusClient {
  readonly pods = new Map<string, Pod>();
  readonly deleted: string[] = [];
  patches = 0;
  failNextPatch?: Error;
  async patchPodStatus(namespace: string, name: string, patch: unknown): Promise<Pod> {
    await Promise.resolve();
    if (this.failNextPatch) {
      const err = this.failNextPatch;
      this.failNextPatch = undefined;
      throw err;
    }
    const key = `${namespace}/${name}`;
    const pod = this.pods.get(key)!;
    const diff = (patch as { status: Record<string, unknown> }).status;
    const status = { ...pod.status } as Record<string, unknown>;
    for (const [k, v] of Object.entries(diff)) {
      if (k.startsWith('$')) continue;
      if (v === null) delete status[k];
      else status[k] = v;
    }
    this.patches++;
    const updated = { ...pod, status: status as PodStatus };
    this.pods.set(key, updated);
    return updated;
  }
  async deletePod(namespace: string, name: string): Promise<void> {
    this.deleted.push(`${namespace}/${name}`);
    this.pods.delete(`${namespace}/${name}`);
  }
}

class Harness {
  readonly clock = new FakeClock();
  readonly runtime = new FakeRuntime(this.clock);
  readonly steps = new FakeTimelineRecorder();
  readonly timeline = new KubeletTimeline({ recorder: this.steps, nodeName: 'node-1', clock: this.clock });
  readonly recorder = new FakeRecorder();
  readonly api = new FakeAPI();
  readonly cfg = defaultKubeletConfig({ nodeName: 'node-1', rootDir: 'kubelet', nodeIP: '192.0.2.10' });
  readonly failPull = new Set<string>();
  readonly manager: KubeRuntimeManager;
  readonly status: StatusManager;
  readonly workers: PodWorkers;
  readonly pleg: Pleg;
  readonly probes: ProbeManager;
  /** Exit codes of exec probes and hooks by command line (unset: 0), and every command run, in order. */
  readonly execExits = new Map<string, number>();
  readonly execs: string[] = [];
  private probeSyncs?: Disposable;
  unmounted: string[] = [];
  cleaned: string[] = [];

  constructor(runtime?: FakeRuntime) {
    if (runtime) this.runtime = runtime;
    this.runtime.addImage('busybox');
    const execSync = this.runtime.execSync.bind(this.runtime);
    this.runtime.execSync = async (id, cmd, timeout): Promise<ExecSyncResponse> => {
      this.execs.push(cmd.join(' '));
      const res = await execSync(id, cmd, timeout);
      return { ...res, exit_code: this.execExits.get(cmd.join(' ')) ?? res.exit_code };
    };
    // Wired as kubelet.ts wires them.
    const hooks = new HandlerRunner({ runner: this.runtime, recorder: this.recorder, clock: this.clock, podIP: runtimePodIP(this.runtime) });
    const images: ImageManager = {
      ensureImageExists: async (_pod, c) => {
        if (this.failPull.has(c.image!)) return { ok: false, reason: 'ErrImagePull', message: `failed to pull and unpack image "${c.image}"` };
        return { ok: true, imageRef: await this.runtime.pullImage({ image: c.image! }), user: {} };
      },
    };
    this.manager = new KubeRuntimeManager({
      runtime: this.runtime,
      cfg: this.cfg,
      clock: this.clock,
      recorder: this.recorder,
      images,
      sources: { getConfigMap: async () => undefined, getSecret: async () => undefined },
      generatePodSandboxConfig: fakeSandboxConfig,
      generateContainerConfig: async (i: ContainerConfigInput) => {
        if (i.container.env?.some((e) => e.name === 'BROKEN')) throw new Error('configmap "missing" not found');
        return {
          metadata: { name: i.container.name, attempt: i.restartCount },
          image: { image: i.container.image! },
          labels: { ...podLabels(i.pod), [CONTAINER_NAME_LABEL]: i.container.name },
          annotations: { [CONTAINER_HASH_ANNOTATION]: hashContainer(i.container), [CONTAINER_RESTART_COUNT_ANNOTATION]: String(i.restartCount) },
        };
      },
      postStart: (pod, c, id, signal) => hooks.runPostStart(pod, c, id, signal),
      preStop: async (pod, c, id, grace, signal) => (await hooks.runPreStop(pod, c, id, grace, signal)).elapsedSeconds,
      timeline: this.timeline,
    });
    this.status = new StatusManager({ client: this.api, clock: this.clock, onWritten: (pod, status) => this.timeline.statusWritten(pod, status) });
    this.probes = new ProbeManager({ statusProvider: this.status, prober: new Prober({ runner: this.runtime, recorder: this.recorder, clock: this.clock }), clock: this.clock, random: () => 0, timeline: this.timeline });
    const syncer = new KubeletPodSyncer({
      runtime: this.runtime,
      manager: this.manager,
      status: this.status,
      volumes: { mountPod: async () => ({ mounts: () => [] }), unmountPod: async (uid) => void this.unmounted.push(uid) },
      cfg: this.cfg,
      clock: this.clock,
      cleanupPod: async (pod) => void this.cleaned.push(pod.metadata!.uid!),
      probes: this.probes,
      timeline: this.timeline,
    });
    this.workers = new PodWorkers({ syncer, clock: this.clock });
    this.pleg = new Pleg({ runtime: this.runtime, clock: this.clock, relistPeriodMs: this.cfg.relistPeriodMs, onPodChanged: (uid) => this.workers.poke(uid) });
  }

  start(): void {
    this.status.start();
    this.workers.start();
    this.probeSyncs = this.probes.onSyncNeeded((uid) => this.workers.poke(uid));
    this.pleg.start();
  }

  async stop(): Promise<void> {
    await this.pleg.stop();
    this.probeSyncs?.dispose();
    this.probes.stop();
    await this.workers.stop();
    await this.status.stop();
  }

  add(pod: Pod): void {
    this.api.pods.set(`${pod.metadata!.namespace}/${pod.metadata!.name}`, pod);
    this.workers.updatePod({ type: 'create', pod });
  }

  pod(name = 'web'): Pod {
    return this.api.pods.get(`default/${name}`)!;
  }

  async settle(ms = 0): Promise<void> {
    await this.clock.advance(ms);
    await this.workers.idle();
    await this.status.idle();
    await this.clock.advance(0);
  }

  kubectlStatus(name = 'web'): string {
    return summarizePod(this.pod(name)).reason;
  }

  running(name: string, uid = 'uid-1') {
    return this.runtime.containersNamed(uid, name).find((c) => c.state === 'CONTAINER_RUNNING');
  }

  /** The timeline as "Step container" lines, in recording order. */
  stepNames(uid = 'uid-1'): string[] {
    return this.steps.steps(uid).map((s) => (s.container ? `${s.step} ${s.container}` : s.step));
  }

  events(reason?: string): string[] {
    return this.recorder.events.filter((e) => !reason || e.reason === reason).map((e) => `${e.reason} ${e.message}`);
  }
}

test('create: sandbox, init containers one at a time, then the app containers together', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ initContainers: ['wait-service', 'migrate'], containers: ['nginx', 'sidecar'] }));
  await h.settle();
  assert.equal(h.runtime.sandboxes.size, 1);
  assert.ok(h.running('wait-service'));
  assert.equal(h.running('migrate'), undefined);
  assert.equal(h.kubectlStatus(), 'Init:0/2');
  assert.equal(h.pod().status?.phase, 'Pending');
  assert.equal(h.pod().status?.podIP, '10.88.0.2');

  h.runtime.exitContainer(h.running('wait-service')!.id, 0);
  await h.settle(1000); // the relist notices the exit
  assert.ok(h.running('migrate'));
  assert.equal(h.kubectlStatus(), 'Init:1/2');

  h.runtime.exitContainer(h.running('migrate')!.id, 0);
  await h.settle(1000);
  assert.ok(h.running('nginx'));
  assert.ok(h.running('sidecar'));
  assert.equal(h.pod().status?.phase, 'Running');
  assert.equal(h.kubectlStatus(), 'Running');
  assert.equal(h.pod().status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.deepEqual(h.events('Created').slice(0, 2), ['Created Created container: wait-service', 'Created Created container: migrate']);
  assert.ok(h.events('Started').includes('Started Started container nginx'));
  assert.equal(h.recorder.events.find((e) => e.reason === 'Started')?.object.fieldPath, 'spec.initContainers{wait-service}');
  await h.stop();
  assert.equal(h.clock.pending(), 0, 'stop() leaves no timers');
});

test('the status is written right after the start, without waiting for a relist', async () => {
  const h = new Harness();
  h.add(makePod());
  await h.workers.idle();
  await h.status.idle();
  assert.equal(h.pod().status?.phase, 'Running');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.containerID, `containerd://${h.running('nginx')!.id}`);
  await h.stop();
});

test('crash loop: restarts at once, then back-off 10s, 20s, 40s … capped at 5m', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod());
  await h.settle();
  const restartDelays: number[] = [];
  let lastExit = 0;
  for (let i = 0; i < 8; i++) {
    const c = h.running('nginx')!;
    if (i > 0) restartDelays.push(c.createdAt - lastExit);
    h.runtime.exitContainer(c.id, 1);
    lastExit = h.clock.now();
    await h.settle(1000); // relist
    if (!h.running('nginx')) {
      assert.equal(h.kubectlStatus(), 'CrashLoopBackOff');
      const waiting = h.pod().status?.containerStatuses?.[0]?.state?.waiting;
      assert.match(waiting?.message ?? '', /^back-off \d+(m\d+)?s restarting failed container=nginx pod=web_default\(uid-1\)$/);
    }
    for (let t = 0; t < 400 && !h.running('nginx'); t++) await h.settle(1000);
  }
  assert.deepEqual(restartDelays, [1000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000]);
  const status = h.pod().status!.containerStatuses![0]!;
  assert.equal(status.restartCount, 8);
  assert.equal(status.lastState?.terminated?.exitCode, 1);
  assert.ok(h.events('BackOff').includes('BackOff Back-off restarting failed container nginx in pod web_default(uid-1)'));
  // Old attempts are pruned: the running one and the last dead one remain.
  assert.ok(h.runtime.containersNamed('uid-1', 'nginx').length <= 2);
  await h.stop();
});

for (const [policy, exitCode, phase, column] of [
  ['Never', 0, 'Succeeded', 'Completed'],
  ['Never', 1, 'Failed', 'Error'],
  ['OnFailure', 0, 'Succeeded', 'Completed'],
] as const) {
  test(`restartPolicy ${policy}, exit ${exitCode}: ${phase}, no restart, containers kept until deletion`, async () => {
    const h = new Harness();
    h.start();
    h.add(makePod({ restartPolicy: policy }));
    await h.settle();
    h.runtime.exitContainer(h.running('nginx')!.id, exitCode);
    await h.settle(1000);
    assert.equal(h.pod().status?.phase, phase);
    assert.equal(h.kubectlStatus(), column);
    assert.equal(h.workers.state('uid-1'), 'terminated');
    assert.equal(h.runtime.containersNamed('uid-1', 'nginx').length, 1);
    assert.equal(h.runtime.callsOf('createContainer').length, 1);
    await h.settle(120_000);
    assert.equal(h.runtime.callsOf('createContainer').length, 1, 'a terminal pod never restarts');
    assert.deepEqual(h.api.deleted, [], 'not deleted: nobody asked');
    await h.stop();
  });
}

test('OnFailure: a failed container restarts', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ restartPolicy: 'OnFailure' }));
  await h.settle();
  h.runtime.exitContainer(h.running('nginx')!.id, 3);
  await h.settle(1000);
  assert.ok(h.running('nginx'));
  assert.equal(h.pod().status?.containerStatuses?.[0]?.restartCount, 1);
  await h.stop();
});

test('init container failing under Never: pod Failed, app never started', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ restartPolicy: 'Never', initContainers: ['i0'] }));
  await h.settle();
  h.runtime.exitContainer(h.running('i0')!.id, 1);
  await h.settle(1000);
  assert.equal(h.pod().status?.phase, 'Failed');
  assert.equal(h.kubectlStatus(), 'Init:Error');
  assert.equal(h.runtime.containersNamed('uid-1', 'nginx').length, 0);
  await h.stop();
});

test('delete: terminating, killed with the grace period, cleaned up, then deleted by the status manager', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ initContainers: [{ name: 'proxy', restartPolicy: 'Always' }] }));
  await h.settle();
  await h.settle(1000);
  assert.ok(h.running('nginx'));
  const pod = h.pod();
  const deleting: Pod = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 } };
  const names = new Map([...h.runtime.containers.values()].map((c) => [c.id, c.config.metadata.name]));
  h.api.pods.set('default/web', deleting);
  h.workers.updatePod({ type: 'update', pod: deleting });
  h.status.updatePod(deleting);
  await h.settle();
  const stops = h.runtime.callsOf('stopContainer').map(([id, grace]) => [names.get(id as string), grace]);
  assert.deepEqual(stops, [
    ['nginx', 30],
    ['proxy', 30],
  ], 'app first, then the sidecar');
  assert.deepEqual(h.events('Killing'), ['Killing Stopping container nginx', 'Killing Stopping container proxy']);
  assert.equal(h.workers.state('uid-1'), 'terminated');
  assert.deepEqual(h.unmounted, ['uid-1']);
  assert.deepEqual(h.cleaned, ['uid-1']);
  assert.equal(h.runtime.containers.size, 0);
  assert.equal(h.runtime.sandboxes.size, 0);
  assert.deepEqual(h.api.deleted, ['default/web']);
  await h.stop();
});

test('a dead sandbox is recreated with SandboxChanged, and init containers run again', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ initContainers: ['i0'] }));
  await h.settle();
  h.runtime.exitContainer(h.running('i0')!.id, 0);
  await h.settle(1000);
  assert.ok(h.running('nginx'));
  const [first] = h.runtime.sandboxes.keys();
  h.runtime.killSandbox(first!);
  await h.settle(1000);
  assert.ok(h.events('SandboxChanged').includes('SandboxChanged Pod sandbox changed, it will be killed and re-created.'));
  const ready = [...h.runtime.sandboxes.values()].filter((s) => s.state === 'SANDBOX_READY');
  assert.equal(ready.length, 1);
  assert.equal(ready[0]!.config.metadata.attempt, 1);
  assert.ok(h.running('i0'), 'initialization starts over');
  h.runtime.exitContainer(h.running('i0')!.id, 0);
  await h.settle(1000);
  assert.ok(h.running('nginx'));
  assert.equal(h.pod().status?.containerStatuses?.[0]?.restartCount, 1);
  await h.stop();
});

test('kubelet restart: a new worker adopts running containers without restarting them', async () => {
  const first = new Harness();
  first.start();
  first.add(makePod());
  await first.settle();
  first.runtime.exitContainer(first.running('nginx')!.id, 1);
  await first.settle(1000);
  const before = first.running('nginx')!;
  assert.equal(first.pod().status?.containerStatuses?.[0]?.restartCount, 1);
  await first.stop();

  const second = new Harness(first.runtime);
  second.start();
  second.add(first.pod());
  await second.settle(2000);
  assert.equal(second.running('nginx')!.id, before.id, 'same container');
  assert.equal(second.runtime.callsOf('createContainer').length, first.runtime.callsOf('createContainer').length);
  assert.equal(second.pod().status?.containerStatuses?.[0]?.restartCount, 1);
  assert.equal(second.pod().status?.phase, 'Running');
  await second.stop();
});

test('start failures surface as waiting reasons: ErrImagePull, CreateContainerConfigError, RunContainerError', async () => {
  const h = new Harness();
  h.start();
  h.failPull.add('nginx:broken');
  const broken: Partial<Container> = { name: 'cfg', env: [{ name: 'BROKEN', value: '1' }] };
  h.add(makePod({ containers: [{ name: 'pull', image: 'nginx:broken' }, broken, 'run'] }));
  h.runtime.failNext('startContainer', new RuntimeError('UNKNOWN', 'failed to create containerd task: exec: "nope": not found'));
  await h.settle();
  const byName = new Map(h.pod().status!.containerStatuses!.map((c) => [c.name, c.state?.waiting]));
  assert.deepEqual(byName.get('pull'), { reason: 'ErrImagePull', message: 'failed to pull and unpack image "nginx:broken"' });
  assert.deepEqual(byName.get('cfg'), { reason: 'CreateContainerConfigError', message: 'configmap "missing" not found' });
  assert.equal(byName.get('run')?.reason, 'RunContainerError');
  assert.ok(h.events('Failed').includes('Failed Error: configmap "missing" not found'));
  // The error back-off retries: the created-but-not-started container is started again.
  await h.settle(10_000);
  assert.ok(h.running('run'));
  await h.stop();
});

test('a status write that fails is retried with back-off', async () => {
  const h = new Harness();
  h.api.failNextPatch = Object.assign(new Error('etcdserver: request timed out'), { code: 500 });
  h.start();
  h.add(makePod());
  await h.settle();
  assert.equal(h.pod().status?.phase, 'Pending');
  await h.settle(500);
  assert.equal(h.pod().status?.phase, 'Running');
  await h.stop();
});

test('a pod rejected by admission (phase Failed) never runs a container', async () => {
  const h = new Harness();
  h.start();
  const pod = makePod();
  const rejected: Pod = { ...pod, status: { phase: 'Failed', reason: 'OutOfcpu', message: 'Pod was rejected: x' } };
  h.status.setPodStatus(pod, rejected.status!);
  h.add(rejected);
  await h.settle(1000);
  assert.equal(h.workers.state('uid-1'), 'terminated');
  assert.equal(h.runtime.sandboxes.size, 0);
  assert.equal(h.pod().status?.phase, 'Failed');
  assert.equal(h.pod().status?.reason, 'OutOfcpu');
  await h.stop();
});

// --- probes and lifecycle hooks, wired as the kubelet wires them ---

function condition(h: Harness, type: string): string | undefined {
  return h.pod().status?.conditions?.find((c) => c.type === type)?.status;
}

test('liveness: 3 failures kill the container with the probe grace, it restarts, and restarts back off', async () => {
  const h = new Harness();
  h.start();
  const pod = makePod({ containers: [{ name: 'app', livenessProbe: { exec: { command: ['check'] }, periodSeconds: 10, failureThreshold: 3, terminationGracePeriodSeconds: 5 } }] });
  pod.spec!.terminationGracePeriodSeconds = 30;
  h.add(pod);
  await h.settle();
  const first = h.running('app')!;
  h.execExits.set('check', 1);
  for (let t = 0; t < 60 && h.running('app')?.id === first.id; t++) await h.settle(1000);
  assert.notEqual(h.running('app')?.id, first.id, 'a new container runs');
  assert.deepEqual(h.events('Killing'), ['Killing Container app failed liveness probe, will be restarted']);
  assert.deepEqual(h.runtime.callsOf('stopContainer'), [[first.id, 5]], "the probe's terminationGracePeriodSeconds");
  assert.ok(h.events('Unhealthy').length >= 3);
  assert.ok(h.events('Unhealthy').every((e) => e.startsWith('Unhealthy Liveness probe failed:')));
  assert.equal(h.pod().status?.containerStatuses?.[0]?.restartCount, 1);

  // Every replacement fails its probes too: the restarts go on, and back off as a crash loop does.
  const delays: number[] = [];
  let killedAt = 0;
  let stops = 1;
  let creates = h.runtime.callsOf('createContainer').length;
  for (let t = 0; t < 600 && delays.length < 5; t++) {
    await h.settle(1000);
    if (h.runtime.callsOf('stopContainer').length > stops) {
      stops = h.runtime.callsOf('stopContainer').length;
      killedAt = h.clock.now();
    }
    if (h.runtime.callsOf('createContainer').length > creates) {
      creates = h.runtime.callsOf('createContainer').length;
      delays.push(h.clock.now() - killedAt);
    }
  }
  // Kills come ~30 s apart (3 periods); once the back-off (10 s, 20 s, 40 s …) outgrows that, starts wait.
  assert.deepEqual(delays, [0, 0, 0, 40_000, 80_000]);
  assert.ok(h.events('BackOff').includes('BackOff Back-off restarting failed container app in pod web_default(uid-1)'));
  assert.equal(h.pod().status?.containerStatuses?.[0]?.restartCount, 6);
  await h.stop();
  assert.equal(h.clock.pending(), 0, 'stop() leaves no probe timers');
});

test('readiness: Ready and ContainersReady follow the probe within a period, and nothing restarts', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ containers: [{ name: 'app', readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 10, failureThreshold: 3 } }] }));
  h.execExits.set('ready', 1);
  await h.settle();
  await h.settle(30_000);
  assert.equal(h.pod().status?.phase, 'Running');
  assert.equal(h.kubectlStatus(), 'Running');
  assert.equal(condition(h, 'Ready'), 'False');
  assert.equal(condition(h, 'ContainersReady'), 'False');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.ready, false);
  assert.equal(h.pod().status?.containerStatuses?.[0]?.started, true);

  h.execExits.delete('ready');
  await h.settle(10_000); // one period, far short of the 1-minute resync
  assert.equal(condition(h, 'Ready'), 'True');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.ready, true);

  h.execExits.set('ready', 1);
  await h.settle(30_000);
  assert.equal(condition(h, 'Ready'), 'False');
  assert.deepEqual(h.events('Killing'), []);
  assert.equal(h.pod().status?.containerStatuses?.[0]?.restartCount, 0);
  await h.stop();
});

test('startup: holds liveness off, and a startup probe that never succeeds kills the container', async () => {
  const h = new Harness();
  h.start();
  const app: Partial<Container> = {
    name: 'app',
    startupProbe: { exec: { command: ['started'] }, periodSeconds: 10, failureThreshold: 3 },
    livenessProbe: { exec: { command: ['live'] }, periodSeconds: 10 },
  };
  h.add(makePod({ containers: [app] }));
  h.execExits.set('started', 1);
  await h.settle();
  const first = h.running('app')!;
  await h.settle(10_000);
  assert.equal(h.pod().status?.containerStatuses?.[0]?.started, false);
  for (let t = 0; t < 60 && h.running('app')?.id === first.id; t++) await h.settle(1000);
  assert.deepEqual(h.events('Killing'), ['Killing Container app failed startup probe, will be restarted']);
  assert.ok(h.events('Unhealthy').every((e) => e.startsWith('Unhealthy Startup probe failed:')));
  assert.ok(!h.execs.includes('live'), 'liveness waits for the startup probe');

  h.execExits.delete('started');
  await h.settle(10_000);
  assert.equal(h.pod().status?.containerStatuses?.[0]?.started, true);
  await h.settle(10_000);
  assert.ok(h.execs.includes('live'), 'liveness probes once started');
  await h.stop();
});

test('postStart: the container is not reported running or started until its hook returns', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ containers: [{ name: 'app', lifecycle: { postStart: { sleep: { seconds: 5 } } } }] }));
  await h.clock.advance(1000); // no settle: the sync is inside the hook
  assert.ok(h.running('app'), 'started in the runtime');
  assert.equal(h.pod().status?.phase, 'Pending');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.state?.waiting?.reason, 'ContainerCreating');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.started, false);
  await h.clock.advance(4000);
  await h.settle();
  assert.equal(h.pod().status?.phase, 'Running');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.started, true);
  assert.equal(condition(h, 'Ready'), 'True');
  await h.stop();
});

test('a deletion does not wait for a postStart hook still running: the pod is killed at once', async () => {
  const h = new Harness();
  h.start();
  const pod = makePod({ containers: [{ name: 'app', lifecycle: { postStart: { sleep: { seconds: 300 } } } }] });
  pod.spec!.terminationGracePeriodSeconds = 5;
  h.add(pod);
  await h.clock.advance(1000); // inside the hook
  const app = h.running('app')!;
  assert.ok(app, 'started in the runtime');
  const deleting: Pod = { ...h.pod(), metadata: { ...h.pod().metadata, deletionTimestamp: '2026-01-01T00:00:06Z', deletionGracePeriodSeconds: 5 } };
  h.api.pods.set('default/web', deleting);
  h.workers.updatePod({ type: 'update', pod: deleting });
  await h.settle(1000);
  assert.deepEqual(h.runtime.callsOf('stopContainer'), [[app.id, 5]], 'stopped with the grace period, not after the hook');
  assert.equal(h.events('FailedPostStartHook').length, 0, 'an interrupted hook is no failure');
  await h.stop();
});

test('postStart failure: the container is killed (FailedPostStartHook) and waits with PostStartHookError', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod({ containers: [{ name: 'app', lifecycle: { postStart: { exec: { command: ['hook'] } } } }] }));
  h.execExits.set('hook', 1);
  await h.settle();
  assert.deepEqual(h.events().slice(-2), ['FailedPostStartHook PostStartHook failed', 'Killing FailedPostStartHook']);
  const status = h.pod().status!.containerStatuses![0]!;
  assert.deepEqual(status.state?.waiting, {
    reason: 'PostStartHookError',
    message: `Exec lifecycle hook ([hook]) for Container "app" in Pod "web_default(uid-1)" failed - error: command 'hook' exited with 1: , message: ""`,
  });
  assert.equal(status.lastState?.terminated?.exitCode, 137);
  assert.equal(status.started, false);
  assert.equal(h.running('app'), undefined);
  // Retried like a crashed container.
  h.execExits.delete('hook');
  await h.settle(1000);
  await h.settle(10_000);
  assert.equal(h.pod().status?.phase, 'Running');
  assert.equal(h.pod().status?.containerStatuses?.[0]?.restartCount, 1);
  await h.stop();
});

test('a shorter grace period during termination cancels the kill under way and kills again with it', async () => {
  const h = new Harness();
  h.runtime.ignoreSigterm = true;
  h.start();
  h.add(makePod({ containers: [{ name: 'app', lifecycle: { preStop: { sleep: { seconds: 20 } } } }] }));
  await h.settle();
  const app = h.running('app')!;
  const deleting = (grace: number): Pod => ({ ...h.pod(), metadata: { ...h.pod().metadata, deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: grace } });
  h.workers.updatePod({ type: 'update', pod: deleting(30) });
  await h.clock.advance(3000);
  assert.equal(h.running('app')?.id, app.id, 'still in its preStop hook');
  // kubectl delete --grace-period=1 while the 30 s termination runs.
  const shorter = deleting(1);
  h.api.pods.set('default/web', shorter);
  h.workers.updatePod({ type: 'update', pod: shorter });
  h.status.updatePod(shorter);
  await h.clock.advance(1000); // the preStop hook again, now for at most 1 s
  await h.clock.advance(2000); // then the stop, with upstream's 2 s minimum
  await h.settle();
  assert.deepEqual(h.runtime.callsOf('stopContainer'), [[app.id, 2]], 'one stop, with the shorter grace period');
  assert.equal(h.workers.state('uid-1'), 'terminated');
  assert.deepEqual(h.api.deleted, ['default/web']);
  await h.stop();
});

test('a shorter grace period cancels a StopContainer already waiting for its timeout', async () => {
  const h = new Harness();
  h.runtime.ignoreSigterm = true;
  h.start();
  h.add(makePod({ containers: ['app'] }));
  await h.settle();
  const app = h.running('app')!;
  const deleting = (grace: number): Pod => ({ ...h.pod(), metadata: { ...h.pod().metadata, deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: grace } });
  h.workers.updatePod({ type: 'update', pod: deleting(30) });
  await h.clock.advance(5000);
  assert.equal(h.running('app')?.id, app.id, 'SIGTERM ignored, 25 s left');
  h.workers.updatePod({ type: 'update', pod: deleting(1) });
  await h.clock.advance(2000);
  await h.settle();
  assert.deepEqual(h.runtime.callsOf('stopContainer'), [
    [app.id, 30],
    [app.id, 2],
  ]);
  assert.equal(h.running('app'), undefined);
  assert.equal(h.workers.state('uid-1'), 'terminated');
  await h.stop();
});

test('preStop: runs before StopContainer and its time comes off the grace period', async () => {
  const h = new Harness();
  h.start();
  const pod = makePod({ containers: [{ name: 'app', lifecycle: { preStop: { sleep: { seconds: 5 } } } }, { name: 'log', lifecycle: { preStop: { exec: { command: ['drain'] } } } }] });
  pod.spec!.terminationGracePeriodSeconds = 30;
  h.add(pod);
  await h.settle();
  const app = h.running('app')!;
  const log = h.running('log')!;
  const deleting: Pod = { ...h.pod(), metadata: { ...h.pod().metadata, deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 } };
  h.api.pods.set('default/web', deleting);
  h.workers.updatePod({ type: 'update', pod: deleting });
  await h.clock.advance(1000);
  const order = h.runtime.calls.filter((c) => c.method === 'execSync' || c.method === 'stopContainer').map((c) => `${c.method} ${c.args[0] === app.id ? 'app' : 'log'}`);
  assert.deepEqual(order, ['execSync log', 'stopContainer log'], 'the exec hook, then the stop; app still in its sleep hook');
  assert.equal(h.running('app')?.id, app.id);
  await h.clock.advance(4000);
  await h.settle();
  assert.deepEqual(h.runtime.callsOf('stopContainer'), [
    [log.id, 30],
    [app.id, 25],
  ]);
  await h.stop();
});

test('a kill with a status function (node shutdown): preStop, stop with the override, Failed with its reason, completed once stopped', async () => {
  const h = new Harness();
  h.start();
  const pod = makePod({ containers: [{ name: 'app', lifecycle: { preStop: { exec: { command: ['save'] } } } }] });
  pod.spec!.terminationGracePeriodSeconds = 30;
  h.add(pod);
  await h.settle();
  const app = h.running('app')!;
  let completed = 0;
  const podStatusFn = (s: PodStatus): PodStatus => ({ ...s, phase: 'Failed', reason: 'Terminated', message: 'shutting down' });
  h.workers.updatePod({ type: 'kill', pod: h.pod(), gracePeriodSeconds: 10, podStatusFn, completed: () => completed++ });
  await h.settle();
  assert.deepEqual(h.execs, ['save']);
  assert.deepEqual(h.runtime.callsOf('stopContainer'), [[app.id, 10]]);
  assert.equal(completed, 1);
  assert.equal(h.workers.state('uid-1'), 'terminated');
  const status = h.pod().status!;
  assert.deepEqual([status.phase, status.reason, status.message], ['Failed', 'Terminated', 'shutting down']);
  assert.equal(status.containerStatuses?.[0]?.state?.terminated?.exitCode, 137);
  // A kill of a pod already terminated completes at once.
  h.workers.updatePod({ type: 'kill', pod: h.pod(), gracePeriodSeconds: 10, podStatusFn, completed: () => completed++ });
  assert.equal(completed, 2);
  await h.stop();
});

test('what container GC may remove: a deleted terminated pod\'s content, a terminated pod\'s runtime, anything of an unknown pod', async () => {
  const h = new Harness();
  h.start();
  h.add(makePod());
  await h.settle();
  const verdict = () => [h.workers.shouldPodContentBeRemoved('uid-1'), h.workers.shouldPodRuntimeBeRemoved('uid-1')];
  assert.deepEqual(verdict(), [false, false], 'running');
  h.workers.updatePod({ type: 'kill', pod: h.pod(), gracePeriodSeconds: 1 });
  await h.settle();
  assert.deepEqual(verdict(), [false, true], 'terminated, still in the API');
  const deleting: Pod = { ...h.pod(), metadata: { ...h.pod().metadata, deletionTimestamp: '2026-01-01T00:00:30Z' } };
  h.workers.updatePod({ type: 'update', pod: deleting });
  await h.settle();
  assert.deepEqual(verdict(), [true, true], 'terminated and deleted');
  assert.deepEqual([h.workers.shouldPodContentBeRemoved('other'), h.workers.shouldPodRuntimeBeRemoved('other')], [true, true], 'never seen');
  await h.stop();
});

test('timeline: the kubelet records each step of a start and of a deletion, in order, as kubelet/<node>', async () => {
  const h = new Harness();
  h.start();
  h.runtime.ignoreSigterm = true;
  const app: Partial<Container> = {
    name: 'nginx',
    lifecycle: { postStart: { exec: { command: ['hook'] } }, preStop: { exec: { command: ['drain'] } } },
    readinessProbe: { exec: { command: ['ready'] }, periodSeconds: 5 },
  };
  const pod = makePod({ initContainers: ['wait-service'], containers: [app] });
  pod.spec!.terminationGracePeriodSeconds = 10;
  h.add(pod);
  await h.settle();
  h.runtime.exitContainer(h.running('wait-service')!.id, 0);
  await h.settle(1000);
  await h.settle(5000);
  assert.equal(condition(h, 'Ready'), 'True');
  assert.deepEqual(h.stepNames(), [
    'VolumesReady',
    'SandboxCreated',
    'PodIPAssigned',
    'ContainerCreated wait-service',
    'ContainerStarted wait-service',
    'ContainerExited wait-service',
    'ContainerCreated nginx',
    'ContainerStarted nginx',
    'PostStart nginx',
    'ReadinessProbePassed nginx',
    'ContainersReady',
    'Ready',
  ]);
  const steps = h.steps.steps('uid-1');
  assert.ok(steps.every((s) => s.component === 'kubelet/node-1'));
  assert.equal(steps.find((s) => s.step === 'PodIPAssigned')?.attributes?.ip, '10.88.0.2');
  assert.deepEqual(steps.find((s) => s.step === 'ContainerExited')?.attributes, { exitCode: 0, reason: 'Completed' });
  assert.equal(steps.find((s) => s.step === 'ContainerStarted' && s.container === 'wait-service')?.containerType, 'init');
  assert.equal(steps.find((s) => s.step === 'ContainerStarted' && s.container === 'nginx')?.containerType, 'regular');
  assert.ok(steps.find((s) => s.step === 'PostStart')?.end, 'the hook is a span');

  const before = steps.length;
  const deleting: Pod = { ...h.pod(), metadata: { ...h.pod().metadata, deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 10 } };
  h.api.pods.set('default/web', deleting);
  h.workers.updatePod({ type: 'update', pod: deleting });
  h.status.updatePod(deleting);
  const killFrom = h.clock.now();
  // SIGTERM is ignored: the stop lasts the grace period (settle would wait on it, so only the clock moves).
  for (let t = 0; t < 20 && h.workers.state('uid-1') !== 'terminated'; t++) await h.clock.advance(1000);
  await h.settle();
  assert.deepEqual(h.stepNames().slice(before), [
    'PreStop nginx',
    'SIGTERM nginx',
    'SIGKILL nginx',
    'ContainerExited nginx',
    // The terminal status is written once the containers are stopped, before the clean-up.
    'StatusFinal',
    'VolumesRemoved',
    'SandboxRemoved',
    'CgroupsRemoved',
  ]);
  const down = h.steps.steps('uid-1').slice(before);
  assert.equal(down.find((s) => s.step === 'SIGTERM')?.attributes?.gracePeriodSeconds, 10);
  assert.equal(down.find((s) => s.step === 'SIGKILL')?.start, new Date(killFrom + 10_000).toISOString().replace('Z', '000Z'), 'at grace expiry');
  assert.equal(down.find((s) => s.step === 'StatusFinal')?.attributes?.phase, 'Failed', 'killed by SIGKILL');
  for (const s of h.steps.steps('uid-1')) assert.ok(!s.end || s.end >= s.start, `${s.step} ends after it starts`);
  await h.stop();
});

test('timeline: restarts, back-offs and probe failures are counted series, not a row per retry', async () => {
  const h = new Harness();
  h.start();
  const pod = makePod({ containers: [{ name: 'app', livenessProbe: { exec: { command: ['check'] }, periodSeconds: 10, failureThreshold: 3 } }] });
  h.add(pod);
  await h.settle();
  h.execExits.set('check', 1);
  for (let t = 0; t < 400 && (h.pod().status?.containerStatuses?.[0]?.restartCount ?? 0) < 5; t++) await h.settle(1000);
  const steps = h.steps.steps('uid-1');
  const last = (name: string) => steps.filter((s) => s.step === name).at(-1)!;
  const failed = last('ProbeFailed');
  assert.equal(failed.attributes?.probe, 'liveness');
  assert.equal(failed.attributes?.threshold, 3);
  assert.ok((failed.count ?? 0) >= 15, `every failure counted (${failed.count})`);
  assert.equal(failed.start, steps.find((s) => s.step === 'ProbeFailed')!.start, 'a series keeps its first time');
  assert.ok(failed.lastTime! > failed.start);
  const restarted = last('ContainerRestarted');
  assert.equal(restarted.count, h.pod().status?.containerStatuses?.[0]?.restartCount);
  const backOff = last('BackOff');
  assert.equal(backOff.attributes?.reason, 'CrashLoopBackOff');
  assert.ok(typeof backOff.attributes?.delayMs === 'number' && backOff.attributes.delayMs >= 10_000);
  assert.match(String(backOff.attributes?.nextStart), /^2026-01-01T\d\d:\d\d:\d\d\.\d{6}Z$/);
  // One back-off period counts once however many syncs see it.
  const periods = new Set(steps.filter((s) => s.step === 'BackOff').map((s) => s.attributes?.nextStart));
  assert.equal(backOff.count, periods.size);
  await h.stop();
});
