// bench/scheduler: the scheduler inside `kite server` against `kite sim` clusters of simulated
// nodes, fed a burst of pods of mixed kinds at a bounded concurrency; and, in the same run, the bare
// write rate of the store underneath (every bind is one store write) as the ceiling.
//   node --import tsx bench/scheduler.ts [--nodes 500,5000] [--pods 10000] [--concurrency 64] [--mix mixed|plain] [--profile DIR]
//                                        [--timeline on,off] [--rounds N]
// --timeline runs each cluster size with the pod timeline on (kite server and kite sim default: the
// scheduler, controllers and simulated kubelets batch their steps to the server, which keeps them)
// and off (--pod-timeline false on both: nothing recorded, nothing kept), --rounds times, the order
// alternating per round, and prints the bound pods/s of each side, the loss of their means and of
// each round's pair (with their median, and their mean with its standard error), and the server's
// CPU seconds by thread (threadCpuSeconds). The timeline's process runs at the idle CPU policy, so
// the "on" side also reports when the timelines hold every pod's Ready step after the burst, and the
// server's CPU until then: the timeline's whole cost, not only what the burst paid.
// Needs `npm run build` first: server and sim run from dist as their own processes, as in production.
//
// Per cluster size it reports:
//   - sim: time from spawning `kite sim` to every node Ready and untainted (seen on a node watch);
//   - create/s: how fast the API accepted the burst;
//   - bound/s: pods from the first create sent to the last pod seen bound (spec.nodeName on a pod watch);
//   - p50/p99: per-pod latency from its create being sent to its binding seen on the watch, client-side
//     clocks (creationTimestamp has one-second resolution);
//   - Running: time from the first create to the last pod seen Running;
//   - server/sim/bench CPU: user + system seconds of each process (the server's with its child) over
//     that same span (the API server's event loop is the bottleneck, and CPU per pod moves less than
//     rates when others load the machine);
//   - server RSS: peak VmRSS of the `kite server` process (API server + scheduler + controllers) and its
//     child (the pod timelines).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from '../src/util/args.js';
import { RestClient } from '../src/client/rest.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { taintNodeNotReady, taintNodeUnreachable } from '../src/controllers/nodelifecycle/health.js';
import { percentile } from './load.js';
import { follow, pool, spawnKite, until, type Proc } from './kite.js';

const args = parseArgs(process.argv.slice(2));
const nodeCounts = (args.flags.get('nodes') ?? '500,5000').split(',').map(Number);
const podCount = Number(args.flags.get('pods') ?? 10000);
const concurrency = Number(args.flags.get('concurrency') ?? 64);
/** "plain" is upstream's SchedulingBasic shape (plain pods only); "mixed" adds the other kinds. */
const plainOnly = (args.flags.get('mix') ?? 'mixed') === 'plain';
/** Where `kite server` (one per thread; not its pod timelines' child) and `kite sim` write V8 CPU profiles on exit; none when unset. */
const profileDir = args.flags.get('profile');
const profileArgs = (name: string) => (profileDir ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, name)] : []);
const timelineModes = (args.flags.get('timeline') ?? 'on').split(',') as ('on' | 'off')[];
if (timelineModes.some((m) => m !== 'on' && m !== 'off')) throw new Error('--timeline takes on, off or on,off');
const rounds = Number(args.flags.get('rounds') ?? 1);
const ns = 'bench';

type Kind = 'plain' | 'nodeSelector' | 'antiAffinity' | 'spread';

/** Out of every ten pods: 6 plain, 2 nodeSelector, 1 anti-affinity, 1 topology spread. */
function kindOf(i: number): Kind {
  if (plainOnly) return 'plain';
  const slot = i % 10;
  if (slot === 8) return 'antiAffinity';
  if (slot === 9) return 'spread';
  if (slot === 6 || slot === 7) return 'nodeSelector';
  return 'plain';
}

function pod(i: number): object {
  const kind = kindOf(i);
  const labels: Record<string, string> = { app: 'bench', kind };
  const spec: Record<string, unknown> = {
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '64Mi' } } }],
  };
  if (kind === 'nodeSelector') spec.nodeSelector = { type: 'kwok', 'kubernetes.io/os': 'linux' };
  if (kind === 'antiAffinity') {
    // Groups of 10 replicas that must not share a node.
    labels['anti-group'] = `g${Math.floor(i / 100)}`;
    spec.affinity = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: { 'anti-group': labels['anti-group'] } }, topologyKey: 'kubernetes.io/hostname' }],
      },
    };
  }
  if (kind === 'spread') {
    // Groups of 50 replicas spread over nodes with maxSkew 1 (the default node template has no zones).
    labels['spread-group'] = `s${Math.floor(i / 500)}`;
    spec.topologySpreadConstraints = [
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { 'spread-group': labels['spread-group'] } } },
    ];
  }
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}`, namespace: ns, labels }, spec };
}

/** CPU time (user + system) of a /proc stat file, in seconds; USER_HZ is 100 on Linux. */
function statCpuSeconds(stat: string): number {
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A process and its children (kite server's pod timelines run in one): what "the server" costs. */
function processTree(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent's pid is field 4, the second after the command name.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return [pid, ...children];
}

/** `read` summed over a process and its children; NaN when the process itself is gone (a child that ended counts nothing). */
function sumOverTree(pid: number | undefined, read: (pid: number) => number): number {
  if (!pid) return NaN;
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      total += read(p);
    } catch {
      if (p === pid) return NaN;
    }
  }
  return total;
}

/** CPU time of a process and its children so far (every thread), in seconds. */
function cpuSeconds(pid: number | undefined): number {
  return sumOverTree(pid, (p) => statCpuSeconds(readFileSync(`/proc/${p}/stat`, 'utf8')));
}

/**
 * CPU seconds so far of a process's threads by name: "main" for the event loop, the worker threads
 * by the names kite gives them (kube-scheduler, kube-controller), V8's and libuv's helpers (the
 * optimizing compiler and garbage collection, mostly) by theirs; a child's threads the same way after
 * its name ("pod-timelines: main"). A thread that ended takes its time with it.
 */
function threadCpuSeconds(pid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (!pid) return out;
  for (const p of processTree(pid)) {
    try {
      const prefix = p === pid ? '' : `${readFileSync(`/proc/${p}/comm`, 'utf8').trim()}: `;
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        const stat = readFileSync(`/proc/${p}/task/${tid}/stat`, 'utf8');
        const name = prefix + (tid === String(p) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
        out.set(name, (out.get(name) ?? 0) + statCpuSeconds(stat));
      }
    } catch {
      // The thread or process ended between the listing and the read.
    }
  }
  return out;
}

/** Resident memory of a process and its children. */
function rssMiB(pid: number | undefined): number {
  return sumOverTree(pid, (p) => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  });
}

interface Result {
  nodes: number;
  timeline: 'on' | 'off';
  simRegisteredS: number;
  nodesReadyS: number;
  createPerS: number;
  boundPerS: number;
  bound: number;
  p50: number;
  p99: number;
  runningS: number;
  running: number;
  /** CPU seconds (all threads) from the first create to the last pod Running: robust to a shared machine's load. */
  serverCpuS: number;
  /** serverCpuS by thread name (threadCpuSeconds). */
  serverThreadCpuS: Map<string, number>;
  /** Timeline on: seconds from the last pod Running until every pod's timeline holds its Ready step (NaN: not within 2 minutes). */
  timelineCompleteS: number;
  /** Timeline on: serverCpuS up to then. */
  serverCpuToCompleteS: number;
  simCpuS: number;
  /** This process: the creates and the watch that sees every pod (the load generator shares the cores). */
  benchCpuS: number;
  serverRssPeak: number;
  serverRssEnd: number;
  simRssPeak: number;
  loadBefore: number;
  loadAfter: number;
}

interface PodLike {
  metadata: { name: string; resourceVersion?: string };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}
/** A pod as the API stored and served it (defaults, managedFields, status): the ceiling writes values of its size. */
let samplePod: PodLike | undefined;

interface NodeLike {
  metadata: { name: string; resourceVersion?: string };
  spec?: { taints?: { key: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** The taints a node starts with (TaintNodesByCondition) and loses once the node lifecycle controller sees it Ready. */
const conditionTaints = new Set([taintNodeNotReady, taintNodeUnreachable]);

async function runCluster(nodes: number, timeline: 'on' | 'off'): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'kite-bench-sched-'));
  const abort = new AbortController();
  let server: Proc | undefined;
  let sim: Proc | undefined;
  const loadBefore = loadavg()[0]!;
  try {
    const timelineArgs = timeline === 'off' ? ['--pod-timeline', 'false'] : [];
    server = await spawnKite(['server', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0', ...timelineArgs], /listening on (https:\/\/\S+)/, profileArgs('server'));
    const kubeconfig = join(dir, 'data', 'admin.kubeconfig');
    const rest = new RestClient(await loadKubeconfig(kubeconfig));
    let serverRssPeak = 0;
    let simRssPeak = 0;
    const sampler = setInterval(() => {
      serverRssPeak = Math.max(serverRssPeak, rssMiB(server?.proc.pid) || 0);
      simRssPeak = Math.max(simRssPeak, rssMiB(sim?.proc.pid) || 0);
    }, 250);

    // Nodes Ready and schedulable (their not-ready taint gone), from a node watch started before the
    // sim: a burst sent earlier measures how fast the controllers untaint nodes, not the scheduler.
    const ready = new Set<string>();
    const nodeList = await rest.request<{ metadata: { resourceVersion: string } }>({ path: '/api/v1/nodes' });
    const nodeWatch = follow<NodeLike>(
      rest,
      '/api/v1/nodes',
      nodeList.metadata.resourceVersion,
      (type, n) => {
        const isReady =
          type !== 'DELETED' && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && !n.spec?.taints?.some((t) => conditionTaints.has(t.key));
        if (isReady) ready.add(n.metadata.name);
        else ready.delete(n.metadata.name);
      },
      abort.signal,
    );
    const simStart = performance.now();
    let simRegisteredS = NaN;
    sim = await spawnKite(['sim', '--kubeconfig', kubeconfig, '--nodes', String(nodes), ...timelineArgs], /nodes registered in ([\d.]+)s/, profileArgs('sim'));
    simRegisteredS = (performance.now() - simStart) / 1000;
    await until(() => ready.size >= nodes, 120_000, `${nodes} nodes Ready`);
    const nodesReadyS = (performance.now() - simStart) / 1000;

    await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });

    // Pods: bound and Running as seen on one watch.
    const sent = new Float64Array(podCount);
    const boundAt = new Float64Array(podCount);
    const runningAt = new Float64Array(podCount);
    let bound = 0;
    let running = 0;
    let lastBound = 0;
    let lastRunning = 0;
    const podList = await rest.request<{ metadata: { resourceVersion: string } }>({ path: `/api/v1/namespaces/${ns}/pods` });
    const podWatch = follow<PodLike>(
      rest,
      `/api/v1/namespaces/${ns}/pods`,
      podList.metadata.resourceVersion,
      (type, p) => {
        if (type === 'DELETED') return;
        const i = Number(p.metadata.name.slice(2));
        const t = performance.now();
        if (p.spec?.nodeName && !boundAt[i]) {
          boundAt[i] = t;
          samplePod ??= p;
          bound++;
          lastBound = t;
        }
        if (p.status?.phase === 'Running' && !runningAt[i]) {
          runningAt[i] = t;
          running++;
          lastRunning = t;
        }
      },
      abort.signal,
    );

    const first = performance.now();
    const serverCpuBefore = cpuSeconds(server.proc.pid);
    const serverThreadsBefore = threadCpuSeconds(server.proc.pid);
    const simCpuBefore = cpuSeconds(sim.proc.pid);
    const benchCpuBefore = process.cpuUsage();
    let createErrors = 0;
    await pool(podCount, concurrency, async (i) => {
      sent[i] = performance.now();
      try {
        await rest.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: pod(i) });
      } catch (err) {
        if (createErrors++ < 5) console.error(`create p-${i}: ${String(err)}`);
      }
    });
    const createdS = (performance.now() - first) / 1000;
    await until(() => bound >= podCount - createErrors, 300_000, `${podCount} pods bound (${nodes} nodes)`);
    await until(() => running >= podCount - createErrors, 120_000, `${podCount} pods Running (${nodes} nodes)`);
    const serverCpuS = cpuSeconds(server.proc.pid) - serverCpuBefore;
    const serverThreadCpuS = threadCpuSeconds(server.proc.pid);
    for (const [name, s] of serverThreadsBefore) serverThreadCpuS.set(name, (serverThreadCpuS.get(name) ?? 0) - s);
    const simCpuS = cpuSeconds(sim.proc.pid) - simCpuBefore;
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const benchCpuS = (benchCpu.user + benchCpu.system) / 1e6;
    // The timeline's process runs at the idle CPU policy and catches up after the burst: when its
    // records hold every pod's Ready step (asked each second), and the server's CPU until then.
    let timelineCompleteS = NaN;
    let serverCpuToCompleteS = NaN;
    if (timeline === 'on') {
      const deadline = performance.now() + 120_000;
      while (performance.now() < deadline) {
        const list = await rest.request<{ items: { steps: { step: string }[] }[] }>({ path: `/apis/timeline.kite.dev/v1alpha1/namespaces/${ns}/podtimelines` });
        if (list.items.filter((t) => t.steps.some((s) => s.step === 'Ready')).length >= podCount - createErrors) {
          timelineCompleteS = (performance.now() - lastRunning) / 1000;
          serverCpuToCompleteS = cpuSeconds(server.proc.pid) - serverCpuBefore;
          break;
        }
        await sleep(1000);
      }
      // A round whose timelines never caught up: what the processes logged, to tell why.
      if (Number.isNaN(timelineCompleteS)) {
        console.error(`timelines incomplete after 2 minutes (${nodes} nodes); server log tail:\n${server.stderr().slice(-4000)}\nsim log tail:\n${sim.stderr().slice(-4000)}`);
      }
    }
    clearInterval(sampler);
    const serverRssEnd = rssMiB(server.proc.pid);
    serverRssPeak = Math.max(serverRssPeak, serverRssEnd || 0);

    const latencies: number[] = [];
    for (let i = 0; i < podCount; i++) if (boundAt[i]) latencies.push(boundAt[i]! - sent[i]!);
    latencies.sort((a, b) => a - b);
    abort.abort();
    await Promise.allSettled([nodeWatch, podWatch]);
    rest.close();
    return {
      nodes,
      timeline,
      simRegisteredS,
      nodesReadyS,
      createPerS: (podCount - createErrors) / createdS,
      boundPerS: bound / ((lastBound - first) / 1000),
      bound,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      runningS: (lastRunning - first) / 1000,
      running,
      serverCpuS,
      serverThreadCpuS,
      timelineCompleteS,
      serverCpuToCompleteS,
      simCpuS,
      benchCpuS,
      serverRssPeak,
      serverRssEnd,
      simRssPeak,
      loadBefore,
      loadAfter: loadavg()[0]!,
    };
  } finally {
    abort.abort();
    await sim?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The ceiling: SqliteStore updates of values the size of a stored pod (a bind rewrites the pod once),
 * one after another on a temp database, as the API server's store does them.
 */
async function storeCeiling(): Promise<{ updatesPerS: number; valueBytes: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'kite-bench-store-'));
  const store = new SqliteStore(join(dir, 'bare.db'));
  try {
    const n = Math.min(podCount, 10_000);
    const sample = (samplePod ?? pod(0)) as { metadata: Record<string, unknown>; spec?: Record<string, unknown> };
    const value = (i: number, nodeName?: string) =>
      JSON.stringify({ ...sample, metadata: { ...sample.metadata, name: `p-${i}`, resourceVersion: undefined }, spec: { ...sample.spec, nodeName } });
    const revs: number[] = [];
    for (let i = 0; i < n; i++) revs.push((await store.create(`/registry/pods/${ns}/p-${i}`, value(i))).modRevision);
    const bodies = Array.from({ length: n }, (_, i) => value(i, `sim-${i % 500}`));
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await store.update(`/registry/pods/${ns}/p-${i}`, bodies[i]!, revs[i]!);
    const s = (performance.now() - t0) / 1000;
    return { updatesPerS: n / s, valueBytes: bodies[0]!.length };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

async function main(): Promise<void> {
  const mix = plainOnly ? 'all plain' : '60% plain, 20% nodeSelector, 10% required anti-affinity (groups of 10, hostname), 10% topology spread (groups of 50, hostname, maxSkew 1)';
  console.log(`bench/scheduler: ${podCount} pods (${mix}), created ${concurrency} at a time; node counts ${nodeCounts.join(', ')}`);
  console.log(`machine: ${(await import('node:os')).cpus().length} CPUs, load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  const results: Result[] = [];
  for (const nodes of nodeCounts) {
    for (let round = 0; round < rounds; round++) {
      // Alternating the order spreads the machine's drift over both sides.
      const modes = round % 2 ? [...timelineModes].reverse() : timelineModes;
      for (const mode of modes) {
        results.push(await runCluster(nodes, mode));
        console.error(`done: ${nodes} nodes, timeline ${mode}, round ${round + 1}`);
      }
    }
  }
  const ceiling = await storeCeiling();
  console.log('| nodes | timeline | sim registered s | nodes Ready s | create/s | bound pods/s | p50 ms | p99 ms | all Running s | server CPU s | timeline complete s after (server CPU s to then) | sim CPU s | bench CPU s | server RSS peak MiB | server RSS end MiB | sim RSS peak MiB | load 1m before/after |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const boundNote = r.bound < podCount ? ` (${r.bound}/${podCount} bound)` : '';
    const runNote = r.running < podCount ? ` (${r.running}/${podCount})` : '';
    console.log(
      `| ${r.nodes} | ${r.timeline} | ${f1(r.simRegisteredS)} | ${f1(r.nodesReadyS)} | ${f0(r.createPerS)} | ${f0(r.boundPerS)}${boundNote} | ${f0(r.p50)} | ${f0(r.p99)} | ${f1(r.runningS)}${runNote} | ${f1(r.serverCpuS)} | ${r.timeline === 'on' ? `${f1(r.timelineCompleteS)} (${f1(r.serverCpuToCompleteS)})` : ''} | ${f1(r.simCpuS)} | ${f1(r.benchCpuS)} | ${f0(r.serverRssPeak)} | ${f0(r.serverRssEnd)} | ${f0(r.simRssPeak)} | ${r.loadBefore.toFixed(2)} / ${r.loadAfter.toFixed(2)} |`,
    );
  }
  console.log(`| store ceiling | | SqliteStore.update, ${ceiling.valueBytes}-byte pods, sequential | | | ${f0(ceiling.updatesPerS)} writes/s | | | | | | | | | | |`);
  if (timelineModes.length < 2) return;
  console.log('\n| nodes | bound pods/s, timeline off | bound pods/s, timeline on | loss of the means | loss per round (median) | per-round mean ± standard error | server CPU s off / on | on: timeline complete s after all Running, mean (max), and server CPU s to then | by thread off / on |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const lossOf = (off: number, on: number) => ((off - on) / off) * 100;
  for (const nodes of nodeCounts) {
    const side = (mode: 'on' | 'off') => results.filter((r) => r.nodes === nodes && r.timeline === mode);
    const [off, on] = [side('off'), side('on')];
    const [offRate, onRate] = [mean(off.map((r) => r.boundPerS)), mean(on.map((r) => r.boundPerS))];
    // Each round ran both sides back to back: its own loss cancels the machine's slower drift.
    const perRound = off.map((o, i) => lossOf(o.boundPerS, on[i]!.boundPerS));
    const sorted = [...perRound].sort((a, b) => a - b);
    const median = (sorted[Math.floor((sorted.length - 1) / 2)]! + sorted[Math.ceil((sorted.length - 1) / 2)]!) / 2;
    const perRoundMean = mean(perRound);
    // One round's noise (±15 % here) is larger than the loss: the mean's standard error says what the rounds can tell.
    const standardError = perRound.length > 1 ? Math.sqrt(perRound.reduce((a, l) => a + (l - perRoundMean) ** 2, 0) / (perRound.length - 1) / perRound.length) : NaN;
    const threadNames = [...new Set(results.flatMap((r) => [...r.serverThreadCpuS.keys()]))].sort();
    const byThread = (rs: Result[], name: string) => mean(rs.map((r) => r.serverThreadCpuS.get(name) ?? 0));
    const threads = threadNames
      .map((name) => [name, byThread(off, name), byThread(on, name)] as const)
      .filter(([, a, b]) => a >= 0.05 || b >= 0.05)
      .map(([name, a, b]) => `${name} ${f1(a)} / ${f1(b)}`)
      .join(', ');
    console.log(
      `| ${nodes} | ${f0(offRate)} | ${f0(onRate)} | ${lossOf(offRate, onRate).toFixed(1)} % | ${perRound.map((l) => l.toFixed(1)).join(', ')} (${median.toFixed(1)}) % | ${perRoundMean.toFixed(1)} ± ${standardError.toFixed(1)} % | ${f1(mean(off.map((r) => r.serverCpuS)))} / ${f1(mean(on.map((r) => r.serverCpuS)))} | ${f1(mean(on.map((r) => r.timelineCompleteS)))} (${f1(Math.max(...on.map((r) => r.timelineCompleteS)))}), ${f1(mean(on.map((r) => r.serverCpuToCompleteS)))} | ${threads} |`,
    );
  }
}

await main();
