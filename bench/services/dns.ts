// bench/services/dns: cluster DNS (src/dns's ClusterDns, the class every agent runs) fed by a real
// `kite server` holding N Services, against a bare dns-packet UDP server answering one fixed A
// record (the ceiling: decode, encode, send, no cluster lookups), in the same run, both on
// 127.0.0.1. The load comes from a child process (this file again, so it takes no CPU from the
// servers' event loop): `inflight` queries kept outstanding on one UDP socket, each an A query for a
// random one of the Services' names. Besides the rates it prints the CPU the serving process spent
// per query, which a busy machine disturbs less than the rates.
//   node --import tsx bench/services/dns.ts [--services 1000] [--seconds 5] [--rounds 3] [--inflight 32]
// Needs `npm run build` first: the server runs from dist as its own process.
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import packet from 'dns-packet';
import { parseArgs } from '../../src/util/args.js';
import { Client } from '../../src/client/client.js';
import { SharedInformerFactory } from '../../src/client/factory.js';
import { ClusterDns } from '../../src/dns/cluster-dns.js';
import { realClock } from '../../src/util/clock.js';
import { spawnKite, type Proc } from '../kite.js';
import { percentile } from '../load.js';

interface LoadJob {
  port: number;
  services: number;
  namespace: string;
  seconds: number;
  inflight: number;
}

const loadJobEnv = 'KITE_BENCH_DNS_LOAD';
const serviceName = (i: number, ns: string) => `svc-${i}.${ns}.svc.cluster.local`;

interface LoadReport {
  done: number;
  errors: number;
  wrong: number;
  seconds: number;
  /** Sorted latencies in ms. */
  latencies: number[];
  /** CPU µs the serving process spent during the run (set by runLoad). */
  cpuUs?: number;
}

/** The load process: keeps `inflight` queries outstanding for `seconds`; a query unanswered for 1 s counts as an error. */
async function generateLoad(job: LoadJob): Promise<LoadReport> {
  const names = Array.from({ length: job.services }, (_, i) => serviceName(i, job.namespace));
  const queries = names.map((name) => packet.encode({ type: 'query', id: 0, flags: packet.RECURSION_DESIRED, questions: [{ type: 'A', name, class: 'IN' }] }));
  const sock = createSocket('udp4');
  const pending = new Map<number, number>();
  const latencies: number[] = [];
  let errors = 0;
  let wrong = 0;
  let nextId = 1;
  const start = performance.now();
  const end = start + job.seconds * 1000;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const send = () => {
    if (performance.now() >= end) {
      if (pending.size === 0) finish();
      return;
    }
    const id = nextId;
    nextId = nextId === 65535 ? 1 : nextId + 1;
    const q = queries[Math.floor(Math.random() * queries.length)]!;
    q.writeUInt16BE(id, 0);
    pending.set(id, performance.now());
    sock.send(q, job.port, '127.0.0.1');
  };
  sock.on('message', (msg) => {
    const id = msg.readUInt16BE(0);
    const sent = pending.get(id);
    if (sent === undefined) return;
    pending.delete(id);
    latencies.push(performance.now() - sent);
    // NOERROR with one answer, or it does not count as served.
    if ((msg[3]! & 0x0f) !== 0 || msg.readUInt16BE(6) !== 1) wrong++;
    send();
  });
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [id, sent] of pending) {
      if (now - sent < 1000) continue;
      pending.delete(id);
      errors++;
      send();
    }
    if (now >= end && pending.size === 0) finish();
  }, 100);
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  for (let i = 0; i < job.inflight; i++) send();
  await finished;
  clearInterval(sweep);
  sock.close();
  return { done: latencies.length, errors, wrong, seconds: (performance.now() - start) / 1000, latencies: latencies.sort((a, b) => a - b) };
}

/** A load run against job.port, with the CPU this process (where both servers run) spent meanwhile. */
async function runLoad(job: LoadJob): Promise<LoadReport> {
  const cpu0 = process.cpuUsage();
  const report = await new Promise<LoadReport>((resolve, reject) => {
    const env = { ...process.env, [loadJobEnv]: JSON.stringify(job) };
    execFile(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], { env, maxBuffer: 256 * 1024 * 1024 }, (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout) as LoadReport),
    );
  });
  const cpu = process.cpuUsage(cpu0);
  return { ...report, cpuUs: cpu.user + cpu.system };
}

/** The ceiling: answers every query with one fixed A record, on the same library. */
async function bareServer(): Promise<{ port: number; close(): void }> {
  const sock = createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    let q: ReturnType<typeof packet.decode>;
    try {
      q = packet.decode(msg);
    } catch {
      return;
    }
    const out = packet.encode({
      id: q.id,
      type: 'response',
      flags: packet.AUTHORITATIVE_ANSWER | ((q.flags ?? 0) & packet.RECURSION_DESIRED),
      questions: q.questions,
      answers: [{ name: q.questions![0]!.name, type: 'A', class: 'IN', ttl: 5, data: '10.96.0.42' }],
    });
    sock.send(out, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', resolve));
  return { port: sock.address().port, close: () => sock.close() };
}

/** Creates the Services, `concurrency` at a time. */
async function createServices(client: Client, ns: string, count: number, concurrency = 32): Promise<void> {
  const services = client.resource('services').namespace(ns);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        await services.create({ metadata: { name: `svc-${i}` }, spec: { selector: { app: `svc-${i}` }, ports: [{ name: 'http', port: 80 }] } });
      }
    }),
  );
}

/** Rounds of one server as one run. */
function merge(rs: LoadReport[]): LoadReport {
  return {
    done: rs.reduce((n, r) => n + r.done, 0),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    wrong: rs.reduce((n, r) => n + r.wrong, 0),
    seconds: rs.reduce((t, r) => t + r.seconds, 0),
    latencies: rs.flatMap((r) => r.latencies).sort((a, b) => a - b),
    cpuUs: rs.reduce((t, r) => t + (r.cpuUs ?? 0), 0),
  };
}

function row(name: string, r: LoadReport): string {
  const rate = r.done / r.seconds;
  return `| ${name} | ${Math.round(rate)} | ${percentile(r.latencies, 50).toFixed(2)} | ${percentile(r.latencies, 99).toFixed(2)} | ${((r.cpuUs ?? 0) / r.done).toFixed(1)} | ${r.errors} | ${r.wrong} |`;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const count = Number(args.flags.get('services') ?? 1000);
  const seconds = Number(args.flags.get('seconds') ?? 5);
  const inflight = Number(args.flags.get('inflight') ?? 32);
  const rounds = Number(args.flags.get('rounds') ?? 3);
  const ns = 'bench';
  const dir = mkdtempSync(join(tmpdir(), 'kite-bench-dns-'));
  let server: Proc | undefined;
  let client: Client | undefined;
  let informers: SharedInformerFactory | undefined;
  let dns: ClusterDns | undefined;
  const bare = await bareServer();
  try {
    server = await spawnKite(['server', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0'], /listening on (https:\/\/\S+)/);
    client = await Client.fromKubeconfig(join(dir, 'data', 'admin.kubeconfig'));
    await client.resource('namespaces').create({ metadata: { name: ns } });
    const t0 = performance.now();
    await createServices(client, ns, count);
    console.error(`${count} Services created in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    informers = new SharedInformerFactory({ client, clock: realClock });
    dns = new ClusterDns({ informers, address: '127.0.0.1', port: 0, clock: realClock });
    await dns.start();
    const job = { services: count, namespace: ns, inflight };
    // A short warm-up of each, then the measured runs, bare first.
    await runLoad({ ...job, port: bare.port, seconds: 1 });
    await runLoad({ ...job, port: dns.port, seconds: 1 });
    // Rounds alternate the two servers, so a change in the machine's load hits both alike.
    const ceiling: LoadReport[] = [];
    const cluster: LoadReport[] = [];
    for (let i = 0; i < rounds; i++) {
      ceiling.push(await runLoad({ ...job, port: bare.port, seconds }));
      cluster.push(await runLoad({ ...job, port: dns.port, seconds }));
    }
    console.log(`cluster DNS with ${count} Services, ${inflight} queries in flight, ${rounds} rounds of ${seconds} s each (A queries for random Services)\n`);
    console.log('| server | queries/s | p50 ms | p99 ms | server CPU µs/query | timeouts | wrong answers |\n|---|---|---|---|---|---|---|');
    console.log(row('bare dns-packet server (fixed record)', merge(ceiling)));
    console.log(row('cluster DNS (ClusterDns)', merge(cluster)));
    const rate = (rs: LoadReport[]) => rs.reduce((n, r) => n + r.done, 0) / rs.reduce((t, r) => t + r.seconds, 0);
    const cpuPerQuery = (r: LoadReport) => (r.cpuUs ?? 0) / r.done;
    console.log(`\ncluster DNS at ${((100 * rate(cluster)) / rate(ceiling)).toFixed(0)} % of the bare server's rate, ${((100 * cpuPerQuery(merge(ceiling))) / cpuPerQuery(merge(cluster))).toFixed(0)} % of its queries per CPU second`);
  } finally {
    await dns?.stop();
    await informers?.shutdown();
    client?.close();
    bare.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const loadJob = process.env[loadJobEnv];
if (loadJob) process.stdout.write(JSON.stringify(await generateLoad(JSON.parse(loadJob) as LoadJob)));
else await main();
