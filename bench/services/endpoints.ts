// bench/services/endpoints: the EndpointSlice controller inside `kite server` against a `kite sim`
// cluster of S Services × E pods. Once every pod is Ready and in its Service's slice, and then
// marked not ready, the benchmark writes each pod's status Ready again (a strategic merge patch of
// the Ready condition, as a kubelet does), `--rate` pods a second, and times each from that write
// to its endpoint seen ready on a slice watch. Beside it, on a fresh cluster with the endpoint
// controllers off, the bare layer: the benchmark keeps one slice per Service itself from a pod
// watch (writes per Service in order, each with every change seen before it), the same Ready
// writes timed the same way — the store and the API, the ceiling for any controller.
//   node --import tsx bench/services/endpoints.ts [--services 1000] [--endpoints 10] [--nodes 100] [--rate 250] [--concurrency 32]
// Needs `npm run build` first: server and sim run from dist as their own processes.
import { cpus, loadavg } from 'node:os';
import { parseArgs } from '../../src/util/args.js';
import type { RestClient } from '../../src/client/rest.js';
import { follow, pool, until, withCluster, type Proc } from '../kite.js';
import { processCpu } from '../load.js';

const args = parseArgs(process.argv.slice(2));
const services = Number(args.flags.get('services') ?? 1000);
const perService = Number(args.flags.get('endpoints') ?? 10);
const nodes = Number(args.flags.get('nodes') ?? 100);
const concurrency = Number(args.flags.get('concurrency') ?? 32);
const rate = Number(args.flags.get('rate') ?? 250);
const ns = 'bench';
const TIMEOUT_MS = 900_000;
const pods = services * perService;

interface PodLike {
  metadata: { name: string; uid: string; resourceVersion?: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec?: { nodeName?: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

interface SliceLike {
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  endpoints?: { addresses: string[]; conditions?: { ready?: boolean }; targetRef?: { name?: string } }[];
}

interface Run {
  /** Ready → in the slice, ms, per pod. */
  latencies: number[];
  /** The Ready status writes' own round trips, ms. */
  writeMs: number[];
  spanS: number;
  serverCpuS: number;
}

/** Runs fn over 0..n-1, `concurrency` at a time. */
const serviceOf = (i: number) => `s-${Math.floor(i / perService)}`;

async function createServices(rest: RestClient): Promise<void> {
  await pool(services, concurrency, (i) =>
    rest.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/services`,
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: `s-${i}` }, spec: { selector: { svc: `s-${i}` }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
    }),
  );
}

async function createPods(rest: RestClient): Promise<void> {
  await pool(pods, concurrency, (i) =>
    rest.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${i}`, labels: { svc: serviceOf(i) } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10', ports: [{ name: 'http', containerPort: 8080 }], resources: { requests: { cpu: '10m', memory: '16Mi' } } }],
        },
      },
    }),
  );
}

/** Each pod's condition in the slices as last seen on the slice watch (name → ready). */
async function watchSlices(rest: RestClient, signal: AbortSignal, onReady: (name: string) => void): Promise<Map<string, boolean>> {
  const state = new Map<string, boolean>();
  const slicePath = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
  const list = await rest.request<{ metadata: { resourceVersion: string }; items: SliceLike[] }>({ path: slicePath });
  const seen = (s: SliceLike) => {
    for (const ep of s.endpoints ?? []) {
      const name = ep.targetRef?.name;
      if (!name) continue;
      const ready = !!ep.conditions?.ready;
      if (ready && state.get(name) !== true) onReady(name);
      state.set(name, ready);
    }
  };
  list.items.forEach(seen);
  void follow<SliceLike>(rest, slicePath, list.metadata.resourceVersion, (type, s) => type !== 'DELETED' && seen(s), signal);
  return state;
}

/** The pod's Ready (and ContainersReady) condition set by a strategic merge patch of its status, as a kubelet writes it. */
function setReady(rest: RestClient, name: string, ready: boolean): Promise<unknown> {
  const status = ready ? 'True' : 'False';
  const lastTransitionTime = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return rest.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns}/pods/${name}/status`,
    contentType: 'application/strategic-merge-patch+json',
    body: { status: { conditions: [{ type: 'Ready', status, lastTransitionTime }, { type: 'ContainersReady', status, lastTransitionTime }] } },
  });
}

/**
 * The timed part, the same for both runs: every pod Ready and in a slice (the warm-up), then every
 * pod marked not ready (until the slices say so), then each marked Ready again at `rate` per second:
 * from the status write to its endpoint seen ready in the slice.
 */
async function readyToSlice(rest: RestClient, server: Proc, signal: AbortSignal): Promise<Run> {
  const writtenAt = new Map<string, number>();
  const latencies: number[] = [];
  const writeMs: number[] = [];
  const state = await watchSlices(rest, signal, (name) => {
    const t = writtenAt.get(name);
    if (t !== undefined) {
      latencies.push(performance.now() - t);
      writtenAt.delete(name);
    }
  });
  const count = (ready: boolean) => [...state.values()].filter((r) => r === ready).length;
  await createPods(rest);
  await until(() => count(true) >= pods, TIMEOUT_MS, `${pods} ready endpoints (warm-up)`);
  await pool(pods, concurrency, (i) => setReady(rest, `p-${i}`, false));
  await until(() => count(false) >= pods, TIMEOUT_MS, `${pods} endpoints not ready`);

  const cpu = processCpu(server.proc.pid!);
  const cpu0 = cpu();
  const first = performance.now();
  const intervalMs = 1000 / rate;
  await pool(pods, concurrency, async (i) => {
    // Paced: pod i turns Ready at first + i / rate.
    const due = first + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    writtenAt.set(`p-${i}`, t0);
    await setReady(rest, `p-${i}`, true);
    writeMs.push(performance.now() - t0);
  });
  await until(() => latencies.length >= pods, TIMEOUT_MS, `${pods} endpoints ready again`);
  return { latencies: latencies.sort((a, b) => a - b), writeMs: writeMs.sort((a, b) => a - b), spanS: (performance.now() - first) / 1000, serverCpuS: (cpu() - cpu0) / 1000 };
}

/** The controllers: kite's EndpointSlice controller (and the Endpoints controller beside it). */
async function controller(): Promise<Run> {
  return withCluster({ nodes, namespace: ns }, async (rest, server, signal) => {
    await createServices(rest);
    return readyToSlice(rest, server, signal);
  });
}

/** The bare layer: the benchmark keeps one slice per Service itself, from a pod watch. */
async function bare(): Promise<Run> {
  return withCluster({ nodes, namespace: ns, serverArgs: ['--controllers', '*,-endpointslice-controller,-endpoints-controller'] }, async (rest, server, signal) => {
    await createServices(rest);
    const slicePath = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    const slices = new Map<string, { name: string; resourceVersion?: string; pods: Map<string, { ip: string; ready: boolean }> }>();
    await pool(services, concurrency, async (i) => {
      const name = `s-${i}-bench`;
      const body = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name, labels: { 'kubernetes.io/service-name': `s-${i}`, 'endpointslice.kubernetes.io/managed-by': 'bench' } },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [],
      };
      const created = await rest.request<SliceLike>({ method: 'POST', path: slicePath, body });
      slices.set(`s-${i}`, { name, resourceVersion: created.metadata.resourceVersion, pods: new Map() });
    });
    // Writes per Service go one after another, each with every change seen before it.
    const dirty = new Set<string>();
    const writing = new Set<string>();
    const write = async (svc: string): Promise<void> => {
      writing.add(svc);
      try {
        while (dirty.delete(svc)) {
          const slice = slices.get(svc)!;
          const endpoints = [...slice.pods].map(([name, p]) => ({ addresses: [p.ip], conditions: { ready: p.ready }, targetRef: { kind: 'Pod', namespace: ns, name } }));
          const body = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: slice.name, resourceVersion: slice.resourceVersion, labels: { 'kubernetes.io/service-name': svc, 'endpointslice.kubernetes.io/managed-by': 'bench' } }, addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }], endpoints };
          const next = await rest.request<SliceLike>({ method: 'PUT', path: `${slicePath}/${slice.name}`, body });
          slice.resourceVersion = next.metadata.resourceVersion;
        }
      } finally {
        writing.delete(svc);
      }
    };
    const podList = await rest.request<{ metadata: { resourceVersion: string } }>({ path: `/api/v1/namespaces/${ns}/pods` });
    void follow<PodLike>(
      rest,
      `/api/v1/namespaces/${ns}/pods`,
      podList.metadata.resourceVersion,
      (type, p) => {
        const svc = p.metadata.labels?.svc;
        const slice = svc ? slices.get(svc) : undefined;
        if (!svc || !slice || type === 'DELETED' || !p.status?.podIP) return;
        const ready = !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
        const before = slice.pods.get(p.metadata.name);
        if (before?.ready === ready && before.ip === p.status.podIP) return;
        slice.pods.set(p.metadata.name, { ip: p.status.podIP, ready });
        dirty.add(svc);
        if (!writing.has(svc)) void write(svc).catch((err: unknown) => console.error(`slice ${svc}: ${String(err)}`));
      },
      signal,
    );
    return readyToSlice(rest, server, signal);
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

async function main(): Promise<void> {
  console.log(`bench/services/endpoints: ${services} Services × ${perService} pods on ${nodes} simulated nodes; ${rate} pods turn Ready per second`);
  console.log(`machine: ${cpus().length} CPUs, load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
  const ceiling = await bare();
  console.error('done: bare');
  const ctrl = await controller();
  console.error('done: controller');
  console.log('| run | endpoints | Ready → in slice p50 ms | p99 ms | max ms | first Ready write → last in slice s | server CPU s | status write round trip p50 / p99 ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [name, r] of [
    ['slices written by the benchmark (bare layer)', ceiling],
    ['EndpointSlice controller', ctrl],
  ] as const) {
    console.log(`| ${name} | ${r.latencies.length} | ${f1(pct(r.latencies, 50))} | ${f1(pct(r.latencies, 99))} | ${f1(r.latencies.at(-1) ?? NaN)} | ${f1(r.spanS)} | ${f1(r.serverCpuS)} | ${f1(pct(r.writeMs, 50))} / ${f1(pct(r.writeMs, 99))} |`);
  }
}

await main();
