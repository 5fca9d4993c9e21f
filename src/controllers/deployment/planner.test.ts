import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, ReplicaSet } from 'kubernetes-types/apps/v1.js';
import { planNewReplicaSet, planOldReplicaSets, planScale } from './planner.js';
import { computeHash, equalIgnoreHash, maxSurge, maxUnavailable, resolveFenceposts, safeEncodeString, setNewReplicaSetAnnotations, setReplicasAnnotations } from './util.js';

const deployment = (replicas: number, surge: number | string, unavailable: number | string): Deployment => ({
  metadata: { name: 'web', generation: 1 },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: surge, maxUnavailable: unavailable } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

let seq = 0;
const rs = (name: string, replicas: number, available = 0, ageSeconds = 0): ReplicaSet => ({
  metadata: { name, uid: `uid-${name}-${seq++}`, creationTimestamp: new Date(Date.UTC(2026, 0, 1) - ageSeconds * 1000).toISOString() },
  spec: { replicas, selector: { matchLabels: { app: 'web' } } },
  status: { replicas, availableReplicas: available },
});

describe('fenceposts (ResolveFenceposts, MaxSurge, MaxUnavailable)', () => {
  const cases: [surge: number | string, unavailable: number | string, replicas: number, want: { surge: number; unavailable: number }][] = [
    ['25%', '25%', 3, { surge: 1, unavailable: 0 }],
    ['25%', '25%', 10, { surge: 3, unavailable: 2 }],
    ['25%', '25%', 4, { surge: 1, unavailable: 1 }],
    [0, 0, 5, { surge: 0, unavailable: 1 }],
    ['0%', '0%', 5, { surge: 0, unavailable: 1 }],
    [2, '50%', 5, { surge: 2, unavailable: 2 }],
  ];
  for (const [surge, unavailable, replicas, want] of cases) {
    it(`maxSurge ${surge}, maxUnavailable ${unavailable}, replicas ${replicas}`, () => {
      assert.deepEqual(resolveFenceposts(surge, unavailable, replicas), want);
    });
  }
  it('maxUnavailable is at most replicas, 0 for Recreate and for zero replicas', () => {
    assert.equal(maxUnavailable(deployment(2, 0, 5)), 2);
    assert.equal(maxUnavailable(deployment(0, 1, 1)), 0);
    const recreate = { ...deployment(3, 1, 1), spec: { ...deployment(3, 1, 1).spec!, strategy: { type: 'Recreate' } } };
    assert.equal(maxUnavailable(recreate), 0);
    assert.equal(maxSurge(recreate), 0);
  });
});

describe('planNewReplicaSet (reconcileNewReplicaSet)', () => {
  // As upstream's TestDeploymentController_reconcileNewReplicaSet: maxUnavailable 0.
  const cases: { name: string; replicas: number; surge: number; old: number; new: number; want?: number }[] = [
    { name: 'no surge, old still full', replicas: 10, surge: 0, old: 10, new: 0 },
    { name: 'surge 2 from nothing', replicas: 10, surge: 2, old: 10, new: 0, want: 2 },
    { name: 'room left by old', replicas: 10, surge: 2, old: 5, new: 0, want: 7 },
    { name: 'surge used up', replicas: 10, surge: 2, old: 10, new: 2 },
    { name: 'new larger than the Deployment', replicas: 10, surge: 2, old: 2, new: 11, want: 10 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const newRS = rs('new', c.new);
      const steps = planNewReplicaSet([rs('old', c.old, c.old, 60), newRS], newRS, deployment(c.replicas, c.surge, 0));
      assert.deepEqual(steps, c.want === undefined ? [] : [{ name: 'new', replicas: c.want }]);
    });
  }
});

describe('planOldReplicaSets (reconcileOldReplicaSets)', () => {
  // As upstream's TestDeploymentController_reconcileOldReplicaSets.
  const cases: { name: string; replicas: number; unavailable: number; old: number; new: number; oldReady: number; newReady: number; want?: number }[] = [
    { name: 'nothing may go', replicas: 10, unavailable: 0, old: 10, new: 0, oldReady: 10, newReady: 0 },
    { name: 'maxUnavailable 2', replicas: 10, unavailable: 2, old: 10, new: 0, oldReady: 10, newReady: 0, want: 8 },
    { name: 'unhealthy old pods go first, then no more', replicas: 10, unavailable: 2, old: 10, new: 0, oldReady: 5, newReady: 0, want: 8 },
    { name: 'new pods not ready count against it', replicas: 10, unavailable: 2, old: 10, new: 2, oldReady: 10, newReady: 0, want: 8 },
    { name: 'new pods ready free old ones', replicas: 10, unavailable: 2, old: 5, new: 5, oldReady: 5, newReady: 5, want: 3 },
    { name: 'new not ready, no room', replicas: 10, unavailable: 0, old: 10, new: 2, oldReady: 10, newReady: 0 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const old = rs('old', c.old, c.oldReady, 60);
      const newRS = rs('new', c.new, c.newReady);
      const steps = planOldReplicaSets([old, newRS], [old], newRS, deployment(c.replicas, 1, c.unavailable));
      const final = steps.filter((s) => s.name === 'old').at(-1)?.replicas;
      assert.equal(final, c.want);
    });
  }

  it('a ReplicaSet still reporting the pods it is deleting counts only its spec.replicas as available', () => {
    // Old just went 4 → 3 (status still says 4 available); new has 2, 1 available. 4 replicas, maxUnavailable 1.
    const old = { ...rs('old', 3, 4, 60), status: { replicas: 4, availableReplicas: 4 } };
    const newRS = rs('new', 2, 1);
    // 5 pods, minAvailable 3, 1 new unavailable: 1 may go (3 + 1 available − 3), not 2.
    assert.deepEqual(planOldReplicaSets([old, newRS], [old], newRS, deployment(4, 1, 1)), [{ name: 'old', replicas: 2 }]);
  });

  it('scales the oldest ReplicaSet down first', () => {
    const older = rs('older', 2, 2, 120);
    const old = rs('old', 2, 2, 60);
    const newRS = rs('new', 3, 3);
    // 7 pods, all available, minAvailable 4: three may go, the older ReplicaSet's first.
    const steps = planOldReplicaSets([older, old, newRS], [old, older], newRS, deployment(5, 0, 1));
    assert.deepEqual(steps, [
      { name: 'older', replicas: 0 },
      { name: 'old', replicas: 1 },
    ]);
  });

  it('cleans unhealthy replicas and then scales available ones, as two resizes', () => {
    const old = rs('old', 6, 4, 60);
    const newRS = rs('new', 0);
    // 6 pods, minAvailable 3: up to 3 may go; the 2 unavailable first, then 1 available.
    const steps = planOldReplicaSets([old, newRS], [old], newRS, deployment(6, 0, '50%'));
    assert.deepEqual(steps, [
      { name: 'old', replicas: 4 },
      { name: 'old', replicas: 3 },
    ]);
  });
});

describe('planScale (proportional scaling)', () => {
  const sized = (r: ReplicaSet, desired: number, max: number) => {
    setReplicasAnnotations(r, desired, max);
    return r;
  };

  it('one active ReplicaSet takes the whole size', () => {
    const newRS = sized(rs('new', 3, 3), 3, 4);
    assert.deepEqual(planScale(deployment(5, '25%', '25%'), newRS, [rs('old', 0, 0, 60)]), [{ name: 'new', replicas: 5 }]);
  });

  it('scaling up mid-rollout grows every active ReplicaSet in proportion', () => {
    // 10 → 20 replicas with maxSurge 50%: max 15 → 30.
    const old = sized(rs('old', 10, 10, 60), 10, 15);
    const newRS = sized(rs('new', 5, 0), 10, 15);
    assert.deepEqual(planScale(deployment(20, '50%', 0), newRS, [old]), [
      { name: 'old', replicas: 20 },
      { name: 'new', replicas: 10 },
    ]);
  });

  it('scaling down mid-rollout shrinks every active ReplicaSet in proportion', () => {
    const old = sized(rs('old', 20, 20, 60), 20, 30);
    const newRS = sized(rs('new', 10, 0), 20, 30);
    assert.deepEqual(planScale(deployment(10, '50%', 0), newRS, [old]), [
      { name: 'old', replicas: 10 },
      { name: 'new', replicas: 5 },
    ]);
  });

  it('the leftover of rounding goes to the largest ReplicaSet', () => {
    // 3 → 4 replicas, maxSurge 1: max 4 → 5; 2 + 2 active, one more to place.
    const old = sized(rs('old', 2, 2, 60), 3, 4);
    const newRS = sized(rs('new', 2, 0), 3, 4);
    const steps = planScale(deployment(4, 1, 0), newRS, [old]);
    assert.equal(steps.reduce((n, s) => n + s.replicas, 0), 5);
    // Equal sizes up: the newer first.
    assert.deepEqual(steps[0], { name: 'new', replicas: 3 });
  });

  it('a saturated new ReplicaSet leaves the old ones at 0', () => {
    const newRS = sized(rs('new', 3, 3), 3, 4);
    const old = rs('old', 1, 1, 60);
    assert.deepEqual(planScale(deployment(3, 1, 0), newRS, [old]), [{ name: 'old', replicas: 0 }]);
  });
});

describe('revision annotations (SetNewReplicaSetAnnotations)', () => {
  it('a new ReplicaSet gets the revision and the replicas annotations, not the skipped ones', () => {
    const d = deployment(3, '25%', '25%');
    d.metadata!.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': '{}', 'kubernetes.io/change-cause': 'x', 'deployment.kubernetes.io/revision': '7' };
    const r: ReplicaSet = { metadata: {} };
    assert.equal(setNewReplicaSetAnnotations(d, r, '1', false), true);
    assert.deepEqual(r.metadata?.annotations, {
      'kubernetes.io/change-cause': 'x',
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
  });

  it('an old revision moves into revision-history, bounded in length', () => {
    const d = deployment(3, '25%', '25%');
    const r: ReplicaSet = { metadata: { annotations: { 'deployment.kubernetes.io/revision': '1' } } };
    setNewReplicaSetAnnotations(d, r, '3', true);
    assert.equal(r.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '1');
    setNewReplicaSetAnnotations(d, r, '5', true);
    assert.equal(r.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '1,3');
    setNewReplicaSetAnnotations(d, r, '7', true, 4);
    assert.equal(r.metadata?.annotations?.['deployment.kubernetes.io/revision-history'], '3,5');
    assert.equal(r.metadata?.annotations?.['deployment.kubernetes.io/revision'], '7');
    assert.equal(setNewReplicaSetAnnotations(d, r, '7', true, 4), false, 'nothing changes at the same revision');
  });
});

describe('EqualIgnoreHash', () => {
  it('ignores the hash label and empty values, not a false that differs from absent', () => {
    const t = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    assert.ok(equalIgnoreHash(t, { metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' }, annotations: {} }, spec: { containers: [{ name: 'c', image: 'nginx', args: [] }] } }));
    assert.ok(!equalIgnoreHash(t, { ...t, spec: { ...t.spec, automountServiceAccountToken: false } }));
    assert.ok(!equalIgnoreHash(t, { ...t, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }));
  });
});

describe('pod-template-hash', () => {
  it('is stable, safe-encoded, and moves with the template and the collision count', () => {
    const t = deployment(1, 1, 0).spec!.template;
    const h = computeHash(t);
    assert.match(h, /^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    assert.equal(computeHash(structuredClone(t)), h);
    assert.equal(computeHash({ spec: t.spec, metadata: t.metadata }), h, 'key order does not matter');
    assert.notEqual(computeHash(t, 1), h);
    assert.notEqual(computeHash({ ...t, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }), h);
  });

  it("safe-encodes as apimachinery's SafeEncodeString", () => {
    // Each byte picks alphanums[b % 27]: '0' (48) → '4', '9' (57) → 'f'.
    assert.equal(safeEncodeString('09'), '4f');
  });
});
