// bench/controllers: the Deployment and ReplicaSet controllers inside `kite server` against a
// `kite sim` cluster: a Deployment of N replicas from create to every pod Ready, then a full
// rolling update (a template change) to every new pod available; beside it, on a fresh cluster,
// the same pods created directly by the benchmark (the ceiling: no controller in the path).
//   node --import tsx bench/controllers.ts [--nodes 500] [--replicas 3000] [--concurrency 64]
// Needs `npm run build` first: server and sim run from dist as their own processes.
//
// It reports per run: seconds from the first create to the last pod seen Ready (one pod watch),
// seconds of the rolling update (patch sent → status updated = available = replicas at the new
// generation), and the `kite server` process's CPU seconds over each span (API server, scheduler
// and controllers share it; the difference to the direct run is what the controllers cost).
import { cpus, loadavg } from 'node:os';
import { parseArgs } from '../src/util/args.js';
import type { RestClient } from '../src/client/rest.js';
import { follow, pool, until, withCluster } from './kite.js';
import { processCpu } from './load.js';

const args = parseArgs(process.argv.slice(2));
const nodes = Number(args.flags.get('nodes') ?? 500);
const replicas = Number(args.flags.get('replicas') ?? 3000);
const concurrency = Number(args.flags.get('concurrency') ?? 64);
const ns = 'bench';
const TIMEOUT_MS = 600_000;

const template = (image: string) => ({
  metadata: { labels: { app: 'bench' } },
  spec: {
    terminationGracePeriodSeconds: 1,
    containers: [{ name: 'main', image, resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
  },
});

interface PodLike {
  metadata: { name: string; resourceVersion?: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status?: { conditions?: { type: string; status: string }[] };
}

interface DeploymentLike {
  metadata: { name: string; generation?: number; resourceVersion?: string };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

interface Run {
  readyS: number;
  ready: number;
  serverCpuS: number;
  rolloutS?: number;
  rolloutCpuS?: number;
}

/** Counts the namespace's live Ready pods on one watch. */
async function watchReady(rest: RestClient, signal: AbortSignal): Promise<{ ready: () => number; lastReadyAt: () => number; done: Promise<void> }> {
  const readySet = new Set<string>();
  let last = 0;
  const list = await rest.request<{ metadata: { resourceVersion: string } }>({ path: `/api/v1/namespaces/${ns}/pods` });
  const done = follow<PodLike>(
    rest,
    `/api/v1/namespaces/${ns}/pods`,
    list.metadata.resourceVersion,
    (type, p) => {
      const ready = type !== 'DELETED' && !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      if (ready && !readySet.has(p.metadata.name)) {
        readySet.add(p.metadata.name);
        last = performance.now();
      } else if (!ready) readySet.delete(p.metadata.name);
    },
    signal,
  );
  return { ready: () => readySet.size, lastReadyAt: () => last, done };
}

/** The ceiling: the benchmark itself creates the pods, `concurrency` at a time. */
async function direct(): Promise<Run> {
  return withCluster({ nodes, namespace: ns }, async (rest, server, signal) => {
    const watch = await watchReady(rest, signal);
    const cpu = processCpu(server.proc.pid!);
    const cpu0 = cpu();
    const t = template('registry.k8s.io/pause:3.10');
    const first = performance.now();
    await pool(replicas, concurrency, (i) =>
      rest.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: { apiVersion: 'v1', kind: 'Pod', metadata: { ...t.metadata, name: `p-${i}` }, spec: t.spec } }),
    );
    await until(() => watch.ready() >= replicas, TIMEOUT_MS, `${replicas} pods Ready (direct)`);
    return { readyS: (watch.lastReadyAt() - first) / 1000, ready: watch.ready(), serverCpuS: (cpu() - cpu0) / 1000 };
  });
}

/** The Deployment: create to every pod Ready, then a rolling update to every new pod available. */
async function deployment(): Promise<Run> {
  return withCluster({ nodes, namespace: ns }, async (rest, server, signal) => {
    const watch = await watchReady(rest, signal);
    let d: DeploymentLike | undefined;
    const dPath = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const list = await rest.request<{ metadata: { resourceVersion: string } }>({ path: dPath });
    void follow<DeploymentLike>(rest, dPath, list.metadata.resourceVersion, (type, obj) => (d = type === 'DELETED' ? undefined : obj), signal);

    const cpu = processCpu(server.proc.pid!);
    const cpu0 = cpu();
    const first = performance.now();
    await rest.request({
      method: 'POST',
      path: dPath,
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bench' }, spec: { replicas, selector: { matchLabels: { app: 'bench' } }, template: template('registry.k8s.io/pause:3.10') } },
    });
    await until(() => watch.ready() >= replicas, TIMEOUT_MS, `${replicas} pods Ready (deployment)`);
    const readyS = (watch.lastReadyAt() - first) / 1000;
    const serverCpuS = (cpu() - cpu0) / 1000;
    const ready = watch.ready();

    // A template change: every pod is replaced within maxSurge / maxUnavailable (25 %).
    const cpu1 = cpu();
    const start = performance.now();
    const patched = await rest.request<DeploymentLike>({
      method: 'PATCH',
      path: `${dPath}/bench`,
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { template: { metadata: { annotations: { 'bench/rollout': '2' } } } } },
    });
    const generation = patched.metadata.generation ?? 0;
    const rolledOut = () => {
      const s = d?.status;
      return !!s && (s.observedGeneration ?? 0) >= generation && s.updatedReplicas === replicas && s.replicas === replicas && s.availableReplicas === replicas;
    };
    await until(rolledOut, TIMEOUT_MS, 'the rolling update');
    return { readyS, ready, serverCpuS, rolloutS: (performance.now() - start) / 1000, rolloutCpuS: (cpu() - cpu1) / 1000 };
  });
}

const f1 = (n: number | undefined) => (n !== undefined && Number.isFinite(n) ? n.toFixed(1) : '-');

async function main(): Promise<void> {
  console.log(`bench/controllers: ${replicas} replicas on ${nodes} simulated nodes; direct pods created ${concurrency} at a time`);
  console.log(`machine: ${cpus().length} CPUs, load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  const ceiling = await direct();
  console.error('done: direct');
  const dep = await deployment();
  console.error('done: deployment');
  const perPodMs = (cpuS: number) => ((cpuS * 1000) / replicas).toFixed(2);
  console.log('| run | create → all Ready s | Ready pods | server CPU s | server CPU ms/pod | rolling update s | rolling update server CPU s |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(`| pods created directly (ceiling) | ${f1(ceiling.readyS)} | ${ceiling.ready} | ${f1(ceiling.serverCpuS)} | ${perPodMs(ceiling.serverCpuS)} | | |`);
  console.log(`| Deployment | ${f1(dep.readyS)} | ${dep.ready} | ${f1(dep.serverCpuS)} | ${perPodMs(dep.serverCpuS)} | ${f1(dep.rolloutS)} | ${f1(dep.rolloutCpuS)} |`);
  console.log(`\nDeployment / ceiling: ${(dep.readyS / ceiling.readyS).toFixed(2)}× the time; controllers' extra server CPU ${perPodMs(dep.serverCpuS - ceiling.serverCpuS)} ms per pod`);
}

await main();
