import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, Taint, Toleration } from 'kubernetes-types/core/v1.js';
import { StatusError } from '../../api/errors.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';
import { TaintEvictionController } from './controller.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:node-controller', groups: ['system:authenticated', 'system:masters'] };
const dedicated: Taint = { key: 'dedicated', value: 'x', effect: 'NoExecute' };
const tolerate = (tolerationSeconds?: number): Toleration => ({ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoExecute', tolerationSeconds });

class Cluster extends ControllerHarness<TaintEvictionController> {
  constructor() {
    super({ user: controllerUser, now: NOW, steps: 10 });
  }

  protected newController(deps: ControllerDeps): TaintEvictionController {
    return new TaintEvictionController({ ...deps, recorder: this.recorder });
  }

  node(name: string, taints: Taint[] = []): Promise<Node> {
    return this.admin.resource<Node>('', 'v1', 'nodes').create({ metadata: { name }, spec: { taints } });
  }

  async taint(name: string, taints: Taint[]): Promise<void> {
    await this.admin.resource<Node>('', 'v1', 'nodes').patch(name, 'merge', { spec: { taints } });
    await this.settle(undefined, 1);
  }

  async pod(name: string, tolerations?: Toleration[], nodeName = 'n1'): Promise<Pod> {
    const pod = await this.pods().create({ metadata: { name }, spec: { nodeName, tolerations, terminationGracePeriodSeconds: 17, containers: [{ name: 'c', image: 'busybox' }] } });
    await this.settle(undefined, 1);
    return pod;
  }

  /** Pod p (with these tolerations) on node n1, then the taints on n1; returns when (ms after the start) it was tainted. */
  async taintedAfter(tolerations: Toleration[] | undefined, taints: Taint[]): Promise<number> {
    await this.node('n1');
    await this.pod('p', tolerations);
    const t0 = this.clock.now() - NOW;
    await this.taint('n1', taints);
    return t0;
  }

  async deleting(name: string): Promise<boolean> {
    return (await this.pods().get(name)).metadata?.deletionTimestamp !== undefined;
  }

  /** Advances virtual time to `at` ms after the start. */
  async at(ms: number): Promise<void> {
    await this.clock.advance(NOW + ms - this.clock.now());
  }

  events(): string[] {
    return this.recorder.events.map((e) => `${e.reason} ${e.message}`);
  }
}

async function withCluster(body: (c: Cluster) => Promise<void>): Promise<void> {
  const c = await new Cluster().start();
  try {
    await body(c);
  } finally {
    await c.stop();
  }
}

describe('taint eviction controller', () => {
  it('deletes a pod not tolerating a NoExecute taint at once: DisruptionTarget, then a delete with its own grace period', async () => {
    await withCluster(async (c) => {
      await c.node('n1');
      await c.node('n2');
      await c.pod('p');
      await c.pod('elsewhere', undefined, 'n2');
      await c.taint('n1', [dedicated, { key: 'soft', effect: 'NoSchedule' }]);
      assert.ok(await c.settle(() => c.deleting('p')));
      const pod = await c.pods().get('p');
      assert.equal(pod.metadata?.deletionGracePeriodSeconds, 17);
      const cond = pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
      assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['True', 'DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint']);
      assert.ok(cond?.lastTransitionTime);
      assert.deepEqual(c.events(), ['TaintManagerEviction Marking for deletion Pod ns/p']);
      assert.deepEqual(c.recorder.events[0]?.object, { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'p' });
      assert.equal(await c.deleting('elsewhere'), false, 'a pod on an untainted node stays');
    });
  });

  it('never deletes a pod tolerating the taint forever, nor one on a node with only NoSchedule taints', async () => {
    const cases: [string, Taint[], Toleration[] | undefined][] = [
      ['tolerated forever', [dedicated], [tolerate()]],
      ['NoSchedule only', [{ ...dedicated, effect: 'NoSchedule' }], undefined],
    ];
    for (const [name, taints, tolerations] of cases) {
      await withCluster(async (c) => {
        await c.node('n1', taints);
        await c.pod('p', tolerations);
        await c.at(3_600_000);
        assert.equal(await c.deleting('p'), false, name);
        assert.deepEqual(c.events(), [], name);
      });
    }
  });

  it('deletes a pod tolerating it for 10 s at 10 s, not at 9 s', async () => {
    await withCluster(async (c) => {
      const t0 = await c.taintedAfter([tolerate(10)], [dedicated]);
      await c.at(t0 + 9_000);
      assert.equal(await c.deleting('p'), false);
      assert.deepEqual(c.events(), []);
      await c.at(t0 + 10_000);
      assert.ok(await c.settle(() => c.deleting('p')));
      assert.deepEqual(c.events(), ['TaintManagerEviction Marking for deletion Pod ns/p']);
    });
  });

  it('on an unreachable node, the default tolerations DefaultTolerationSeconds adds delete the pod at 300 s, not before', async () => {
    await withCluster(async (c) => {
      const t0 = await c.taintedAfter(undefined, [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: new Date(NOW).toISOString() }]);
      const added = (await c.pods().get('p')).spec?.tolerations?.find((t) => t.key === 'node.kubernetes.io/unreachable');
      assert.equal(added?.tolerationSeconds, 300, 'admission added the default toleration');
      await c.at(t0 + 299_000);
      assert.equal(await c.deleting('p'), false);
      await c.at(t0 + 300_000);
      assert.ok(await c.settle(() => c.deleting('p')));
    });
  });

  it('the taint removed at 5 s cancels the deletion, with an event', async () => {
    await withCluster(async (c) => {
      const t0 = await c.taintedAfter([tolerate(10)], [dedicated]);
      await c.at(t0 + 5_000);
      await c.taint('n1', []);
      await c.at(t0 + 60_000);
      assert.equal(await c.deleting('p'), false);
      assert.deepEqual(c.events(), ['TaintManagerEviction Cancelling deletion of Pod ns/p']);
    });
  });

  it('a second taint the pod does not tolerate cancels the scheduled deletion and deletes now', async () => {
    await withCluster(async (c) => {
      const t0 = await c.taintedAfter([tolerate(100)], [dedicated]);
      await c.at(t0 + 5_000);
      await c.taint('n1', [dedicated, { key: 'other', effect: 'NoExecute' }]);
      assert.ok(await c.settle(() => c.deleting('p')));
      assert.deepEqual(c.events(), ['TaintManagerEviction Cancelling deletion of Pod ns/p', 'TaintManagerEviction Marking for deletion Pod ns/p']);
    });
  });

  it('a pod deleted meanwhile cancels its scheduled deletion', async () => {
    await withCluster(async (c) => {
      await c.node('n1', [dedicated]);
      await c.pod('p', [tolerate(30)]);
      await c.pods().delete('p', { gracePeriodSeconds: 0 });
      await c.settle(undefined, 2);
      assert.deepEqual(c.events(), ['TaintManagerEviction Cancelling deletion of Pod ns/p']);
    });
  });

  it('retries a failed delete', async () => {
    await withCluster(async (c) => {
      await c.node('n1');
      await c.pod('p');
      c.api.failNext('get', 'p', new StatusError(500, 'InternalError', 'etcd is sad'));
      c.api.failNext('delete', 'p', new StatusError(500, 'InternalError', 'etcd is sad'));
      await c.taint('n1', [dedicated]);
      assert.ok(await c.settle(() => c.deleting('p')));
      const tries = c.api.actions.filter((a) => a.user === controllerUser.name && a.resource === 'pods' && a.verb === 'delete');
      assert.equal(tries.length, 2);
    });
  });
});
