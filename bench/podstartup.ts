// bench/podstartup: pod start-up latency on a real node (`kite up`: API server, scheduler, kubelet,
// its own containerd), one pod after another, and in the same run the bare CRI floor underneath
// (RunPodSandbox → CreateContainer → StartContainer called directly on the same containerd).
//   node --import tsx bench/podstartup.ts [--pods 20] [--floor 20] [--bridge kite-bench] [--pod-cidr 10.217.250.0/24] [--sides on,off]
// Needs `npm run build` first (`kite up` runs from dist, as in production) and root.
//
// The same pods run twice, each time on a fresh `kite up`: with the pod timeline on (the
// components record every step, the API server keeps them) and off (`--pod-timeline=false`:
// the API server keeps none), in the order --sides gives, and both are printed side by side; the
// floor runs on the first side's containerd.
//
// kite's sample per pod: from sending the create to a pod watch (opened before) seeing phase
// Running with the container running. The floor's sample: RunPodSandbox called → StartContainer
// returned. busybox:1.35 is pulled by a warm-up pod first, so neither side measures a pull.
//
// The breakdown splits kite's samples, all on one wall clock (the benchmark's watch times and
// containerd's own log lines, which carry nanosecond timestamps):
//   create sent → acknowledged → bound (spec.nodeName on the watch) → RunPodSandbox called →
//   returned → CreateContainer called → StartContainer returned (containerd's log) → Running seen;
// beside it the floor's pods read from the same log, so containerd's own time for kite's pods and
// for bare CRI pods compare directly. CPU of the `kite up` process and of containerd is reported per
// pod started and per second with every pod running and idle.
// The cluster has its own bridge, pod subnet and cgroup root, so it never collides with a test cluster.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types.js';
import { checkFlags, parseArgs } from '../src/util/args.js';
import { Client, type ResourceClient } from '../src/client/client.js';
import { cgroupMounts, removePodCgroups } from '../src/kubelet/cm/cgroups.js';
import { CriRuntime } from '../src/kubelet/runtime/cri/client.js';
import { measureFloor, type FloorSamples } from '../src/kubelet/runtime/cri/floor.js';
import { resetCluster, startCluster, type KiteCluster } from '../test/e2e/cluster.js';
import { percentile, processCpu } from './load.js';

const args = parseArgs(process.argv.slice(2));
checkFlags(args, ['pods', 'floor', 'bridge', 'pod-cidr', 'sides']);
const podCount = Number(args.flags.get('pods') ?? 20);
const floorCount = Number(args.flags.get('floor') ?? 20);
const ns = 'podstartup';
const image = 'busybox:1.35';
const floorImage = 'docker.io/library/busybox:1.35';
// The bridge names the cgroup roots and temporary directories too, so two runs beside each other never share one.
const bridge = args.flags.get('bridge') ?? 'kite-bench';
const floorCgroupRoot = `/${bridge}-floor`;
const floorNamespace = 'kite-floor';
const clusterArgs = ['--bridge', bridge, '--pod-cidr', args.flags.get('pod-cidr') ?? '10.217.250.0/24', '--cgroup-root', `/${bridge}`];

/** Wall-clock milliseconds with sub-millisecond precision, comparable with containerd's log times. */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Side = 'on' | 'off';
const sides = (args.flags.get('sides') ?? 'on,off').split(',') as Side[];
if (sides.length !== 2 || !sides.includes('on') || !sides.includes('off')) throw new Error('--sides must be on,off or off,on');
const sideArgs: Record<Side, string[]> = { on: ['--pod-timeline=true'], off: ['--pod-timeline=false'] };

function benchPod(name: string, command: string[], restartPolicy: 'Always' | 'Never'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { restartPolicy, terminationGracePeriodSeconds: 0, containers: [{ name: 'main', image, command }] },
  };
}

/** Client-side times (ms, wall clock) at which the watch first saw each step of one pod. */
interface Seen {
  sent?: number;
  acked?: number;
  bound?: number;
  /** The kubelet's first status write (containerStatuses present). */
  kubeletStatus?: number;
  sandboxReady?: number;
  running?: number;
  succeeded?: number;
  deleted?: number;
}

const seen = new Map<string, Seen>();
const seenOf = (name: string): Seen => {
  let s = seen.get(name);
  if (!s) seen.set(name, (s = {}));
  return s;
};

function observe(type: string, pod: Pod): void {
  const s = seenOf(pod.metadata?.name ?? '');
  const t = now();
  if (type === 'DELETED') s.deleted ??= t;
  else {
    if (pod.spec?.nodeName) s.bound ??= t;
    if (pod.status?.containerStatuses?.length) s.kubeletStatus ??= t;
    if (pod.status?.conditions?.some((c) => c.type === 'PodReadyToStartContainers' && c.status === 'True')) s.sandboxReady ??= t;
    const main = pod.status?.containerStatuses?.find((c) => c.name === 'main');
    if (pod.status?.phase === 'Running' && main?.state?.running) s.running ??= t;
    if (pod.status?.phase === 'Succeeded') s.succeeded ??= t;
  }
  for (const check of [...waiters]) check();
}

/** Follows the namespace's pods from a list's resourceVersion, resuming when the stream ends, until aborted. */
async function followPods(pods: ResourceClient<Pod>, rv: string | undefined, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      for await (const e of pods.watch({ resourceVersion: rv, allowWatchBookmarks: true }, signal)) {
        if (e.type === 'ERROR') throw new Error(JSON.stringify(e.object));
        rv = e.object.metadata?.resourceVersion ?? rv;
        if (e.type !== 'BOOKMARK') observe(e.type, e.object);
      }
    } catch (err) {
      if (signal.aborted) return;
      console.error(`pod watch ended: ${String(err)}; resuming from ${rv}`);
      await sleep(100);
    }
  }
}

/** Conditions waiting on the watch; checked after every event, so the benchmark never polls (it shares the cores). */
const waiters = new Set<() => void>();

function until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  if (cond()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!cond()) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`));
    }, timeoutMs);
    waiters.add(check);
  });
}

/** What containerd's log says about one pod's sandbox and its container (wall-clock ms). */
interface CriSteps {
  runPodSandbox?: number;
  sandboxReturned?: number;
  createContainer?: number;
  startReturned?: number;
}

/** containerd's RFC 3339 log time with nanoseconds as wall-clock ms (Date.parse keeps only milliseconds). */
function logTimeMs(time: string): number {
  const fraction = /\.(\d+)/.exec(time)?.[1] ?? '0';
  return Date.parse(time.replace(/\.\d+/, '')) + Number(`0.${fraction}`) * 1000;
}

/**
 * The CRI calls of each pod from containerd's info-level log: RunPodSandbox is logged with the pod's
 * metadata, later calls with the sandbox or container ID it returned.
 */
function criStepsFromLog(logFile: string, namespace: string): Map<string, CriSteps> {
  const byPod = new Map<string, CriSteps>();
  const podOfSandbox = new Map<string, string>();
  const podOfContainer = new Map<string, string>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    const time = /time="([^"]+)"/.exec(line)?.[1];
    const msg = /msg="((?:[^"\\]|\\.)*)"/.exec(line)?.[1]?.replace(/\\"/g, '"');
    if (!time || !msg) continue;
    const t = logTimeMs(time);
    let m: RegExpExecArray | null;
    if ((m = /^RunPodSandbox for &PodSandboxMetadata\{Name:([^,]+),.*Namespace:([^,]+),.*?\}(?: returns sandbox id "(\w+)")?$/.exec(msg))) {
      if (m[2] !== namespace) continue;
      const steps = byPod.get(m[1]!) ?? {};
      byPod.set(m[1]!, steps);
      if (m[3]) {
        steps.sandboxReturned ??= t;
        podOfSandbox.set(m[3], m[1]!);
      } else steps.runPodSandbox ??= t;
    } else if ((m = /^CreateContainer within sandbox "(\w+)" for (?:container )?&ContainerMetadata\{[^}]*\}(?: returns container id "(\w+)")?$/.exec(msg))) {
      const pod = podOfSandbox.get(m[1]!);
      if (!pod) continue;
      if (m[2]) podOfContainer.set(m[2], pod);
      else byPod.get(pod)!.createContainer ??= t;
    } else if ((m = /^StartContainer for "(\w+)" returns successfully$/.exec(msg))) {
      const pod = podOfContainer.get(m[1]!);
      if (pod) byPod.get(pod)!.startReturned ??= t;
    }
  }
  return byPod;
}

interface Summary {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[s.length - 1] ?? NaN };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

/** Leftover pod cgroups below the floor's root (measureFloor removes its pods' own). */
async function leftoverFloorCgroups(): Promise<string[]> {
  const left: string[] = [];
  for (const m of await cgroupMounts()) {
    const dir = join(m.mountPoint, floorCgroupRoot, 'besteffort');
    if (existsSync(dir)) for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory() && e.name.startsWith('pod')) left.push(join(dir, e.name));
  }
  return left;
}

/** CPU ms used so far by the `kite up` process (API server, scheduler, kubelet) and by containerd. */
interface CpuMeters {
  kite: () => number;
  containerd: () => number;
}

function cpuMeters(cluster: KiteCluster): CpuMeters {
  const containerdPid = Number(readFileSync(join(cluster.dataDir, 'node', 'containerd', 'containerd.pid'), 'utf8').trim());
  return { kite: processCpu(cluster.proc.pid!), containerd: processCpu(containerdPid) };
}

/** CPU ms each process used while `during` ran. */
async function cpuDuring<T>(meters: CpuMeters, during: () => Promise<T>): Promise<{ result: T; kiteMs: number; containerdMs: number }> {
  const k0 = meters.kite();
  const c0 = meters.containerd();
  const result = await during();
  return { result, kiteMs: meters.kite() - k0, containerdMs: meters.containerd() - c0 };
}

interface KiteRun {
  /** The measured pods, in creation order. */
  names: string[];
  /** CPU per pod while the pods started, one after another. */
  startCpu: { kiteMs: number; containerdMs: number };
  /** CPU per second with every pod running and nothing else to do (relists, housekeeping, heartbeats). */
  idleCpu: { kiteMs: number; containerdMs: number };
}

/** How long the node is watched with every pod running, to see what running pods cost at rest. */
const IDLE_WINDOW_MS = 5_000;

async function runKite(client: Client, meters: CpuMeters, side: Side): Promise<KiteRun> {
  await client.resource('', 'v1', 'namespaces').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const pods = client.resource('pods').namespace(ns);
  const abort = new AbortController();
  // Listed before the first create, so the watch sees every pod from its creation on.
  const watching = followPods(pods, (await pods.list()).metadata?.resourceVersion, abort.signal);
  try {
    // The warm-up pulls busybox (and the pause image, with the first sandbox) outside the samples.
    const warmup = `warmup-${side}`;
    await pods.create(benchPod(warmup, ['true'], 'Never'));
    await until(() => seenOf(warmup).succeeded !== undefined, 180_000, 'the warm-up pod to succeed');
    await pods.delete(warmup, { gracePeriodSeconds: 0 });
    await until(() => seenOf(warmup).deleted !== undefined, 60_000, 'the warm-up pod to go');

    const names = Array.from({ length: podCount }, (_, i) => `${side}-${i}`);
    const start = await cpuDuring(meters, async () => {
      for (const name of names) {
        const s = seenOf(name);
        s.sent = now();
        await pods.create(benchPod(name, ['sleep', '3600'], 'Always'));
        s.acked = now();
        await until(() => s.running !== undefined, 120_000, `${name} Running`);
      }
    });
    const idle = await cpuDuring(meters, () => sleep(IDLE_WINDOW_MS));

    for (const name of names) await pods.delete(name, { gracePeriodSeconds: 0 });
    await until(() => names.every((n) => seenOf(n).deleted !== undefined), 120_000, 'the pods to go');
    return {
      names,
      startCpu: { kiteMs: start.kiteMs / podCount, containerdMs: start.containerdMs / podCount },
      idleCpu: { kiteMs: (idle.kiteMs * 1000) / IDLE_WINDOW_MS, containerdMs: (idle.containerdMs * 1000) / IDLE_WINDOW_MS },
    };
  } finally {
    abort.abort();
    await watching.catch(() => undefined);
  }
}

type Steps = Record<string, number[]>;

function addStep(steps: Steps, step: string, ms: number): void {
  if (Number.isFinite(ms)) (steps[step] ??= []).push(ms);
}

/** Where each kite pod's time went: the watch's times and containerd's, on one wall clock. */
function kiteBreakdown(names: string[], cri: Map<string, CriSteps>): Steps {
  const steps: Steps = {};
  for (const name of names) {
    const s = seenOf(name);
    const c = cri.get(name) ?? {};
    // A step whose end or start is missing (e.g. a log line not found) is NaN and left out.
    const d = (to: number | undefined, from: number | undefined) => (to ?? NaN) - (from ?? NaN);
    addStep(steps, 'create sent → acknowledged', d(s.acked, s.sent));
    addStep(steps, 'create sent → bound seen', d(s.bound, s.sent));
    addStep(steps, 'bound seen → kubelet status seen', d(s.kubeletStatus, s.bound));
    addStep(steps, 'bound seen → RunPodSandbox called', d(c.runPodSandbox, s.bound));
    addStep(steps, 'RunPodSandbox (in containerd)', d(c.sandboxReturned, c.runPodSandbox));
    addStep(steps, 'sandbox returned → CreateContainer called', d(c.createContainer, c.sandboxReturned));
    addStep(steps, 'CreateContainer + StartContainer (in containerd)', d(c.startReturned, c.createContainer));
    addStep(steps, 'StartContainer returned → Running seen', d(s.running, c.startReturned));
    addStep(steps, 'PodReadyToStartContainers seen → Running seen', d(s.running, s.sandboxReady));
    addStep(steps, 'RunPodSandbox called → StartContainer returned (in containerd)', d(c.startReturned, c.runPodSandbox));
    addStep(steps, 'create sent → Running seen', d(s.running, s.sent));
  }
  return steps;
}

/** The floor's pods as containerd's log saw them, for the same steps. */
function floorBreakdown(cri: Map<string, CriSteps>): Steps {
  const steps: Steps = {};
  for (const c of cri.values()) {
    addStep(steps, 'RunPodSandbox (in containerd)', (c.sandboxReturned ?? NaN) - (c.runPodSandbox ?? NaN));
    addStep(steps, 'sandbox returned → CreateContainer called', (c.createContainer ?? NaN) - (c.sandboxReturned ?? NaN));
    addStep(steps, 'CreateContainer + StartContainer (in containerd)', (c.startReturned ?? NaN) - (c.createContainer ?? NaN));
    addStep(steps, 'RunPodSandbox called → StartContainer returned (in containerd)', (c.startReturned ?? NaN) - (c.runPodSandbox ?? NaN));
  }
  return steps;
}

async function runFloor(cluster: KiteCluster, podsDir: string): Promise<FloorSamples> {
  const runtime = new CriRuntime({ endpoint: join(cluster.dataDir, 'node', 'containerd', 'containerd.sock') });
  try {
    await runtime.waitForReady(Date.now() + 10_000);
    // The floor's pods pile up as kite's do, so containerd carries the same load for both.
    return await measureFloor(runtime, { image: floorImage, podsDir, count: floorCount, cgroupRoot: floorCgroupRoot, namespace: floorNamespace, keepRunning: true });
  } finally {
    runtime.close();
  }
}

/** One side's measures: kite's pods, and (the first side only) the bare CRI floor on the same containerd. */
interface SideRun {
  side: Side;
  kite: KiteRun;
  loadAfterKite: string;
  kiteSteps: Steps;
  floor?: { run: FloorSamples; steps: Steps; kiteMs: number; containerdMs: number; loadAfter: string };
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** A fresh `kite up` with the timeline on or off; the floor too when asked. */
async function runSide(side: Side, withFloor: boolean): Promise<SideRun> {
  const dir = mkdtempSync(join(tmpdir(), `${bridge}-pod-`));
  const dataDir = join(dir, 'data');
  let cluster: KiteCluster | undefined;
  let client: Client | undefined;
  try {
    cluster = await startCluster({ dataDir, extraArgs: [...clusterArgs, ...sideArgs[side]] });
    client = await Client.fromKubeconfig(cluster.kubeconfig);
    const meters = cpuMeters(cluster);
    const kite = await runKite(client, meters, side);
    const loadAfterKite = load();
    let floor: SideRun['floor'];
    if (withFloor) {
      const floorRun = await cpuDuring(meters, () => runFloor(cluster!, join(dir, 'floor-pods')));
      floor = { run: floorRun.result, steps: {}, kiteMs: floorRun.kiteMs, containerdMs: floorRun.containerdMs, loadAfter: load() };
    }
    const logFile = join(cluster.dataDir, 'node', 'containerd', 'containerd.log');
    const kiteSteps = kiteBreakdown(kite.names, criStepsFromLog(logFile, ns));
    if (floor) floor.steps = floorBreakdown(criStepsFromLog(logFile, floorNamespace));
    return { side, kite, loadAfterKite, kiteSteps, floor };
  } finally {
    client?.close();
    await cluster?.stop();
    if (existsSync(dataDir)) resetCluster(dataDir);
    if (withFloor) {
      const left = await leftoverFloorCgroups();
      if (left.length) console.error(`measureFloor left pod cgroups behind: ${left.join(', ')}`);
      await removePodCgroups(floorCgroupRoot);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`bench/podstartup: ${podCount} pods one after another (busybox sleep), with the pod timeline on and off (a fresh kite up each), floor ${floorCount} bare CRI pods; ${new Date().toISOString()}`);
  console.log(`machine: ${cpus().length} CPUs, load average at start ${load()}\n`);
  const runs: SideRun[] = [];
  for (const side of sides) runs.push(await runSide(side, side === sides[0]));
  const floorSide = runs.find((r) => r.floor)!;
  const floor = floorSide.floor!;

  const samplesOf = (r: SideRun) => r.kite.names.map((n) => seenOf(n).running! - seenOf(n).sent!);
  console.log('| pod start-up | pods | p50 ms | p90 ms | p99 ms | max ms | load 1m/5m/15m after |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of runs) {
    const k = summarize(samplesOf(r));
    console.log(`| kite, timeline ${r.side}: create sent → Running seen on a watch | ${r.kite.names.length} | ${f0(k.p50)} | ${f0(k.p90)} | ${f0(k.p99)} | ${f0(k.max)} | ${r.loadAfterKite} |`);
  }
  const fl = summarize(floor.run.podStartMs);
  console.log(`| floor: RunPodSandbox called → StartContainer returned | ${floor.run.podStartMs.length} | ${f0(fl.p50)} | ${f0(fl.p90)} | ${f0(fl.p99)} | ${f0(fl.max)} | ${floor.loadAfter} |`);
  const runSandbox = summarize(floor.run.runPodSandboxMs);
  const createStart = summarize(floor.run.createStartMs);
  console.log(`| floor: RunPodSandbox | ${floor.run.runPodSandboxMs.length} | ${f0(runSandbox.p50)} | ${f0(runSandbox.p90)} | ${f0(runSandbox.p99)} | ${f0(runSandbox.max)} | |`);
  console.log(`| floor: CreateContainer + StartContainer | ${floor.run.createStartMs.length} | ${f0(createStart.p50)} | ${f0(createStart.p90)} | ${f0(createStart.p99)} | ${f0(createStart.max)} | |`);
  console.log('');
  for (const r of runs) console.log(`kite samples, timeline ${r.side}, in creation order (ms): ${samplesOf(r).map(f0).join(' ')}`);
  console.log(`floor samples in order (ms): ${floor.run.podStartMs.map(f0).join(' ')}`);
  for (const r of runs) {
    const k = summarize(samplesOf(r));
    console.log(`kite p50 (timeline ${r.side}) over the floor's p50: ${(((k.p50 - fl.p50) / fl.p50) * 100).toFixed(0)}% (aim: within 15%)`);
  }
  const [on, off] = [runs.find((r) => r.side === 'on')!, runs.find((r) => r.side === 'off')!];
  const p50on = summarize(samplesOf(on)).p50;
  const p50off = summarize(samplesOf(off)).p50;
  console.log(`timeline on over off, p50: ${(((p50on - p50off) / p50off) * 100).toFixed(1)}%\n`);

  console.log('| breakdown (per pod, wall clock) | timeline on median ms | on p90 ms | timeline off median ms | off p90 ms | pods | floor median ms | floor pods |');
  console.log('|---|---|---|---|---|---|---|---|');
  const p90 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 90);
  for (const [step, xs] of Object.entries(on.kiteSteps)) {
    const ox = off.kiteSteps[step] ?? [];
    const fx = floor.steps[step];
    console.log(`| ${step} | ${f0(median(xs))} | ${f0(p90(xs))} | ${f0(median(ox))} | ${f0(p90(ox))} | ${xs.length}/${ox.length} | ${fx ? f0(median(fx)) : ''} | ${fx?.length ?? ''} |`);
  }
  console.log('\n| CPU (ms, user + system) | kite up process | containerd |');
  console.log('|---|---|---|');
  for (const r of runs) console.log(`| per kite pod started, timeline ${r.side} | ${f0(r.kite.startCpu.kiteMs)} | ${f0(r.kite.startCpu.containerdMs)} |`);
  console.log(`| per floor pod (started and torn down) | ${f0(floor.kiteMs / floorCount)} | ${f0(floor.containerdMs / floorCount)} |`);
  for (const r of runs) console.log(`| per second, ${podCount} pods running, idle, timeline ${r.side} | ${f0(r.kite.idleCpu.kiteMs)} | ${f0(r.kite.idleCpu.containerdMs)} |`);
}

await main();
