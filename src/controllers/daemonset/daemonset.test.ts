import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ControllerRevision, DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { Node, Pod, Taint } from 'kubernetes-types/core/v1.js';
import { RealPodControl } from '../kit/podcontrol.js';
import { DaemonSetController } from './daemonset.js';
import { nodeShouldRunDaemonPod, replaceNodeNameNodeAffinity, withDaemonTolerations } from './util.js';
import { ControllerHarness, type ControllerDeps } from '../kit/testing.js';

const NOW = Date.UTC(2026, 0, 1);
const controllerUser = { name: 'system:serviceaccount:kube-system:daemon-set-controller', groups: ['system:authenticated'] };

const daemonSet = (name: string, spec: Partial<DaemonSet['spec']> = {}, podSpec: Record<string, unknown> = {}): DaemonSet => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    revisionHistoryLimit: 10,
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox:1' }], ...podSpec } },
    ...spec,
  },
});

const node = (name: string, labels: Record<string, string> = {}, taints: Taint[] = []): Node => ({
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
  spec: { taints },
});

class Cluster extends ControllerHarness<DaemonSetController> {
  constructor() {
    super({ user: controllerUser, now: NOW });
  }

  protected newController(deps: ControllerDeps): DaemonSetController {
    return new DaemonSetController({ ...deps, podControl: new RealPodControl(deps.client, this.recorder), recorder: this.recorder });
  }

  ds() {
    return this.admin.resource<DaemonSet>('apps', 'v1', 'daemonsets').namespace('ns');
  }

  async livePods(): Promise<Pod[]> {
    return (await this.pods().list()).items.filter((p) => !p.metadata?.deletionTimestamp);
  }

  async addNode(n: Node): Promise<void> {
    await this.admin.resource<Node>('', 'v1', 'nodes').create(n);
  }

  /** Marks a pod Running and Ready (as a kubelet would), without binding it: its deletion is then immediate. */
  async ready(pod: Pod): Promise<void> {
    const fresh = await this.pods().get(pod.metadata!.name!);
    const t = new Date(this.clock.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await this.pods().updateStatus({ ...fresh, status: { ...fresh.status, phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }] } });
  }
}

const pinnedNode = (p: Pod) => p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values?.[0];

describe('DaemonSet controller', () => {
  it('puts one pinned pod on each eligible node, and one on a node that joins', async () => {
    const c = await new Cluster().start();
    try {
      await c.addNode(node('n1', { disk: 'ssd' }));
      await c.addNode(node('n2', { disk: 'ssd' }));
      await c.addNode(node('n3', { disk: 'hdd' }));
      await c.addNode(node('n4', { disk: 'ssd' }, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }]));
      const ds = await c.ds().create(daemonSet('agent', {}, { nodeSelector: { disk: 'ssd' } }));
      await c.settle(async () => (await c.livePods()).length >= 2);
      await c.settle();
      const pods = await c.livePods();
      assert.deepEqual(pods.map(pinnedNode).sort(), ['n1', 'n2'], 'the hdd node and the tainted one get none');
      const revisions = (await c.admin.resource<ControllerRevision>('apps', 'v1', 'controllerrevisions').namespace('ns').list()).items;
      assert.equal(revisions.length, 1);
      const hash = revisions[0]!.metadata!.labels!['controller-revision-hash']!;
      assert.equal(revisions[0]!.metadata?.name, `agent-${hash}`);
      assert.equal(revisions[0]!.revision, 1);
      for (const pod of pods) {
        assert.equal(pod.metadata?.generateName, 'agent-');
        assert.deepEqual(pod.metadata?.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata!.uid!, controller: true, blockOwnerDeletion: true }]);
        assert.equal(pod.metadata?.labels?.['controller-revision-hash'], hash);
        assert.equal(pod.metadata?.labels?.['pod-template-generation'], '1');
        assert.deepEqual(pod.spec?.nodeSelector, { disk: 'ssd' });
        assert.deepEqual(
          pod.spec?.tolerations?.map((t) => `${t.key}:${t.effect}`),
          ['not-ready:NoExecute', 'unreachable:NoExecute', 'disk-pressure:NoSchedule', 'memory-pressure:NoSchedule', 'pid-pressure:NoSchedule', 'unschedulable:NoSchedule'].map((s) => `node.kubernetes.io/${s}`),
        );
      }
      assert.equal(c.recorder.events.filter((e) => e.reason === 'SuccessfulCreate').length, 2);
      let status = (await c.ds().get('agent')).status;
      assert.deepEqual(
        [status?.desiredNumberScheduled, status?.currentNumberScheduled, status?.numberReady, status?.updatedNumberScheduled, status?.numberUnavailable, status?.numberMisscheduled, status?.observedGeneration],
        [2, 2, 0, 2, 2, 0, 1],
      );

      await c.addNode(node('n5', { disk: 'ssd' }));
      await c.settle(async () => (await c.livePods()).length === 3);
      assert.deepEqual((await c.livePods()).map(pinnedNode).sort(), ['n1', 'n2', 'n5']);
      for (const pod of await c.livePods()) await c.ready(pod);
      await c.settle(async () => (await c.ds().get('agent')).status?.numberAvailable === 3);
      status = (await c.ds().get('agent')).status;
      assert.deepEqual([status?.desiredNumberScheduled, status?.numberReady, status?.numberAvailable], [3, 3, 3]);
      assert.equal('numberUnavailable' in (status ?? {}), false, 'omitted at zero, as upstream serializes it');

      // A label change takes the node out: its pod goes, and the count follows.
      await c.admin.resource<Node>('', 'v1', 'nodes').patch('n5', 'merge', { metadata: { labels: { disk: 'hdd' } } });
      await c.settle(async () => (await c.livePods()).length === 2);
      assert.deepEqual((await c.livePods()).map(pinnedNode).sort(), ['n1', 'n2']);
      assert.equal(c.recorder.events.filter((e) => e.reason === 'SuccessfulDelete').length, 1);
    } finally {
      await c.stop();
    }
  });

  it('rolls a template change one node at a time within maxUnavailable 1', async () => {
    const c = await new Cluster().start();
    try {
      for (const n of ['n1', 'n2', 'n3']) await c.addNode(node(n));
      await c.ds().create(daemonSet('agent'));
      await c.settle(async () => (await c.livePods()).length === 3);
      for (const pod of await c.livePods()) await c.ready(pod);
      await c.settle(async () => (await c.ds().get('agent')).status?.numberAvailable === 3);
      await c.ds().patch('agent', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } });
      const seen: number[] = [];
      for (let step = 0; step < 60; step++) {
        await c.clock.advance(50);
        const live = await c.livePods();
        const oldReady = live.filter((p) => p.spec?.containers[0]?.image === 'busybox:1' && p.status?.phase === 'Running').length;
        const newPods = live.filter((p) => p.spec?.containers[0]?.image === 'busybox:2');
        seen.push(oldReady + newPods.filter((p) => p.status?.phase === 'Running').length);
        for (const p of newPods) if (p.status?.phase !== 'Running') await c.ready(p);
        if (newPods.length === 3 && live.length === 3) break;
      }
      const live = await c.livePods();
      assert.deepEqual(live.map((p) => p.spec?.containers[0]?.image), ['busybox:2', 'busybox:2', 'busybox:2']);
      assert.ok(Math.min(...seen) >= 2, `never more than one node without a running pod: ${seen.join(',')}`);
      await c.settle(async () => (await c.ds().get('agent')).status?.updatedNumberScheduled === 3 && (await c.ds().get('agent')).status?.numberAvailable === 3);
      const ds = await c.ds().get('agent');
      assert.equal(ds.status?.observedGeneration, ds.metadata?.generation);
      const revisions = (await c.admin.resource<ControllerRevision>('apps', 'v1', 'controllerrevisions').namespace('ns').list()).items;
      assert.deepEqual(revisions.map((r) => r.revision).sort(), [1, 2]);
    } finally {
      await c.stop();
    }
  });

  it('with OnDelete replaces only the pods the user deletes', async () => {
    const c = await new Cluster().start();
    try {
      for (const n of ['n1', 'n2']) await c.addNode(node(n));
      await c.ds().create(daemonSet('agent', { updateStrategy: { type: 'OnDelete' } }));
      await c.settle(async () => (await c.livePods()).length === 2);
      await c.ds().patch('agent', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } });
      await c.settle();
      assert.deepEqual((await c.livePods()).map((p) => p.spec?.containers[0]?.image), ['busybox:1', 'busybox:1']);
      const victim = (await c.livePods()).find((p) => pinnedNode(p) === 'n1')!;
      await c.pods().delete(victim.metadata!.name!);
      await c.settle(async () => (await c.livePods()).some((p) => p.spec?.containers[0]?.image === 'busybox:2'));
      const byNode = Object.fromEntries((await c.livePods()).map((p) => [pinnedNode(p), p.spec?.containers[0]?.image]));
      assert.deepEqual(byNode, { n1: 'busybox:2', n2: 'busybox:1' });
      await c.settle(async () => (await c.ds().get('agent')).status?.updatedNumberScheduled === 1);
      assert.equal((await c.ds().get('agent')).status?.updatedNumberScheduled, 1);
    } finally {
      await c.stop();
    }
  });

  it('with maxSurge creates the new pod before the old one goes', async () => {
    const c = await new Cluster().start();
    try {
      await c.addNode(node('n1'));
      await c.ds().create(daemonSet('agent', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } }));
      await c.settle(async () => (await c.livePods()).length === 1);
      await c.ready((await c.livePods())[0]!);
      await c.settle(async () => (await c.ds().get('agent')).status?.numberAvailable === 1);
      await c.ds().patch('agent', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } } });
      await c.settle(async () => (await c.livePods()).length === 2);
      assert.deepEqual((await c.livePods()).map((p) => p.spec?.containers[0]?.image).sort(), ['busybox:1', 'busybox:2'], 'surged: both on the node');
      await c.ready((await c.livePods()).find((p) => p.spec?.containers[0]?.image === 'busybox:2')!);
      await c.settle(async () => (await c.livePods()).length === 1);
      assert.deepEqual((await c.livePods()).map((p) => p.spec?.containers[0]?.image), ['busybox:2']);
    } finally {
      await c.stop();
    }
  });

  it('deletes a failed daemon pod with FailedDaemonPod and creates a new one, backing off per node', async () => {
    const c = await new Cluster().start();
    try {
      await c.addNode(node('n1'));
      await c.ds().create(daemonSet('agent'));
      await c.settle(async () => (await c.livePods()).length === 1);
      const fail = async (p: Pod) => {
        const fresh = await c.pods().get(p.metadata!.name!);
        await c.pods().updateStatus({ ...fresh, status: { ...fresh.status, phase: 'Failed' } });
      };
      const first = (await c.livePods())[0]!;
      await fail(first);
      await c.settle(async () => (await c.livePods()).some((p) => p.metadata?.name !== first.metadata?.name));
      const second = (await c.livePods()).find((p) => p.metadata?.name !== first.metadata?.name)!;
      assert.ok(second, 'replaced');
      assert.equal(
        c.recorder.events.find((e) => e.reason === 'FailedDaemonPod')?.message,
        `Found failed daemon pod ns/${first.metadata!.name} on node n1, will try to kill it`,
      );
      // Failing again at once: the next deletion waits out the back-off (2 s after the first 1 s).
      await fail(second);
      await c.settle(undefined, 10);
      assert.equal((await c.pods().get(second.metadata!.name!)).status?.phase, 'Failed', 'still there within the back-off');
      await c.settle(async () => (await c.livePods()).every((p) => p.metadata?.name !== second.metadata?.name), 200);
      assert.equal(c.recorder.events.filter((e) => e.reason === 'FailedDaemonPod').length, 2);
    } finally {
      await c.stop();
    }
  });

  it('keeps at most revisionHistoryLimit old revisions that no pod uses', async () => {
    const c = await new Cluster().start();
    try {
      await c.ds().create(daemonSet('agent', { revisionHistoryLimit: 1, updateStrategy: { type: 'OnDelete' } }));
      const revisions = async () => (await c.admin.resource<ControllerRevision>('apps', 'v1', 'controllerrevisions').namespace('ns').list()).items;
      await c.settle(async () => (await revisions()).length === 1);
      for (const image of ['busybox:2', 'busybox:3', 'busybox:4']) {
        await c.ds().patch('agent', 'merge', { spec: { template: { spec: { containers: [{ name: 'c', image }] } } } });
        await c.settle(async () => (await revisions()).some((r) => JSON.stringify(r.data).includes(image)));
      }
      await c.settle();
      assert.deepEqual((await revisions()).map((r) => r.revision).sort(), [3, 4]);
    } finally {
      await c.stop();
    }
  });
});

describe('DaemonSet node predicates', () => {
  const ds = (podSpec: Record<string, unknown>) => daemonSet('x', {}, podSpec);
  const cases: { name: string; node: Node; ds: DaemonSet; want: [boolean, boolean] }[] = [
    { name: 'plain node', node: node('a'), ds: ds({}), want: [true, true] },
    { name: 'nodeSelector mismatch', node: node('a', { zone: 'b' }), ds: ds({ nodeSelector: { zone: 'a' } }), want: [false, false] },
    { name: 'nodeName of another node', node: node('a'), ds: ds({ nodeName: 'b' }), want: [false, false] },
    {
      name: 'required affinity mismatch',
      node: node('a'),
      ds: ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] } } } }),
      want: [false, false],
    },
    { name: 'untolerated NoSchedule: keeps running', node: node('a', {}, [{ key: 'k', effect: 'NoSchedule' }]), ds: ds({}), want: [false, true] },
    { name: 'untolerated NoExecute', node: node('a', {}, [{ key: 'k', effect: 'NoExecute' }]), ds: ds({}), want: [false, false] },
    { name: 'PreferNoSchedule is ignored', node: node('a', {}, [{ key: 'k', effect: 'PreferNoSchedule' }]), ds: ds({}), want: [true, true] },
    { name: 'tolerated taint', node: node('a', {}, [{ key: 'k', value: 'v', effect: 'NoExecute' }]), ds: ds({ tolerations: [{ key: 'k', operator: 'Equal', value: 'v' }] }), want: [true, true] },
    { name: 'unschedulable taint: daemon toleration', node: node('a', {}, [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]), ds: ds({}), want: [true, true] },
    { name: 'not-ready taint: daemon toleration', node: node('a', {}, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]), ds: ds({}), want: [true, true] },
    { name: 'network-unavailable: only hostNetwork tolerates', node: node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), ds: ds({}), want: [false, true] },
    { name: 'network-unavailable with hostNetwork', node: node('a', {}, [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), ds: ds({ hostNetwork: true }), want: [true, true] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = nodeShouldRunDaemonPod(tc.node, tc.ds);
      assert.deepEqual([got.shouldRun, got.shouldContinueRunning], tc.want);
    });
  }

  it('pins to the node by replacing the required terms, keeping the rest of the affinity', () => {
    const affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }] } },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'x' }] },
    };
    const out = replaceNodeNameNodeAffinity(affinity, 'n1');
    assert.deepEqual(out.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] });
    assert.deepEqual(out.podAntiAffinity, affinity.podAntiAffinity);
    assert.equal(affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]!.matchExpressions!.length, 1, 'the template is untouched');
    // An equal toleration is replaced, not doubled.
    const t = withDaemonTolerations([{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }], false);
    assert.equal(t.filter((x) => x.key === 'node.kubernetes.io/not-ready').length, 1);
  });
});
