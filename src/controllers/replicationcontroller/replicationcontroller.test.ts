import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreEvent, ReplicationController } from '../../api/types.js';
import { ReplicationManager } from './replicationcontroller.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:replication-controller', groups: ['system:authenticated'] };

const rc = (name: string, replicas: number, selector: Record<string, string> = { app: name }): ReplicationController => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name },
  spec: { replicas, selector, template: { metadata: { labels: { ...selector, tier: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
});

/** The real API in process with the ReplicationController controller (and its own event recorder) on it. */
class Cluster extends ControllerHarness<ReplicationManager> {
  constructor() {
    super({ user: controllerUser, now: NOW });
  }

  protected newController(deps: ControllerDeps): ReplicationManager {
    return new ReplicationManager(deps);
  }

  rcs() {
    return this.admin.resource<ReplicationController>('', 'v1', 'replicationcontrollers').namespace('ns');
  }

  async events(reason: string): Promise<CoreEvent[]> {
    return (await this.admin.resource<CoreEvent>('', 'v1', 'events').namespace('ns').list()).items.filter((e) => e.reason === reason);
  }

  podCreates(): number {
    return this.api.actions.filter((a) => a.verb === 'create' && a.resource === 'pods' && a.user === controllerUser.name).length;
  }
}

describe('ReplicationController controller (the ReplicaSet sync over RCs)', () => {
  it('creates exactly N pods owned by the RC, reports status, and records events as replication-controller', async () => {
    const c = await new Cluster().start();
    try {
      const created = await c.rcs().create(rc('web', 3));
      await c.settle(async () => (await c.listPods()).length >= 3);
      for (let i = 0; i < 3; i++) await c.rcs().patch('web', 'merge', { metadata: { annotations: { poke: String(i) } } });
      await c.settle(async () => (await c.rcs().get('web')).status?.replicas === 3);
      const pods = await c.listPods();
      assert.equal(pods.length, 3);
      assert.equal(c.podCreates(), 3, 'no pod is created twice');
      for (const pod of pods) {
        assert.equal(pod.metadata?.generateName, 'web-');
        assert.deepEqual(pod.metadata?.ownerReferences, [
          { apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: created.metadata!.uid!, controller: true, blockOwnerDeletion: true },
        ]);
      }
      const status = (await c.rcs().get('web')).status;
      assert.deepEqual([status?.replicas, status?.fullyLabeledReplicas, status?.observedGeneration], [3, 3, 1]);
      await c.settle(async () => (await c.events('SuccessfulCreate')).length === 3);
      const events = await c.events('SuccessfulCreate');
      assert.deepEqual(events.map((e) => e.message).sort(), pods.map((p) => `Created pod: ${p.metadata!.name}`).sort());
      assert.equal(events[0]?.source?.component, 'replication-controller');
      assert.equal(events[0]?.involvedObject.kind, 'ReplicationController');
    } finally {
      await c.stop();
    }
  });

  it('scales down with SuccessfulDelete, and adopts by its map selector only orphans it selects', async () => {
    const c = await new Cluster().start();
    try {
      const spec = { containers: [{ name: 'c', image: 'busybox' }] };
      await c.pods().create({ metadata: { name: 'orphan', labels: { app: 'web', extra: 'x' } }, spec });
      await c.pods().create({ metadata: { name: 'stranger', labels: { app: 'other' } }, spec });
      const owner = await c.rcs().create(rc('web', 2));
      await c.settle(async () => (await c.listPods()).length >= 3);
      await c.settle();
      assert.equal((await c.pods().get('orphan')).metadata?.ownerReferences?.[0]?.uid, owner.metadata!.uid);
      assert.equal((await c.pods().get('stranger')).metadata?.ownerReferences, undefined);
      assert.equal(c.podCreates(), 1, 'the adopted orphan counts as one of the two');
      await c.rcs().patch('web', 'merge', { spec: { replicas: 0 } });
      await c.settle(async () => (await c.listPods()).length === 1);
      assert.deepEqual((await c.listPods()).map((p) => p.metadata!.name), ['stranger']);
      await c.settle(async () => (await c.events('SuccessfulDelete')).length === 2);
      assert.equal((await c.events('SuccessfulDelete')).length, 2);
      await c.settle(async () => (await c.rcs().get('web')).status?.observedGeneration === 2);
      const status = (await c.rcs().get('web')).status;
      assert.deepEqual([status?.replicas, status?.observedGeneration], [0, 2]);
    } finally {
      await c.stop();
    }
  });
});
