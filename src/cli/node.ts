// The node commands: `kite agent` joins a cluster as a node, `kite up` runs a whole cluster on this
// machine (API server + its local registry + one agent), `kite reset` removes everything they made,
// `kite images` builds the local images into a registry.
import { readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { isIP } from 'node:net';
import { ApiServer } from '../apiserver/server.js';
import { joinTokenFile } from '../apiserver/bootstrap.js';
import { Agent } from '../agent/agent.js';
import type { AgentThreadMessage, AgentThreadOptions } from '../agent/worker.js';
import { Worker } from 'node:worker_threads';
import { containerdDir, readNodeRecord, resetNodeHost } from '../agent/node-runtime.js';
import { Registry, ensureImages, imagesCommand } from '../images/index.js';
import { Containerd } from '../kubelet/containerd/containerd.js';
import { CriRuntime } from '../kubelet/runtime/cri/client.js';
import { isNotFound } from '../kubelet/runtime/types.js';
import { resolvePodNetwork, type PodNetworkOptions } from '../kubelet/network/cni.js';
import { gatewayOf } from '../kubelet/network/bridge.js';
import { isOwnCgroupRoot } from '../kubelet/cm/cgroups.js';
import type { KubeletConfig } from '../kubelet/config.js';
import { parseKubeletConfiguration } from '../kubelet/configfile.js';
import { parseUpstream, type Upstream } from '../dns/server.js';
import { realClock } from '../util/clock.js';
import { newLogger, type Logger } from '../util/log.js';
import { checkFlags, parseArgs, type ParsedArgs } from '../util/args.js';
import { serverFlags, serverOptions } from './server.js';

export const nodeUsage = `  agent    Join a cluster as a node: TLS bootstrap with a join token, containerd, the kubelet.
           --server URL                the API server (required)
           --token TOKEN               a bootstrap token (the server's DATA/join-token); needed for the first join
           --ca-file FILE              the cluster CA (default: discovered from cluster-info with the token)
           --data-dir DIR              the node's state (required)
           --node-name NAME            default: this host's name
           --node-ip IP                the node's address; the kubelet listens there (default 127.0.0.1)
           --kubelet-port PORT         the kubelet's HTTPS port (default 10250; 0 picks one)
           --registry HOST:PORT        the local registry containerd pulls images from (required without --cri-endpoint)
           --cri-endpoint PATH         use this running CRI runtime instead of starting containerd
           --bridge NAME --pod-cidr CIDR   the pod network's bridge and subnet (default kite0, 10.217.0.0/24)
           --cgroup-root PATH          where pod cgroups go (default /kubepods)
           --cluster-dns IP[,IP]       the nameservers of ClusterFirst pods (default 10.96.0.10, the kube-dns Service)
           --cluster-domain DOMAIN     the cluster's DNS domain (default cluster.local)
           --config FILE               a KubeletConfiguration (kubelet.config.k8s.io/v1beta1): maxPods, clusterDNS, clusterDomain,
                                       containerLogMaxSize/Files, crashLoopBackOff.maxContainerRestartPeriod,
                                       imageGCHigh/LowThresholdPercent, imageMinimum/MaximumGCAge,
                                       shutdownGracePeriod(CriticalPods) (then a stop terminates the pods first), ...
           --cluster-dns-upstream IP[:PORT]  where the node's cluster DNS sends names outside the cluster domain
                                       (default: none, they get SERVFAIL)
  up       Bring up a cluster on this machine: the API server (server flags), its image registry, and an agent.
           --node-name, --kubelet-port, --bridge, --pod-cidr, --cgroup-root, --cluster-dns, --cluster-domain, --config, --cluster-dns-upstream as for agent
           --image-cache DIR           where built images are kept (default ~/.cache/kite/images)
  reset    Remove every pod, sandbox, cgroup, bridge and file that up or agent made.
           --data-dir DIR              (required)
  images   Build the local images and push them into a registry under DATA/registry.
           --data-dir DIR --image-cache DIR --port PORT
`;

const agentNodeFlags = ['node-name', 'kubelet-port', 'bridge', 'pod-cidr', 'cgroup-root', 'cluster-dns', 'cluster-domain', 'config', 'cluster-dns-upstream'];

/** --cgroup-root: a folder of its own below the hierarchy's root, which `kite reset` can remove again. */
function cgroupRootFlag(args: ParsedArgs): string | undefined {
  const v = args.flags.get('cgroup-root');
  if (v !== undefined && !isOwnCgroupRoot(v)) throw new Error(`--cgroup-root must be an absolute path below /, not ${JSON.stringify(v)}`);
  return v;
}

function upstreamFlag(args: ParsedArgs): Upstream | undefined {
  const v = args.flags.get('cluster-dns-upstream');
  return v === undefined ? undefined : parseUpstream(v);
}
function networkOptions(args: ParsedArgs): PodNetworkOptions {
  const bridge = args.flags.get('bridge');
  const subnet = args.flags.get('pod-cidr');
  // Each bridge is its own CNI network, so two agents on one machine keep separate IPAM state.
  return { ...(bridge ? { bridge, name: `kite-${bridge}` } : {}), ...(subnet ? { subnet } : {}) };
}

/** The --config file's settings with the kubelet flags laid over them (flags win, as upstream's). */
async function kubeletConfigFlags(args: ParsedArgs): Promise<Partial<KubeletConfig>> {
  const file = args.flags.get('config');
  const out = file === undefined ? {} : parseKubeletConfiguration(await readFile(file, 'utf8'), file);
  const dns = args.flags.get('cluster-dns');
  if (dns !== undefined) {
    const servers = dns.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = servers.find((s) => isIP(s) === 0);
    if (bad !== undefined) throw new Error(`--cluster-dns: "${bad}" is not an IP address`);
    out.clusterDNS = servers;
  }
  const domain = args.flags.get('cluster-domain');
  if (domain !== undefined) out.clusterDomain = domain.replace(/\.$/, '');
  return out;
}

function portFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--${name} must be a port number, not "${v}"`);
  return n;
}

function onSignals(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

export async function agentCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, ['server', 'token', 'ca-file', 'data-dir', 'node-ip', 'registry', 'cri-endpoint', ...agentNodeFlags]);
  const server = args.flags.get('server');
  const dataDir = args.flags.get('data-dir');
  if (!server) throw new Error('--server is required');
  if (!dataDir) throw new Error('--data-dir is required');
  const registry = args.flags.get('registry');
  if (!registry && !args.flags.get('cri-endpoint')) throw new Error('--registry is required unless --cri-endpoint names a runtime');
  const logger = newLogger('kubelet');
  const agent = new Agent({
    server,
    token: args.flags.get('token'),
    caFile: args.flags.get('ca-file'),
    dataDir: resolve(dataDir),
    nodeName: args.flags.get('node-name'),
    nodeIP: args.flags.get('node-ip'),
    kubeletPort: portFlag(args, 'kubelet-port'),
    criEndpoint: args.flags.get('cri-endpoint'),
    registryHost: registry ?? '',
    network: networkOptions(args),
    cgroupRoot: cgroupRootFlag(args),
    kubeletConfig: await kubeletConfigFlags(args),
    clusterDnsUpstream: upstreamFlag(args),
    clock: realClock,
    logger,
  });
  onSignals(logger, () => agent.stop());
  await agent.start();
  process.stdout.write(`node ${agent.nodeName} joined (kubelet on ${args.flags.get('node-ip') ?? '127.0.0.1'}:${agent.kubeletPort})\n`);
}

export async function upCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, [...serverFlags, ...agentNodeFlags, 'image-cache']);
  const logger = newLogger('kite');
  const opts = serverOptions(args, logger);
  // Pods reach the API server at their node's gateway (the bridge's address), where it listens too.
  opts.advertiseAddress ??= gatewayOf(resolvePodNetwork(networkOptions(args)).subnet);
  const dataDir = opts.dataDir;
  const kubeletConfig = await kubeletConfigFlags(args);
  const clusterDnsUpstream = upstreamFlag(args);
  const server = new ApiServer(opts);
  const registry = new Registry({ dataDir: join(dataDir, 'registry') });
  // The agent exists only once the server is up; a signal before that stops the server alone.
  const node: { thread?: AgentThread } = {};
  onSignals(logger, async () => {
    await node.thread?.stop();
    await server.stop();
  });
  await server.start();
  process.stdout.write(`kite API server listening on ${server.url}\nkubeconfig: ${server.kubeconfigPath}\n`);

  await registry.start();
  process.stdout.write(`registry: ${registry.host}\n`);
  await ensureImages({ cacheDir: resolve(args.flags.get('image-cache') ?? join(homedir(), '.cache', 'kite', 'images')), registry });
  // The node joins like any other: with the join token, over HTTPS, trusting the cluster CA.
  node.thread = startAgentThread({
    server: server.url,
    token: (await readFile(joinTokenFile(dataDir), 'utf8')).trim(),
    caFile: join(dataDir, 'pki', 'ca.crt'),
    dataDir: join(dataDir, 'node'),
    nodeName: args.flags.get('node-name'),
    kubeletPort: portFlag(args, 'kubelet-port'),
    registryHost: registry.host,
    network: networkOptions(args),
    cgroupRoot: cgroupRootFlag(args),
    kubeletConfig,
    clusterDnsUpstream,
    // --pod-timeline=false: the kubelet records nothing either.
    podTimeline: opts.podTimeline?.enabled !== false,
  }, (err) => {
    logger.error({ err }, 'the node agent thread died; stopping');
    void server.stop().finally(() => process.exit(1));
  });
  const joined = await node.thread.joined;
  process.stdout.write(`node ${joined.nodeName} joined (kubelet on 127.0.0.1:${joined.kubeletPort})\n`);
}

interface AgentThread {
  joined: Promise<{ nodeName: string; kubeletPort: number }>;
  /** The kubelet stops (containers keep running), then the thread ends. */
  stop(): Promise<void>;
}

/**
 * `kite up`'s agent on a worker thread, so the kubelet and the API server each have an event loop.
 * A thread that dies after joining (an uncaught error) is reported through onDied, as a crashed
 * kubelet process would be seen, rather than leaving a node that silently stopped heartbeating.
 */
function startAgentThread(options: AgentThreadOptions, onDied: (err: Error) => void): AgentThread {
  const worker = new Worker(new URL('../agent/worker.js', import.meta.url), { workerData: options });
  let failure: Error | undefined;
  let exited = false;
  let stopping = false;
  worker.on('error', (err) => (failure = err));
  const exit = new Promise<Error>((resolve) =>
    worker.once('exit', (code) => {
      exited = true;
      resolve(failure ?? new Error(`the agent thread exited with ${code}`));
    }),
  );
  let up = false;
  const joined = new Promise<{ nodeName: string; kubeletPort: number }>((resolve, reject) => {
    worker.on('message', (m: AgentThreadMessage) => {
      if (m.type === 'joined') {
        up = true;
        resolve(m);
      } else if (m.type === 'failed') reject(new Error(m.message));
    });
    void exit.then(reject);
  });
  void exit.then((err) => up && !stopping && onDied(err));
  return {
    joined,
    stop: async () => {
      stopping = true;
      if (exited) return;
      await new Promise<void>((resolve) => {
        worker.on('message', (m: AgentThreadMessage) => m.type === 'stopped' && resolve());
        void exit.then(() => resolve());
        worker.postMessage('stop');
      });
      await worker.terminate();
    },
  };
}


/**
 * Stops and removes every sandbox of the node over CRI (the shims outlive containerd, so this comes
 * first), then containerd, the pod network and the cgroups; then the registry and the data dir.
 */
export async function resetCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, ['data-dir']);
  const dataDir = args.flags.get('data-dir');
  if (!dataDir) throw new Error('--data-dir is required');
  const dir = resolve(dataDir);
  const logger = newLogger('reset');
  // `kite up` keeps its node under DATA/node; `kite agent` is the node itself.
  for (const nodeDir of [join(dir, 'node'), dir]) {
    const record = await readNodeRecord(nodeDir);
    if (!record) continue;
    if (record.ownContainerd) {
      // A stopped containerd is started again so the sandboxes it knows can be torn down properly.
      await new Containerd({ dataDir: containerdDir(nodeDir), registryHost: '127.0.0.1:0', sandboxImage: '' }).start().catch(() => undefined);
    }
    if (existsSync(record.criEndpoint)) await removeAllSandboxes(record.criEndpoint, logger);
    const { busyCgroups } = await resetNodeHost(nodeDir, record, realClock);
    if (busyCgroups.length) process.stderr.write(`kite reset: cgroups still in use, left in place: ${busyCgroups.join(', ')}\n`);
    process.stdout.write(`node ${record.nodeName} reset\n`);
  }
  if (existsSync(join(dir, 'registry'))) await new Registry({ dataDir: join(dir, 'registry') }).stop();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(`removed ${dir}\n`);
}

async function removeAllSandboxes(endpoint: string, logger: Logger): Promise<void> {
  const cri = new CriRuntime({ endpoint, defaultTimeoutMs: 60_000 });
  try {
    await cri.waitForReady(Date.now() + 10_000);
    // Every CRI pod goes, as kubeadm reset removes every container of the runtime's k8s.io namespace.
    for (const sandbox of await cri.listPodSandbox()) {
      for (const c of await cri.listContainers({ pod_sandbox_id: sandbox.id })) {
        await cri.stopContainer(c.id, 0).catch((err: unknown) => void (isNotFound(err) || logger.warn({ err }, 'stop container')));
        await cri.removeContainer(c.id).catch((err: unknown) => void (isNotFound(err) || logger.warn({ err }, 'remove container')));
      }
      await cri.stopPodSandbox(sandbox.id).catch((err: unknown) => void (isNotFound(err) || logger.warn({ err }, 'stop sandbox')));
      await cri.removePodSandbox(sandbox.id).catch((err: unknown) => void (isNotFound(err) || logger.warn({ err }, 'remove sandbox')));
    }
  } finally {
    cri.close();
  }
}

export async function imagesCli(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, ['data-dir', 'image-cache', 'port']);
  const dataDir = args.flags.get('data-dir');
  if (!dataDir) throw new Error('--data-dir is required');
  const registry = await imagesCommand({
    dataDir: join(resolve(dataDir), 'registry'),
    cacheDir: resolve(args.flags.get('image-cache') ?? join(homedir(), '.cache', 'kite', 'images')),
    port: portFlag(args, 'port'),
  });
  process.stdout.write(`registry: ${registry.host}\n`);
}
