import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { StatusError } from '../../api/errors.js';
import { EXPECTATIONS_TIMEOUT_MS } from '../kit/expectations.js';
import { RealPodControl } from '../kit/podcontrol.js';
import { calculateStatus, ReplicaSetController } from './replicaset.js';
import { slowStartBatch } from '../kit/slowstart.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:kube-controller-manager', groups: ['system:authenticated'] };

const replicaSet = (name: string, replicas: number, extra: Partial<ReplicaSet['spec']> = {}): ReplicaSet => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name, tier: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    ...extra,
  },
});

/** The real API in process with a ReplicaSet controller on it; `settle` lets watches and workers run. */
class Cluster extends ControllerHarness<ReplicaSetController> {
  constructor() {
    super({ user: controllerUser, now: NOW });
  }

  protected newController(deps: ControllerDeps): ReplicaSetController {
    return new ReplicaSetController({ ...deps, podControl: new RealPodControl(deps.client, this.recorder) });
  }

  rs() {
    return this.admin.resource<ReplicaSet>('apps', 'v1', 'replicasets').namespace('ns');
  }

  podCreates(): number {
    return this.api.actions.filter((a) => a.verb === 'create' && a.resource === 'pods' && a.user === controllerUser.name).length;
  }

  /** Marks a pod scheduled, Running and Ready as the kubelet would. */
  async run(pod: Pod, node: string, readySince = NOW): Promise<void> {
    await this.admin.bind(pod, node);
    const fresh = await this.pods().get(pod.metadata!.name!);
    const t = new Date(readySince).toISOString().replace(/\.\d+Z$/, 'Z');
    await this.pods().updateStatus({ ...fresh, status: { ...fresh.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] } });
  }
}

describe('ReplicaSet controller', () => {
  it('scales up to exactly N pods owned by the ReplicaSet, once however many events arrive', async () => {
    const c = await new Cluster().start();
    try {
      const rs = await c.rs().create(replicaSet('web', 3));
      await c.settle(async () => (await c.listPods()).length >= 3);
      // A burst of events about the ReplicaSet while its pods are still arriving.
      for (let i = 0; i < 5; i++) await c.rs().patch('web', 'merge', { metadata: { annotations: { poke: String(i) } } });
      await c.settle();
      const pods = await c.listPods();
      assert.equal(pods.length, 3);
      assert.equal(c.podCreates(), 3, 'no pod is created twice');
      for (const pod of pods) {
        assert.equal(pod.metadata?.generateName, 'web-');
        assert.deepEqual(pod.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: rs.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
        assert.deepEqual(pod.metadata?.labels, { app: 'web', tier: 'web' });
      }
      const created = c.recorder.events.filter((e) => e.reason === 'SuccessfulCreate');
      assert.deepEqual(created.map((e) => e.message).sort(), pods.map((p) => `Created pod: ${p.metadata!.name}`).sort());
      assert.equal(created[0]?.object.kind, 'ReplicaSet');
      const status = (await c.rs().get('web')).status;
      assert.equal(status?.replicas, 3);
      assert.equal(status?.fullyLabeledReplicas, 3);
      assert.equal(status?.readyReplicas ?? 0, 0);
      assert.equal(status?.observedGeneration, 1);
    } finally {
      await c.stop();
    }
  });

  it('does not act while the creates it expects are unobserved, until the expectations expire', async () => {
    const c = await new Cluster().start();
    try {
      await c.rs().create(replicaSet('web', 2));
      await c.settle(async () => (await c.listPods()).length >= 2);
      await c.settle();
      // As if creates were still in flight: the informer's view must not be trusted yet.
      c.controller.expectations.expectations.expectCreations('ns/web', 1);
      await c.pods().delete((await c.listPods())[0]!.metadata!.name!, { gracePeriodSeconds: 0 });
      await c.settle();
      assert.equal((await c.listPods()).length, 1);
      assert.equal(c.podCreates(), 2);
      await c.clock.advance(EXPECTATIONS_TIMEOUT_MS);
      await c.rs().patch('web', 'merge', { metadata: { annotations: { poke: 'again' } } });
      await c.settle(async () => (await c.listPods()).length === 2);
      assert.equal((await c.listPods()).length, 2);
      assert.equal(c.podCreates(), 3);
    } finally {
      await c.stop();
    }
  });

  it('scales down the pods that matter least first: unscheduled and pending before running', async () => {
    const c = await new Cluster().start();
    try {
      await c.rs().create(replicaSet('web', 3));
      await c.settle(async () => (await c.listPods()).length >= 3);
      const [a, b, pending] = (await c.listPods()).sort((x, y) => x.metadata!.name!.localeCompare(y.metadata!.name!));
      await c.run(a!, 'node-1');
      await c.run(b!, 'node-2');
      await c.settle(async () => (await c.rs().get('web')).status?.readyReplicas === 2);
      await c.rs().patch('web', 'merge', { spec: { replicas: 2 } });
      await c.settle(async () => (await c.listPods()).length === 2);
      assert.deepEqual((await c.listPods()).map((p) => p.metadata!.name).sort(), [a!.metadata!.name, b!.metadata!.name].sort());
      assert.deepEqual(
        c.recorder.events.filter((e) => e.reason === 'SuccessfulDelete').map((e) => e.message),
        [`Deleted pod: ${pending!.metadata!.name}`],
      );
      await c.settle(async () => (await c.rs().get('web')).status?.replicas === 2);
      const rs = await c.rs().get('web');
      assert.deepEqual([rs.status?.replicas, rs.status?.readyReplicas, rs.status?.availableReplicas, rs.status?.observedGeneration], [2, 2, 2, 2]);
    } finally {
      await c.stop();
    }
  });

  it('scales down a pod doubled up on a node with the pods of its controller before a lone one', async () => {
    const c = await new Cluster().start();
    try {
      const owned = replicaSet('web', 3);
      owned.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'deployment-uid', controller: true }];
      await c.rs().create(owned);
      await c.settle(async () => (await c.listPods()).length >= 3);
      const [a, b, lone] = (await c.listPods()).sort((x, y) => x.metadata!.name!.localeCompare(y.metadata!.name!));
      // Ready for less time, the lone pod would go first, were it not for the co-located ones.
      await c.run(a!, 'node-1', NOW - 3_600_000);
      await c.run(b!, 'node-1', NOW - 3_600_000);
      await c.run(lone!, 'node-2', NOW - 1000);
      await c.settle(async () => (await c.rs().get('web')).status?.readyReplicas === 3);
      await c.rs().patch('web', 'merge', { spec: { replicas: 2 } });
      // Pods on a node end gracefully: the doomed one stays, terminating, until its kubelet is done.
      const live = async () => (await c.listPods()).filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata!.name);
      await c.settle(async () => (await live()).length === 2);
      const left = await live();
      assert.equal(left.length, 2);
      assert.ok(left.includes(lone!.metadata!.name), `the lone pod stays: ${left.join(', ')}`);
    } finally {
      await c.stop();
    }
  });

  it('adopts a matching orphan instead of creating, and releases a pod whose labels stop matching', async () => {
    const c = await new Cluster().start();
    try {
      await c.pods().create({ metadata: { name: 'orphan', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      const rs = await c.rs().create(replicaSet('web', 1));
      await c.settle(async () => (await c.pods().get('orphan')).metadata?.ownerReferences !== undefined);
      await c.settle();
      assert.equal((await c.pods().get('orphan')).metadata?.ownerReferences?.[0]?.uid, rs.metadata!.uid);
      assert.equal(c.podCreates(), 0, 'the adopted orphan counts');

      await c.pods().patch('orphan', 'merge', { metadata: { labels: { app: 'other' } } });
      await c.settle(async () => (await c.listPods()).length === 2);
      const released = await c.pods().get('orphan');
      assert.equal(released.metadata?.ownerReferences?.length ?? 0, 0, 'released');
      const replacement = (await c.listPods()).find((p) => p.metadata!.name !== 'orphan');
      assert.equal(replacement?.metadata?.ownerReferences?.[0]?.uid, rs.metadata!.uid, 'replaced');
    } finally {
      await c.stop();
    }
  });

  it('a failed create records FailedCreate and sets ReplicaFailure, which a later success clears', async () => {
    const c = await new Cluster().start();
    try {
      await c.rs().create(replicaSet('web', 0));
      await c.settle(async () => (await c.rs().get('web')).status?.observedGeneration === 1);
      // A create's URL names no object: the next create the fake sees is the controller's pod.
      c.api.failNext('create', '', new StatusError(403, 'Forbidden', 'pods "web-" is forbidden: exceeded quota'));
      await c.rs().patch('web', 'merge', { spec: { replicas: 1 } });
      // The retry (a backoff of milliseconds) may clear it before a read: look at what was written.
      const written = () =>
        c.api.actions
          .filter((a) => a.resource === 'replicasets' && a.subresource === 'status')
          .map((a) => (a.body as ReplicaSet).status?.conditions?.[0])
          .find((cond) => cond !== undefined);
      await c.settle(() => written() !== undefined, 10);
      const failed = written();
      assert.equal(failed?.type, 'ReplicaFailure');
      assert.equal(failed?.status, 'True');
      assert.equal(failed?.reason, 'FailedCreate');
      assert.match(failed?.message ?? '', /exceeded quota/);
      assert.equal(c.recorder.events.find((e) => e.reason === 'FailedCreate')?.type, 'Warning');
      // The requeue with backoff creates the pod and clears the condition.
      await c.settle(async () => (await c.rs().get('web')).status?.conditions === undefined, 200);
      assert.equal((await c.listPods()).length, 1);
      assert.equal((await c.rs().get('web')).status?.replicas, 1);
    } finally {
      await c.stop();
    }
  });
});

describe('slowStartBatch', () => {
  it('runs batches of 1, 2, 4 and stops at the batch that fails', async () => {
    let calls = 0;
    const result = await slowStartBatch(10, 1, async () => {
      if (++calls === 5) throw new Error('boom');
    });
    // Batches 1 and 2 succeed, the batch of 4 has one failure: 3 + 3, and no further batch.
    assert.equal(calls, 7);
    assert.equal(result.successes, 6);
    assert.equal(result.error?.message, 'boom');
    assert.deepEqual(await slowStartBatch(5, 1, async () => undefined), { successes: 5 });
  });
});

describe('calculateStatus', () => {
  it('counts ready pods as available only after minReadySeconds', () => {
    const rs = replicaSet('web', 2, { minReadySeconds: 10 });
    const ready = (since: number): Pod => ({
      metadata: { labels: { app: 'web' } },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(since).toISOString() }] },
    });
    const status = calculateStatus(rs, [ready(NOW - 20_000), ready(NOW - 5_000)], undefined, NOW);
    assert.deepEqual([status.replicas, status.fullyLabeledReplicas, status.readyReplicas, status.availableReplicas], [2, 0, 2, 1]);
  });
});
