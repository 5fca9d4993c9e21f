import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { rfc3339 } from '../../api/time.js';
import { DisruptionController } from './disruption.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:disruption-controller', groups: ['system:authenticated'] };
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };

/** The real API in process with a disruption controller on it; `settle` lets watches and workers run. */
class Cluster extends ControllerHarness<DisruptionController> {
  constructor() {
    super({ user: controllerUser, now: NOW, steps: 20 });
  }

  protected newController(deps: ControllerDeps): DisruptionController {
    return new DisruptionController({ ...deps, recorder: this.recorder });
  }

  pdbs() {
    return this.admin.resource('poddisruptionbudgets.policy').namespace('ns');
  }

  async pdb(name: string, spec: Omit<NonNullable<PodDisruptionBudget['spec']>, 'selector'>): Promise<PodDisruptionBudget> {
    return this.pdbs().create({ metadata: { name }, spec: { selector: { matchLabels: { app: 'web' } }, ...spec } });
  }

  async status(name: string): Promise<NonNullable<PodDisruptionBudget['status']>> {
    await this.settle();
    return (await this.pdbs().get(name)).status!;
  }

  /** A pod with the app=web label, Running, Ready or not, owned by `owner` if given. */
  async pod(name: string, ready: boolean, owner?: OwnerReference): Promise<Pod> {
    const created = await this.pods().create({
      metadata: { name, labels: { app: 'web' }, ...(owner ? { ownerReferences: [owner] } : {}) },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
    });
    const conditions = [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: rfc3339(NOW) }];
    return this.pods().updateStatus({ ...created, status: { ...created.status, phase: 'Running', conditions } });
  }

  async owner(resource: 'replicasets' | 'deployments' | 'statefulsets' | 'jobs', name: string, replicas: number, extra: Record<string, unknown> = {}): Promise<OwnerReference> {
    const group = resource === 'jobs' ? 'batch' : 'apps';
    const kind = { replicasets: 'ReplicaSet', deployments: 'Deployment', statefulsets: 'StatefulSet', jobs: 'Job' }[resource];
    const spec = resource === 'jobs' ? { template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } } : { replicas, selector: { matchLabels: { app: 'web' } }, template, ...extra };
    const obj = await this.admin.resource(group, 'v1', resource).namespace('ns').create({ apiVersion: `${group}/v1`, kind, metadata: { name }, spec } as never);
    return { apiVersion: `${group}/v1`, kind, name, uid: obj.metadata!.uid!, controller: true };
  }

}

describe('disruption controller', () => {
  it('integer minAvailable counts the selected pods; the condition follows disruptionsAllowed', async () => {
    const c = await new Cluster().start();
    try {
      await c.pdb('web', { minAvailable: 2 });
      for (const n of ['a', 'b', 'c']) await c.pod(n, true);
      await c.pod('d', false);
      let s = await c.status('web');
      assert.deepEqual([s.expectedPods, s.currentHealthy, s.desiredHealthy, s.disruptionsAllowed, s.observedGeneration], [4, 3, 2, 1, 1]);
      assert.deepEqual(
        s.conditions?.map((x) => [x.type, x.status, x.reason, x.observedGeneration]),
        [['DisruptionAllowed', 'True', 'SufficientPods', 1]],
      );
      // A spec change bumps the generation; the status observes it.
      const cur = await c.pdbs().get('web');
      await c.pdbs().update({ ...cur, spec: { ...cur.spec, minAvailable: 3 } });
      s = await c.status('web');
      assert.deepEqual([s.desiredHealthy, s.disruptionsAllowed, s.observedGeneration], [3, 0, 2]);
      assert.deepEqual(
        s.conditions?.map((x) => [x.status, x.reason]),
        [['False', 'InsufficientPods']],
      );
    } finally {
      await c.stop();
    }
  });

  it('maxUnavailable and percentages scale by the controllers: ReplicaSet, Deployment through its ReplicaSet, StatefulSet', async () => {
    const c = await new Cluster().start();
    try {
      const rs = await c.owner('replicasets', 'rs', 4);
      await c.pod('rs-1', true, rs);
      await c.pod('rs-2', true, rs);
      await c.pdb('web', { maxUnavailable: '50%' });
      let s = await c.status('web');
      // 4 expected, ceil(50% of 4) = 2 may be unavailable: 2 must be healthy, 2 are.
      assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [4, 2, 2, 0]);

      const deploy = await c.owner('deployments', 'dep', 6);
      const depRs = await c.admin.resource('apps', 'v1', 'replicasets').namespace('ns').create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'dep-1', ownerReferences: [deploy] },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template },
      } as never);
      await c.pod('dep-1-x', true, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'dep-1', uid: depRs.metadata!.uid!, controller: true });
      const ss = await c.owner('statefulsets', 'db', 1, { serviceName: 'db' });
      await c.pod('db-0', true, ss);
      await c.pdbs().delete('web');
      await c.pdb('pct', { minAvailable: '50%' });
      s = await c.status('pct');
      // 4 (ReplicaSet) + 6 (the Deployment, not its ReplicaSet's 2) + 1 (StatefulSet); ceil(50% of 11) = 6.
      assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy, s.disruptionsAllowed], [11, 6, 4, 0]);
    } finally {
      await c.stop();
    }
  });

  it('other controllers through their scale subresource; a controller without one fails safe with SyncFailed', async () => {
    const c = await new Cluster().start();
    try {
      // A pod controlled by a Deployment directly: no lister finder matches, the scale subresource answers.
      const deploy = await c.owner('deployments', 'dep', 3);
      await c.pod('p1', true, deploy);
      await c.pdb('web', { maxUnavailable: 1 });
      let s = await c.status('web');
      assert.deepEqual([s.expectedPods, s.desiredHealthy, s.currentHealthy], [3, 2, 1]);

      const job = await c.owner('jobs', 'job', 0);
      await c.pod('j1', true, job);
      s = await c.status('web');
      assert.equal(s.disruptionsAllowed, 0);
      assert.deepEqual(
        s.conditions?.map((x) => [x.status, x.reason, x.message]),
        [['False', 'SyncFailed', 'jobs.batch does not implement the scale subresource']],
      );
      assert.ok(c.recorder.events.some((e) => e.reason === 'CalculateExpectedPodCountFailed' && e.object.kind === 'PodDisruptionBudget'));
    } finally {
      await c.stop();
    }
  });

  it('unmanaged pods with a percentage are reported; no pods at all allow nothing', async () => {
    const c = await new Cluster().start();
    try {
      await c.pdb('web', { maxUnavailable: 1 });
      let s = await c.status('web');
      assert.deepEqual([s.expectedPods, s.disruptionsAllowed], [0, 0]);
      assert.ok(c.recorder.events.some((e) => e.reason === 'NoPods' && e.message === 'No matching pods found'));
      await c.pod('bare', true);
      s = await c.status('web');
      const unmanaged = c.recorder.events.find((e) => e.reason === 'UnmanagedPods');
      assert.equal(unmanaged?.type, 'Warning');
      assert.match(unmanaged?.message ?? '', /^Pods selected by this PodDisruptionBudget \(selector: &LabelSelector\{MatchLabels:map\[string\]string\{app: web,\},MatchExpressions:\[\]LabelSelectorRequirement\{\},\}\) were found to be unmanaged\./);
      assert.equal(s.expectedPods, 0);
    } finally {
      await c.stop();
    }
  });

  it('an empty selector (policy/v1) selects every pod of the namespace', async () => {
    const c = await new Cluster().start();
    try {
      await c.pdbs().create({ metadata: { name: 'all' }, spec: { selector: {}, minAvailable: 1 } });
      await c.pod('a', true);
      const other = await c.pods().create({ metadata: { name: 'b', labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      assert.equal(other.metadata?.name, 'b');
      const s = await c.status('all');
      assert.deepEqual([s.expectedPods, s.currentHealthy, s.disruptionsAllowed], [2, 1, 0]);
    } finally {
      await c.stop();
    }
  });

  it('pods an eviction approved are not counted for two minutes, then are again', async () => {
    const c = await new Cluster().start();
    try {
      for (const n of ['a', 'b', 'c']) await c.pod(n, true);
      const pdb = await c.pdb('web', { minAvailable: 1 });
      await c.settle();
      const cur = await c.pdbs().get('web');
      await c.pdbs().updateStatus({ ...cur, status: { ...cur.status!, disruptedPods: { a: rfc3339(c.clock.now()) }, disruptionsAllowed: 1 } });
      let s = await c.status('web');
      assert.equal(pdb.metadata?.name, 'web');
      assert.deepEqual([s.currentHealthy, s.disruptionsAllowed, Object.keys(s.disruptedPods ?? {})], [2, 1, ['a']]);
      // a never went: after the deletion timeout it is dropped from disruptedPods and healthy again.
      await c.clock.advance(2 * 60_000 + 1000);
      s = await c.status('web');
      assert.deepEqual([s.currentHealthy, s.disruptionsAllowed, s.disruptedPods], [3, 2, undefined]);
      assert.ok(c.recorder.events.some((e) => e.reason === 'NotDeleted' && e.object.name === 'a'));
    } finally {
      await c.stop();
    }
  });

  it('a DisruptionTarget condition no deletion followed is reset to False after two minutes', async () => {
    const c = await new Cluster().start();
    try {
      const p = await c.pod('a', true);
      const t = rfc3339(c.clock.now());
      const conditions = [...(p.status?.conditions ?? []), { type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: t }];
      await c.pods().updateStatus({ ...p, status: { ...p.status, conditions } });
      await c.settle();
      const target = async () => (await c.pods().get('a')).status?.conditions?.find((x) => x.type === 'DisruptionTarget');
      assert.equal((await target())?.status, 'True', 'not stale yet');
      await c.clock.advance(2 * 60_000);
      await c.settle();
      const cond = await target();
      assert.deepEqual([cond?.status, cond?.reason ?? ''], ['False', '']);
    } finally {
      await c.stop();
    }
  });
});
