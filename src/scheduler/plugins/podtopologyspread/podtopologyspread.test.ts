import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TopologySpreadConstraint } from 'kubernetes-types/core/v1.js';
import type { Node, Pod, ReplicaSet, Service } from '../../../api/types.js';
import { CycleState } from '../../framework/cycle-state.js';
import { QueueingHint } from '../../framework/events.js';
import type { Handle, WorkloadLister } from '../../framework/interface.js';
import { PodInfo } from '../../framework/types.js';
import { defaultPlugins } from '../../registry.js';
import { makeNode, makePod, type PodBuilder } from '../../testing/builders.js';
import { Harness } from '../../testing/harness.js';
import { handleFor, snapshotOf } from '../../testing/plugins.js';
import { ERR_REASON_CONSTRAINTS_NOT_MATCH as SKEW, ERR_REASON_NODE_LABEL_NOT_MATCH as LABEL, defaultSelector, PodTopologySpread, type PodTopologySpreadArgs } from './podtopologyspread.js';

const HOST = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

const spread = (maxSkew: number, topologyKey: string, extra: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew,
  topologyKey,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels: { app: 'web' } },
  ...extra,
});

function pod(b: PodBuilder, ...constraints: TopologySpreadConstraint[]): Pod {
  const p = b.obj();
  p.spec!.topologySpreadConstraints = constraints;
  return p;
}

const web = () => makePod().labels({ app: 'web' });

// Zone a: a1, a2; zone b: b1.
const nodes: Node[] = [
  makeNode().name('a1').labels({ [ZONE]: 'a' }).obj(),
  makeNode().name('a2').labels({ [ZONE]: 'a' }).obj(),
  makeNode().name('b1').labels({ [ZONE]: 'b' }).obj(),
];

const noWorkloads: WorkloadLister = { services: () => [], replicaSet: () => undefined };

function handleWith(existing: Pod[], ns: Node[] = nodes, workloads = noWorkloads): Handle {
  return Object.assign(Object.create(handleFor(snapshotOf(ns, existing))) as Handle, { workloads });
}

/** Each node's Filter verdict: undefined when it fits, else "code: reason"; 'Skip' when PreFilter skipped. */
function filterAll(incoming: Pod, existing: Pod[], ns: Node[] = nodes): Record<string, string | undefined> | 'Skip' {
  const handle = handleWith(existing, ns);
  const pl = new PodTopologySpread({}, handle);
  const state = new CycleState();
  const out = pl.preFilter(state, incoming, handle.snapshot().list());
  if (out?.status?.isSkip()) return 'Skip';
  const verdicts: Record<string, string | undefined> = {};
  for (const ni of handle.snapshot().list()) {
    const s = pl.filter(state, incoming, ni);
    verdicts[ni.name] = s && `${s.code}: ${s.message()}`;
  }
  return verdicts;
}

const on = (node: string, b = web()) => b.nodeName(node).obj();

describe('PodTopologySpread filter', () => {
  const cases: { name: string; incoming: Pod; existing: Pod[]; nodes?: Node[]; want: Record<string, string | undefined> | 'Skip' }[] = [
    {
      name: 'zone spread: the fuller zone exceeds maxSkew',
      incoming: pod(web(), spread(1, ZONE)),
      existing: [on('a1'), on('a2')],
      want: { a1: `Unschedulable: ${SKEW}`, a2: `Unschedulable: ${SKEW}`, b1: undefined },
    },
    {
      name: 'zone spread within maxSkew',
      incoming: pod(web(), spread(2, ZONE)),
      existing: [on('a1')],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'hostname spread',
      incoming: pod(web(), spread(1, HOST)),
      existing: [on('a1'), on('a2')],
      want: { a1: `Unschedulable: ${SKEW}`, a2: `Unschedulable: ${SKEW}`, b1: undefined },
    },
    {
      name: 'the incoming pod counts only if it matches the selector',
      incoming: pod(makePod().labels({ app: 'other' }), spread(1, ZONE)),
      existing: [on('a1')],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'minDomains above the domain count makes the global minimum 0',
      incoming: pod(web(), spread(1, ZONE, { minDomains: 3 })),
      existing: [on('a1'), on('b1')],
      want: { a1: `Unschedulable: ${SKEW}`, a2: `Unschedulable: ${SKEW}`, b1: `Unschedulable: ${SKEW}` },
    },
    {
      name: 'minDomains met: the real minimum',
      incoming: pod(web(), spread(1, ZONE, { minDomains: 2 })),
      existing: [on('a1'), on('b1')],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'a node without the topology key',
      incoming: pod(web(), spread(1, ZONE)),
      existing: [],
      nodes: [nodes[0]!, makeNode().name('bare').obj()],
      want: { a1: undefined, bare: `UnschedulableAndUnresolvable: ${LABEL}` },
    },
    {
      name: 'nodeAffinityPolicy Honor (default): domains the pod cannot use do not count',
      incoming: pod(web().nodeSelector({ [ZONE]: 'a' }), spread(1, ZONE)),
      existing: [on('a1')],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'nodeAffinityPolicy Ignore: every domain counts',
      incoming: pod(web().nodeSelector({ [ZONE]: 'a' }), spread(1, ZONE, { nodeAffinityPolicy: 'Ignore' })),
      existing: [on('a1')],
      want: { a1: `Unschedulable: ${SKEW}`, a2: `Unschedulable: ${SKEW}`, b1: undefined },
    },
    {
      name: 'nodeTaintsPolicy Ignore (default): tainted domains count',
      incoming: pod(web(), spread(1, ZONE)),
      existing: [on('a1')],
      nodes: [nodes[0]!, makeNode().name('b1').labels({ [ZONE]: 'b' }).taint('dedicated', 'x', 'NoSchedule').obj()],
      want: { a1: `Unschedulable: ${SKEW}`, b1: undefined },
    },
    {
      name: 'nodeTaintsPolicy Honor: domains of untolerated taints do not count',
      incoming: pod(web(), spread(1, ZONE, { nodeTaintsPolicy: 'Honor' })),
      existing: [on('a1')],
      nodes: [nodes[0]!, makeNode().name('b1').labels({ [ZONE]: 'b' }).taint('dedicated', 'x', 'NoSchedule').obj()],
      want: { a1: undefined, b1: undefined },
    },
    {
      name: 'matchLabelKeys narrows the selector to pods with the same values',
      incoming: pod(web().labels({ version: 'v2' }), spread(1, ZONE, { matchLabelKeys: ['version'] })),
      existing: [on('a1', web().labels({ version: 'v1' })), on('a2', web().labels({ version: 'v1' }))],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    {
      name: 'pods of other namespaces do not count',
      incoming: pod(web(), spread(1, ZONE)),
      existing: [on('a1', web().namespace('other')), on('a2', web().namespace('other'))],
      want: { a1: undefined, a2: undefined, b1: undefined },
    },
    { name: 'ScheduleAnyway constraints do not filter', incoming: pod(web(), spread(1, ZONE, { whenUnsatisfiable: 'ScheduleAnyway' })), existing: [on('a1')], want: 'Skip' },
    { name: 'no constraints and no default selector', incoming: web().obj(), existing: [on('a1')], want: 'Skip' },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(filterAll(c.incoming, c.existing, c.nodes), c.want));

  it('reports an invalid label selector as an error', () => {
    const bad = pod(web(), spread(1, ZONE, { labelSelector: { matchExpressions: [{ key: 'app', operator: 'Near' }] } }));
    const out = new PodTopologySpread({}, handleWith([])).preFilter(new CycleState(), bad, []);
    assert.equal(out?.status?.code, 'Error');
  });
});

describe('PodTopologySpread PreFilter extensions', () => {
  it('counts added and removed pods in a forked state', () => {
    const victim = on('a1');
    const incoming = pod(web(), spread(1, ZONE));
    const handle = handleWith([victim, on('a2')]);
    const pl = new PodTopologySpread({}, handle);
    const state = new CycleState();
    pl.preFilter(state, incoming, handle.snapshot().list());
    const a1 = handle.snapshot().get('a1');
    const b1 = handle.snapshot().get('b1');

    const removed = state.clone();
    pl.removePod(removed, incoming, new PodInfo(victim), a1!);
    assert.equal(pl.filter(removed, incoming, a1!)?.message(), SKEW, 'a: 1 + 1 - 0');
    pl.addPod(removed, incoming, new PodInfo(on('b1')), b1!);
    assert.equal(pl.filter(removed, incoming, a1!), undefined, 'a: 1 + 1 - 1');
    assert.equal(pl.filter(state, incoming, a1!)?.message(), SKEW, 'the original state is untouched');

    const otherNs = state.clone();
    pl.addPod(otherNs, incoming, new PodInfo(on('b1', web().namespace('other'))), b1!);
    assert.equal(pl.filter(otherNs, incoming, a1!)?.message(), SKEW);
  });
});

describe('PodTopologySpread score', () => {
  const bare = makeNode().name('bare').obj();

  function scores(incoming: Pod, existing: Pod[], ns: Node[] = nodes, workloads = noWorkloads, args: PodTopologySpreadArgs = {}): Record<string, number> | 'Skip' {
    const handle = handleWith(existing, ns, workloads);
    const pl = new PodTopologySpread(args, handle);
    const state = new CycleState();
    const list = handle.snapshot().list();
    if (pl.preScore(state, incoming, list)?.isSkip()) return 'Skip';
    const raw = list.map((ni) => pl.score(state, incoming, ni) as number);
    pl.normalizeScore(state, incoming, raw);
    return Object.fromEntries(list.map((ni, i) => [ni.name, raw[i]!]));
  }

  const service = (selector: Record<string, string>, namespace = 'default'): Service => ({ metadata: { name: 'svc', namespace }, spec: { selector } });
  const services = (...svcs: Service[]): WorkloadLister => ({ services: (ns) => svcs.filter((s) => s.metadata?.namespace === ns), replicaSet: () => undefined });

  const cases: { name: string; incoming: Pod; existing: Pod[]; nodes?: Node[]; workloads?: WorkloadLister; args?: PodTopologySpreadArgs; want: Record<string, number> | 'Skip' }[] = [
    {
      name: 'ScheduleAnyway prefers the emptier zone',
      incoming: pod(web(), spread(1, ZONE, { whenUnsatisfiable: 'ScheduleAnyway' })),
      existing: [on('a1'), on('a2')],
      // a: round(2 ln 4) = 3, b: 0 → 100 (3 + 0 - s) / 3
      want: { a1: 0, a2: 0, b1: 100 },
    },
    {
      name: 'maxSkew waters down the differences',
      incoming: pod(web(), spread(5, ZONE, { whenUnsatisfiable: 'ScheduleAnyway' })),
      existing: [on('a1'), on('a2')],
      // a: round(2 ln 4 + 4) = 7, b: 4 → 100 (11 - s) / 7
      want: { a1: 57, a2: 57, b1: 100 },
    },
    {
      name: 'nodes without the topology key score 0',
      incoming: pod(web(), spread(1, ZONE, { whenUnsatisfiable: 'ScheduleAnyway' })),
      existing: [on('a1')],
      nodes: [...nodes, bare],
      want: { a1: 0, a2: 0, b1: 100, bare: 0 },
    },
    {
      name: 'system defaults spread the pods of a Service by hostname and zone',
      incoming: web().obj(),
      existing: [on('a1'), on('a1')],
      workloads: services(service({ app: 'web' })),
      // hostname: cnt ln 5 + 2; zone: cnt ln 4 + 4 → a1 12, a2 9, b1 6 → 100 (18 - s) / 12
      want: { a1: 50, a2: 75, b1: 100 },
    },
    {
      name: 'system defaults still spread by hostname on nodes without a zone',
      incoming: web().obj(),
      existing: [on('a1')],
      nodes: [nodes[0]!, bare],
      workloads: services(service({ app: 'web' })),
      // a1: (ln 4 + 2) + (ln 4 + 4) = 9; bare: hostname only, 2 → 100 (11 - s) / 9
      want: { a1: 22, bare: 100 },
    },
    { name: 'system defaults need a Service or controller', incoming: web().obj(), existing: [on('a1')], want: 'Skip' },
    {
      name: 'a Service of another namespace does not apply',
      incoming: web().obj(),
      existing: [on('a1')],
      workloads: services(service({ app: 'web' }, 'other')),
      want: 'Skip',
    },
    {
      name: 'List defaulting with explicit default constraints',
      incoming: web().obj(),
      existing: [on('a1')],
      workloads: services(service({ app: 'web' })),
      args: { defaultingType: 'List', defaultConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'ScheduleAnyway' }] },
      want: { a1: 0, a2: 0, b1: 100 },
    },
    { name: 'List defaulting without constraints', incoming: web().obj(), existing: [on('a1')], workloads: services(service({ app: 'web' })), args: { defaultingType: 'List' }, want: 'Skip' },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(scores(c.incoming, c.existing, c.nodes, c.workloads, c.args), c.want));
});

describe('defaultSelector', () => {
  const rs: ReplicaSet = { metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web', hash: '1' } }, template: {} } };
  const workloads = (svcSelectors: Record<string, string>[]): WorkloadLister => ({
    services: () => svcSelectors.map((selector) => ({ spec: { selector } })),
    replicaSet: (_ns, name) => (name === 'web-1' ? rs : undefined),
  });
  const owned = (name: string) => {
    const p = web().labels({ hash: '1', tier: 'fe' }).obj();
    p.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: 'u', controller: true }];
    return p;
  };
  const cases: { name: string; pod: Pod; svcs: Record<string, string>[]; want: string }[] = [
    { name: 'merges matching Services', pod: web().labels({ tier: 'fe' }).obj(), svcs: [{ app: 'web' }, { tier: 'fe' }, { app: 'db' }], want: 'app=web,tier=fe' },
    { name: 'adds the controlling ReplicaSet', pod: owned('web-1'), svcs: [{ tier: 'fe' }], want: 'app=web,hash=1,tier=fe' },
    { name: 'a missing ReplicaSet adds nothing', pod: owned('gone'), svcs: [], want: '' },
  ];
  for (const c of cases) it(c.name, () => assert.equal(defaultSelector(c.pod, workloads(c.svcs)).toString(), c.want));
});

describe('PodTopologySpread queueing hints', () => {
  const pl = new PodTopologySpread({}, handleWith([]));
  const [podEvents, nodeEvents] = pl.eventsToRegister();
  const incoming = pod(web().uid('me'), spread(1, ZONE));
  const cases: { name: string; hint: () => QueueingHint; want: QueueingHint }[] = [
    { name: 'a matching pod deleted', hint: () => podEvents!.queueingHintFn!(incoming, on('a1'), undefined), want: QueueingHint.Queue },
    { name: 'a non-matching pod added', hint: () => podEvents!.queueingHintFn!(incoming, undefined, on('a1', makePod())), want: QueueingHint.QueueSkip },
    { name: 'a pod of another namespace', hint: () => podEvents!.queueingHintFn!(incoming, on('a1', web().namespace('x')), undefined), want: QueueingHint.QueueSkip },
    { name: 'a pod relabeled out of the selector', hint: () => podEvents!.queueingHintFn!(incoming, on('a1'), on('a1', makePod())), want: QueueingHint.Queue },
    { name: 'a node with the topology key added', hint: () => nodeEvents!.queueingHintFn!(incoming, undefined, nodes[2]), want: QueueingHint.Queue },
    { name: 'a node without it added', hint: () => nodeEvents!.queueingHintFn!(incoming, undefined, makeNode().obj()), want: QueueingHint.QueueSkip },
    {
      name: 'a node changing zones',
      hint: () => nodeEvents!.queueingHintFn!(incoming, nodes[2], makeNode().name('b1').labels({ [ZONE]: 'c' }).obj()),
      want: QueueingHint.Queue,
    },
    { name: 'an unrelated node update', hint: () => nodeEvents!.queueingHintFn!(incoming, nodes[2], makeNode().name('b1').labels({ [ZONE]: 'b', x: 'y' }).obj()), want: QueueingHint.QueueSkip },
  ];
  for (const c of cases) it(c.name, () => assert.equal(c.hint(), c.want));
});

describe('PodTopologySpread in the scheduler', () => {
  const withoutPreemption = defaultPlugins.filter((p) => p.name !== 'DefaultPreemption');
  const capacity = { allocatable: { cpu: '4', memory: '8Gi', pods: '110' } };
  const cluster = (ns: Node[] = nodes) => ns.map((n) => ({ ...n, status: capacity }));

  it('spreads replicas evenly over zones', async () => {
    const h = new Harness();
    await h.start(cluster(), [1, 2, 3, 4].map((i) => pod(web().name(`web-${i}`), spread(1, ZONE))));
    const zoneOf = (node: string) => (node === 'b1' ? 'b' : 'a');
    const perZone = h.client.binds.reduce<Record<string, number>>((m, b) => ({ ...m, [zoneOf(b.node)]: (m[zoneOf(b.node)] ?? 0) + 1 }), {});
    assert.deepEqual(perZone, { a: 2, b: 2 });
    await h.stop();
  });

  it('explains skew and missing labels in the FailedScheduling message', async () => {
    const h = new Harness({ profiles: [{ schedulerName: 'default-scheduler', plugins: [...withoutPreemption] }] });
    await h.start(cluster([nodes[0]!, nodes[2]!, makeNode().name('bare').obj()]), [on('a1'), on('b1'), pod(web().name('third'), spread(1, ZONE, { minDomains: 3 }))]);
    assert.equal(h.podScheduled('default/third')?.message, `0/3 nodes are available: 1 ${LABEL}, 2 ${SKEW}.`);
    await h.stop();
  });

  it('applies the system default spreading to the pods of a Service', async () => {
    const profile = { schedulerName: 'default-scheduler', plugins: [{ name: 'PrioritySort' }, { name: 'PodTopologySpread' }, { name: 'DefaultBinder' }] };
    const h = new Harness({ profiles: [profile] });
    h.client.services.upsert({ metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' } } });
    const two = [makeNode().name('n1').obj(), makeNode().name('n2').obj()];
    await h.start(cluster(two), [1, 2, 3, 4, 5, 6].map((i) => web().name(`web-${i}`).obj()));
    assert.equal(h.client.binds.length, 6);
    assert.equal(h.client.binds.filter((b) => b.node === 'n1').length, 3);
    await h.stop();
  });
});
