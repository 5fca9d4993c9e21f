// bench/services/proxy: the node's service proxy (src/proxy) at scale, on real nftables in a
// throwaway network namespace (nothing on the host changes): `kite server` holds S Services of E
// endpoints each (selectorless, their EndpointSlices written here); the proxier runs in this
// process on informers, as in an agent.
//   node --import tsx bench/services/proxy.ts [--services 1000] [--endpoints 10] [--changes 200]
// Needs root (ip netns) and `npm run build` (kite server runs from dist).
//
// It reports: the full sync (the whole table in one transaction: planning + nft) at start and on
// restarts, beside the bare layer (the same prepared script given to one `nft -f`); and, for
// `changes` slice updates one after another (an endpoint's ready flag flipped), the time from the
// update request to the proxy's rules being in the kernel (its partial sync applied), p50/p99,
// beside the bare layer (the same partial script given to `nft -f`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from '../../src/util/args.js';
import { Client } from '../../src/client/client.js';
import { realClock } from '../../src/util/clock.js';
import { newLogger } from '../../src/util/log.js';
import type { EndpointSlice, Service } from '../../src/api/types.js';
import { NftCommand } from '../../src/proxy/nftables.js';
import { Proxier, type SyncInfo } from '../../src/proxy/proxier.js';
import { fullScript, partialScript, planService, type ProxyNode } from '../../src/proxy/plan.js';
import { pool, spawnKite, until } from '../kite.js';

const args = parseArgs(process.argv.slice(2));
const services = Number(args.flags.get('services') ?? 1000);
const endpoints = Number(args.flags.get('endpoints') ?? 10);
const changes = Number(args.flags.get('changes') ?? 200);
const netns = 'kite-px-bench';
const ns = 'bench';
const node: ProxyNode = { nodeName: 'bench-node-0', bridge: 'kite-pxb', gateway: '10.217.240.1', serviceCIDR: '10.96.0.0/12', clusterCIDR: '10.217.0.0/16' };

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x: number) => `${x.toFixed(1)} ms`;

function sliceFor(i: number, flip = -1): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `svc-${i}-bench`, namespace: ns, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: endpoints }, (_, e) => {
      const n = i * endpoints + e;
      return { addresses: [`10.217.${n >> 8 & 255}.${n & 255}`], nodeName: `bench-node-${e % 10}`, conditions: { ready: e !== flip } };
    }),
  };
}

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function main(): Promise<void> {
  console.log(`bench/services/proxy: ${services} Services x ${endpoints} endpoints, ${changes} slice changes; ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  execFileSync('ip', ['netns', 'add', netns]);
  const dir = mkdtempSync(join(tmpdir(), 'kite-bench-proxy-'));
  const server = await spawnKite(['server', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0'], /listening on (https:\/\/\S+)/);
  const client = await Client.fromKubeconfig(join(dir, 'data', 'admin.kubeconfig'));
  const nft = new NftCommand({ netns });
  try {
    await client.resource('namespaces').create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const svcs = client.resource('services').namespace(ns);
    const slices = client.resource('endpointslices.discovery.k8s.io').namespace(ns);
    const t0 = performance.now();
    await pool(services, 32, (i) => svcs.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}` }, spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } }));
    await pool(services, 32, (i) => slices.create(sliceFor(i)));
    console.log(`created ${services} Services and EndpointSlices in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    const syncs: SyncInfo[] = [];
    const start = async () => {
      const p = new Proxier({ client, node, nft, clock: realClock, logger: newLogger('bench'), minSyncIntervalMs: 0, onSync: (s) => syncs.push(s) });
      await p.start();
      return p;
    };
    // Full syncs: a fresh proxier each time (its first sync rewrites the table).
    const full: number[] = [];
    let proxier = await start();
    full.push(syncs.at(-1)!.durationMs);
    for (let r = 0; r < 2; r++) {
      await proxier.stop();
      proxier = await start();
      full.push(syncs.at(-1)!.durationMs);
    }
    const fullBytes = syncs.at(-1)!.scriptBytes;

    // Slice changes, one after another: request sent → partial sync including the Service applied.
    const latency: number[] = [];
    const syncMs: number[] = [];
    const flipped = new Map<number, number>();
    for (let c = 0; c < changes; c++) {
      const i = (c * 7919) % services;
      const flip = flipped.get(i) === 0 ? -1 : 0;
      flipped.set(i, flip);
      const cur = await slices.get(`svc-${i}-bench`);
      const key = `${ns}/svc-${i}`;
      const n = syncs.length;
      const t = performance.now();
      await slices.update({ ...sliceFor(i, flip), metadata: { ...sliceFor(i).metadata, resourceVersion: cur.metadata?.resourceVersion } });
      if (!(await until(() => syncs.slice(n).some((s) => s.services.includes(key)), 10_000, `the sync of ${key}`))) break;
      latency.push(performance.now() - t);
      syncMs.push(syncs.slice(n).find((s) => s.services.includes(key))!.durationMs);
    }
    await proxier.stop();

    // The bare layer: the same scripts, prepared, given to nft directly.
    const svcList = (await svcs.list()).items as Service[];
    const sliceList = (await slices.list()).items as EndpointSlice[];
    const plans = svcList.map((s) => planService(s, sliceList.filter((x) => x.metadata?.labels?.['kubernetes.io/service-name'] === s.metadata?.name), node)!);
    const script = fullScript(node, plans);
    const bareFull: number[] = [];
    for (let r = 0; r < 3; r++) bareFull.push(await timeIt(() => nft.apply(script)));
    const bare: number[] = [];
    const svc0 = svcList.find((s) => s.metadata?.name === 'svc-0')!;
    let state = plans[svcList.indexOf(svc0)];
    let flip0 = flipped.get(0) ?? -1;
    for (let c = 0; c < Math.min(changes, 100); c++) {
      flip0 = flip0 === 0 ? -1 : 0;
      const next = planService(svc0, [sliceFor(0, flip0)], node)!;
      const part = partialScript(node, [{ old: state, next }]);
      bare.push(await timeIt(() => nft.apply(part)));
      state = next;
    }

    console.log(`full sync (planning + one nft transaction of ${(fullBytes / 1e6).toFixed(1)} MB): ${full.map(ms).join(', ')}`);
    console.log(`  bare: the same script, one nft -f:            ${bareFull.map(ms).join(', ')}`);
    console.log(`slice change -> rules in the kernel (n=${latency.length}): p50 ${ms(pct(latency, 50))}, p99 ${ms(pct(latency, 99))}, max ${ms(Math.max(...latency))}`);
    console.log(`  of which the partial sync (plan + nft):      p50 ${ms(pct(syncMs, 50))}, p99 ${ms(pct(syncMs, 99))}`);
    console.log(`  bare: the same partial script, one nft -f:   p50 ${ms(pct(bare, 50))}, p99 ${ms(pct(bare, 99))}`);
  } finally {
    client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    execFileSync('ip', ['netns', 'del', netns]);
  }
}

await main();
