// bench/api: create, get, list and watch delivery through the API server at a fixed offered load,
// and the same operations on the bare store in the same run, for SQLite and etcd.
//   node --import tsx bench/api.ts [--rate 2000] [--seconds 5] [--backends sqlite,etcd] [--rbac-bindings 10000]
// With --rbac-bindings N the API is measured twice: as system:masters (admin.kubeconfig, decided by the
// privileged-group authorizer) and as a token user whose rights come from a RoleBinding among N others
// (decided by RBAC), so the difference is what authorization costs per request.
// Needs `npm run build` first (the server runs as its own process, as in production).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from '../src/util/args.js';
import { RestClient } from '../src/client/rest.js';
import { loadKubeconfig } from '../src/client/kubeconfig.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import { EtcdStore } from '../src/storage/etcd/etcd-store.js';
import { startEtcd } from '../src/storage/testing/etcd-server.js';
import type { Store } from '../src/storage/store.js';
import { header, openLoop, percentile, processCpu, row, withCpu, type LoadResult } from './load.js';

const args = parseArgs(process.argv.slice(2));
const rate = Number(args.flags.get('rate') ?? 2000);
const seconds = Number(args.flags.get('seconds') ?? 5);
const backends = (args.flags.get('backends') ?? 'sqlite,etcd').split(',');
const kiteBin = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
const listSize = 100;
const rbacBindings = Number(args.flags.get('rbac-bindings') ?? 0);
const benchToken = 'bench-user-token';

function pod(name: string, namespace: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'bench' } },
    spec: {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:1.22',
          ports: [{ containerPort: 80 }],
          readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 5 },
        },
      ],
    },
  };
}

/** One set of operations, on the API or on the bare store. */
interface Ops {
  create(i: number): Promise<unknown>;
  get(i: number): Promise<unknown>;
  list(): Promise<unknown>;
  /** Starts a watch; calls seen(i) for each created object's event. Returns a stop function. */
  watch(seen: (i: number) => void): Promise<() => void>;
  seedList(): Promise<void>;
}

function storeOps(store: Store): Ops {
  const key = (i: number) => `/registry/pods/bench/p-${i}`;
  return {
    create: (i) => store.create(key(i), JSON.stringify(pod(`p-${i}`, 'bench'))),
    get: (i) => store.get(key(i)),
    list: () => store.list({ prefix: '/registry/pods/listed/' }),
    async seedList() {
      for (let i = 0; i < listSize; i++) await store.create(`/registry/pods/listed/l-${i}`, JSON.stringify(pod(`l-${i}`, 'listed')));
    },
    async watch(seen) {
      const abort = new AbortController();
      const rev = await store.currentRevision();
      store.watch({ prefix: '/registry/pods/bench/', afterRevision: rev, signal: abort.signal }, {
        event: (e) => seen(Number(e.kv.key.slice(e.kv.key.lastIndexOf('-') + 1))),
        end: () => undefined,
      });
      return () => abort.abort();
    },
  };
}

/** ops on the API; createNamespaces: false when the namespaces were made by an admin beforehand. */
function apiOps(rest: RestClient, createNamespaces = true): Ops {
  const base = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
  return {
    create: (i) => rest.request({ method: 'POST', path: base('bench'), body: pod(`p-${i}`, 'bench') }),
    get: (i) => rest.request({ path: `${base('bench')}/p-${i}` }),
    list: () => rest.request({ path: base('listed') }),
    async seedList() {
      if (createNamespaces) for (const ns of benchNamespaces) await createNamespace(rest, ns);
      for (let i = 0; i < listSize; i++) await rest.request({ method: 'POST', path: base('listed'), body: pod(`l-${i}`, 'listed') });
    },
    async watch(seen) {
      const abort = new AbortController();
      const list = await rest.request<{ metadata: { resourceVersion: string } }>({ path: base('bench') });
      void (async () => {
        for await (const e of rest.watch<{ metadata: { name: string } }>({ path: base('bench'), query: { watch: true, resourceVersion: list.metadata.resourceVersion }, signal: abort.signal })) {
          if (e.type === 'ADDED') seen(Number(e.object.metadata.name.slice(2)));
        }
      })();
      return () => abort.abort();
    },
  };
}

const benchNamespaces = ['bench', 'listed'];

async function createNamespace(rest: RestClient, name: string): Promise<void> {
  await rest.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
}

/**
 * The bench namespaces with the bench user bound to a pods role in each, and `count` RoleBindings of other
 * users to `view` spread over 100 namespaces (the bench namespaces among them), so RBAC looks its
 * user up among them.
 */
async function seedBindings(admin: RestClient, count: number): Promise<void> {
  const binding = (namespace: string, name: string, user: string, role: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  const others = Array.from({ length: 98 }, (_, i) => `rbac-${i}`);
  for (const ns of [...benchNamespaces, ...others]) await createNamespace(admin, ns);
  const namespaces = [...benchNamespaces, ...others];
  // Its own role: edit and view get their rules from the aggregation controller, which this server does not run.
  await admin.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'bench-pods' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create'] }] },
  });
  for (const ns of benchNamespaces) await admin.request({ method: 'POST', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, body: binding(ns, 'bench-pods', 'bench', 'bench-pods') });
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, (_, j) => {
        const ns = namespaces[(i + j) % namespaces.length]!;
        return admin.request({ method: 'POST', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, body: binding(ns, `viewer-${i + j}`, `user-${i + j}`, 'view') });
      }),
    );
  }
}

interface Measured {
  create: LoadResult;
  get: LoadResult;
  list: LoadResult;
  watch: LoadResult;
}

/** CPU milliseconds of the serving side: the server process, or this process for the bare store. */
type CpuMeter = () => number;

const selfCpu: CpuMeter = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function measure(ops: Ops, cpu: CpuMeter): Promise<Measured> {
  await ops.seedList();
  const sent = new Map<number, number>();
  const delivery: number[] = [];
  let firstSeen = 0;
  let lastSeen = 0;
  const stopWatch = await ops.watch((i) => {
    const t = performance.now();
    const s = sent.get(i);
    if (s === undefined) return;
    delivery.push(t - s);
    firstSeen ||= t;
    lastSeen = t;
  });
  const create = await withCpu(cpu, () =>
    openLoop(rate, seconds, (i) => {
      sent.set(i, performance.now());
      return ops.create(i);
    }),
  );
  const total = Math.round(rate * seconds);
  const deadline = performance.now() + 10_000;
  while (delivery.length < total - create.errors && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  stopWatch();
  delivery.sort((a, b) => a - b);
  const watch: LoadResult = {
    offered: rate,
    achieved: delivery.length / Math.max((lastSeen - firstSeen) / 1000, 1e-3),
    p50: percentile(delivery, 50),
    p99: percentile(delivery, 99),
    errors: total - create.errors - delivery.length,
    done: delivery.length,
  };
  const get = await withCpu(cpu, () => openLoop(rate, seconds, () => ops.get(Math.floor(Math.random() * (total - create.errors)))));
  const list = await withCpu(cpu, () => openLoop(Math.max(1, Math.round(rate / 20)), seconds, () => ops.list()));
  return { create, get, list, watch };
}

async function startKite(dataDir: string, store: string, tokenFile?: string): Promise<{ kubeconfig: string; pid: number; stop: () => Promise<void> }> {
  // The API server alone: the scheduler would add its own writes for every pod. Without the controllers
  // no `default` ServiceAccount appears, so ServiceAccount admission is off.
  const tokens = tokenFile ? ['--token-auth-file', tokenFile] : [];
  const proc = spawn(process.execPath, [kiteBin, 'server', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--store', store, '--components', 'apiserver', '--disable-admission-plugins', 'ServiceAccount', ...tokens], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, KITE_LOG_LEVEL: 'warn' },
  });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => /listening on/.test(d.toString()) && resolve());
    proc.once('exit', (code) => reject(new Error(`kite server exited with ${code}`)));
  });
  return {
    kubeconfig: join(dataDir, 'admin.kubeconfig'),
    pid: proc.pid!,
    stop: () => new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    }),
  };
}

function print(backend: string, layer: string, m: Measured): void {
  console.log(row(`${backend} ${layer} create`, m.create));
  console.log(row(`${backend} ${layer} get`, m.get));
  console.log(row(`${backend} ${layer} list (${listSize} pods)`, m.list));
  console.log(row(`${backend} ${layer} watch delivery`, m.watch));
}

async function main(): Promise<void> {
  console.log(`bench/api: offered ${rate}/s for ${seconds}s per operation (lists at ${Math.max(1, Math.round(rate / 20))}/s); latencies from the scheduled start\n`);
  console.log(header);
  for (const backend of backends) {
    const dir = mkdtempSync(join(tmpdir(), 'kite-bench-'));
    const etcd = backend === 'etcd' ? await startEtcd() : undefined;
    try {
      const bare: Store = etcd ? new EtcdStore({ endpoints: [etcd.endpoint], prefix: '/bare' }) : new SqliteStore(join(dir, 'bare.db'));
      print(backend, 'store', await measure(storeOps(bare), selfCpu));
      await bare.close();
      const tokenFile = join(dir, 'tokens.csv');
      writeFileSync(tokenFile, `${benchToken},bench,bench-uid,"bench-group"\n`);
      const store = etcd ? `etcd://${etcd.endpoint}` : 'sqlite';
      const server = await startKite(join(dir, 'kite'), store, tokenFile);
      const admin = await loadKubeconfig(server.kubeconfig);
      const rest = new RestClient(admin);
      print(backend, rbacBindings ? 'API system:masters' : 'API', await measure(apiOps(rest), processCpu(server.pid)));
      await server.stop();
      if (rbacBindings) {
        // A fresh server and store: the same pod counts, and N bindings besides the bench user's own.
        const rbacDir = join(dir, 'kite-rbac');
        const rbacServer = await startKite(rbacDir, etcd ? `etcd://${etcd.endpoint}/rbac` : 'sqlite', tokenFile);
        const rbacAdmin = new RestClient(await loadKubeconfig(rbacServer.kubeconfig));
        await seedBindings(rbacAdmin, rbacBindings);
        rbacAdmin.close();
        const user = new RestClient({ ...(await loadKubeconfig(rbacServer.kubeconfig)), token: benchToken, cert: undefined, key: undefined });
        print(backend, `API RBAC (${rbacBindings} bindings)`, await measure(apiOps(user, false), processCpu(rbacServer.pid)));
        user.close();
        await rbacServer.stop();
      }
      rest.close();
    } finally {
      await etcd?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

await main();
