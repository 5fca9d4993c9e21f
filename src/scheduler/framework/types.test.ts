import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeNode, makePod } from '../testing/builders.js';
import { AffinityTerm, HostPortInfo, NodeInfo, PodInfo } from './types.js';

describe('AffinityTerm', () => {
  const web = makePod().namespace('shop').labels({ app: 'web' }).obj();
  const cases = [
    { name: "the pod's own namespace by default", term: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' }, ns: 'shop', want: true },
    { name: 'another namespace by default', term: { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' }, ns: 'other', want: false },
    { name: 'listed namespaces', term: { labelSelector: { matchLabels: { app: 'web' } }, namespaces: ['shop'], topologyKey: 'zone' }, ns: 'other', want: true },
    { name: 'namespace selector', term: { labelSelector: {}, namespaceSelector: { matchLabels: { team: 'a' } }, topologyKey: 'zone' }, ns: 'other', want: true },
    { name: 'label mismatch', term: { labelSelector: { matchLabels: { app: 'db' } }, namespaces: ['shop'], topologyKey: 'zone' }, ns: 'x', want: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const owner = makePod().namespace(c.ns).obj();
      assert.equal(AffinityTerm.parse(owner, c.term).matches(web, { team: 'a' }), c.want);
    });
  }
});

describe('AffinityTerm namespaces', () => {
  const owner = makePod().namespace('shop').obj();
  it('matchesIn agrees with matches for a namespace and labels read beforehand', () => {
    const t = AffinityTerm.parse(owner, { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' });
    assert.equal(t.matchesIn('shop', { app: 'web' }, undefined), true);
    assert.equal(t.matchesIn('other', { app: 'web' }, undefined), false);
    assert.equal(t.matchesIn('shop', undefined, undefined), false);
  });
  it('a listed namespace plus a namespaceSelector selects either way', () => {
    const t = AffinityTerm.parse(owner, { labelSelector: {}, namespaces: ['a'], namespaceSelector: { matchLabels: { team: 'x' } }, topologyKey: 'zone' });
    assert.equal(t.matchesIn('a', {}, { team: 'y' }), true);
    assert.equal(t.matchesIn('b', {}, { team: 'x' }), true);
    assert.equal(t.matchesIn('b', {}, { team: 'y' }), false);
    const several = AffinityTerm.parse(owner, { labelSelector: {}, namespaces: ['a', 'b'], topologyKey: 'zone' });
    assert.deepEqual(['a', 'b', 'c'].map((ns) => several.matchesIn(ns, {}, undefined)), [true, true, false]);
  });
  it('needs namespace labels only with a namespaceSelector', () => {
    assert.equal(AffinityTerm.parse(owner, { labelSelector: {}, topologyKey: 'zone' }).usesNamespaceLabels(), false);
    assert.equal(AffinityTerm.parse(owner, { labelSelector: {}, namespaces: ['a'], topologyKey: 'zone' }).usesNamespaceLabels(), false);
    assert.equal(AffinityTerm.parse(owner, { labelSelector: {}, namespaceSelector: {}, topologyKey: 'zone' }).usesNamespaceLabels(), true);
  });
});

describe('PodInfo', () => {
  const anti = { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone' }] } };
  const pod = makePod().namespace('shop').labels({ app: 'web' }).req({ cpu: '1' }).obj();
  pod.spec!.affinity = anti;

  it("keeps the pod's namespace, labels and deletion beside it, following every new version", () => {
    const pi = new PodInfo(pod);
    assert.deepEqual([pi.namespace, pi.labels, pi.terminating], ['shop', { app: 'web' }, false]);
    pi.pod = { ...pod, metadata: { ...pod.metadata, labels: { app: 'db' }, deletionTimestamp: '2024-01-01T00:00:00Z' } };
    assert.deepEqual([pi.namespace, pi.labels, pi.terminating], ['shop', { app: 'db' }, true]);
    assert.equal(new PodInfo(makePod().obj()).labels, undefined);
  });

  it('withPod shares what the spec derives and reads the rest from the new version', () => {
    const pi = new PodInfo(pod);
    const bound = pi.withPod({ ...pod, metadata: { ...pod.metadata, labels: { app: 'web', bound: 'yes' } }, spec: { ...pod.spec!, nodeName: 'n1' } });
    assert.ok(bound instanceof PodInfo);
    assert.equal(bound.pod.spec?.nodeName, 'n1');
    assert.deepEqual(bound.labels, { app: 'web', bound: 'yes' });
    assert.equal(bound.requests, pi.requests);
    assert.equal(bound.requiredAntiAffinityTerms, pi.requiredAntiAffinityTerms);
    assert.equal(bound.hasRequiredAntiAffinity(), true);
    assert.equal(pi.pod, pod);
  });
});

describe('AffinityTerm matchLabelKeys and mismatchLabelKeys', () => {
  const owner = makePod().namespace('shop').labels({ app: 'web', version: 'v2', track: 'canary' }).obj();
  const pod = (labels: Record<string, string>) => makePod().namespace('shop').labels(labels).obj();
  const term = { labelSelector: { matchLabels: { app: 'web' } }, topologyKey: 'zone', matchLabelKeys: ['version', 'absent'], mismatchLabelKeys: ['track'] };
  const cases = [
    { name: 'same version, other track', labels: { app: 'web', version: 'v2', track: 'stable' }, want: true },
    { name: 'another version', labels: { app: 'web', version: 'v1', track: 'stable' }, want: false },
    { name: 'the same track', labels: { app: 'web', version: 'v2', track: 'canary' }, want: false },
  ];
  for (const c of cases) it(c.name, () => assert.equal(AffinityTerm.parse(owner, term).matches(pod(c.labels), undefined), c.want));
  it('a nil labelSelector still selects nothing', () => {
    assert.equal(AffinityTerm.parse(owner, { topologyKey: 'zone', matchLabelKeys: ['version'] }).matches(pod({ version: 'v2' }), undefined), false);
  });
});

describe('HostPortInfo', () => {
  it('defaults the address to 0.0.0.0 and the protocol to TCP', () => {
    const ports = new HostPortInfo();
    ports.add(undefined, undefined, 80);
    assert.equal(ports.conflicts('10.0.0.1', 'TCP', 80), true);
    assert.equal(ports.conflicts('10.0.0.1', 'UDP', 80), false);
    ports.remove('0.0.0.0', 'TCP', 80);
    assert.equal(ports.size, 0);
  });
});

describe('NodeInfo', () => {
  it('sums requests, non-zero requests, ports and affinity pods, and undoes them on removal', () => {
    const ni = new NodeInfo(makeNode().name('n').capacity({ cpu: '4' }).obj());
    const a = makePod().req({ cpu: '1' }).hostPort(80).obj();
    const b = makePod().req({}).obj();
    b.spec!.affinity = { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone', labelSelector: {} }] } };
    ni.addPod(new PodInfo(a));
    ni.addPod(new PodInfo(b));
    // Non-zero cpu: 1000m, plus 100m each for a's port container and b's container (no requests).
    assert.deepEqual(
      [ni.requested.milliCPU, ni.nonZeroRequested.milliCPU, ni.usedPorts.size, ni.podsWithAffinity.length, ni.podsWithRequiredAntiAffinity.length],
      [1000, 1200, 1, 1, 0],
    );
    assert.equal(ni.removePod(a), true);
    assert.equal(ni.removePod(a), false);
    ni.removePod(b);
    assert.deepEqual([ni.pods.length, ni.requested.milliCPU, ni.nonZeroRequested.milliCPU, ni.usedPorts.size, ni.podsWithAffinity.length], [0, 0, 0, 0, 0]);
  });

  it('clones independently of the original', () => {
    const ni = new NodeInfo(makeNode().obj());
    const c = ni.clone();
    c.addPod(new PodInfo(makePod().req({ cpu: '1' }).obj()));
    assert.deepEqual([ni.pods.length, ni.requested.milliCPU], [0, 0]);
  });
});
