import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Container, Pod, PodStatus, Probe } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { ProbeManager } from './manager.js';
import { Prober, type ProbeRunResult, type ProbeRunner, type ProbeType } from './prober.js';
import type { ResultUpdate } from './results.js';

const T0 = Date.UTC(2026, 0, 1);

/** Scripted probe outcomes per type; records every probe. */
class ScriptedProber implements ProbeRunner {
  readonly calls: { type: ProbeType; containerID: string; at: number }[] = [];
  readonly next = new Map<ProbeType, ProbeRunResult[]>();
  fallback: Record<ProbeType, ProbeRunResult> = { liveness: { result: 'Success' }, readiness: { result: 'Success' }, startup: { result: 'Success' } };
  constructor(private readonly clock: FakeClock) {}
  script(type: ProbeType, ...results: ('Success' | 'Failure' | 'Error')[]): void {
    this.next.set(type, results.map((r) => (r === 'Error' ? { result: 'Failure', error: 'boom' } : { result: r })));
  }
  async probe(type: ProbeType, _pod: Pod, _status: PodStatus, _c: Container, containerID: string): Promise<ProbeRunResult> {
    this.calls.push({ type, containerID, at: this.clock.now() - T0 });
    return this.next.get(type)?.shift() ?? this.fallback[type];
  }
  count(type: ProbeType): number {
    return this.calls.filter((c) => c.type === type).length;
  }
}

class Statuses {
  readonly byUID = new Map<string, PodStatus>();
  getPodStatus(uid: string): PodStatus | undefined {
    return this.byUID.get(uid);
  }
  running(uid: string, name: string, id: string, startedAt: number, extra: Partial<PodStatus> = {}): void {
    this.byUID.set(uid, {
      phase: 'Running',
      podIP: '10.88.0.5',
      containerStatuses: [{ name, containerID: `containerd://${id}`, image: 'nginx', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: new Date(startedAt).toISOString().replace(/\.\d+Z$/, 'Z') } } }],
      ...extra,
    });
  }
  exited(uid: string, name: string, id: string): void {
    this.byUID.set(uid, {
      phase: 'Running',
      containerStatuses: [{ name, containerID: `containerd://${id}`, image: 'nginx', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137 } } }],
    });
  }
}

function makePod(probes: { liveness?: Probe; readiness?: Probe; startup?: Probe }, opts: { restartPolicy?: string; uid?: string } = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: opts.uid ?? 'uid-1' },
    spec: {
      restartPolicy: opts.restartPolicy ?? 'Always',
      containers: [{ name: 'nginx', image: 'nginx', livenessProbe: probes.liveness, readinessProbe: probes.readiness, startupProbe: probes.startup }],
    },
  };
}

const exec: Probe = { exec: { command: ['true'] } };

function setup(opts: { random?: number; startAfterMs?: number } = {}) {
  const clock = new FakeClock(T0);
  const prober = new ScriptedProber(clock);
  const statuses = new Statuses();
  const manager = new ProbeManager({ statusProvider: statuses, prober, clock, random: () => opts.random ?? 0 });
  const updates: (ResultUpdate & { type: ProbeType })[] = [];
  manager.livenessResults.onChange((u) => updates.push({ ...u, type: 'liveness' }));
  manager.readinessResults.onChange((u) => updates.push({ ...u, type: 'readiness' }));
  manager.startupResults.onChange((u) => updates.push({ ...u, type: 'startup' }));
  return { clock, prober, statuses, manager, updates };
}

describe('ProbeManager', () => {
  it('starts each probe type at upstream initial result, probes every period and counts thresholds', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    manager.addPod(makePod({ liveness: { ...exec, periodSeconds: 10, failureThreshold: 3 }, readiness: { ...exec, periodSeconds: 10 } }));
    assert.equal(manager.workerCount(), 2);
    await clock.advance(0);
    assert.equal(manager.liveness('c1'), 'Success');
    assert.equal(manager.readinessResults.get('c1'), 'Success', 'readiness: Failure at first, then its first probe succeeded');

    prober.script('liveness', 'Failure', 'Failure', 'Failure');
    await clock.advance(10_000);
    await clock.advance(10_000);
    assert.equal(manager.liveness('c1'), 'Success', 'two failures stay below failureThreshold 3');
    await clock.advance(10_000);
    assert.equal(manager.liveness('c1'), 'Failure');
    const before = prober.count('liveness');
    await clock.advance(30_000);
    assert.equal(prober.count('liveness'), before, 'a failed liveness worker holds until the container is replaced');

    // The container restarts: a new ID resets the worker to its initial result and probing resumes.
    statuses.running('uid-1', 'nginx', 'c2', clock.now());
    await clock.advance(10_000);
    assert.equal(manager.liveness('c1'), undefined, 'the old container result is dropped');
    assert.equal(manager.liveness('c2'), 'Success');
    assert.equal(prober.count('liveness'), before + 1);
    assert.equal(prober.calls.at(-1)!.containerID, 'c2');
  });

  it('reports the initial results before the first probe (readiness Failure, liveness Success, startup Unknown)', async () => {
    const { clock, prober, statuses, manager, updates } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.fallback = { liveness: { result: 'Failure', error: 'x' }, readiness: { result: 'Failure', error: 'x' }, startup: { result: 'Failure', error: 'x' } };
    manager.addPod(makePod({ liveness: exec, readiness: exec, startup: exec }));
    await clock.advance(0);
    assert.deepEqual(
      updates.map((u) => [u.type, u.result]).sort(),
      [
        ['liveness', 'Success'],
        ['readiness', 'Failure'],
        ['startup', 'Unknown'],
      ],
    );
    assert.equal(manager.startup('c1'), undefined, 'Unknown reads as not yet probed');
    assert.equal(manager.started('c1'), false);
    assert.equal(prober.count('startup'), 1, 'only the startup probe runs before the container has started');
    assert.equal(prober.count('liveness'), 0);
  });

  it('waits initialDelaySeconds from the container start', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    manager.addPod(makePod({ liveness: { ...exec, initialDelaySeconds: 15, periodSeconds: 5 } }));
    await clock.advance(0);
    await clock.advance(10_000);
    assert.equal(prober.count('liveness'), 0, 'probes at 0, 5 and 10 s fall inside the 15 s delay');
    await clock.advance(5_000);
    assert.deepEqual(
      prober.calls.map((c) => c.at),
      [15_000],
    );
  });

  it('holds liveness and readiness until the startup probe succeeds, then stops probing startup', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.script('startup', 'Failure', 'Failure', 'Success');
    manager.addPod(makePod({ startup: { ...exec, periodSeconds: 10, failureThreshold: 30 }, liveness: { ...exec, periodSeconds: 10 }, readiness: { ...exec, periodSeconds: 10 } }));
    await clock.advance(19_999);
    assert.equal(prober.count('startup'), 2);
    assert.equal(manager.started('c1'), false);
    assert.equal(prober.count('liveness') + prober.count('readiness'), 0, 'liveness and readiness were held off while the startup probe ran');
    await clock.advance(1);
    assert.equal(prober.count('startup'), 3);
    assert.equal(manager.started('c1'), true);
    assert.equal(manager.startup('c1'), 'Success');
    await clock.advance(10_000);
    assert.equal(prober.count('startup'), 3, 'a started container is not startup-probed again');
    assert.deepEqual(
      prober.calls.filter((c) => c.type === 'liveness').map((c) => c.at),
      [20_000, 30_000],
    );
  });

  it('a startup probe that never succeeds fails after failureThreshold and holds', async () => {
    const { clock, prober, statuses, manager, updates } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.fallback.startup = { result: 'Failure' };
    manager.addPod(makePod({ startup: { ...exec, periodSeconds: 1, failureThreshold: 3 }, liveness: exec }));
    await clock.advance(5_000);
    assert.equal(manager.startup('c1'), 'Failure');
    assert.equal(prober.count('startup'), 3);
    assert.equal(prober.count('liveness'), 0);
    assert.ok(updates.some((u) => u.type === 'startup' && u.result === 'Failure' && u.podUID === 'uid-1' && u.containerID === 'c1'));
  });

  it('needs successThreshold successes in a row for readiness', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.script('readiness', 'Success', 'Failure', 'Success', 'Success');
    manager.addPod(makePod({ readiness: { ...exec, periodSeconds: 1, successThreshold: 2 } }));
    await clock.advance(0);
    await clock.advance(2_000);
    assert.equal(manager.ready('c1', { name: 'nginx' }), false, 'success, failure, success: no run of two yet');
    await clock.advance(1_000);
    assert.equal(manager.readinessResults.get('c1'), 'Success');
    assert.equal(manager.ready('containerd://c1', { name: 'nginx' }), true);
  });

  it('a readiness failure only clears readiness and keeps probing', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.fallback.readiness = { result: 'Failure' };
    manager.addPod(makePod({ readiness: { ...exec, periodSeconds: 1, failureThreshold: 1 } }));
    await clock.advance(5_000);
    assert.equal(manager.readinessResults.get('c1'), 'Failure');
    assert.equal(prober.count('readiness'), 6);
  });

  it('throws away probes that errored', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.fallback.liveness = { result: 'Failure', error: 'strconv.Atoi: parsing "http": invalid syntax' };
    manager.addPod(makePod({ liveness: { ...exec, periodSeconds: 1, failureThreshold: 1 } }));
    await clock.advance(5_000);
    assert.equal(manager.liveness('c1'), 'Success');
  });

  it('jitters the first probe within a period of the kubelet start, not later', async () => {
    const { clock, prober, statuses, manager } = setup({ random: 0.5 });
    statuses.running('uid-1', 'nginx', 'c1', T0);
    manager.addPod(makePod({ liveness: { ...exec, periodSeconds: 10 } }));
    await clock.advance(20_000);
    assert.deepEqual(
      prober.calls.map((c) => c.at),
      [5_000, 15_000],
    );

    await clock.advance(5_000); // 25 s after start: past one period
    statuses.running('uid-2', 'nginx', 'd1', clock.now());
    manager.addPod(makePod({ liveness: { ...exec, periodSeconds: 10 } }, { uid: 'uid-2' }));
    await clock.advance(0);
    assert.equal(prober.calls.filter((c) => c.containerID === 'd1')[0]?.at, 25_000);
  });

  it('waits for the container to appear in the status', async () => {
    const { clock, prober, statuses, manager } = setup();
    manager.addPod(makePod({ liveness: { ...exec, periodSeconds: 2 } }));
    await clock.advance(4_000);
    assert.equal(prober.count('liveness'), 0);
    statuses.running('uid-1', 'nginx', 'c1', clock.now());
    await clock.advance(2_000);
    assert.equal(prober.count('liveness'), 1);
  });

  it('marks a stopped container failed and ends when it will not restart', async () => {
    const { clock, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    manager.addPod(makePod({ readiness: { ...exec, periodSeconds: 1 } }, { restartPolicy: 'Never' }));
    await clock.advance(1_000);
    assert.equal(manager.readinessResults.get('c1'), 'Success');
    statuses.exited('uid-1', 'nginx', 'c1');
    await clock.advance(1_000);
    assert.equal(manager.workerCount(), 0);
    assert.equal(manager.readinessResults.get('c1'), undefined, 'an ended worker drops its result');
  });

  it('keeps probing a stopped container that restarts', async () => {
    const { clock, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    manager.addPod(makePod({ liveness: { ...exec, periodSeconds: 1 } }));
    await clock.advance(1_000);
    statuses.exited('uid-1', 'nginx', 'c1');
    await clock.advance(1_000);
    assert.equal(manager.liveness('c1'), 'Failure');
    assert.equal(manager.workerCount(), 1);
  });

  it('ends with the pod: terminal phase, deletion, removePod, cleanupPods, stop', async () => {
    const terminal = setup();
    terminal.statuses.running('uid-1', 'nginx', 'c1', T0, { phase: 'Succeeded' });
    terminal.manager.addPod(makePod({ liveness: exec }));
    await terminal.clock.advance(0);
    assert.equal(terminal.manager.workerCount(), 0);

    const deleting = setup();
    deleting.statuses.running('uid-1', 'nginx', 'c1', T0);
    deleting.prober.fallback.liveness = { result: 'Failure' };
    const pod = makePod({ liveness: { ...exec, failureThreshold: 1 }, readiness: exec });
    deleting.manager.addPod(pod);
    deleting.manager.addPod({ ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } });
    await deleting.clock.advance(0);
    assert.equal(deleting.prober.count('liveness'), 0, 'a pod being deleted is not liveness-probed');
    assert.equal(deleting.manager.workerCount(), 1, 'readiness keeps going');

    const removal = setup();
    removal.statuses.running('uid-1', 'nginx', 'c1', T0);
    removal.manager.addPod(pod);
    removal.manager.addPod(makePod({ liveness: exec }, { uid: 'uid-2' }));
    await removal.clock.advance(0);
    removal.manager.stopLivenessAndStartup(pod);
    assert.equal(removal.manager.workerCount(), 2);
    assert.equal(removal.manager.liveness('c1'), undefined);
    removal.manager.removePod(pod);
    assert.equal(removal.manager.workerCount(), 1);
    removal.manager.cleanupPods(new Set(['uid-2']));
    assert.equal(removal.manager.workerCount(), 1);
    removal.manager.cleanupPods(new Set());
    assert.equal(removal.manager.workerCount(), 0);
    removal.manager.addPod(pod);
    removal.manager.stop();
    assert.equal(removal.manager.workerCount(), 0);
    assert.equal(removal.clock.pending(), 0, 'stop cancels every timer');
    removal.manager.addPod(pod);
    assert.equal(removal.manager.workerCount(), 0, 'a stopped manager starts no workers');
  });

  it('probes readiness at once when the status generator finds a started container not ready', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.running('uid-1', 'nginx', 'c1', T0);
    prober.fallback.readiness = { result: 'Failure' };
    manager.addPod(makePod({ readiness: { ...exec, periodSeconds: 30 } }));
    await clock.advance(0);
    assert.equal(prober.count('readiness'), 1);
    prober.fallback.readiness = { result: 'Success' };
    assert.equal(manager.ready('c1', { name: 'nginx' }), false);
    await clock.advance(0);
    assert.equal(prober.count('readiness'), 2, 'triggered without waiting 30 s');
    assert.equal(manager.ready('c1', { name: 'nginx' }), true);
  });

  it('probes sidecars (restartable init containers)', async () => {
    const { clock, prober, statuses, manager } = setup();
    statuses.byUID.set('uid-1', {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'proxy', containerID: 'containerd://s1', image: 'x', imageID: '', ready: false, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
    });
    manager.addPod({
      metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
      spec: { initContainers: [{ name: 'proxy', restartPolicy: 'Always', livenessProbe: exec }, { name: 'setup', livenessProbe: exec }], containers: [{ name: 'nginx' }] },
    });
    assert.equal(manager.workerCount(), 1, 'plain init containers are not probed');
    await clock.advance(0);
    assert.equal(prober.calls[0]?.containerID, 's1');
  });
});

describe('ProbeManager with the real prober', () => {
  it('fails liveness on the third 404 while readiness on / keeps the container ready, with upstream events', async () => {
    const server = createServer((req, res) => res.writeHead(req.url === '/' ? 200 : 404).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const clock = new FakeClock(T0);
      const recorder = new FakeRecorder();
      const real = new Prober({ runner: { execSync: () => Promise.reject(new Error('unused')) }, recorder, clock });
      let done = 0;
      const prober: ProbeRunner = { probe: (...args) => real.probe(...args).finally(() => done++) };
      const statuses = new Statuses();
      statuses.running('uid-1', 'nginx', 'c1', T0, { podIP: '127.0.0.1' });
      const manager = new ProbeManager({ statusProvider: statuses, prober, clock, random: () => 0 });
      manager.addPod(makePod({ liveness: { httpGet: { path: '/healthz', port }, periodSeconds: 10, failureThreshold: 3 }, readiness: { httpGet: { path: '/', port }, periodSeconds: 10 } }));
      const settle = async (n: number) => {
        while (done < n) await new Promise((r) => setImmediate(r));
      };
      await clock.advance(0);
      await settle(2);
      await clock.advance(10_000);
      await settle(4);
      assert.equal(manager.liveness('c1'), 'Success');
      await clock.advance(10_000);
      await settle(6);
      assert.equal(manager.liveness('c1'), 'Failure');
      assert.equal(manager.readinessResults.get('c1'), 'Success');
      assert.deepEqual(
        recorder.events.map((e) => `${e.reason} ${e.object.fieldPath} ${e.message}`),
        Array(3).fill('Unhealthy spec.containers{nginx} Liveness probe failed: HTTP probe failed with statuscode: 404'),
      );
      manager.stop();
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
