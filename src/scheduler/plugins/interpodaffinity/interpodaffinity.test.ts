import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Affinity, PodAffinityTerm } from 'kubernetes-types/core/v1.js';
import type { Labels } from '../../../api/labels.js';
import type { Node, Pod } from '../../../api/types.js';
import { CycleState } from '../../framework/cycle-state.js';
import { ActionType, QueueingHint } from '../../framework/events.js';
import type { Handle } from '../../framework/interface.js';
import { PodInfo } from '../../framework/types.js';
import { defaultPlugins } from '../../registry.js';
import { makeNode, makePod, type PodBuilder } from '../../testing/builders.js';
import { Harness } from '../../testing/harness.js';
import { handleFor, snapshotOf } from '../../testing/plugins.js';
import {
  ERR_REASON_AFFINITY_RULES_NOT_MATCH as AFFINITY,
  ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH as ANTI,
  ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH as EXISTING,
  InterPodAffinity,
} from './interpodaffinity.js';

const HOST = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

const term = (labels: Record<string, string>, topologyKey = HOST, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm => ({
  labelSelector: { matchLabels: labels },
  topologyKey,
  ...extra,
});
const required = (...terms: PodAffinityTerm[]): Affinity => ({ podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } });
const requiredAnti = (...terms: PodAffinityTerm[]): Affinity => ({ podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: terms } });
const preferred = (weight: number, t: PodAffinityTerm): Affinity => ({ podAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight, podAffinityTerm: t }] } });
const preferredAnti = (weight: number, t: PodAffinityTerm): Affinity => ({
  podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight, podAffinityTerm: t }] },
});

/** The builder's pod with these pod (anti-)affinities merged in. */
function pod(b: PodBuilder, ...affinities: Affinity[]): Pod {
  const p = b.obj();
  p.spec!.affinity = Object.assign({}, ...affinities) as Affinity;
  return p;
}

// Two zones: a1, a2 in zone a; b1 in zone b; nolabel has only its hostname.
const nodes: Node[] = [
  makeNode().name('a1').labels({ [ZONE]: 'a' }).obj(),
  makeNode().name('a2').labels({ [ZONE]: 'a' }).obj(),
  makeNode().name('b1').labels({ [ZONE]: 'b' }).obj(),
];

function handleWith(existing: Pod[], nsLabels: Record<string, Labels> = {}, ns = nodes): Handle {
  const h = handleFor(snapshotOf(ns, existing));
  return Object.assign(Object.create(h) as Handle, { namespaceLabels: (n: string) => nsLabels[n] });
}

/** Each node's Filter verdict: undefined when it fits, else "code: reason". */
function filterAll(incoming: Pod, existing: Pod[], nsLabels: Record<string, Labels> = {}): Record<string, string | undefined> {
  const handle = handleWith(existing, nsLabels);
  const pl = new InterPodAffinity({}, handle);
  const state = new CycleState();
  const out = pl.preFilter(state, incoming);
  const skip = out?.status?.isSkip() ?? false;
  const verdicts: Record<string, string | undefined> = {};
  for (const ni of handle.snapshot().list()) {
    const s = skip ? undefined : pl.filter(state, incoming, ni);
    verdicts[ni.name] = s && `${s.code}: ${s.message()}`;
  }
  return verdicts;
}

const web = () => makePod().labels({ app: 'web' });
const db = () => makePod().labels({ app: 'db' });

describe('InterPodAffinity filter', () => {
  const cases: { name: string; incoming: Pod; existing: Pod[]; nsLabels?: Record<string, Labels>; want: Record<string, string | undefined> }[] = [
    {
      name: 'anti-affinity spreads replicas of a label over distinct nodes',
      incoming: pod(web(), requiredAnti(term({ app: 'web' }))),
      existing: [web().nodeName('a1').obj(), web().nodeName('b1').obj()],
      want: { a1: `Unschedulable: ${ANTI}`, a2: undefined, b1: `Unschedulable: ${ANTI}` },
    },
    {
      name: 'anti-affinity per zone',
      incoming: pod(web(), requiredAnti(term({ app: 'web' }, ZONE))),
      existing: [web().nodeName('a1').obj()],
      want: { a1: `Unschedulable: ${ANTI}`, a2: `Unschedulable: ${ANTI}`, b1: undefined },
    },
    {
      name: 'affinity co-locates with the matching pods in their zone',
      incoming: pod(web(), required(term({ app: 'db' }, ZONE))),
      existing: [db().nodeName('a2').obj()],
      want: { a1: undefined, a2: undefined, b1: `UnschedulableAndUnresolvable: ${AFFINITY}` },
    },
    {
      name: 'affinity needs one pod matching all terms',
      incoming: pod(web(), required(term({ app: 'db' }, ZONE), term({ tier: 'cache' }, ZONE))),
      existing: [db().nodeName('a1').obj(), makePod().labels({ tier: 'cache' }).nodeName('a2').obj()],
      want: { a1: `UnschedulableAndUnresolvable: ${AFFINITY}`, a2: `UnschedulableAndUnresolvable: ${AFFINITY}`, b1: `UnschedulableAndUnresolvable: ${AFFINITY}` },
    },
    {
      name: 'the first pod of a self-affine group goes anywhere with the topology key',
      incoming: pod(web(), required(term({ app: 'web' }, ZONE))),
      existing: [db().nodeName('a1').obj()],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'a pod not matching its own affinity waits for a matching pod',
      incoming: pod(db(), required(term({ app: 'web' }, ZONE))),
      existing: [],
      want: { a1: `UnschedulableAndUnresolvable: ${AFFINITY}`, a2: `UnschedulableAndUnresolvable: ${AFFINITY}`, b1: `UnschedulableAndUnresolvable: ${AFFINITY}` },
    },
    {
      name: "existing pods' anti-affinity keeps the incoming pod away",
      incoming: web().obj(),
      existing: [pod(db().nodeName('a1'), requiredAnti(term({ app: 'web' }, ZONE)))],
      want: { a1: `Unschedulable: ${EXISTING}`, a2: `Unschedulable: ${EXISTING}`, b1: undefined },
    },
    {
      name: 'terms select pods of the own namespace by default',
      incoming: pod(web(), requiredAnti(term({ app: 'web' }))),
      existing: [web().namespace('other').nodeName('a1').obj()],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'terms select pods of the listed namespaces',
      incoming: pod(web(), requiredAnti(term({ app: 'web' }, HOST, { namespaces: ['other'] }))),
      existing: [web().namespace('other').nodeName('a1').obj(), web().nodeName('a2').obj()],
      want: { a1: `Unschedulable: ${ANTI}`, a2: undefined, b1: undefined },
    },
    {
      name: 'terms select pods of namespaces matching the namespaceSelector',
      incoming: pod(web(), requiredAnti(term({ app: 'web' }, HOST, { namespaceSelector: { matchLabels: { team: 'x' } } }))),
      existing: [web().namespace('x1').nodeName('a1').obj(), web().namespace('y1').nodeName('a2').obj()],
      nsLabels: { x1: { team: 'x' }, y1: { team: 'y' } },
      want: { a1: `Unschedulable: ${ANTI}`, a2: undefined, b1: undefined },
    },
    {
      name: 'an empty namespaceSelector selects every namespace',
      incoming: pod(web(), requiredAnti(term({ app: 'web' }, HOST, { namespaceSelector: {} }))),
      existing: [web().namespace('x1').nodeName('a1').obj(), web().namespace('y1').nodeName('a2').obj()],
      want: { a1: `Unschedulable: ${ANTI}`, a2: `Unschedulable: ${ANTI}`, b1: undefined },
    },
    {
      name: "an existing pod's namespaceSelector is matched against the incoming pod's namespace",
      incoming: web().namespace('x1').obj(),
      existing: [pod(db().nodeName('b1'), requiredAnti(term({ app: 'web' }, HOST, { namespaceSelector: { matchLabels: { team: 'x' } } })))],
      nsLabels: { x1: { team: 'x' } },
      want: { a1: undefined, a2: undefined, b1: `Unschedulable: ${EXISTING}` },
    },
    {
      name: 'matchLabelKeys limits anti-affinity to pods of the same version',
      incoming: pod(web().labels({ version: 'v2' }), requiredAnti(term({ app: 'web' }, HOST, { matchLabelKeys: ['version'] }))),
      existing: [web().labels({ version: 'v1' }).nodeName('a1').obj(), web().labels({ version: 'v2' }).nodeName('a2').obj()],
      want: { a1: undefined, a2: `Unschedulable: ${ANTI}`, b1: undefined },
    },
    {
      name: 'affinity on a topology key no node has',
      incoming: pod(web(), required(term({ app: 'db' }, 'rack'))),
      existing: [db().nodeName('a1').obj()],
      want: { a1: `UnschedulableAndUnresolvable: ${AFFINITY}`, a2: `UnschedulableAndUnresolvable: ${AFFINITY}`, b1: `UnschedulableAndUnresolvable: ${AFFINITY}` },
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(filterAll(c.incoming, c.existing, c.nsLabels), c.want));

  it('skips pods without required terms when no existing anti-affinity selects them', () => {
    const pl = new InterPodAffinity({}, handleWith([web().nodeName('a1').obj()]));
    assert.equal(pl.preFilter(new CycleState(), web().obj())?.status?.code, 'Skip');
  });
});

describe('InterPodAffinity PreFilter extensions', () => {
  it('counts added and removed pods in a forked state', () => {
    const blocker = web().nodeName('a1').obj();
    const incoming = pod(web(), requiredAnti(term({ app: 'web' })));
    const handle = handleWith([blocker]);
    const pl = new InterPodAffinity({}, handle);
    const state = new CycleState();
    pl.preFilter(state, incoming);
    const a1 = handle.snapshot().get('a1')!;
    const a2 = handle.snapshot().get('a2')!;

    const removed = state.clone();
    assert.equal(pl.removePod(removed, incoming, new PodInfo(blocker), a1), undefined);
    assert.equal(pl.filter(removed, incoming, a1), undefined);
    assert.equal(pl.filter(state, incoming, a1)?.message(), ANTI, 'the original state is untouched');

    const added = state.clone();
    pl.addPod(added, incoming, new PodInfo(web().nodeName('a2').obj()), a2);
    assert.equal(pl.filter(added, incoming, a2)?.message(), ANTI);
    assert.equal(pl.filter(state, incoming, a2), undefined);
  });

  it("uncounts a removed pod's anti-affinity", () => {
    const incoming = web().obj();
    const withAnti = pod(db().nodeName('b1'), requiredAnti(term({ app: 'web' }, ZONE)));
    const handle = handleWith([withAnti]);
    const pl = new InterPodAffinity({}, handle);
    const state = new CycleState();
    pl.preFilter(state, incoming);
    const b1 = handle.snapshot().get('b1')!;
    assert.equal(pl.filter(state, incoming, b1)?.message(), EXISTING);
    pl.removePod(state, incoming, new PodInfo(withAnti), b1);
    assert.equal(pl.filter(state, incoming, b1), undefined);
  });
});

describe('InterPodAffinity score', () => {
  /** Normalized scores per node, or 'Skip'. */
  function scores(incoming: Pod, existing: Pod[], args = {}, nsLabels: Record<string, Labels> = {}): Record<string, number> | 'Skip' {
    const handle = handleWith(existing, nsLabels);
    const pl = new InterPodAffinity(args, handle);
    const state = new CycleState();
    const list = handle.snapshot().list();
    if (pl.preScore(state, incoming)?.isSkip()) return 'Skip';
    const raw = list.map((ni) => pl.score(state, incoming, ni) as number);
    pl.normalizeScore(state, incoming, raw);
    return Object.fromEntries(list.map((ni, i) => [ni.name, raw[i]!]));
  }

  const cases: { name: string; incoming: Pod; existing: Pod[]; args?: object; nsLabels?: Record<string, Labels>; want: Record<string, number> | 'Skip' }[] = [
    {
      name: 'preferred affinity favours the zone of matching pods',
      incoming: pod(web(), preferred(5, term({ app: 'db' }, ZONE))),
      existing: [db().nodeName('b1').obj()],
      want: { a1: 0, a2: 0, b1: 100 },
    },
    {
      name: 'preferred anti-affinity avoids the nodes of matching pods',
      incoming: pod(web(), preferredAnti(5, term({ app: 'web' }))),
      existing: [web().nodeName('a1').obj(), web().nodeName('a1').obj(), web().nodeName('b1').obj()],
      // raw -10, 0, -5 → min-max scaled
      want: { a1: 0, a2: 100, b1: 50 },
    },
    {
      name: 'affinity and anti-affinity weights add up per topology',
      incoming: pod(web(), preferred(8, term({ app: 'db' }, ZONE)), preferredAnti(2, term({ app: 'web' }))),
      existing: [db().nodeName('a1').obj(), web().nodeName('a2').obj()],
      // raw a1 8, a2 8-2=6, b1 0
      want: { a1: 100, a2: 75, b1: 0 },
    },
    {
      name: "existing pods' required affinity counts at hardPodAffinityWeight",
      incoming: web().obj(),
      existing: [pod(db().nodeName('a1'), required(term({ app: 'web' })))],
      want: { a1: 100, a2: 0, b1: 0 },
    },
    {
      name: "existing pods' preferred anti-affinity pushes the incoming pod away",
      incoming: web().obj(),
      existing: [pod(db().nodeName('b1'), preferredAnti(10, term({ app: 'web' }, ZONE)))],
      want: { a1: 100, a2: 100, b1: 0 },
    },
    {
      name: "hardPodAffinityWeight 0 ignores existing pods' required affinity",
      incoming: web().obj(),
      existing: [pod(db().nodeName('a1'), required(term({ app: 'web' })))],
      args: { hardPodAffinityWeight: 0 },
      want: 'Skip',
    },
    {
      name: "ignorePreferredTermsOfExistingPods skips pods without own preferred terms",
      incoming: web().obj(),
      existing: [pod(db().nodeName('a1'), preferred(10, term({ app: 'web' })))],
      args: { ignorePreferredTermsOfExistingPods: true },
      want: 'Skip',
    },
    {
      name: "a preferred term's namespaceSelector is matched against existing pods' namespace labels",
      incoming: pod(web(), preferred(5, term({ app: 'db' }, ZONE, { namespaceSelector: { matchLabels: { team: 'x' } } }))),
      existing: [db().namespace('ours').nodeName('b1').obj(), db().namespace('theirs').nodeName('a1').obj()],
      nsLabels: { ours: { team: 'x' }, theirs: { team: 'y' } },
      want: { a1: 0, a2: 0, b1: 100 },
    },
    {
      name: "existing pods' required anti-affinity does not score",
      incoming: web().obj(),
      existing: [pod(db().nodeName('a1'), requiredAnti(term({ app: 'web' })))],
      want: 'Skip',
    },
    { name: 'nothing to score', incoming: web().obj(), existing: [db().nodeName('a1').obj()], want: 'Skip' },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(scores(c.incoming, c.existing, c.args, c.nsLabels), c.want));
});

describe('InterPodAffinity queueing hints', () => {
  const pl = new InterPodAffinity({}, handleWith([]));
  const [podEvents, nodeEvents] = pl.eventsToRegister();
  const affine = pod(web(), required(term({ app: 'db' }, ZONE)), requiredAnti(term({ app: 'web' })));

  it('registers pod add/label/delete and node add/label events', () => {
    assert.equal(podEvents!.event.actionType, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete);
    assert.equal(nodeEvents!.event.actionType, ActionType.Add | ActionType.UpdateNodeLabel);
  });

  const cases: { name: string; hint: () => QueueingHint; want: QueueingHint }[] = [
    { name: 'an assigned pod matching the affinity', hint: () => podEvents!.queueingHintFn!(affine, undefined, db().nodeName('a1').obj()), want: QueueingHint.Queue },
    { name: 'an assigned pod not matching it', hint: () => podEvents!.queueingHintFn!(affine, undefined, web().nodeName('a1').obj()), want: QueueingHint.QueueSkip },
    { name: 'an unassigned pod', hint: () => podEvents!.queueingHintFn!(affine, undefined, db().obj()), want: QueueingHint.QueueSkip },
    {
      name: 'a pod losing the anti-affinity label',
      hint: () => podEvents!.queueingHintFn!(affine, web().nodeName('a1').obj(), makePod().nodeName('a1').obj()),
      want: QueueingHint.Queue,
    },
    { name: 'a deleted pod', hint: () => podEvents!.queueingHintFn!(affine, web().nodeName('a1').obj(), undefined), want: QueueingHint.Queue },
    { name: 'a new node with the affinity topology key', hint: () => nodeEvents!.queueingHintFn!(affine, undefined, nodes[0]), want: QueueingHint.Queue },
    { name: 'a new node without it', hint: () => nodeEvents!.queueingHintFn!(affine, undefined, makeNode().obj()), want: QueueingHint.QueueSkip },
    { name: 'a new node for a pod blocked by existing anti-affinity', hint: () => nodeEvents!.queueingHintFn!(web().obj(), undefined, makeNode().obj()), want: QueueingHint.Queue },
    {
      name: 'a node getting the affinity topology key',
      hint: () => nodeEvents!.queueingHintFn!(affine, makeNode().name('x').obj(), makeNode().name('x').labels({ [ZONE]: 'c' }).obj()),
      want: QueueingHint.Queue,
    },
    {
      name: 'an unrelated label change',
      hint: () => nodeEvents!.queueingHintFn!(affine, nodes[0], makeNode().name('a1').labels({ [ZONE]: 'a', disk: 'ssd' }).obj()),
      want: QueueingHint.QueueSkip,
    },
  ];
  for (const c of cases) it(c.name, () => assert.equal(c.hint(), c.want));
});

describe('InterPodAffinity in the scheduler', () => {
  const withoutPreemption = defaultPlugins.filter((p) => p.name !== 'DefaultPreemption');
  const cluster = () => nodes.map((n) => ({ ...n, status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } }));

  it('spreads anti-affine replicas over distinct nodes and reports the one that does not fit', async () => {
    const h = new Harness({ profiles: [{ schedulerName: 'default-scheduler', plugins: [...withoutPreemption] }] });
    const replicas = [1, 2, 3, 4].map((i) => pod(web().name(`web-${i}`), requiredAnti(term({ app: 'web' }))));
    await h.start(cluster(), replicas);
    assert.equal(h.client.binds.length, 3);
    assert.deepEqual(new Set(h.client.binds.map((b) => b.node)), new Set(['a1', 'a2', 'b1']));
    const pending = replicas.map((p) => `default/${p.metadata!.name}`).find((k) => !h.client.binds.some((b) => b.pod === k))!;
    assert.equal(h.podScheduled(pending)?.message, `0/3 nodes are available: 3 ${ANTI}.`);
    await h.stop();
  });

  it('co-locates with its affinity target, and explains when there is none', async () => {
    const h = new Harness();
    await h.start(cluster(), [db().name('db').nodeName('b1').obj(), pod(web().name('near'), required(term({ app: 'db' }, ZONE))), pod(web().name('far'), required(term({ app: 'cache' }, ZONE)))]);
    assert.deepEqual(h.client.binds, [{ pod: 'default/near', node: 'b1' }]);
    assert.equal(
      h.podScheduled('default/far')?.message,
      `0/3 nodes are available: 3 ${AFFINITY}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.`,
    );
    await h.stop();
  });

  it("keeps away from existing pods' anti-affinity", async () => {
    const h = new Harness({ profiles: [{ schedulerName: 'default-scheduler', plugins: [...withoutPreemption] }] });
    const guard = pod(db().name('guard').nodeName('a1'), requiredAnti(term({ app: 'web' }, ZONE)));
    await h.start(cluster().slice(0, 2), [guard, web().name('w').obj()]);
    assert.equal(h.podScheduled('default/w')?.message, `0/2 nodes are available: 2 ${EXISTING}.`);
    await h.stop();
  });
});
