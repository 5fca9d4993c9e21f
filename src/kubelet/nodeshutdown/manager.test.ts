import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodStatus } from '../../api/types.js';
import { FakeClock } from '../../util/clock.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { NODE_SHUTDOWN_MESSAGE, NodeShutdownManager, groupByPriority, nodeShutdownStatus, shutdownGroups } from './manager.js';

const CRITICAL = 2_000_000_000;
const pod = (name: string, priority?: number, terminationGracePeriodSeconds?: number): Pod => ({
  metadata: { name, namespace: 'ns', uid: name },
  spec: { containers: [{ name: 'c' }], ...(priority !== undefined ? { priority } : {}), ...(terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds } : {}) },
});

describe('graceful node shutdown', () => {
  it('splits shutdownGracePeriod into the regular and the critical band (upstream migrateConfig)', () => {
    const cases: [number, number, { priority: number; gracePeriodSeconds: number }[]][] = [
      [0, 0, []],
      [20_000, 10_000, [{ priority: 0, gracePeriodSeconds: 10 }, { priority: CRITICAL, gracePeriodSeconds: 10 }]],
      [30_000, 0, [{ priority: 0, gracePeriodSeconds: 30 }, { priority: CRITICAL, gracePeriodSeconds: 0 }]],
      [10_000, 20_000, []],
    ];
    for (const [total, critical, want] of cases) assert.deepEqual(shutdownGroups({ shutdownGracePeriodMs: total, shutdownGracePeriodCriticalPodsMs: critical }), want, `${total}/${critical}`);
  });

  it('puts each pod in the band of its priority; below every band means the lowest', () => {
    const groups = shutdownGroups({ shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 });
    const pods = [pod('negative', -5), pod('none'), pod('user', 1_000_000_000), pod('cluster-critical', CRITICAL), pod('node-critical', CRITICAL + 1000)];
    assert.deepEqual(
      groupByPriority(groups, pods).map((g) => [g.group.priority, g.pods.map((p) => p.metadata?.name)]),
      [
        [0, ['negative', 'none', 'user']],
        [CRITICAL, ['cluster-critical', 'node-critical']],
      ],
    );
  });

  it('marks the status Failed with reason Terminated and the DisruptionTarget condition; a succeeded pod stays Succeeded', () => {
    const cases: [PodStatus['phase'], PodStatus['phase']][] = [
      ['Running', 'Failed'],
      ['Pending', 'Failed'],
      ['Succeeded', 'Succeeded'],
    ];
    for (const [phase, want] of cases) {
      const s = nodeShutdownStatus({ phase, conditions: [{ type: 'Ready', status: 'True' }] }, '2026-01-01T00:00:00Z');
      assert.equal(s.phase, want);
      assert.equal(s.reason, 'Terminated');
      assert.equal(s.message, 'Pod was terminated in response to imminent node shutdown.');
      assert.deepEqual(
        s.conditions?.map((c) => [c.type, c.status, c.reason ?? '', c.message ?? '']),
        [
          ['Ready', 'True', '', ''],
          ['DisruptionTarget', 'True', 'TerminationByKubelet', NODE_SHUTDOWN_MESSAGE],
        ],
      );
    }
  });

  it('reports the node not ready, then terminates regular pods, then critical ones, each band within its grace period', async () => {
    const clock = new FakeClock();
    const recorder = new FakeRecorder();
    const log: string[] = [];
    // Each pod takes `runs` seconds to stop; the stuck one never does.
    const runs: Record<string, number> = { web: 3, quick: 1, stuck: Infinity, dns: 2 };
    const start = clock.now();
    const at = () => `${(clock.now() - start) / 1000}s`;
    const manager = new NodeShutdownManager({
      cfg: { shutdownGracePeriodMs: 20_000, shutdownGracePeriodCriticalPodsMs: 10_000 },
      activePods: () => [pod('dns', CRITICAL), pod('web'), pod('quick', 0, 5), pod('stuck', 0, 60)],
      killPod: async (p, grace, statusFn) => {
        log.push(`${at()} kill ${p.metadata?.name} grace ${grace} ${statusFn({ phase: 'Running' }).reason}`);
        const took = runs[p.metadata!.name!]!;
        if (Number.isFinite(took)) await clock.sleep(took * 1000);
        else await new Promise(() => {});
        log.push(`${at()} stopped ${p.metadata?.name}`);
      },
      syncNodeStatus: async () => void log.push(`${at()} node status: ${manager.shutdownStatus()}`),
      clock,
      recorder,
      nodeRef: { kind: 'Node', name: 'n1', uid: 'n1' },
      log: () => {},
    });
    assert.equal(manager.enabled, true);
    assert.deepEqual(manager.admit(), { admit: true });
    const done = manager.shutdown();
    await clock.advance(30_000);
    await done;
    assert.deepEqual(log, [
      '0s node status: node is shutting down',
      '0s kill web grace 10 Terminated',
      '0s kill quick grace 5 Terminated',
      '0s kill stuck grace 10 Terminated',
      '1s stopped quick',
      '3s stopped web',
      // The stuck pod holds its band for the band's 10 s, no longer.
      '10s kill dns grace 10 Terminated',
      '12s stopped dns',
    ]);
    assert.deepEqual(recorder.events.map((e) => `${e.object.kind}/${e.object.name} ${e.type} ${e.reason} ${e.message}`), ['Node/n1 Normal Shutdown Shutdown manager detected shutdown event']);
    assert.deepEqual(manager.admit(), { admit: false, reason: 'NodeShutdown', message: 'Pod was rejected as the node is shutting down.' });
  });

  it('without shutdownGracePeriod nothing happens', async () => {
    const killed: string[] = [];
    const manager = new NodeShutdownManager({
      cfg: { shutdownGracePeriodMs: 0, shutdownGracePeriodCriticalPodsMs: 0 },
      activePods: () => [pod('web')],
      killPod: async (p) => void killed.push(p.metadata!.name!),
      syncNodeStatus: async () => {},
      clock: new FakeClock(),
      recorder: new FakeRecorder(),
      nodeRef: { kind: 'Node', name: 'n1', uid: 'n1' },
      log: () => {},
    });
    assert.equal(manager.enabled, false);
    await manager.shutdown();
    assert.deepEqual(killed, []);
    assert.equal(manager.shutdownStatus(), undefined);
  });
});
