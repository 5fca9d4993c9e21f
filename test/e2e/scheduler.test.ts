// The scheduler inside `kite server` against simulated nodes from `kite sim`, checked with the real
// kubectl: where pods land, and upstream's exact words when they land nowhere.
//
// One server and one sim of six nodes serve every scenario; each scenario has its own namespace and
// aims its pods at its own nodes with labels, so scenarios do not disturb each other. The node
// template (below) gives the nodes:
//
//   sim-0  pool=general  zone-a   4 cpu  8Gi
//   sim-1  pool=general  zone-a   4 cpu  8Gi
//   sim-2  pool=general  zone-b   4 cpu  8Gi
//   sim-3  pool=tainted  zone-a   4 cpu  8Gi   taint dedicated=special:NoSchedule
//   sim-4  pool=ssd      zone-a   4 cpu  8Gi   disktype=ssd
//   sim-5  pool=preempt  zone-a   2 cpu  8Gi
//
// FailedScheduling messages count every node, so the scenarios run in order: the taint is removed
// only after the scenarios that count it, and the node added by hand (late-0) comes last.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, kubectl, kubectlOk, removeDir, startServer, startSim, type KiteServer, type KiteSim } from './harness.js';

const NODES = 6;


/**
 * Upstream's FailedScheduling message (1.33 FitError.Error()): "0/N nodes are available: <sorted
 * reasons>." then " " and the PostFilter message. DefaultPreemption's message is itself a FitError,
 * "preemption: 0/N nodes are available: <reasons>.", so the whole ends in a single period (older
 * releases appended it in the " %v." format and printed "..").
 */
function failedScheduling(filter: string[], preemption: string[]): string {
  return `0/${NODES} nodes are available: ${filter.join(', ')}. preemption: 0/${NODES} nodes are available: ${preemption.join(', ')}.`;
}

const nodeTemplate = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: '{{ .name }}',
    labels: {
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': '{{ .name }}',
      'kubernetes.io/os': 'linux',
      'topology.kubernetes.io/zone': { $if: 'eq(.index, 2)', $then: 'zone-b', $else: 'zone-a' },
      pool: { $if: 'eq(.index, 3)', $then: 'tainted', $else: { $if: 'eq(.index, 4)', $then: 'ssd', $else: { $if: 'eq(.index, 5)', $then: 'preempt', $else: 'general' } } },
      disktype: { $if: 'eq(.index, 4)', $then: 'ssd' },
      type: 'kwok',
    },
    annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'kwok.x-k8s.io/node': 'fake' },
  },
  spec: {
    taints: { $if: 'eq(.index, 3)', $then: [{ key: 'dedicated', value: 'special', effect: 'NoSchedule' }] },
  },
  status: {
    capacity: { cpu: { $if: 'eq(.index, 5)', $then: '2', $else: '4' }, memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' },
    allocatable: { cpu: { $if: 'eq(.index, 5)', $then: '2', $else: '4' }, memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' },
    addresses: [
      { type: 'InternalIP', address: '{{ nodeIP(.index) }}' },
      { type: 'Hostname', address: '{{ .name }}' },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      architecture: 'amd64',
      bootID: '',
      containerRuntimeVersion: 'kite-sim://0.1.0',
      kernelVersion: 'kite-sim',
      kubeProxyVersion: '',
      kubeletVersion: 'v1.33.0',
      machineID: '',
      operatingSystem: 'linux',
      osImage: 'kite simulated node',
      systemUUID: '',
    },
  },
};

interface PodOptions {
  labels?: Record<string, string>;
  /** Lines of the pod spec (two-space indented) before `containers:`. */
  spec?: string;
  /** Lines of the container (six-space indented) after `image:`. */
  container?: string;
}

function pod(ns: string, name: string, opts: PodOptions = {}): string {
  const labels = { app: name, ...opts.labels };
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  labels:
${Object.entries(labels)
  .map(([k, v]) => `    ${k}: ${v}`)
  .join('\n')}
spec:
  terminationGracePeriodSeconds: 1
${opts.spec ?? ''}  containers:
  - name: main
    image: busybox:1.35
    command: ['sleep', '3600']
${opts.container ?? ''}`;
}

const selector = (labels: Record<string, string>) =>
  `  nodeSelector:\n${Object.entries(labels)
    .map(([k, v]) => `    ${k}: ${v}`)
    .join('\n')}\n`;

const resources = (requests: Record<string, string>) =>
  `    resources:\n      requests:\n${Object.entries(requests)
    .map(([k, v]) => `        ${k}: ${v}`)
    .join('\n')}\n`;

interface PodJson {
  metadata: { name: string; uid: string; namespace: string };
  spec: { nodeName?: string; schedulerName?: string };
  status: { phase?: string; nominatedNodeName?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

interface EventJson {
  type: string;
  reason: string;
  message: string;
  source?: { component?: string };
  reportingComponent?: string;
  involvedObject: { name: string; kind: string; uid?: string };
}

describe('scheduler: kite server + kite sim, checked with kubectl', () => {
  let server: KiteServer;
  let sim: KiteSim | undefined;

  const k = (args: string[], input?: string) => kubectlOk(server, args, input);
  const apply = (manifest: string) => k(['apply', '-f', '-'], manifest).trim();
  const getPod = (ns: string, name: string): PodJson => JSON.parse(k(['get', 'pod', name, '-n', ns, '-o', 'json'])) as PodJson;
  const podEvents = (ns: string, name: string): EventJson[] =>
    (JSON.parse(k(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as { items: EventJson[] }).items;

  /** Waits until the pod is bound and returns its node. */
  const boundNode = (ns: string, name: string) =>
    eventually(() => {
      const p = getPod(ns, name);
      return p.spec.nodeName || undefined;
    }, `pod ${ns}/${name} bound`);

  const running = (ns: string, name: string) =>
    eventually(() => {
      const p = getPod(ns, name);
      return p.status.phase === 'Running' ? p : undefined;
    }, `pod ${ns}/${name} Running`);

  /** Waits for the pod's FailedScheduling event and returns it; fails at once if the pod is bound instead. */
  const failedEvent = async (ns: string, name: string): Promise<EventJson> => {
    let bound: string | undefined;
    const ev = await eventually(() => {
      const found = podEvents(ns, name).find((e) => e.reason === 'FailedScheduling');
      if (found) return found;
      bound = getPod(ns, name).spec.nodeName;
      return bound ? null : undefined;
    }, `FailedScheduling for ${ns}/${name}`);
    if (!ev) assert.fail(`pod ${ns}/${name} was bound to ${bound}; wanted FailedScheduling`);
    return ev;
  };

  /** Checks the message everywhere a user sees it: the event, `kubectl get events`, describe and the PodScheduled condition. */
  async function assertUnschedulable(ns: string, name: string, message: string): Promise<void> {
    const ev = await failedEvent(ns, name);
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.message, message);
    assert.equal(ev.reportingComponent, 'default-scheduler');
    const cond = getPod(ns, name).status.conditions?.find((c) => c.type === 'PodScheduled');
    assert.deepEqual({ status: cond?.status, reason: cond?.reason, message: cond?.message }, { status: 'False', reason: 'Unschedulable', message });
    assert.equal(getPod(ns, name).spec.nodeName, undefined);

    const table = k(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`]);
    const lines = table.trimEnd().split('\n');
    assert.match(lines[0]!, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    const row = lines.find((l) => l.includes('FailedScheduling'));
    assert.ok(row, table);
    assert.match(row, new RegExp(`^\\S+\\s+Warning\\s+FailedScheduling\\s+pod/${name}\\s+`));
    assert.ok(row.endsWith(message), `kubectl get events row:\n${row}\nwanted message:\n${message}`);

    const described = k(['describe', 'pod', name, '-n', ns]);
    assert.match(described, /^Status:\s+Pending$/m);
    assert.match(described, /^Node:\s+<none>$/m);
    const evLine = described.split('\n').find((l) => /^\s+Warning\s+FailedScheduling\s/.test(l));
    assert.ok(evLine, described);
    assert.match(evLine, /^\s+Warning\s+FailedScheduling\s+\S+(?: \(x\d+ over \S+\))?\s+default-scheduler\s+/);
    assert.ok(evLine.endsWith(`default-scheduler  ${message}`), `describe event line:\n${evLine}\nwanted message:\n${message}`);
    const status = k(['get', 'pod', name, '-n', ns]).trimEnd().split('\n')[1]!;
    assert.match(status, new RegExp(`^${name}\\s+0/1\\s+Pending\\s+0\\s+`));
  }

  /** The Scheduled event as upstream words it. */
  async function assertScheduled(ns: string, name: string, node: string): Promise<void> {
    const ev = await eventually(() => podEvents(ns, name).find((e) => e.reason === 'Scheduled'), `Scheduled event for ${ns}/${name}`);
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.message, `Successfully assigned ${ns}/${name} to ${node}`);
  }

  const namespace = (ns: string) => assert.equal(k(['create', 'namespace', ns]).trim(), `namespace/${ns} created`);

  before(async () => {
    server = await startServer();
    const template = join(server.dataDir, 'node-template.json');
    writeFileSync(template, JSON.stringify(nodeTemplate));
    sim = await startSim(server, NODES, { nodeTemplate: template });
    await eventually(() => {
      const nodes = JSON.parse(k(['get', 'nodes', '-o', 'json'])) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] };
      const ready = nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === NODES ? true : undefined;
    }, `${NODES} nodes Ready`);
  });

  after(async () => {
    await sim?.stop();
    await server?.stop();
    if (server) removeDir(server.dataDir);
  });

  it('registers the simulated nodes with the template labels and taints', () => {
    const out = k(['get', 'nodes', '-L', 'pool,topology.kubernetes.io/zone']);
    const lines = out.trimEnd().split('\n');
    assert.match(lines[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+POOL\s+ZONE$/);
    const rows = new Map(lines.slice(1).map((l) => [l.split(/\s+/)[0]!, l]));
    const want: [string, string, string][] = [
      ['sim-0', 'general', 'zone-a'],
      ['sim-1', 'general', 'zone-a'],
      ['sim-2', 'general', 'zone-b'],
      ['sim-3', 'tainted', 'zone-a'],
      ['sim-4', 'ssd', 'zone-a'],
      ['sim-5', 'preempt', 'zone-a'],
    ];
    for (const [name, pool, zone] of want) assert.match(rows.get(name) ?? '', new RegExp(`^${name}\\s+Ready\\s+<none>\\s+\\S+\\s+v1\\.33\\.0\\s+${pool}\\s+${zone}$`), out);
    assert.equal(k(['get', 'node', 'sim-3', '-o', 'jsonpath={.spec.taints}']), '[{"effect":"NoSchedule","key":"dedicated","value":"special"}]');
  });

  it('explains insufficient cpu and memory with the exact FailedScheduling message', async () => {
    const ns = 'sched-fit';
    namespace(ns);
    assert.equal(apply(pod(ns, 'big-cpu', { container: resources({ cpu: '64' }) })), 'pod/big-cpu created');
    assert.equal(apply(pod(ns, 'big-mem', { spec: selector({ pool: 'general' }), container: resources({ memory: '64Gi' }) })), 'pod/big-mem created');
    // TaintToleration runs before NodeResourcesFit, so the tainted node reports its taint. A request above
    // a node's allocatable is UnschedulableAndUnresolvable (InsufficientResource.Unresolvable), so
    // preemption tries no node.
    await assertUnschedulable(
      ns,
      'big-cpu',
      failedScheduling(['1 node(s) had untolerated taint {dedicated: special}', '5 Insufficient cpu'], ['6 Preemption is not helpful for scheduling']),
    );
    await assertUnschedulable(
      ns,
      'big-mem',
      failedScheduling(['1 node(s) had untolerated taint {dedicated: special}', "2 node(s) didn't match Pod's node affinity/selector", '3 Insufficient memory'], ['6 Preemption is not helpful for scheduling']),
    );
    // A pod asking for both counts both reasons on every node that lacks them.
    assert.equal(apply(pod(ns, 'big-both', { spec: selector({ pool: 'general' }), container: resources({ cpu: '64', memory: '64Gi' }) })), 'pod/big-both created');
    await assertUnschedulable(
      ns,
      'big-both',
      failedScheduling(['1 node(s) had untolerated taint {dedicated: special}', "2 node(s) didn't match Pod's node affinity/selector", '3 Insufficient cpu', '3 Insufficient memory'], ['6 Preemption is not helpful for scheduling']),
    );
  });

  it('places pods by nodeSelector and required node affinity, and says when nothing matches', async () => {
    const ns = 'sched-affinity';
    namespace(ns);
    apply(pod(ns, 'by-selector', { spec: selector({ disktype: 'ssd' }) }));
    apply(
      pod(ns, 'by-affinity', {
        spec: `  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: pool
            operator: In
            values: [ssd, nowhere]
          - key: kubernetes.io/hostname
            operator: NotIn
            values: [sim-0, sim-1, sim-2]
`,
      }),
    );
    apply(pod(ns, 'no-match', { spec: selector({ disktype: 'nvme' }) }));
    assert.equal(await boundNode(ns, 'by-selector'), 'sim-4');
    assert.equal(await boundNode(ns, 'by-affinity'), 'sim-4');
    await assertScheduled(ns, 'by-selector', 'sim-4');
    await assertScheduled(ns, 'by-affinity', 'sim-4');
    await running(ns, 'by-selector');
    const wide = k(['get', 'pod', 'by-selector', '-n', ns, '-o', 'wide']).trimEnd().split('\n')[1]!;
    assert.match(wide, /^by-selector\s+1\/1\s+Running\s+0\s+\S+\s+\S+\s+sim-4\s+<none>\s+<none>$/);
    assert.match(k(['describe', 'pod', 'by-selector', '-n', ns]), /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned sched-affinity\/by-selector to sim-4/);
    // The tainted node fails on its taint first: TaintToleration runs before NodeAffinity.
    await assertUnschedulable(
      ns,
      'no-match',
      failedScheduling(['1 node(s) had untolerated taint {dedicated: special}', "5 node(s) didn't match Pod's node affinity/selector"], ['6 Preemption is not helpful for scheduling']),
    );
  });

  it('keeps pods off a tainted node unless they tolerate it, and schedules the waiting pod when the taint is removed', async () => {
    const ns = 'sched-taint';
    namespace(ns);
    apply(
      pod(ns, 'tolerant', {
        spec: `${selector({ pool: 'tainted' })}  tolerations:
  - key: dedicated
    operator: Equal
    value: special
    effect: NoSchedule
`,
      }),
    );
    apply(pod(ns, 'intolerant', { spec: selector({ pool: 'tainted' }) }));
    assert.equal(await boundNode(ns, 'tolerant'), 'sim-3');
    await assertScheduled(ns, 'tolerant', 'sim-3');
    await assertUnschedulable(
      ns,
      'intolerant',
      failedScheduling(['1 node(s) had untolerated taint {dedicated: special}', "5 node(s) didn't match Pod's node affinity/selector"], ['6 Preemption is not helpful for scheduling']),
    );
    // Removing the taint is a NodeTaint update: the pod leaves the unschedulable pool at once.
    assert.equal(k(['taint', 'nodes', 'sim-3', 'dedicated-']).trim(), 'node/sim-3 untainted');
    assert.equal(await boundNode(ns, 'intolerant'), 'sim-3');
    await assertScheduled(ns, 'intolerant', 'sim-3');
    const cond = getPod(ns, 'intolerant').status.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(cond?.status, 'True');
    await running(ns, 'intolerant');
  });

  it('refuses a second pod wanting a host port already taken on the only matching node', async () => {
    const ns = 'sched-ports';
    namespace(ns);
    const hostPort = `    ports:\n    - containerPort: 8080\n      hostPort: 8080\n      protocol: TCP\n`;
    apply(pod(ns, 'port-a', { spec: selector({ pool: 'ssd' }), container: hostPort }));
    assert.equal(await boundNode(ns, 'port-a'), 'sim-4');
    apply(pod(ns, 'port-b', { spec: selector({ pool: 'ssd' }), container: hostPort }));
    await assertUnschedulable(
      ns,
      'port-b',
      failedScheduling(["1 node(s) didn't have free ports for the requested pod ports", "5 node(s) didn't match Pod's node affinity/selector"], ['1 No preemption victims found for incoming pod', '5 Preemption is not helpful for scheduling']),
    );
    // Another port on the same node is free.
    apply(pod(ns, 'port-c', { spec: selector({ pool: 'ssd' }), container: hostPort.replaceAll('8080', '8081') }));
    assert.equal(await boundNode(ns, 'port-c'), 'sim-4');
  });

  it('reports SchedulingGated, then schedules the pod once its gates are removed', async () => {
    const ns = 'sched-gates';
    namespace(ns);
    apply(pod(ns, 'gated', { spec: `${selector({ pool: 'ssd' })}  schedulingGates:\n  - name: example.com/quota\n` }));
    await eventually(() => {
      const row = k(['get', 'pod', 'gated', '-n', ns]).trimEnd().split('\n')[1]!;
      return /^gated\s+0\/1\s+SchedulingGated\s+0\s+/.test(row) ? true : undefined;
    }, 'STATUS SchedulingGated');
    const cond = await eventually(() => getPod(ns, 'gated').status.conditions?.find((c) => c.type === 'PodScheduled'), 'PodScheduled condition');
    assert.deepEqual(
      { status: cond.status, reason: cond.reason, message: cond.message },
      { status: 'False', reason: 'SchedulingGated', message: 'Scheduling is blocked due to non-empty scheduling gates' },
    );
    assert.deepEqual(
      podEvents(ns, 'gated').filter((e) => e.reason === 'FailedScheduling'),
      [],
    );
    assert.equal(k(['patch', 'pod', 'gated', '-n', ns, '--type=json', '-p', '[{"op":"remove","path":"/spec/schedulingGates"}]']).trim(), 'pod/gated patched');
    assert.equal(await boundNode(ns, 'gated'), 'sim-4');
    await assertScheduled(ns, 'gated', 'sim-4');
    await running(ns, 'gated');
  });

  it('leaves pods for another schedulerName alone: Pending, no condition, no events', async () => {
    const ns = 'sched-other';
    namespace(ns);
    apply(pod(ns, 'theirs', { spec: `  schedulerName: my-scheduler\n${selector({ pool: 'ssd' })}` }));
    // A default-scheduler pod created after it: once that one is bound, the queue has passed the first.
    apply(pod(ns, 'ours', { spec: selector({ pool: 'ssd' }) }));
    assert.equal(await boundNode(ns, 'ours'), 'sim-4');
    await assertScheduled(ns, 'ours', 'sim-4');
    const theirs = getPod(ns, 'theirs');
    assert.equal(theirs.spec.schedulerName, 'my-scheduler');
    assert.equal(theirs.spec.nodeName, undefined);
    assert.equal(theirs.status.phase, 'Pending');
    assert.equal(theirs.status.conditions, undefined);
    assert.match(k(['get', 'pod', 'theirs', '-n', ns]).trimEnd().split('\n')[1]!, /^theirs\s+0\/1\s+Pending\s+0\s+/);
    const r = kubectl(server, ['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=theirs']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim(), `No resources found in ${ns} namespace.`);
  });

  it('spreads replicas with required pod anti-affinity over distinct nodes', async () => {
    const ns = 'sched-anti';
    namespace(ns);
    const anti = `${selector({ pool: 'general' })}  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            app: web
        topologyKey: kubernetes.io/hostname
`;
    for (let i = 0; i < 3; i++) apply(pod(ns, `web-${i}`, { labels: { app: 'web' }, spec: anti }));
    const nodes = await Promise.all([0, 1, 2].map((i) => boundNode(ns, `web-${i}`)));
    assert.deepEqual([...nodes].sort(), ['sim-0', 'sim-1', 'sim-2']);
    apply(pod(ns, 'web-3', { labels: { app: 'web' }, spec: anti }));
    await assertUnschedulable(
      ns,
      'web-3',
      failedScheduling(["3 node(s) didn't match Pod's node affinity/selector", "3 node(s) didn't match pod anti-affinity rules"], ['3 No preemption victims found for incoming pod', '3 Preemption is not helpful for scheduling']),
    );
  });

  it('spreads pods evenly across zones with a topology spread constraint', async () => {
    const ns = 'sched-spread';
    namespace(ns);
    // zone-a has two general nodes and zone-b one: spreading by node would put more in zone-a.
    const spread = `${selector({ pool: 'general' })}  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels:
        app: spread
`;
    for (let i = 0; i < 4; i++) apply(pod(ns, `spread-${i}`, { labels: { app: 'spread' }, spec: spread }));
    const nodes = await Promise.all([0, 1, 2, 3].map((i) => boundNode(ns, `spread-${i}`)));
    const zoneOf = (n: string) => (n === 'sim-2' ? 'zone-b' : 'zone-a');
    const perZone = nodes.reduce<Record<string, number>>((acc, n) => ({ ...acc, [zoneOf(n)]: (acc[zoneOf(n)] ?? 0) + 1 }), {});
    assert.deepEqual(perZone, { 'zone-a': 2, 'zone-b': 2 }, `nodes: ${nodes.join(', ')}`);
  });

  it('preempts a lower-priority pod for a higher-priority one', async () => {
    const ns = 'sched-preempt';
    namespace(ns);
    const classes = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: kite-low
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: kite-high
value: 1000
`;
    assert.equal(apply(classes), 'priorityclass.scheduling.k8s.io/kite-low created\npriorityclass.scheduling.k8s.io/kite-high created');
    apply(pod(ns, 'low', { spec: `  priorityClassName: kite-low\n${selector({ pool: 'preempt' })}`, container: resources({ cpu: '1500m' }) }));
    assert.equal(await boundNode(ns, 'low'), 'sim-5');
    const low = await running(ns, 'low');
    apply(pod(ns, 'high', { spec: `  priorityClassName: kite-high\n${selector({ pool: 'preempt' })}`, container: resources({ cpu: '1500m' }) }));
    const high = getPod(ns, 'high');
    assert.equal((JSON.parse(k(['get', 'pod', 'high', '-n', ns, '-o', 'json'])) as { spec: { priority: number } }).spec.priority, 1000);
    // The first attempt fails on cpu and nominates sim-5; preemption succeeded, so no PostFilter message.
    const ev = await failedEvent(ns, 'high');
    assert.equal(ev.message, `0/${NODES} nodes are available: 1 Insufficient cpu, 5 node(s) didn't match Pod's node affinity/selector.`);
    // The victim is told why, and deleted gracefully (the sim confirms the deletion).
    const preempted = await eventually(() => podEvents(ns, 'low').find((e) => e.reason === 'Preempted'), 'Preempted event on the victim');
    assert.equal(preempted.type, 'Normal');
    assert.equal(preempted.message, `Preempted by pod ${high.metadata.uid} on node sim-5`);
    await eventually(() => (kubectl(server, ['get', 'pod', 'low', '-n', ns]).code === 1 ? true : undefined), 'victim deleted');
    assert.equal(await boundNode(ns, 'high'), 'sim-5');
    await assertScheduled(ns, 'high', 'sim-5');
    await running(ns, 'high');
    assert.notEqual(low.metadata.uid, high.metadata.uid);
    // A pod of the same priority finds no victims there: equal priority is never preempted.
    apply(pod(ns, 'peer', { spec: `  priorityClassName: kite-high\n${selector({ pool: 'preempt' })}`, container: resources({ cpu: '1' }) }));
    await assertUnschedulable(
      ns,
      'peer',
      failedScheduling(['1 Insufficient cpu', "5 node(s) didn't match Pod's node affinity/selector"], ['1 No preemption victims found for incoming pod', '5 Preemption is not helpful for scheduling']),
    );
  });

  it('schedules a waiting pod when a matching node is added (a bare Node object: nothing heartbeats it)', async () => {
    const ns = 'sched-late';
    namespace(ns);
    apply(pod(ns, 'waiter', { spec: selector({ pool: 'late' }) }));
    await assertUnschedulable(ns, 'waiter', failedScheduling(["6 node(s) didn't match Pod's node affinity/selector"], ['6 Preemption is not helpful for scheduling']));
    // `kite sim` names its nodes sim-0..N-1 and owns them all, so the extra node is applied by hand.
    // Its status (allocatable) is kept on create as a kubelet's registration is; no Lease is renewed.
    const node = `apiVersion: v1
kind: Node
metadata:
  name: late-0
  labels:
    kubernetes.io/hostname: late-0
    pool: late
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
`;
    assert.equal(apply(node), 'node/late-0 created');
    assert.equal(await boundNode(ns, 'waiter'), 'late-0');
    await assertScheduled(ns, 'waiter', 'late-0');
    // No kubelet plays this node, so the pod is bound but stays Pending.
    const p = getPod(ns, 'waiter');
    assert.equal(p.status.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
    assert.equal(p.status.phase, 'Pending');
  });
});
