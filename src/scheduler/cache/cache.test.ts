import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../util/clock.js';
import { PodInfo } from '../framework/types.js';
import { makeNode, makePod } from '../testing/builders.js';
import { Cache } from './cache.js';
import { Snapshot } from './snapshot.js';

const node = (name: string, zone?: string) => {
  const b = makeNode().name(name).capacity({ cpu: '4', memory: '4Gi' });
  if (zone) b.labels({ 'topology.kubernetes.io/zone': zone });
  return b.obj();
};

function setup(ttl = 0) {
  const clock = new FakeClock();
  const cache = new Cache({ clock, assumedPodTTLMs: ttl });
  const snap = new Snapshot();
  const refresh = () => (cache.updateSnapshot(snap), snap);
  return { clock, cache, snap, refresh };
}

describe('Cache', () => {
  it('counts assumed pods until forgotten, and confirmed pods once', () => {
    const { cache, refresh } = setup();
    cache.addNode(node('n1'));
    const pod = makePod().name('web').req({ cpu: '1' }).nodeName('n1').obj();
    cache.assumePod(new PodInfo(pod));
    assert.equal(cache.isAssumedPod(pod), true);
    assert.equal(refresh().get('n1')!.requested.milliCPU, 1000);
    assert.throws(() => cache.assumePod(new PodInfo(pod)), /can't be assumed/);
    // The informer confirms it: counted once, no longer assumed, its object the informer's.
    const confirmed = { ...pod, metadata: { ...pod.metadata, resourceVersion: '7' } };
    cache.addPod(confirmed);
    assert.equal(cache.isAssumedPod(pod), false);
    assert.equal(refresh().get('n1')!.pods.length, 1);
    assert.equal(refresh().get('n1')!.pods[0]!.pod, confirmed);
    cache.forgetPod(pod);
    assert.equal(refresh().get('n1')!.pods.length, 1, 'forgetting a confirmed pod does nothing');
    cache.removePod(pod);
    assert.equal(refresh().get('n1')!.requested.milliCPU, 0);
  });

  it('frees the resources of a forgotten assumed pod', () => {
    const { cache, refresh } = setup();
    cache.addNode(node('n1'));
    const pod = makePod().req({ cpu: '1' }).hostPort(80).nodeName('n1').obj();
    cache.assumePod(new PodInfo(pod));
    cache.forgetPod(pod);
    const ni = refresh().get('n1')!;
    assert.deepEqual([ni.pods.length, ni.requested.milliCPU, ni.usedPorts.size], [0, 0, 0]);
  });

  it('expires assumed pods whose binding finished longer than the TTL ago', async () => {
    const { clock, cache } = setup(30_000);
    cache.addNode(node('n1'));
    const pending = makePod().nodeName('n1').obj();
    const bound = makePod().nodeName('n1').obj();
    cache.assumePod(new PodInfo(pending));
    cache.assumePod(new PodInfo(bound));
    cache.finishBinding(bound);
    await clock.advance(30_000);
    assert.deepEqual(cache.cleanupExpiredAssumedPods(), [bound]);
    assert.equal(cache.isAssumedPod(pending), true, 'a binding in progress never expires');
  });

  it('copies only changed NodeInfos into the snapshot and keeps their identity', () => {
    const { cache, refresh } = setup();
    cache.addNode(node('n1'));
    cache.addNode(node('n2'));
    const snap = refresh();
    const n1 = snap.get('n1')!;
    const n2 = snap.get('n2')!;
    const gen2 = n2.generation;
    cache.addPod(makePod().req({ cpu: '1' }).nodeName('n1').obj());
    refresh();
    assert.equal(snap.get('n1'), n1, 'the same object, updated in place');
    assert.equal(n1.requested.milliCPU, 1000);
    assert.equal(snap.get('n2')!.generation, gen2, 'n2 untouched');
  });

  it('does not re-copy a node for a heartbeat', () => {
    const { cache, refresh } = setup();
    const n1 = node('n1');
    cache.addNode(n1);
    const gen = refresh().get('n1')!.generation;
    cache.updateNode({ ...n1, status: { ...n1.status, conditions: [] } });
    assert.equal(refresh().get('n1')!.generation, gen);
    cache.updateNode({ ...n1, status: { ...n1.status, allocatable: { cpu: '8', pods: '110' } } });
    assert.equal(refresh().get('n1')!.allocatable.milliCPU, 8000);
  });

  it('tracks nodes with pods that have affinity terms', () => {
    const { cache, refresh } = setup();
    cache.addNode(node('n1'));
    cache.addNode(node('n2'));
    const anti = makePod().nodeName('n2').obj();
    anti.spec!.affinity = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: {} }] } };
    cache.addPod(anti);
    const snap = refresh();
    assert.deepEqual(snap.havePodsWithAffinityList().map((n) => n.name), ['n2']);
    assert.deepEqual(snap.havePodsWithRequiredAntiAffinityList().map((n) => n.name), ['n2']);
    cache.removePod(anti);
    assert.deepEqual(refresh().havePodsWithAffinityList(), []);
  });

  it('lists nodes round-robin across zones and drops deleted nodes', () => {
    const { cache, refresh } = setup();
    for (const [n, z] of [['a1', 'a'], ['a2', 'a'], ['a3', 'a'], ['b1', 'b'], ['c1', 'c'], ['c2', 'c']]) cache.addNode(node(n!, z));
    assert.deepEqual(refresh().list().map((n) => n.name), ['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
    cache.removeNode('b1');
    const snap = refresh();
    assert.deepEqual(snap.list().map((n) => n.name), ['a1', 'c1', 'a2', 'c2', 'a3']);
    assert.equal(snap.get('b1'), undefined);
  });

  it('shares image states between nodes and counts the nodes that have each image', () => {
    const { cache, refresh } = setup();
    cache.addNode(makeNode().name('n1').image(100, 'nginx:1').obj());
    cache.addNode(makeNode().name('n2').image(100, 'nginx:1').obj());
    assert.equal(refresh().get('n1')!.imageStates.get('nginx:1')!.nodes.size, 2);
    cache.updateNode(makeNode().name('n2').obj());
    assert.equal(refresh().get('n1')!.imageStates.get('nginx:1')!.nodes.size, 1);
  });
});
