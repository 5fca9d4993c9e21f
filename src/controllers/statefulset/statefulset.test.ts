import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StatefulSet } from 'kubernetes-types/apps/v1.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { StatefulSetController, VOLUME_CLAIMS_NOT_SERVED_REASON } from './statefulset.js';
import { parentNameAndOrdinal } from './pods.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:statefulset-controller', groups: ['system:authenticated'] };

const statefulSet = (name: string, replicas: number, spec: Partial<StatefulSet['spec']> = {}): StatefulSet => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name },
  spec: {
    replicas,
    serviceName: name,
    selector: { matchLabels: { app: name } },
    podManagementPolicy: 'OrderedReady',
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    revisionHistoryLimit: 10,
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } },
    ...spec,
  },
});

class Cluster extends ControllerHarness<StatefulSetController> {
  constructor() {
    super({ user: controllerUser, now: NOW });
  }

  protected newController(deps: ControllerDeps): StatefulSetController {
    return new StatefulSetController({ ...deps, recorder: this.recorder });
  }

  sts() {
    return this.admin.resource<StatefulSet>('apps', 'v1', 'statefulsets').namespace('ns');
  }

  async names(): Promise<string[]> {
    return (await this.pods().list()).items
      .filter((p) => !p.metadata?.deletionTimestamp)
      .map((p) => p.metadata!.name!)
      .sort();
  }

  /** Running and Ready, as a kubelet would report (unbound: deletion is immediate). */
  async ready(name: string, since = this.clock.now() - 60_000): Promise<void> {
    const fresh = await this.pods().get(name);
    const t = new Date(since).toISOString().replace(/\.\d+Z$/, 'Z');
    await this.pods().updateStatus({ ...fresh, status: { ...fresh.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] } });
  }

  podCreates(): string[] {
    return this.api.actions.filter((a) => a.verb === 'create' && a.resource === 'pods' && a.user === controllerUser.name).map((a) => (a.body as Pod).metadata!.name!);
  }

  podDeletes(): string[] {
    return this.api.actions.filter((a) => a.verb === 'delete' && a.resource === 'pods' && a.user === controllerUser.name).map((a) => a.name ?? '');
  }
}

describe('StatefulSet controller', () => {
  it('OrderedReady: creates web-0, web-1, web-2 one at a time, each after its predecessor is ready; scales down in reverse', async () => {
    const c = await new Cluster().start();
    try {
      const set = await c.sts().create(statefulSet('web', 3));
      await c.settle(async () => (await c.names()).length > 0);
      await c.settle();
      assert.deepEqual(await c.names(), ['web-0'], 'web-1 waits for web-0 to be Running and Ready');
      const pod = await c.pods().get('web-0');
      assert.equal(pod.spec?.hostname, 'web-0');
      assert.equal(pod.spec?.subdomain, 'web');
      assert.equal(pod.metadata?.labels?.['statefulset.kubernetes.io/pod-name'], 'web-0');
      assert.equal(pod.metadata?.labels?.['apps.kubernetes.io/pod-index'], '0');
      assert.deepEqual(pod.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: set.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
      const revision = pod.metadata?.labels?.['controller-revision-hash'];
      assert.match(revision ?? '', /^web-[a-z0-9]+$/);

      for (const name of ['web-0', 'web-1']) {
        await c.ready(name);
        await c.settle(async () => (await c.names()).length > Number(name.slice(-1)) + 1);
      }
      await c.ready('web-2');
      await c.settle(async () => (await c.sts().get('web')).status?.readyReplicas === 3);
      assert.deepEqual(c.podCreates(), ['web-0', 'web-1', 'web-2'], 'in order, each once');
      const status = (await c.sts().get('web')).status;
      assert.deepEqual(
        [status?.replicas, status?.readyReplicas, status?.availableReplicas, status?.currentReplicas, status?.updatedReplicas, status?.currentRevision, status?.updateRevision, status?.observedGeneration],
        [3, 3, 3, 3, 3, revision, revision, 1],
      );
      assert.deepEqual(
        c.recorder.events.filter((e) => e.reason === 'SuccessfulCreate').map((e) => e.message),
        ['web-0', 'web-1', 'web-2'].map((n) => `create Pod ${n} in StatefulSet web successful`),
      );

      await c.sts().patch('web', 'merge', { spec: { replicas: 1 } });
      await c.settle(async () => (await c.names()).length === 1);
      assert.deepEqual(c.podDeletes(), ['web-2', 'web-1'], 'highest ordinal first');
      assert.deepEqual(await c.names(), ['web-0']);
    } finally {
      await c.stop();
    }
  });

  it('Parallel: creates all at once from spec.ordinals.start', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('db', 3, { podManagementPolicy: 'Parallel', ordinals: { start: 5 } }));
      await c.settle(async () => (await c.names()).length === 3);
      assert.deepEqual(await c.names(), ['db-5', 'db-6', 'db-7']);
      assert.equal((await c.pods().get('db-6')).metadata?.labels?.['apps.kubernetes.io/pod-index'], '6');
      await c.sts().patch('db', 'merge', { spec: { replicas: 1 } });
      await c.settle(async () => (await c.names()).length === 1);
      assert.deepEqual(await c.names(), ['db-5'], 'not ready, yet deleted at once');
    } finally {
      await c.stop();
    }
  });

  it('RollingUpdate with a partition replaces the pods at or above it, highest ordinal first', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('web', 3, { podManagementPolicy: 'Parallel' }));
      await c.settle(async () => (await c.names()).length === 3);
      for (const n of await c.names()) await c.ready(n);
      await c.settle(async () => (await c.sts().get('web')).status?.readyReplicas === 3);
      const oldRevision = (await c.sts().get('web')).status?.currentRevision;
      await c.sts().patch('web', 'merge', { spec: { updateStrategy: { rollingUpdate: { partition: 1 } }, template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } });
      const image = async (n: string) => (await c.pods().get(n).catch(() => undefined))?.spec?.containers[0]?.image;
      for (let step = 0; step < 80; step++) {
        await c.clock.advance(50);
        for (const n of await c.names()) {
          const p = await c.pods().get(n);
          if (p.status?.phase !== 'Running') await c.ready(n);
        }
        if ((await image('web-1')) === 'nginx:2' && (await c.sts().get('web')).status?.updatedReplicas === 2) break;
      }
      assert.deepEqual(c.podDeletes(), ['web-2', 'web-1'], 'highest first, the partition kept');
      assert.deepEqual([await image('web-0'), await image('web-1'), await image('web-2')], ['nginx:1', 'nginx:2', 'nginx:2']);
      const status = (await c.sts().get('web')).status;
      assert.equal(status?.currentRevision, oldRevision, 'partitioned: not complete');
      assert.notEqual(status?.updateRevision, oldRevision);
      assert.equal((await c.pods().get('web-0')).metadata?.labels?.['controller-revision-hash'], oldRevision);

      // Partition 0 finishes it; the update revision becomes current.
      await c.sts().patch('web', 'merge', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
      for (let step = 0; step < 80; step++) {
        await c.clock.advance(50);
        for (const n of await c.names()) if ((await c.pods().get(n)).status?.phase !== 'Running') await c.ready(n);
        const s = (await c.sts().get('web')).status;
        if (s?.currentRevision === s?.updateRevision && s?.readyReplicas === 3) break;
      }
      const done = (await c.sts().get('web')).status;
      assert.equal(done?.currentRevision, done?.updateRevision);
      assert.equal(done?.currentReplicas, 3);
      assert.equal(await image('web-0'), 'nginx:2');
    } finally {
      await c.stop();
    }
  });

  it('OnDelete leaves old pods until deleted', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('web', 2, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } }));
      await c.settle(async () => (await c.names()).length === 2);
      await c.sts().patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } });
      await c.settle();
      assert.deepEqual(c.podDeletes(), []);
      await c.pods().delete('web-1');
      await c.settle(async () => (await c.names()).length === 2);
      assert.equal((await c.pods().get('web-1')).spec?.containers[0]?.image, 'nginx:2');
      assert.equal((await c.pods().get('web-0')).spec?.containers[0]?.image, 'nginx:1');
    } finally {
      await c.stop();
    }
  });

  it('OrderedReady: a scale-down waits while a remaining pod is not ready', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('web', 3));
      for (const n of ['web-0', 'web-1', 'web-2']) {
        await c.settle(async () => (await c.names()).includes(n));
        await c.ready(n);
      }
      const fresh = await c.pods().get('web-0');
      await c.pods().updateStatus({ ...fresh, status: { ...fresh.status, conditions: [{ type: 'Ready', status: 'False' }] } });
      await c.settle();
      await c.sts().patch('web', 'merge', { spec: { replicas: 2 } });
      await c.settle();
      assert.deepEqual(c.podDeletes(), [], 'web-2 stays while web-0 is not ready');
      await c.ready('web-0');
      await c.settle(async () => (await c.names()).length === 2);
      assert.deepEqual(c.podDeletes(), ['web-2']);
    } finally {
      await c.stop();
    }
  });

  it('counts a ready pod as available only minReadySeconds after it became ready', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('web', 1, { minReadySeconds: 10 }));
      await c.settle(async () => (await c.names()).length === 1);
      // Seconds in RFC 3339: ready from the start of the current second.
      await c.ready('web-0', Math.floor(c.clock.now() / 1000) * 1000);
      await c.settle(async () => (await c.sts().get('web')).status?.readyReplicas === 1);
      assert.equal((await c.sts().get('web')).status?.availableReplicas, 0);
      await c.clock.advance(11_000);
      await c.settle(async () => (await c.sts().get('web')).status?.availableReplicas === 1);
      assert.equal((await c.sts().get('web')).status?.availableReplicas, 1, 'looked again after minReadySeconds');
    } finally {
      await c.stop();
    }
  });

  it('replaces a failed pod under the same name', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('web', 1));
      await c.settle(async () => (await c.names()).length === 1);
      const before = await c.pods().get('web-0');
      await c.pods().updateStatus({ ...before, status: { ...before.status, phase: 'Failed' } });
      await c.settle(async () => {
        const now = await c.pods().get('web-0').catch(() => undefined);
        return now !== undefined && now.metadata?.uid !== before.metadata?.uid;
      });
      assert.notEqual((await c.pods().get('web-0')).metadata?.uid, before.metadata?.uid);
      assert.deepEqual(c.podCreates(), ['web-0', 'web-0']);
    } finally {
      await c.stop();
    }
  });

  it('keeps at most revisionHistoryLimit old revisions besides the current and update ones', async () => {
    const c = await new Cluster().start();
    try {
      await c.sts().create(statefulSet('web', 0, { revisionHistoryLimit: 1 }));
      const revisions = async () => (await c.admin.resource('apps', 'v1', 'controllerrevisions').namespace('ns').list()).items as { revision?: number; data?: unknown }[];
      await c.settle(async () => (await revisions()).length === 1);
      for (const image of ['nginx:2', 'nginx:3', 'nginx:4']) {
        await c.sts().patch('web', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } });
        await c.settle(async () => (await revisions()).some((r) => JSON.stringify(r.data).includes(image)));
      }
      await c.settle();
      assert.deepEqual((await revisions()).map((r) => r.revision).sort(), [3, 4]);
      const status = (await c.sts().get('web')).status;
      assert.equal(status?.currentRevision, status?.updateRevision, 'no pods: the update is complete at once');
    } finally {
      await c.stop();
    }
  });

  it('says that volumeClaimTemplates get no PersistentVolumeClaims, and mounts an emptyDir in their place', async () => {
    const c = await new Cluster().start();
    try {
      const set = statefulSet('db', 1);
      set.spec!.template.spec!.containers[0]!.volumeMounts = [{ name: 'data', mountPath: '/data' }];
      set.spec!.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }];
      await c.sts().create(set);
      await c.settle(async () => (await c.names()).length === 1);
      assert.deepEqual((await c.pods().get('db-0')).spec?.volumes, [{ name: 'data', emptyDir: {} }]);
      const event = c.recorder.events.find((e) => e.reason === VOLUME_CLAIMS_NOT_SERVED_REASON);
      assert.equal(event?.type, 'Warning');
      assert.match(event?.message ?? '', /PersistentVolumeClaims are not served yet: data-db-0 not created/);
      assert.equal(event?.object.kind, 'StatefulSet');
    } finally {
      await c.stop();
    }
  });
});

describe('StatefulSet pod names', () => {
  const cases: [string, string, number][] = [
    ['web-0', 'web', 0],
    ['my-web-12', 'my-web', 12],
    ['web', '', -1],
    ['web-x', '', -1],
  ];
  for (const [name, parent, ordinal] of cases) {
    it(name, () => assert.deepEqual(parentNameAndOrdinal({ metadata: { name } }), { parent, ordinal }));
  }
});
