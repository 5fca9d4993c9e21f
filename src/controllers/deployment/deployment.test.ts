import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { DeploymentController } from './deployment.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:kube-controller-manager', groups: ['system:authenticated'] };

const deployment = (name: string, replicas: number, extra: Partial<Deployment['spec']> = {}): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
    progressDeadlineSeconds: 600,
    revisionHistoryLimit: 10,
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.22' }] } },
    ...extra,
  },
});

/** The real API in process with a Deployment controller on it; the ReplicaSet controller is played by `runReplicaSets`. */
class Cluster extends ControllerHarness<DeploymentController> {
  constructor() {
    super({ user: controllerUser, now: NOW });
  }

  protected newController(deps: ControllerDeps): DeploymentController {
    return new DeploymentController({ ...deps, recorder: this.recorder });
  }

  deployments() {
    return this.admin.resource<Deployment>('apps', 'v1', 'deployments').namespace('ns');
  }

  rs() {
    return this.admin.resource<ReplicaSet>('apps', 'v1', 'replicasets').namespace('ns');
  }

  async listRS(): Promise<ReplicaSet[]> {
    return (await this.rs().list()).items.sort((a, b) => a.metadata!.creationTimestamp!.localeCompare(b.metadata!.creationTimestamp!) || a.metadata!.name!.localeCompare(b.metadata!.name!));
  }

  async get(name = 'web'): Promise<Deployment> {
    return this.deployments().get(name);
  }

  /**
   * What the ReplicaSet controller and kubelets would report: every ReplicaSet has its
   * spec.replicas pods, `ready(rs)` of them available.
   */
  async runReplicaSets(ready: (rs: ReplicaSet) => number = (rs) => rs.spec?.replicas ?? 0): Promise<void> {
    for (const rs of await this.listRS()) {
      const n = rs.spec?.replicas ?? 0;
      const r = Math.min(n, ready(rs));
      const status = { replicas: n, fullyLabeledReplicas: n, readyReplicas: r, availableReplicas: r, observedGeneration: rs.metadata?.generation };
      if (JSON.stringify(status) === JSON.stringify({ ...{ replicas: 0, fullyLabeledReplicas: 0, readyReplicas: 0, availableReplicas: 0 }, ...rs.status, observedGeneration: rs.status?.observedGeneration })) continue;
      await this.rs().updateStatus({ ...rs, status });
    }
  }

  scalingEvents(): string[] {
    return this.recorder.events.filter((e) => e.reason === 'ScalingReplicaSet').map((e) => e.message);
  }
}

const condition = (d: Deployment, type: string) => d.status?.conditions?.find((c) => c.type === type);

describe('Deployment controller', () => {
  it('creates the ReplicaSet of the template, named by its hash, and reports the rollout complete', async () => {
    const c = await new Cluster().start();
    try {
      const created = await c.deployments().create(deployment('web', 3));
      await c.settle(async () => (await c.listRS()).length > 0);
      await c.settle();
      const [rs, ...more] = await c.listRS();
      assert.equal(more.length, 0);
      const hash = rs!.metadata!.labels!['pod-template-hash']!;
      assert.match(hash, /^[bcdfghjklmnpqrstvwxz2456789]+$/);
      assert.equal(rs!.metadata!.name, `web-${hash}`);
      assert.equal(rs!.spec!.replicas, 3);
      assert.deepEqual(rs!.spec!.selector, { matchLabels: { app: 'web', 'pod-template-hash': hash } });
      assert.deepEqual(rs!.spec!.template!.metadata!.labels, { app: 'web', 'pod-template-hash': hash });
      assert.deepEqual(rs!.metadata!.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: created.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
      assert.deepEqual(rs!.metadata!.annotations, { 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '3', 'deployment.kubernetes.io/max-replicas': '4' });
      assert.deepEqual(c.scalingEvents(), [`Scaled up replica set web-${hash} from 0 to 3`]);
      assert.equal(c.recorder.events[0]!.object.kind, 'Deployment');

      let d = await c.get();
      assert.equal(d.metadata!.annotations!['deployment.kubernetes.io/revision'], '1');
      assert.equal(condition(d, 'Progressing')?.reason, 'NewReplicaSetCreated');
      assert.equal(condition(d, 'Progressing')?.message, `Created new replica set "web-${hash}"`);
      assert.equal(condition(d, 'Available')?.status, 'False');
      assert.equal(condition(d, 'Available')?.reason, 'MinimumReplicasUnavailable');
      assert.equal(condition(d, 'Available')?.message, 'Deployment does not have minimum availability.');
      assert.equal(d.status?.observedGeneration, 1);

      await c.runReplicaSets();
      await c.settle(async () => condition(await c.get(), 'Progressing')?.reason === 'NewReplicaSetAvailable');
      d = await c.get();
      assert.deepEqual(
        { replicas: d.status?.replicas, updated: d.status?.updatedReplicas, ready: d.status?.readyReplicas, available: d.status?.availableReplicas, unavailable: d.status?.unavailableReplicas ?? 0 },
        { replicas: 3, updated: 3, ready: 3, available: 3, unavailable: 0 },
      );
      assert.equal(condition(d, 'Progressing')?.message, `ReplicaSet "web-${hash}" has successfully progressed.`);
      assert.equal(condition(d, 'Progressing')?.status, 'True');
      assert.deepEqual([condition(d, 'Available')?.status, condition(d, 'Available')?.reason, condition(d, 'Available')?.message], ['True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.']);
    } finally {
      await c.stop();
    }
  });

  it('rolls a new template within maxSurge and maxUnavailable, and back to the old revision', async () => {
    const c = await new Cluster().start();
    try {
      await c.deployments().create(deployment('web', 4));
      await c.settle(async () => (await c.listRS()).length > 0);
      await c.runReplicaSets();
      await c.settle(async () => condition(await c.get(), 'Progressing')?.reason === 'NewReplicaSetAvailable');
      const [first] = await c.listRS();

      await c.deployments().patch('web', 'strategic', { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.23' }] } } } });
      // Play the ReplicaSet controller until the rollout is done, checking the bounds at each step:
      // 4 replicas, 25 %: at most 5 pods, at least 3 available.
      for (let step = 0; step < 30; step++) {
        await c.settle(undefined, 4);
        const rss = await c.listRS();
        const total = rss.reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0);
        assert.ok(total <= 5, `at most 4 + maxSurge 1 pods, got ${total}`);
        await c.runReplicaSets();
        const available = (await c.listRS()).reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
        assert.ok(available >= 3, `at least 4 - maxUnavailable 1 available, got ${available}`);
        const d = await c.get();
        if (condition(d, 'Progressing')?.reason === 'NewReplicaSetAvailable' && d.status?.updatedReplicas === 4 && d.status.replicas === 4) break;
      }
      const rss = await c.listRS();
      assert.equal(rss.length, 2);
      const second = rss.find((rs) => rs.metadata!.uid !== first!.metadata!.uid)!;
      assert.equal(second.spec!.replicas, 4);
      assert.equal(rss.find((rs) => rs.metadata!.uid === first!.metadata!.uid)!.spec!.replicas, 0);
      assert.equal(second.metadata!.annotations!['deployment.kubernetes.io/revision'], '2');
      assert.equal((await c.get()).metadata!.annotations!['deployment.kubernetes.io/revision'], '2');
      const events = c.scalingEvents();
      assert.equal(events[1], `Scaled up replica set ${second.metadata!.name} from 0 to 1`);
      assert.ok(events.includes(`Scaled down replica set ${first!.metadata!.name} from 1 to 0`), events.join('\n'));

      // Rolling back is the old template again (kubectl rollout undo): the first ReplicaSet returns as revision 3.
      await c.deployments().patch('web', 'json', [{ op: 'replace', path: '/spec/template', value: first!.spec!.template }]);
      for (let step = 0; step < 30; step++) {
        await c.settle(undefined, 4);
        await c.runReplicaSets();
        const d = await c.get();
        if (d.metadata!.annotations!['deployment.kubernetes.io/revision'] === '3' && d.status?.updatedReplicas === 4 && d.status.replicas === 4) break;
      }
      const back = (await c.listRS()).find((rs) => rs.metadata!.uid === first!.metadata!.uid)!;
      assert.equal(back.spec!.replicas, 4);
      assert.equal(back.metadata!.annotations!['deployment.kubernetes.io/revision'], '3');
      assert.equal(back.metadata!.annotations!['deployment.kubernetes.io/revision-history'], '1');
      assert.equal((await c.listRS()).length, 2, 'no third ReplicaSet');
    } finally {
      await c.stop();
    }
  });

  it('reports ProgressDeadlineExceeded when the new pods never become available', async () => {
    const c = await new Cluster().start();
    try {
      await c.deployments().create(deployment('web', 2, { progressDeadlineSeconds: 10 }));
      await c.settle(async () => (await c.listRS()).length > 0);
      await c.runReplicaSets(() => 0);
      await c.settle(undefined, 10);
      assert.equal(condition(await c.get(), 'Progressing')?.status, 'True');
      // 10 s of no progress: the controller looks again by itself.
      await c.settle(async () => condition(await c.get(), 'Progressing')?.reason === 'ProgressDeadlineExceeded', 400);
      const d = await c.get();
      const [rs] = await c.listRS();
      assert.deepEqual([condition(d, 'Progressing')?.status, condition(d, 'Progressing')?.message], ['False', `ReplicaSet "${rs!.metadata!.name}" has timed out progressing.`]);
    } finally {
      await c.stop();
    }
  });

  it('a paused Deployment keeps its ReplicaSet but scales it; resuming rolls out', async () => {
    const c = await new Cluster().start();
    try {
      await c.deployments().create(deployment('web', 2));
      await c.settle(async () => (await c.listRS()).length > 0);
      await c.runReplicaSets();
      await c.settle();
      await c.deployments().patch('web', 'merge', { spec: { paused: true } });
      await c.settle(async () => condition(await c.get(), 'Progressing')?.reason === 'DeploymentPaused');
      const paused = condition(await c.get(), 'Progressing');
      assert.deepEqual([paused?.status, paused?.message], ['Unknown', 'Deployment is paused']);
      await c.deployments().patch('web', 'strategic', { spec: { replicas: 3, template: { spec: { containers: [{ name: 'c', image: 'nginx:1.23' }] } } } });
      await c.settle();
      let rss = await c.listRS();
      assert.equal(rss.length, 1, 'no rollout while paused');
      assert.equal(rss[0]!.spec!.replicas, 3, 'but scaling happens');
      await c.deployments().patch('web', 'merge', { spec: { paused: false } });
      await c.settle(async () => (await c.listRS()).length === 2);
      rss = await c.listRS();
      assert.equal(rss.length, 2);
      const reasons = (await c.get()).status?.conditions?.map((x) => x.reason);
      assert.ok(reasons?.includes('DeploymentResumed') || reasons?.includes('NewReplicaSetCreated'), String(reasons));
    } finally {
      await c.stop();
    }
  });

  it('Recreate scales the old ReplicaSet to 0 before the new one comes up', async () => {
    const c = await new Cluster().start();
    try {
      await c.deployments().create(deployment('web', 2, { strategy: { type: 'Recreate' } }));
      await c.settle(async () => (await c.listRS()).length > 0);
      await c.runReplicaSets();
      await c.settle();
      await c.deployments().patch('web', 'strategic', { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1.23' }] } } } });
      await c.settle();
      let rss = await c.listRS();
      assert.deepEqual(
        rss.map((rs) => rs.spec?.replicas),
        [0],
        'the old ReplicaSet goes to 0 and the new one waits for its pods to be gone',
      );
      await c.runReplicaSets();
      await c.settle(async () => (await c.listRS()).length === 2);
      await c.settle();
      rss = await c.listRS();
      assert.deepEqual(
        rss.map((rs) => rs.spec?.replicas),
        [0, 2],
      );
    } finally {
      await c.stop();
    }
  });

  it('keeps revisionHistoryLimit old ReplicaSets and adopts a matching orphan', async () => {
    const c = await new Cluster().start();
    try {
      await c.deployments().create(deployment('web', 1, { revisionHistoryLimit: 1 }));
      for (const image of ['nginx:1.23', 'nginx:1.24', 'nginx:1.25']) {
        await c.settle(undefined, 4);
        await c.deployments().patch('web', 'strategic', { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } });
        for (let i = 0; i < 10; i++) {
          await c.settle(undefined, 4);
          await c.runReplicaSets();
        }
      }
      await c.settle();
      const rss = await c.listRS();
      assert.equal(rss.length, 2, rss.map((rs) => `${rs.metadata?.name} ${rs.spec?.replicas}`).join(', '));
      assert.deepEqual(rss.map((rs) => rs.metadata?.annotations?.['deployment.kubernetes.io/revision']).sort(), ['3', '4']);

      const orphan = await c.rs().create({
        metadata: { name: 'stray', labels: { app: 'web' } },
        spec: { replicas: 0, selector: { matchLabels: { app: 'web', x: 'y' } }, template: { metadata: { labels: { app: 'web', x: 'y' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
      });
      await c.settle(async () => (await c.rs().get('stray')).metadata?.ownerReferences?.length === 1);
      const adopted = await c.rs().get('stray');
      assert.equal(adopted.metadata?.ownerReferences?.[0]?.uid, (await c.get()).metadata?.uid);
      assert.equal(adopted.metadata?.uid, orphan.metadata?.uid);
    } finally {
      await c.stop();
    }
  });

  it('releases a ReplicaSet whose labels stop matching (a hash collision then), and reports its ReplicaFailure', async () => {
    const c = await new Cluster().start();
    try {
      await c.deployments().create(deployment('web', 2));
      await c.settle(async () => (await c.listRS()).length > 0);
      const [rs] = await c.listRS();
      // The ReplicaSet controller failing to create pods (quota, admission) reports it on the ReplicaSet.
      const failure = { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "web-x" is forbidden: exceeded quota', lastTransitionTime: '2026-01-01T00:00:00Z' };
      await c.rs().updateStatus({ ...rs!, status: { replicas: 0, conditions: [failure] } });
      await c.settle(async () => condition(await c.get(), 'ReplicaFailure') !== undefined);
      const cond = condition(await c.get(), 'ReplicaFailure');
      assert.deepEqual([cond?.status, cond?.reason, cond?.message, cond?.lastUpdateTime], ['True', 'FailedCreate', failure.message, failure.lastTransitionTime]);

      await c.rs().patch(rs!.metadata!.name!, 'merge', { metadata: { labels: { app: 'other', 'pod-template-hash': null } } });
      await c.settle(async () => !(await c.rs().get(rs!.metadata!.name!)).metadata?.ownerReferences?.length);
      assert.deepEqual((await c.rs().get(rs!.metadata!.name!)).metadata?.ownerReferences ?? [], []);
      // Released, it still holds the name the Deployment's template hashes to: a collision, so the
      // Deployment counts it in status.collisionCount and hashes again into a new name.
      await c.settle(async () => (await c.listRS()).length === 2);
      const mine = (await c.listRS()).filter((x) => x.metadata?.ownerReferences?.length);
      assert.equal(mine.length, 1);
      assert.notEqual(mine[0]!.metadata!.name, rs!.metadata!.name);
      assert.equal((await c.get()).status?.collisionCount, 1);
    } finally {
      await c.stop();
    }
  });
});
